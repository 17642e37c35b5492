// The one clock of a gtrace stream: CLOCK_MONOTONIC in integer nanoseconds. NVTX hooks, CUPTI
// (through its timestamp callback) and the NCCL plugin all read it, so host ranges and GPU work
// line up. Any thread; NowNs() is the only clock read on the hot path (vDSO, no syscall).
#pragma once

#include <cstdint>
#include <ctime>

namespace gt {

inline uint64_t NowNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

inline uint64_t RealtimeNs() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

struct ClockPair {
  uint64_t stream_ns = 0;    // CLOCK_MONOTONIC
  uint64_t realtime_ns = 0;  // CLOCK_REALTIME at the same instant
  uint64_t uncertainty_ns = 0;
};

// Reads both clocks several times and keeps the tightest bracket (monotonic, realtime, monotonic).
inline ClockPair ReadClockPair() {
  ClockPair best;
  best.uncertainty_ns = UINT64_MAX;
  for (int i = 0; i < 5; ++i) {
    uint64_t a = NowNs();
    uint64_t r = RealtimeNs();
    uint64_t b = NowNs();
    if (b - a < best.uncertainty_ns) {
      best.stream_ns = a + (b - a) / 2;
      best.realtime_ns = r;
      best.uncertainty_ns = b - a;
    }
  }
  return best;
}

}  // namespace gt
