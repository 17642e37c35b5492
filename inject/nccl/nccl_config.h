// What the NCCL plugin records: GTRACE_NCCL_TRACE (the event mask, `gtrace profile --nccl-trace=`)
// and GTRACE_NCCL_POOL_EVENTS (event pool size). Read once, on the slow path of the first plugin
// `init`; pure functions, so tests call them directly.
//
// GTRACE_NCCL_TRACE is a comma list (default "default"):
//   group       Group events (kernel plans)
//   coll, p2p   collectives / point-to-point operations (enqueue, descriptor)
//   kernel      kernel-channel GPU times (implies coll,p2p: a channel is attributed to its operation)
//   api         v5+ API events: GroupApi, CollApi, P2pApi, KernelLaunch
//   proxy       ProxyOp events (implies coll,p2p);  proxy-step  ProxyStep (implies proxy)
//   proxy-ctrl  proxy thread activity;  net  network plugin events (implies proxy-step)
//   ce          v6 copy-engine collectives (CeColl, CeSync, CeBatch)
//   default     group,coll,p2p,kernel,api,ce      all  every type      none  nothing
//   a number    a raw ncclProfile* mask, decimal or 0x-hex (no implications added)
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace gt::nccl {

inline constexpr char kTraceVariable[] = "GTRACE_NCCL_TRACE";
inline constexpr char kPoolVariable[] = "GTRACE_NCCL_POOL_EVENTS";
inline constexpr uint32_t kDefaultPoolEvents = 4096;
inline constexpr uint32_t kMinPoolEvents = 1;
inline constexpr uint32_t kMaxPoolEvents = 1u << 20;

// The mask for "default".
uint32_t DefaultTraceMask();
// Parses a GTRACE_NCCL_TRACE value into event type bits (abi::EventTypeBit). False with *error set
// on an unknown name or a bad number; *mask is left unchanged then.
bool ParseNcclTrace(std::string_view text, uint32_t* mask, std::string* error);
// GTRACE_NCCL_POOL_EVENTS: a whole number in [kMinPoolEvents, kMaxPoolEvents].
bool ParsePoolEvents(std::string_view text, uint32_t* events, std::string* error);
// "Coll", "KernelCh", ... for a single type bit; "?" otherwise.
const char* EventTypeName(uint32_t type_bit);

}  // namespace gt::nccl
