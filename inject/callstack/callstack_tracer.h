// CUDA API backtraces (--cudabacktrace / GTRACE_CUDABACKTRACE): set-up, the CUPTI callbacks of the
// selected APIs (switched with the capture window), the stream messages of modules, configuration
// and losses. The hot path is stack_capture.h; records are decoded by stack_decoder.h.
//
// Hooks into the CUDA tracer (inject/cupti/), which owns the CUPTI subscription:
//   SetUpBacktraces     CuptiTracer::Start, after subscribing (the injection thread, slow path);
//   EnableBacktraceCallbacks  whenever the tracer switches its window callbacks (no gtrace lock held);
//   OnApiCallback       the subscriber callback, RUNTIME/DRIVER domains (stack_capture.h).
// A failure (no libunwind, no memory for the per-thread areas) switches backtraces off with one
// `gtrace:` line; CUDA tracing goes on.
#pragma once

#include <cupti.h>

#include "inject/cupti/cupti_api.h"

namespace gt::callstack {

// Reads GTRACE_CUDABACKTRACE / GTRACE_PYTHON_BACKTRACE; when backtraces are asked for, loads
// libunwind, classifies every runtime and driver callback id (cuptiGetCallbackName), reserves the
// per-thread areas and registers the record decoder and the emitter. No callback is enabled yet.
void SetUpBacktraces(const cupti::CuptiApi* api, CUpti_SubscriberHandle subscriber);

// Enables or disables the enter/exit callbacks of the selected APIs. Callback ids the CUDA tracer
// needs for itself (profiler start/stop, context teardown) are never disabled here.
void EnableBacktraceCallbacks(bool on);

}  // namespace gt::callstack
