// Catalog: what a viewer export needs to know before it streams events: the processes, threads and
// GPU streams that carry events, their names, ranks and hosts, the GPUs, NVTX domains, GPU metric
// names, the session start, and which optional tables exist. Built from DISTINCT/aggregate queries
// (memory grows with the number of entities, never with the number of events).
//
// Built once by the exporting thread; read-only afterwards.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "schema/status.h"
#include "tools/viewers/sqlite_reader.h"

namespace gt::viewers {

// Serialized ids (fact sheet §3 fact 3): globalTid = <hw:8><vm:8><pid:24><tid:24>.
inline constexpr int64_t kPidMask = -16777216;  // 0xFFFFFFFFFF000000: globalTid -> globalPid
inline uint32_t PidOf(int64_t global_id) {
  return static_cast<uint32_t>((global_id >> 24) & 0xFFFFFF);
}
inline uint32_t TidOf(int64_t global_tid) {
  return static_cast<uint32_t>(global_tid & 0xFFFFFF);
}
inline int64_t HostKeyOf(int64_t global_id) {
  return global_id & static_cast<int64_t>(0xFFFF000000000000ULL);
}

// CUPTI's "no stream" value in SYNCHRONIZATION.streamId (context and event syncs).
inline constexpr int64_t kInvalidStream = 4294967295;

struct ProcessInfo {
  int64_t global_pid = 0;
  uint32_t pid = 0;      // OS pid
  int32_t view_pid = 0;  // pid shown in viewers: the OS pid unless two hosts share it
  std::string name;      // PROCESSES.name (executable), or "process <pid>"
  int32_t rank = 0;      // launcher rank (MPI_RANKS) or assigned after the largest one
  bool rank_from_launcher = false;
  std::string host;                  // TARGET_INFO_SYSTEM_ENV Hostname of the process's host, or "host<N>"
  uint32_t host_index = 0;           // dense index of the host in this export
  bool has_nccl_operations = false;  // rows in GTRACE_NCCL_OPERATIONS
};

struct ThreadInfo {
  int64_t global_tid = 0;
  size_t process = 0;  // index into Catalog::processes
  uint32_t tid = 0;
  int64_t view_tid = 0;  // tid shown in viewers (unique in the export)
  std::string name;      // ThreadNames, or "thread <tid>"
};

struct StreamInfo {
  size_t process = 0;
  int64_t device_id = 0;  // CUDA ordinal in the process
  int64_t stream_id = 0;  // -1: device-wide synchronizations (no stream)
};

struct GpuInfo {
  int64_t id = 0;  // TARGET_INFO_GPU.id
  int64_t cu_device = -1;
  std::string name;
  int64_t total_memory_bytes = 0, sm_count = 0, compute_major = 0, compute_minor = 0;
  int64_t max_threads_per_block = 0, max_shmem_per_block_bytes = 0, max_shmem_per_block_optin_bytes = 0;
  int64_t max_shmem_per_sm_bytes = 0, max_registers_per_block = 0, max_registers_per_sm = 0;
  int64_t threads_per_warp = 0, max_warps_per_sm = 0;
};

struct MetricInfo {
  int64_t type_id = 0, metric_id = 0;
  int64_t gpu = 0;  // typeId & 0xFF
  std::string name;
};

// Which optional tables (and NCCL columns) this file has.
struct TablePresence {
  bool runtime = false, kernel = false, memcpy = false, memset = false, sync = false, nvtx = false;
  bool metrics = false;
  std::string nccl_operations;  // GTRACE_NCCL_OPERATIONS when usable, else ""
};

class Catalog {
 public:
  static Status Load(SqliteReader* db, Catalog* out);

  const std::string& source() const { return source_; }
  int64_t utc_epoch_ns() const { return utc_epoch_ns_; }
  int64_t end_ns() const { return end_ns_; }           // latest end of any event (or the session duration)
  uint64_t total_rows() const { return total_rows_; }  // events to stream (for progress)
  const TablePresence& tables() const { return tables_; }

  const std::vector<ProcessInfo>& processes() const { return processes_; }
  const std::vector<ThreadInfo>& threads() const { return threads_; }
  const std::vector<StreamInfo>& streams() const { return streams_; }
  const std::vector<GpuInfo>& gpus() const { return gpus_; }
  const std::vector<MetricInfo>& metrics() const { return metrics_; }
  std::vector<std::string> hosts() const { return hosts_; }
  int32_t world_size() const { return world_size_; }

  std::optional<size_t> FindProcess(int64_t global_pid) const;
  std::optional<size_t> FindThread(int64_t global_tid) const;
  std::optional<size_t> FindStream(int64_t global_pid, int64_t device_id, int64_t stream_id) const;
  std::optional<size_t> FindMetric(int64_t type_id, int64_t metric_id) const;
  // NVTX domain name of (process, domainId); "" for the default domain or an unnamed one.
  std::string DomainName(int64_t global_pid, int64_t domain_id) const;
  // TARGET_INFO_GPU row of a process's CUDA device (via TARGET_INFO_CUDA_DEVICE, else cuDevice).
  const GpuInfo* GpuOf(size_t process, int64_t device_id) const;

 private:
  Status LoadSession(SqliteReader* db);
  Status LoadProcesses(SqliteReader* db);
  Status LoadThreads(SqliteReader* db);
  Status LoadStreams(SqliteReader* db);
  Status LoadGpus(SqliteReader* db);
  Status LoadDomainsAndMetrics(SqliteReader* db);
  void AssignRanks(const std::map<int64_t, int32_t>& launcher_ranks);
  void AssignViewIds();

  std::string source_;
  int64_t utc_epoch_ns_ = 0;
  int64_t end_ns_ = 0;
  uint64_t total_rows_ = 0;
  TablePresence tables_;
  std::vector<ProcessInfo> processes_;  // sorted by rank, then pid
  std::vector<ThreadInfo> threads_;     // sorted by process, then tid
  std::vector<StreamInfo> streams_;     // sorted by process, device, stream (-1 last)
  std::vector<GpuInfo> gpus_;
  std::vector<MetricInfo> metrics_;
  std::vector<std::string> hosts_;
  int32_t world_size_ = 0;
  std::map<int64_t, size_t> process_index_, thread_index_;
  std::map<std::tuple<int64_t, int64_t, int64_t>, size_t> stream_index_;
  std::map<std::pair<int64_t, int64_t>, size_t> metric_index_;
  std::map<std::pair<int64_t, int64_t>, std::string> domains_;          // (globalPid, domainId) -> name
  std::map<std::pair<uint32_t, int64_t>, int64_t> cuda_device_to_gpu_;  // (pid, cudaId) -> gpuId
};

}  // namespace gt::viewers
