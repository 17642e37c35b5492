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

Summary Summarize(std::vector<int64_t>* values, int64_t unit, int decimals) {
  Summary summary;
  std::vector<int64_t>& v = *values;
  if (v.empty())
    return summary;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  __int128 total = 0;
  for (int64_t x : v)
    total += x;
  summary.count = static_cast<int64_t>(n);
  summary.total = static_cast<int64_t>(total);
  summary.min = v.front();
  summary.max = v.back();
  const __int128 scale = PowerOfTen(decimals);
  summary.avg = Cell::Fixed(RoundDiv(total * scale, static_cast<__int128>(n) * unit), decimals);
  const __int128 middle_sum =
      n % 2 == 1 ? 2 * static_cast<__int128>(v[n / 2]) : static_cast<__int128>(v[n / 2 - 1]) + v[n / 2];
  summary.median = Cell::Fixed(RoundDiv(middle_sum * scale, 2 * static_cast<__int128>(unit)), decimals);
  if (n < 2) {
    summary.stddev = Cell::Fixed(0, decimals);
  } else {
    // Two passes around the exact mean keep the sum of squares small; long double for headroom.
    const long double mean = static_cast<long double>(total) / static_cast<long double>(n);
    long double squares = 0;
    for (int64_t x : v) {
      const long double d = static_cast<long double>(x) - mean;
      squares += d * d;
    }
    const long double stddev = std::sqrt(squares / static_cast<long double>(n - 1));
    summary.stddev = Cell::Fixed(
        static_cast<int64_t>(std::llround(stddev * static_cast<long double>(scale) / static_cast<long double>(unit))),
        decimals);
  }
  return summary;
}

std::string StripApiVersionSuffix(std::string_view name) {
  if (name.size() >= 6 && name.substr(name.size() - 6, 2) == "_v") {
    return std::string(name.substr(0, name.size() - 6));
  }
  return std::string(name);
}

}  // namespace gt::stats
