// The clocks of a gtrace stream. Any thread.
//
// The stream clock (StreamHeader.clock) is either CLOCK_MONOTONIC in integer nanoseconds or the
// CPU's invariant tick counter (x86 TSC read with rdtsc, Arm's generic-timer cntvct_el0): raw
// ticks, converted to CLOCK_MONOTONIC nanoseconds offline by `gtrace export`, piecewise-linearly
// between the calibration pairs (tick, CLOCK_MONOTONIC, CLOCK_REALTIME) the stream carries (header
// at session start, drain thread periodically and before every write, end of stream). Reading the
// counter costs ~7 ns against ~20 ns for clock_gettime; on the hot path that is most of the price.
//
// StreamNow() is the only clock read on the hot path: one relaxed load of the session's choice,
// then rdtsc/mrs or the vDSO. NVTX hooks, CUPTI (its timestamp callback), the NCCL plugin and the
// drain thread's stream fields all read it, so host ranges and GPU work share one timeline.
// NowNs() stays CLOCK_MONOTONIC: deadlines, intervals, anything that is not written to the stream.
#pragma once

#include <atomic>
#include <cstdint>
#include <ctime>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

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

// True on CPUs where ReadTicks() reads a hardware counter (x86-64, aarch64).
inline constexpr bool kHasTickCounter =
#if defined(__x86_64__) || defined(__aarch64__)
    true;
#else
    false;
#endif

// The raw counter: rdtsc (not serializing: a tracer wants the cheapest read, and the record that
// follows depends on it anyway) or cntvct_el0. CLOCK_MONOTONIC ns where there is none.
inline uint64_t ReadTicks() {
#if defined(__x86_64__)
  return __rdtsc();
#elif defined(__aarch64__)
  uint64_t v;
  asm volatile("mrs %0, cntvct_el0" : "=r"(v));
  return v;
#else
  return NowNs();
#endif
}

namespace clock_internal {
// Set by the session before any recording source is enabled (SelectStreamClock, clock_source.h);
// read on the hot path with a relaxed load (a plain mov).
extern std::atomic<bool> g_stream_clock_ticks;
}  // namespace clock_internal

// The stream clock: ticks when the session chose the tick counter, CLOCK_MONOTONIC ns otherwise.
inline uint64_t StreamNow() {
  if (clock_internal::g_stream_clock_ticks.load(std::memory_order_relaxed)) return ReadTicks();
  return NowNs();
}

inline bool StreamClockIsTicks() { return clock_internal::g_stream_clock_ticks.load(std::memory_order_relaxed); }

// One calibration pair: the stream clock, CLOCK_MONOTONIC and CLOCK_REALTIME at (about) one instant.
struct ClockPair {
  uint64_t stream_ns = 0;       // stream clock (ticks under the tick counter; = monotonic_ns otherwise)
  uint64_t realtime_ns = 0;     // CLOCK_REALTIME at the same instant
  uint64_t uncertainty_ns = 0;  // width of the bracket, in stream clock units
  uint64_t monotonic_ns = 0;    // CLOCK_MONOTONIC (the calibration pair of a tick stream)
};

// Monotonic mode: the tightest of several (monotonic, realtime, monotonic) brackets. Tick mode: the
// tightest (ticks, monotonic, ticks) bracket (the monotonic read is placed at its middle), realtime
// read right after it. Drain thread and session start only (a few hundred ns).
inline ClockPair ReadClockPair() {
  ClockPair best;
  best.uncertainty_ns = UINT64_MAX;
  bool ticks = StreamClockIsTicks();
  for (int i = 0; i < 7; ++i) {
    if (ticks) {
      uint64_t a = ReadTicks();
      uint64_t m = NowNs();
      uint64_t b = ReadTicks();
      uint64_t r = RealtimeNs();
      if (b >= a && b - a < best.uncertainty_ns) {
        best.stream_ns = a + (b - a) / 2;
        best.monotonic_ns = m;
        best.realtime_ns = r;
        best.uncertainty_ns = b - a;
      }
    } else {
      uint64_t a = NowNs();
      uint64_t r = RealtimeNs();
      uint64_t b = NowNs();
      if (b - a < best.uncertainty_ns) {
        best.stream_ns = a + (b - a) / 2;
        best.monotonic_ns = best.stream_ns;
        best.realtime_ns = r;
        best.uncertainty_ns = b - a;
      }
    }
  }
  return best;
}

}  // namespace gt
