// Event: one row of an nsys-schema table, normalized for the viewer writers. EventSource yields
// them in start-time order across all tables.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace gt::viewers {

enum class EventKind : uint8_t {
  kNvtxRange,     // NVTX push/pop range (eventType 59): nested on its thread
  kNvtxStartEnd,  // NVTX start/end range (60): may overlap anything, may end on another thread
  kNvtxMark,      // NVTX mark (34): an instant
  kApi,           // CUDA runtime (eventClass 0) or driver (1) API call
  kKernel,
  kMemcpy,
  kMemset,
  kSync,    // GPU-side synchronization (SYNCHRONIZATION table)
  kMetric,  // one GPU_METRICS sample of one metric
  kNcclOp,  // one NCCL operation from GTRACE_NCCL_OPERATIONS
};

inline constexpr int kEventKinds = 10;

struct Event {
  EventKind kind = EventKind::kNvtxRange;
  int64_t start_ns = 0;
  int64_t end_ns = 0;      // == start_ns for instants and samples
  int64_t global_tid = 0;  // CPU events: the thread (0 when unknown)
  int64_t global_pid = 0;
  int64_t device_id = -1;  // GPU events: CUDA ordinal in the process
  int64_t stream_id = -1;  // GPU events; -1 for device-wide synchronizations
  int64_t correlation_id = -1;
  std::string name;  // NVTX text, API name (version suffix kept), kernel (demangled) name, metric name

  // NVTX
  int64_t domain_id = 0;
  int64_t color_argb = -1;  // -1: none

  // API calls
  int64_t event_class = 0;  // 0 runtime, 1 driver
  int64_t return_value = 0;
  int64_t gpu_ops = 0;             // GPU activities this call launched (0: none, so no flow)
  int64_t first_gpu_start_ns = 0;  // the earliest of them (gpu_ops > 0)
  int64_t first_gpu_device = -1, first_gpu_stream = -1;

  // GPU activities: the launching API call, when it is in the file
  bool has_launch = false;
  int64_t launch_tid = 0;
  int64_t launch_start_ns = 0;
  int64_t launch_gpu_ops = 0;  // GPU activities of that launch (several for graph launches)
  int64_t bytes = 0;
  int64_t copy_kind = 0, src_kind = -1, dst_kind = -1, mem_kind = -1;
  int64_t grid[3] = {0, 0, 0}, block[3] = {0, 0, 0};
  int64_t registers_per_thread = 0, static_shared_bytes = 0, dynamic_shared_bytes = 0;
  std::string short_name;  // kernels
  int64_t sync_type = 0;

  // GPU metrics
  size_t metric = 0;  // index into Catalog::metrics()
  int64_t value = 0;

  // NCCL operations (name = func)
  int64_t nccl_ranks = -1, nccl_seq = -1;
  bool nccl_gpu_time = false;  // start/end are GPU times (else enqueue times on the host)
  std::string nccl_algo, nccl_proto;
};

// Flow ids tie a launch to its GPU activities: unique per (process, correlation id).
// <hw byte:8><pid:24><correlation id:32> (the VM byte is 1 on every local capture).
inline uint64_t FlowId(int64_t global_pid, int64_t correlation_id) {
  uint64_t process = ((static_cast<uint64_t>(global_pid) >> 24) & 0xFFFFFF) |
                     (((static_cast<uint64_t>(global_pid) >> 56) & 0xFF) << 24);
  return (process << 32) | static_cast<uint32_t>(correlation_id);
}

}  // namespace gt::viewers
