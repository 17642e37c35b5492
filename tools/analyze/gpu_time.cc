#include "tools/analyze/gpu_time.h"

#include <algorithm>

namespace gt::analyze {
namespace {

// Merged, clipped stretches of the intervals `pick` selects (input sorted by start).
template <typename Pick>
std::vector<std::pair<int64_t, int64_t>> Union(const std::vector<Interval>& in, int64_t w0, int64_t w1, Pick pick) {
  std::vector<std::pair<int64_t, int64_t>> out;
  for (const Interval& i : in) {
    if (!pick(i))
      continue;
    int64_t a = std::max(i.start_ns, w0), b = std::min(i.end_ns, w1);
    if (b <= a)
      continue;
    if (!out.empty() && a <= out.back().second) {
      out.back().second = std::max(out.back().second, b);
    } else {
      out.emplace_back(a, b);
    }
  }
  return out;
}

int64_t Length(const std::vector<std::pair<int64_t, int64_t>>& u) {
  int64_t n = 0;
  for (const auto& [a, b] : u)
    n += b - a;
  return n;
}

}  // namespace

GpuTime MeasureGpuTime(std::vector<Interval>* intervals, const GpuTimeOptions& o) {
  std::sort(intervals->begin(), intervals->end(),
            [](const Interval& a, const Interval& b) { return a.start_ns < b.start_ns; });
  GpuTime t;
  int64_t w0 = o.window_start_ns, w1 = o.window_end_ns;
  if (w1 <= w0)
    return t;
  auto busy = Union(*intervals, w0, w1, [](const Interval&) { return true; });
  t.busy_ns = Length(busy);
  t.compute_ns = Length(Union(*intervals, w0, w1, [](const Interval& i) { return !i.comm; }));
  t.comm_ns = Length(Union(*intervals, w0, w1, [](const Interval& i) { return i.comm; }));
  t.overlap_ns = t.compute_ns + t.comm_ns - t.busy_ns;
  t.idle_ns = (w1 - w0) - t.busy_ns;
  // Idle gaps: the window's stretches between busy ones.
  int64_t cursor = w0;
  auto keep = [](std::vector<GpuGap>* v, GpuGap g, uint32_t n) {
    auto pos = std::upper_bound(v->begin(), v->end(), g,
                                [](const GpuGap& x, const GpuGap& y) { return x.duration_ns > y.duration_ns; });
    v->insert(pos, g);
    if (v->size() > n)
      v->pop_back();
  };
  auto gap = [&](int64_t a, int64_t b) {
    if (o.cause_min_ns > 0 && b - a >= o.cause_min_ns && b < w1 && b > a) {
      ++t.cause_gaps_seen;
      if (o.keep_cause_gaps > 0)
        keep(&t.cause_gaps, GpuGap{a, b - a}, o.keep_cause_gaps);
    }
    if (b - a < o.gap_min_ns || b <= a)
      return;
    ++t.gaps;
    t.gap_ns += b - a;
    GpuGap g{a, b - a};
    if (g.duration_ns > t.largest.duration_ns)
      t.largest = g;
    if (o.keep_gaps > 0)
      keep(&t.top_gaps, g, o.keep_gaps);
  };
  for (const auto& [a, b] : busy) {
    gap(cursor, a);
    cursor = b;
  }
  gap(cursor, w1);
  if (o.bins > 0) {
    t.bin_busy_ns.assign(o.bins, 0);
    double width = static_cast<double>(w1 - w0) / o.bins;
    for (const auto& [a, b] : busy) {
      auto bin_of = [&](int64_t x) {
        return std::min<int64_t>(o.bins - 1, static_cast<int64_t>(static_cast<double>(x - w0) / width));
      };
      for (int64_t k = bin_of(a); k <= bin_of(b - 1); ++k) {
        int64_t lo = w0 + static_cast<int64_t>(static_cast<double>(k) * width);
        int64_t hi =
            k + 1 == static_cast<int64_t>(o.bins) ? w1 : w0 + static_cast<int64_t>(static_cast<double>(k + 1) * width);
        t.bin_busy_ns[static_cast<size_t>(k)] += std::max<int64_t>(0, std::min(b, hi) - std::max(a, lo));
      }
    }
  }
  return t;
}

}  // namespace gt::analyze
