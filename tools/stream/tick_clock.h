// TickClock: converts a stream's raw tick timestamps (StreamHeader.clock == CLOCK_ID_TSC) into
// CLOCK_MONOTONIC nanoseconds, piecewise-linearly between the stream's calibration pairs
// (ClockSnapshot: stream_clock_ns = ticks, monotonic_ns). The recorder writes a pair at session
// start, before every write and at the end, so every event lies between two pairs; outside them
// (a cut stream) the slope of the whole run extends the nearest pair.
//
// The one place ticks become nanoseconds: StreamReader applies it to every chunk it decodes
// (ConvertChunkTimes, chunk_times.h), so everything after the reader sees a CLOCK_MONOTONIC stream.
// Single-threaded; built once per stream.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace gt::stream {

struct TickPair {
  uint64_t ticks = 0;
  uint64_t monotonic_ns = 0;
};

class TickClock {
 public:
  // Pairs in any order; non-increasing ones (a clock read that went backwards) are dropped.
  // False when no usable pair remains.
  bool Build(std::vector<TickPair> pairs);
  bool active() const { return !pairs_.empty(); }
  size_t pair_count() const { return pairs_.size(); }
  // Nominal rate over the whole run (ticks per second; 0 with one pair).
  double ticks_per_second() const;

  uint64_t ToNs(uint64_t ticks) const;
  // A span that starts at `start_ticks`, in ns (for duration fields).
  uint64_t SpanNs(uint64_t start_ticks, uint64_t span_ticks) const { return ToNs(start_ticks + span_ticks) - ToNs(start_ticks); }

 private:
  uint64_t Extrapolate(const TickPair& from, uint64_t ticks) const;

  std::vector<TickPair> pairs_;
  // Whole-run slope as a ratio (ns over ticks), for extrapolation; 1:1 with a single pair.
  uint64_t span_ns_ = 1, span_ticks_ = 1;
  mutable size_t hint_ = 0;  // segment of the previous lookup: times mostly come in order
};

}  // namespace gt::stream
