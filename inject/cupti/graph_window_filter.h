// GraphWindowFilter: which CUPTI GRAPH_TRACE records belong to a capture window, when the
// GRAPH_TRACE kind stays enabled for the whole run.
//
// Why: on a real GPU (NVIDIA H200, CUDA 13.0, driver 580, 2026-11-26) enabling
// CUPTI_ACTIVITY_KIND_GRAPH_TRACE after a graph was instantiated — a capture window that opens
// mid-run (cudaProfilerStart, an NVTX range) — crashed the application (SIGSEGV) at its next
// cudaGraphLaunch; with the kind enabled from the start, as in a whole-run capture, it did not.
// So with capture windows the kind is enabled once, at start, and never switched; the records of
// graphs launched outside every window are dropped here, on the drain thread.
//
// How: CUPTI correlation ids grow monotonically in a process, and the graph-launch callback
// (CuptiTracer::OnGraphLaunch) runs only while a window is open. Each window therefore owns the
// contiguous range [first, last] of the ids its launches saw; a GRAPH_TRACE record is kept when its
// id is inside one of those ranges. The launch callback runs at launch exit, long before the GPU
// finishes the graph and CUPTI completes the record's buffer.
//
// Threads: NoteLaunch on application threads (hot path: two relaxed atomic updates); NextWindow on
// the thread that opens a window; Keep on the drain thread.
#pragma once

#include <atomic>
#include <cstdint>

namespace gt::cupti {

class GraphWindowFilter {
 public:
  static constexpr uint32_t kMaxWindows = 64;  // later windows share the last range

  // The next window opens: its launches start a new range.
  void NextWindow() {
    uint32_t w = windows_.load(std::memory_order_relaxed);
    if (w < kMaxWindows) windows_.store(w + 1, std::memory_order_release);
  }
  void NoteLaunch(uint32_t correlation_id) {
    uint32_t w = windows_.load(std::memory_order_acquire);
    if (w == 0) return;  // no window opened yet (cannot happen: the callback is off then)
    Range& r = ranges_[w - 1];
    uint32_t lo = r.lo.load(std::memory_order_relaxed);
    while (correlation_id < lo && !r.lo.compare_exchange_weak(lo, correlation_id, std::memory_order_relaxed)) {
    }
    uint32_t hi = r.hi.load(std::memory_order_relaxed);
    while (correlation_id > hi && !r.hi.compare_exchange_weak(hi, correlation_id, std::memory_order_relaxed)) {
    }
  }
  bool Keep(uint32_t correlation_id) const {
    uint32_t n = windows_.load(std::memory_order_acquire);
    for (uint32_t i = 0; i < n; ++i) {
      const Range& r = ranges_[i];
      if (correlation_id >= r.lo.load(std::memory_order_relaxed) &&
          correlation_id <= r.hi.load(std::memory_order_relaxed)) {
        return true;
      }
    }
    return false;
  }

 private:
  struct Range {
    std::atomic<uint32_t> lo{UINT32_MAX};
    std::atomic<uint32_t> hi{0};
  };
  Range ranges_[kMaxWindows];
  std::atomic<uint32_t> windows_{0};
};

}  // namespace gt::cupti
