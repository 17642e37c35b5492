// CPU sampling (`--sample=process-tree`, GTRACE_SAMPLE): every thread of the process is sampled by the
// kernel (one perf cpu-clock event per thread, PerfThreadEvent) and the drain thread turns the samples
// into CpuSample messages (schema/sampling.proto). docs/sampling.md.
//
// Who calls what:
//   - the loading thread (ELF constructors): Register, then StartIfWanted from entry.cc;
//   - the thread that starts the session: the session-start hook (measures the tick rate on a tick
//     stream);
//   - the drain thread: everything else, in its emitter, every cycle (10 ms): it lists
//     /proc/self/task, opens an event for each thread it has not seen (so a new thread is sampled from
//     at most one drain cycle after it started), reads every event's ring, closes the events of
//     threads that ended, and enables/disables the events when a capture window opens or closes.
//   - application threads: nothing. The kernel takes the samples; no code of ours runs on them.
#pragma once

#include <cstdint>

namespace gt::sampling {

// Registers the emitter and the session-start hook (idempotent; loading thread).
void Register();
// Preloaded with GTRACE_SAMPLE=process-tree: starts the session now, so that a process that never
// calls NVTX, CUDA or NCCL is sampled too (entry.cc's constructor).
void StartIfWanted();

// Monotonic ns -> stream clock, given a calibration pair (stream, monotonic) and the stream clock's
// rate in units per ns scaled by 2^32 (1 << 32 for a monotonic stream). Exposed for tests.
uint64_t MonotonicToStream(uint64_t monotonic_ns, uint64_t pair_stream, uint64_t pair_monotonic_ns, uint64_t rate_q32);

}  // namespace gt::sampling
