// Sources matched (nsys output quoted in public repositories, nsys 2022.4–2026.1):
//  - two calls of 2,971,823 and 333,015,608 ns print Avg = Med = 167,993,715.5 and StdDev 233,376,198.5:
//    the median of an even count is the mean of the middle pair, and |a-b|/sqrt(2) is the sample
//    (n-1) standard deviation, not the population one (165,021,892.5);
//  - every single-instance row prints StdDev "0.0" (not empty);
//  - Avg/Med/StdDev/Time (%) have one decimal, Min/Max/Total are integers; the Nsight Systems report
//    help (Post-Collection Analysis Guide, "Statistical Reports Shipped With Nsight Systems") says
//    Time (%) is the share of the summed "Total Time" of the rows listed.
#include "tools/stats/statistics.h"

#include <cmath>

namespace gt::stats {
namespace {

__int128 PowerOfTen(int exponent) {
  __int128 result = 1;
  for (int i = 0; i < exponent; ++i)
    result *= 10;
  return result;
}

}  // namespace

int64_t RoundDiv(__int128 num, __int128 den) {
  if (num >= 0)
    return static_cast<int64_t>((2 * num + den) / (2 * den));
  return -static_cast<int64_t>((-2 * num + den) / (2 * den));
}

Cell ScaledValue(int64_t value, int64_t unit, int decimals) {
  return Cell::Fixed(RoundDiv(static_cast<__int128>(value) * PowerOfTen(decimals), unit), decimals);
}

Cell Percent(int64_t part, int64_t whole) {
  if (whole == 0)
    return Cell::Null();
  return Cell::Fixed(RoundDiv(static_cast<__int128>(part) * 1000, whole), 1);
}

SortedValueSummarizer::SortedValueSummarizer(int64_t count, __int128 total, int64_t unit, int decimals)
    : count_(count),
      total_(total),
      unit_(unit),
      decimals_(decimals),
      mean_(count > 0 ? static_cast<long double>(total) / static_cast<long double>(count) : 0) {}

void SortedValueSummarizer::Add(int64_t value) {
  const int64_t index = added_++;
  if (index == 0)
    min_ = value;
  max_ = value;
  // The median of an even count is the mean of the middle pair; of an odd count, the middle twice.
  if (count_ % 2 == 1 && index == count_ / 2)
    middle_sum_ = 2 * static_cast<__int128>(value);
  if (count_ % 2 == 0 && (index == count_ / 2 - 1 || index == count_ / 2))
    middle_sum_ += value;
  // Two passes around the exact mean keep the sum of squares small; long double for headroom.
  const long double d = static_cast<long double>(value) - mean_;
  squares_ += d * d;
}

Summary SortedValueSummarizer::Finish() const {
  Summary summary;
  if (count_ == 0)
    return summary;
  summary.count = count_;
  summary.total = static_cast<int64_t>(total_);
  summary.min = min_;
  summary.max = max_;
  const __int128 scale = PowerOfTen(decimals_);
  summary.avg = Cell::Fixed(RoundDiv(total_ * scale, static_cast<__int128>(count_) * unit_), decimals_);
  summary.median = Cell::Fixed(RoundDiv(middle_sum_ * scale, 2 * static_cast<__int128>(unit_)), decimals_);
  if (count_ < 2) {
    summary.stddev = Cell::Fixed(0, decimals_);
  } else {
    const long double stddev = std::sqrt(squares_ / static_cast<long double>(count_ - 1));
    summary.stddev = Cell::Fixed(
        static_cast<int64_t>(std::llround(stddev * static_cast<long double>(scale) / static_cast<long double>(unit_))),
        decimals_);
  }
  return summary;
}

Summary Summarize(std::vector<int64_t>* values, int64_t unit, int decimals) {
  std::vector<int64_t>& v = *values;
  if (v.empty())
    return Summary();
  std::sort(v.begin(), v.end());
  __int128 total = 0;
  for (int64_t x : v)
    total += x;
  SortedValueSummarizer summarizer(static_cast<int64_t>(v.size()), total, unit, decimals);
  for (int64_t x : v)
    summarizer.Add(x);
  return summarizer.Finish();
}

std::string StripApiVersionSuffix(std::string_view name) {
  if (name.size() >= 6 && name.substr(name.size() - 6, 2) == "_v") {
    return std::string(name.substr(0, name.size() - 6));
  }
  return std::string(name);
}

}  // namespace gt::stats
