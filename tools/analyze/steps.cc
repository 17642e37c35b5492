#include "tools/analyze/steps.h"

#include <algorithm>

namespace gt::analyze {
namespace {

constexpr size_t kMaxOps = 20000;  // the pattern is read from the first ones
constexpr uint32_t kMaxPeriod = 1024;

int64_t Percentile(std::vector<int64_t> v, double q) {
  if (v.empty())
    return 0;
  size_t k = static_cast<size_t>(q * static_cast<double>(v.size() - 1) + 0.5);
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(k), v.end());
  return v[k];
}

}  // namespace

StepPattern FindStepPattern(const std::vector<uint64_t>& sig_in, const std::vector<int64_t>& t_in) {
  StepPattern out;
  size_t n = std::min({sig_in.size(), t_in.size(), kMaxOps});
  if (n < 4) {
    out.reason = "fewer than 4 collectives";
    return out;
  }
  std::vector<int64_t> gap(n, 0);  // pause before collective i (i >= 1)
  for (size_t i = 1; i < n; ++i)
    gap[i] = t_in[i] - t_in[i - 1];
  uint32_t max_p = static_cast<uint32_t>(std::min<size_t>(kMaxPeriod, n / 3));
  for (uint32_t p = 1; p <= max_p; ++p) {
    size_t match = 0;
    for (size_t i = 0; i + p < n; ++i)
      match += sig_in[i] == sig_in[i + p] ? 1 : 0;
    if (static_cast<double>(match) < 0.9 * static_cast<double>(n - p))
      continue;
    if (p == 1) {
      std::vector<int64_t> g(gap.begin() + 1, gap.begin() + static_cast<std::ptrdiff_t>(n));
      if (Percentile(g, 0.9) <= 2 * Percentile(g, 0.1)) {
        out.found = true;
        out.period = 1;
        out.phase = 0;
        return out;
      }
      continue;
    }
    std::vector<std::vector<int64_t>> by_phase(p);
    for (size_t i = 1; i < n; ++i)
      by_phase[i % p].push_back(gap[i]);
    uint32_t best = 0;
    int64_t best_median = -1;
    for (uint32_t j = 0; j < p; ++j) {
      int64_t m = Percentile(by_phase[j], 0.5);
      if (m > best_median) {
        best_median = m;
        best = j;
      }
    }
    std::vector<int64_t> others;
    for (uint32_t j = 0; j < p; ++j) {
      if (j != best)
        others.insert(others.end(), by_phase[j].begin(), by_phase[j].end());
    }
    if (Percentile(by_phase[best], 0.1) > Percentile(others, 0.9)) {
      out.found = true;
      out.period = p;
      out.phase = best;
      return out;
    }
  }
  out.reason = "no repeating sequence of collectives with one distinctly longer pause";
  return out;
}

}  // namespace gt::analyze
