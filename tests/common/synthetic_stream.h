// SyntheticStream: writes gtrace streams with exactly chosen content, through the library's own
// encoder (collector/), for reader/exporter tests and the export benchmark.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "collector/chunk_builder.h"
#include "collector/config.h"
#include "collector/process_info.h"
#include "collector/string_interner.h"

namespace gt::test {

struct NvtxSpec {
  uint32_t kind = 0;  // field::enums::kNvtx*
  uint64_t ts_ns = 0;
  uint32_t domain_id = 0;
  std::string text;                  // literal message ("" = none)
  uint64_t registered_string_id = 0;  // instead of text
  uint32_t category = 0;
  std::optional<uint32_t> color;
  uint64_t range_id = 0;
  uint32_t depth = 0;
  uint32_t named_tid = 0;
  std::optional<int64_t> payload_int64;
  std::optional<double> payload_double;
};

// A CUDA kernel activity record (process-level chunk) and a CUDA API call.
struct KernelSpec {
  uint64_t start_ns = 0;
  uint64_t duration_ns = 0;
  uint32_t device_id = 0;
  uint32_t context_id = 1;
  uint32_t stream_id = 7;
  uint32_t correlation_id = 0;
  std::string name;
};
struct ApiSpec {
  uint64_t start_ns = 0;
  uint64_t duration_ns = 0;
  uint32_t tid = 0;
  uint32_t correlation_id = 0;
  uint32_t cbid = 211;  // cudaLaunchKernel
  std::string name = "cudaLaunchKernel_v7000";
};

// The machine description CUPTI sends once per device, context and stream (schema/cuda.proto
// CudaDevice, CudaContext, CudaStream): what a real run records whatever its capture window.
struct DeviceSpec {
  uint32_t device_id = 0;              // CUDA ordinal in the process
  std::string name = "NVIDIA H100 80GB HBM3";
  std::string uuid;                    // 16 bytes
  uint64_t global_memory_bytes = 85520809984ULL;
  uint32_t multiprocessors = 132;
  uint32_t compute_major = 9, compute_minor = 0;
};
struct ContextSpec {
  uint32_t context_id = 1;
  uint32_t device_id = 0;
  uint32_t null_stream_id = 7;
};
struct StreamSpec {
  uint32_t context_id = 1;
  uint32_t stream_id = 7;
  uint32_t flag = 2;  // CUpti_ActivityStreamFlag: 1 default, 2 non-blocking, 3 NULL stream
};

// One CUDA graph-trace activity (schema/cuda.proto CudaGraphTrace).
struct GraphTraceSpec {
  uint64_t start_ns = 0;
  uint64_t duration_ns = 0;
  uint32_t device_id = 0;
  uint32_t context_id = 1;
  uint32_t stream_id = 7;
  uint32_t correlation_id = 0;
  uint32_t graph_id = 0;
};

// One NCCL profiler-plugin record (schema/nccl.proto NcclEvent).
struct NcclSpec {
  uint32_t kind = 0;  // nccl::field::kind::kStart / kStop / kState / kFinalize
  uint64_t ts_ns = 0;
  uint64_t event_id = 0;
  uint32_t type = 0;  // NcclEventType bit
  uint32_t comm_index = 0;
  uint64_t parent_id = 0;
  int32_t rank = 0;
  std::string func, datatype, algo, proto;
  uint64_t seq_number = 0;
  uint64_t count = 0;
  uint32_t n_channels = 0;
  uint32_t channel_id = 0;
  uint64_t gpu_timer_ns = 0;
  uint64_t stream = 0;
  uint32_t state = 0;  // kState records
  uint64_t trans_size_bytes = 0;
  uint32_t group_depth = 0;
};
struct NcclCommSpec {
  uint32_t comm_index = 1;
  uint64_t comm_hash = 0;
  std::string name;
  int32_t n_nodes = 1, n_ranks = 1, rank = 0;
  uint32_t plugin_version = 5;
  uint64_t init_ts_ns = 0;
  uint32_t init_tid = 0;
};

// The range profiler's configuration of one context (metrics by key = label, unit "", scale 1).
struct RangeConfigSpec {
  uint32_t device_id = 0;
  uint32_t context_id = 1;
  uint32_t mode = 2;  // RangeMetricsMode: 1 NVTX, 2 kernel
  std::vector<std::string> metrics;  // key (also the label and, prefixed "c.", the CUPTI name)
};
struct RangeResultSpec {
  uint32_t device_id = 0;
  uint32_t context_id = 1;
  uint32_t mode = 2;
  std::string range_name;
  uint32_t range_index = 0;
  uint64_t pass_id = 0;
  uint64_t pass_start_ns = 0, pass_end_ns = 0;
  uint32_t tid = 0;
  std::vector<double> values;
};

class SyntheticStream {
 public:
  // Stream clock (monotonic) and realtime at the session start.
  SyntheticStream(uint32_t pid, uint64_t start_mono_ns, uint64_t start_realtime_ns, std::string host = "testhost",
                  std::string boot_id = "boot-0");
  ProcessInfo& info() { return info_; }
  Config& config() { return config_; }

  void BeginChunk(uint64_t sequence_id, uint32_t tid, uint64_t base_ns);
  void Nvtx(const NvtxSpec& e);
  void Thread(uint32_t tid, const std::string& name, int32_t nice = 0);
  void Domain(uint32_t id, const std::string& name, uint64_t ts_ns, uint32_t tid);
  void RegisteredString(uint64_t id, uint32_t domain_id, const std::string& text);
  void Drops(uint32_t source, uint32_t tid, uint64_t count, uint64_t ts_ns);
  // A periodic clock pair (Chunk.clock; at most one per chunk).
  void ClockSnapshot(uint64_t mono_ns, uint64_t realtime_ns);
  void Kernel(const KernelSpec& k);
  void Device(const DeviceSpec& d);
  void Context(const ContextSpec& c);
  void Stream(const StreamSpec& s);
  void Api(const ApiSpec& a);
  void GraphTrace(const GraphTraceSpec& g);
  // A graph launch's callback record: `correlation_id` launched executable graph `exec_id`.
  void GraphLaunch(uint64_t ts_ns, uint32_t correlation_id, uint32_t exec_id);
  void Nccl(const NcclSpec& e);
  void NcclComm(const NcclCommSpec& c);
  void RangeConfig(const RangeConfigSpec& c);
  void RangeResult(const RangeResultSpec& r);
  void EndChunk();
  // The end-of-stream chunk (omit it to simulate a killed process).
  void Close(const std::string& reason = "exit");

  // Header + every chunk so far.
  std::string Bytes() const;
  // Bytes of the chunks written so far (and drops them from memory; Bytes() no longer has them):
  // long streams are written piecewise, after Preamble().
  std::string Preamble() const;
  std::string TakeChunks();
  void WriteTo(const std::string& path) const;
  size_t header_bytes() const;

 private:
  ProcessInfo info_;
  Config config_;
  uint64_t start_mono_ns_, start_realtime_ns_;
  StringInterner interner_;
  ChunkBuilder chunk_;
};

}  // namespace gt::test
