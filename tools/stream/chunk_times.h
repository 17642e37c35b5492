// ConvertChunkTimes: rewrites every stream-clock time of a decoded chunk from raw ticks into
// CLOCK_MONOTONIC ns (tick_clock.h), so that the exporter, `gtrace info` and the viewers read a
// tick stream exactly as a CLOCK_MONOTONIC one. Called by StreamReader::Next for CLOCK_ID_TSC
// streams only; monotonic streams are never touched.
//
// Absolute fields map directly (0 stays 0: "absent"); delta chains (`*_delta_ns`, relative to the
// previous event of the same repeated field, the first to Chunk.base_ns) are decoded, converted and
// re-encoded; durations become the difference of their converted ends. Fields on other clocks
// (NCCL's gpu_timer_ns, CUPTI/PM offsets) and configured intervals are left alone.
//
// `cupti_clock` (non-null when the stream carries CuptiClockPairs: CUPTI refused gtrace's timestamp
// callback) maps CUPTI's own ns onto CLOCK_MONOTONIC ns; it converts the times taken from CUPTI's
// activity records (API calls, kernels, copies, memsets, syncs, events, graph traces, overheads,
// memory records). Everything recorded by gtrace itself stays on `clock`.
// A new timestamp field in schema/*.proto must be added here (tests/stream/tick_clock_test.cc).
#pragma once

#include "gtrace.pb.h"
#include "tools/stream/tick_clock.h"

namespace gt::stream {

void ConvertChunkTimes(const TickClock& clock, schema::Chunk* chunk, const TickClock* cupti_clock = nullptr);

}  // namespace gt::stream
