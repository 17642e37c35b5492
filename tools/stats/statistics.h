// Summary statistics as nsys's reports print them. Matched against nsys output (see statistics.cc):
// averages, medians and standard deviations rounded half away from zero to the printed decimals (SQLite
// round()), the median of an even count is the mean of the two middle values, the standard deviation is
// the sample (n-1) one and 0.0 for a single value. Internal to gt_stats.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tools/stats/table.h"

namespace gt::stats {

// Rounds num/den (den > 0) to the nearest integer, halves away from zero.
int64_t RoundDiv(__int128 num, __int128 den);

// value / unit rounded to `decimals` places, as a Cell (e.g. bytes -> MB with unit 1e6, 3 decimals).
Cell ScaledValue(int64_t value, int64_t unit, int decimals);

// part / whole * 100 with one decimal ("Time (%)"); NULL when whole is 0 (SQLite's x/0).
Cell Percent(int64_t part, int64_t whole);

struct Summary {
  int64_t count = 0;
  int64_t total = 0;
  int64_t min = 0;
  int64_t max = 0;
  Cell avg = Cell::Null();
  Cell median = Cell::Null();
  Cell stddev = Cell::Null();
};

// Summarises `values` (non-empty; sorted in place). Avg/median/stddev are value/unit with `decimals`.
Summary Summarize(std::vector<int64_t>* values, int64_t unit = 1, int decimals = 1);

// The same summary from one group's values fed in ascending order, without keeping them: the count
// and the total are known beforehand (a GROUP BY pass), so the median is picked by position and the
// standard deviation summed around the exact mean in the same order Summarize sums it. Summarize
// uses it, so both give identical cells.
class SortedValueSummarizer {
 public:
  SortedValueSummarizer(int64_t count, __int128 total, int64_t unit, int decimals);
  void Add(int64_t value);  // the next value, >= the previous one
  int64_t added() const { return added_; }
  Summary Finish() const;  // after exactly `count` values

 private:
  int64_t count_;
  __int128 total_;
  int64_t unit_;
  int decimals_;
  long double mean_;
  int64_t added_ = 0;
  int64_t min_ = 0;
  int64_t max_ = 0;
  __int128 middle_sum_ = 0;
  long double squares_ = 0;
};

// Groups summarised and ordered by total descending (nsys's ORDER BY total DESC), ties by key
// ascending so the order is deterministic.
template <typename Key>
std::vector<std::pair<Key, Summary>> SortedSummaries(std::map<Key, std::vector<int64_t>>* groups,
                                                     int64_t unit = 1,
                                                     int decimals = 1) {
  std::vector<std::pair<Key, Summary>> result;
  result.reserve(groups->size());
  for (auto& [key, values] : *groups)
    result.emplace_back(key, Summarize(&values, unit, decimals));
  std::stable_sort(result.begin(), result.end(),
                   [](const auto& a, const auto& b) { return a.second.total > b.second.total; });
  return result;
}

// nsys strips the CUPTI version suffix of 4-digit versions only: "cudaMalloc_v3020" -> "cudaMalloc",
// but "cudaGraphLaunch_v10000" and "cudaGetDeviceProperties_v2_v12000" stay as they are (the rule is
// "the 6th and 5th characters from the end are '_v'").
std::string StripApiVersionSuffix(std::string_view name);

// Process and thread ids of a serialized globalTid (<HW:8><VM:8><PID:24><TID:24>).
inline int64_t PidOf(int64_t global_id) {
  return (global_id >> 24) & 0xFFFFFF;
}
inline int64_t TidOf(int64_t global_tid) {
  return global_tid & 0xFFFFFF;
}

}  // namespace gt::stats
