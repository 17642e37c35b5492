// One rank's GPU timeline inside an analysis window: how long its GPU computed, communicated
// (NCCL kernels), did either, overlapped the two, and sat idle; its idle gaps; and its busy time
// per heatmap bin. Pure computation on intervals (session ns); any thread.
#pragma once

#include <cstdint>
#include <vector>

namespace gt::analyze {

struct Interval {
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  bool comm = false;  // an NCCL kernel (communication); else computation (kernels, copies, memsets)
};

struct GpuGap {
  int64_t start_ns = 0;
  int64_t duration_ns = 0;
};

struct GpuTime {
  int64_t compute_ns = 0;  // union of computation
  int64_t comm_ns = 0;     // union of communication
  int64_t busy_ns = 0;     // union of both
  int64_t overlap_ns = 0;  // communication while computing = compute + comm - busy
  int64_t idle_ns = 0;     // window - busy
  uint64_t gaps = 0;       // idle stretches of at least gap_min_ns
  int64_t gap_ns = 0;      // their total
  GpuGap largest;
  std::vector<GpuGap> top_gaps;      // the `keep_gaps` longest, longest first
  std::vector<GpuGap> cause_gaps;    // the `keep_cause_gaps` longest of at least cause_min_ns, longest first
  uint64_t cause_gaps_seen = 0;      // gaps of at least cause_min_ns (cause_gaps keeps at most keep_cause_gaps)
  std::vector<int64_t> bin_busy_ns;  // busy time per bin
};

struct GpuTimeOptions {
  int64_t window_start_ns = 0;
  int64_t window_end_ns = 0;
  int64_t gap_min_ns = 100000;
  uint32_t keep_gaps = 10;
  // Gaps to attribute to the launching thread (gap_causes.h): at least this long (0: none); the
  // gap must end before the window does (a gap that ends with the window has no launch after it).
  int64_t cause_min_ns = 0;
  uint32_t keep_cause_gaps = 0;
  uint32_t bins = 0;  // heatmap bins over the window (0: none)
};

// `intervals` are sorted in place. Parts outside the window are ignored.
GpuTime MeasureGpuTime(std::vector<Interval>* intervals, const GpuTimeOptions& options);

}  // namespace gt::analyze
