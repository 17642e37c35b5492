// The NCCL profiler plugin's functions (nccl_plugin.cc), shared by the exported ncclProfiler_v4/_v5/_v6
// objects and by tests that drive the plugin without NCCL. Threads: see nccl_plugin.cc.
#pragma once

#include <cstdint>

#include "inject/nccl/nccl_abi.h"

namespace gt::nccl {

// Registers the NCCL record decoder and the registry emitter with the collector (idempotent).
void RegisterWithCollector();

// `version` is the ABI NCCL called (4, 5 or 6). Always returns kSuccess; when the session cannot start
// (or NCCL tracing is not configured) it sets the event mask to 0 and the context to NULL.
// `now_ns` (start/state/stop/finalize): the time to record for the call; 0 reads the clock.
// Raw-capture mode (inject/rawcap/nccl_capture.h) reads it once and passes it, so the capture holds
// the very time the plugin used and a replay reproduces it exactly. Init reads its clock after the
// session started (a time before the session's start would be clamped) and, when `init_ts_ns` is
// not NULL, stores the time it recorded there (left unchanged when it recorded nothing).
abi::Result Init(uint32_t version, void** context, uint64_t comm_hash, int* activation_mask, const char* comm_name,
                 int n_nodes, int n_ranks, int rank, abi::Logger logfn, uint64_t* init_ts_ns = nullptr) noexcept;
// v5 descriptors are passed through the v6 layout (identical for every v5 member); `version` 5 rejects
// the v6-only copy-engine types.
abi::Result StartEventV6(uint32_t version, void* context, void** handle, const abi::EventDescrV6* descr,
                         uint64_t now_ns = 0) noexcept;
abi::Result StartEventV4(void* context, void** handle, const abi::EventDescrV4* descr, uint64_t now_ns = 0) noexcept;
abi::Result StopEvent(void* handle, uint64_t now_ns = 0) noexcept;
abi::Result RecordEventState(void* handle, abi::EventState state, const abi::EventStateArgsV4* args,
                             uint64_t now_ns = 0) noexcept;
abi::Result Finalize(void* context, uint64_t now_ns = 0) noexcept;

// Event type bits being recorded (0 before the first successful init).
uint32_t TrackedMask();

}  // namespace gt::nccl
