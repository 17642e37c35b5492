// GPU metrics of one process: CUPTI PM sampling of the GPUs this process owns
// (--gpu-metrics-devices/-frequency/-set) and the opt-in range profiler (--gpu-metrics-ranges).
// Documented in docs/gpu-metrics.md.
//
// Threads:
//   - OnCudaInjection: the thread inside the first cuInit (InitializeInjection), after the CUDA
//     tracer. Reads the options, starts the session if needed, loads libcupti's profiler functions
//     and starts gtrace's metrics thread. Nothing else happens on an application thread (the range
//     profiler's NVTX mode excepted, see range_profiler.h).
//   - the metrics thread ("gtrace-metrics"): waits until cuInit has finished, chooses the devices,
//     sets PM sampling up per device (per-chip metric selection with the Host API), then every
//     10 ms decodes the hardware buffers into bounded sample queues, follows the capture window
//     (start/stop), re-measures the CUPTI clock offset every second, and pumps the range profiler.
//   - the drain thread (emitter): encodes configuration, device states, samples and losses.
//   - atexit: asks the metrics thread for a final decode and stop (bounded wait), then a flush.
//   - fork child: everything becomes inert; the child never calls CUPTI (its own cuInit, if any,
//     starts nothing: CUDA cannot be used in a child forked after CUDA was initialized).
// A problem switches GPU metrics off for that device with one `gtrace:` line per distinct cause
// (with the documented fix) and a stream diagnostic; the rest of the trace is unaffected.
// Owned by nobody: allocated once and never freed.
#pragma once

#include <cstdint>

namespace gt::metrics {

// InitializeInjection's part for GPU metrics (after the CUDA tracer). Never fails cuInit.
void OnCudaInjection();

// NVTX hooks (range profiler, NVTX mode). Cheap no-ops unless armed (one relaxed load first).
// `depth`: the nesting level on this thread and domain (NVTX hooks' counting); a pop matches the
// push of the same thread, domain and level.
void OnNvtxPush(const char* domain_name,
                const char* text,
                const wchar_t* wide,
                uint32_t domain_id,
                uint32_t tid,
                int depth);
void OnNvtxPop(uint32_t tid, uint32_t domain_id, int depth);

}  // namespace gt::metrics
