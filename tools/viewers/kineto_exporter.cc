#include "tools/viewers/kineto_exporter.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>

#include "tools/viewers/activity_names.h"
#include "tools/viewers/json_text.h"
#include "tools/viewers/output_dir.h"
#include "tools/viewers/output_file.h"

namespace gt::viewers {
namespace {

// The host-side thread of NCCL operations (GTRACE_NCCL_OPERATIONS) in a process.
constexpr int64_t kNcclOperationsTid = 0x7FFF0000;

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string BaseName(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

class KinetoExporter : public ViewerWriter {
 public:
  KinetoExporter(const Catalog* catalog, std::string output, bool force)
      : catalog_(*catalog), output_(std::move(output)), force_(force) {}

  Status Init();
  size_t passes() const override { return (ranks_.size() + kKinetoRanksPerPass - 1) / kKinetoRanksPerPass; }
  Status BeginPass(size_t pass) override;
  Status OnEvent(const Event& e) override;
  Status EndPass(size_t pass) override;
  Status Commit(std::vector<std::string>* outputs) override;
  std::vector<std::string> warnings() const override;

 private:
  struct Rank {
    int32_t rank = 0;
    std::vector<size_t> processes;
    std::set<int64_t> devices;  // CUDA ordinals used by its processes
    std::unique_ptr<OutputFile> file;
    std::string buf;
    bool first_event = true;
  };

  void Header(Rank* r);
  void BeginEvent(Rank* r);
  void Flush(Rank* r, bool force);
  int64_t CpuPid(size_t process) const { return cpu_pids_[process]; }
  void Complete(Rank* r, const char* cat, std::string_view name, int64_t pid, int64_t tid, const Event& e);
  void Flow(Rank* r, char phase, uint64_t id, int64_t pid, int64_t tid, int64_t ts_ns);

  const Catalog& catalog_;
  std::string output_;
  bool force_;
  bool single_file_ = false;
  std::unique_ptr<OutputDir> dir_;
  std::vector<Rank> ranks_;
  std::vector<size_t> rank_of_process_;  // index into ranks_
  std::vector<int64_t> cpu_pids_;
  std::map<int64_t, std::pair<size_t, int64_t>> metric_target_;  // TARGET_INFO_GPU.id -> (rank, ordinal)
  size_t pass_begin_ = 0, pass_end_ = 0;
  std::vector<std::string> committed_;
  uint64_t unplaced_ = 0, unplaced_metrics_ = 0;
};

Status KinetoExporter::Init() {
  const auto& processes = catalog_.processes();
  std::map<int32_t, size_t> index;
  rank_of_process_.resize(processes.size());
  for (size_t p = 0; p < processes.size(); ++p) {
    auto [it, added] = index.emplace(processes[p].rank, ranks_.size());
    if (added)
      ranks_.emplace_back().rank = processes[p].rank;
    ranks_[it->second].processes.push_back(p);
    rank_of_process_[p] = it->second;
  }
  for (const StreamInfo& s : catalog_.streams())
    ranks_[rank_of_process_[s.process]].devices.insert(s.device_id);
  // Kineto puts GPU events on pid = device ordinal; a host pid equal to one (pid 1 in a container)
  // would merge with it, so such a pid moves out of the way.
  cpu_pids_.resize(processes.size());
  for (size_t p = 0; p < processes.size(); ++p) {
    int64_t pid = processes[p].view_pid;
    if (ranks_[rank_of_process_[p]].devices.count(pid) != 0)
      pid += 0x40000000;
    cpu_pids_[p] = pid;
  }
  for (size_t r = 0; r < ranks_.size(); ++r) {
    for (size_t p : ranks_[r].processes) {
      for (int64_t device : ranks_[r].devices) {
        if (const GpuInfo* gpu = catalog_.GpuOf(p, device))
          metric_target_.emplace(gpu->id, std::pair{r, device});
      }
    }
  }
  single_file_ = EndsWith(output_, ".json");
  if (single_file_) {
    if (ranks_.size() != 1) {
      return Status::Error("the export holds " + std::to_string(ranks_.size()) + " ranks; -o " + output_ +
                           " must name a directory (one JSON file per rank), not a .json file");
    }
    return OutputFile::CheckWritable(output_, force_);
  }
  return OutputDir::Create(output_, force_, &dir_);
}

void KinetoExporter::Header(Rank* r) {
  std::string& b = r->buf;
  // distributedInfo first and on one line: HTA finds a file's rank with a line-by-line regex.
  b += "{\n  \"schemaVersion\": 1,\n  \"distributedInfo\": {\"backend\": \"nccl\", \"rank\": " +
       std::to_string(r->rank) + ", \"world_size\": " + std::to_string(catalog_.world_size()) + "},\n";
  b += "  \"deviceProperties\": [";
  bool first = true;
  for (int64_t device : r->devices) {
    const GpuInfo* g = nullptr;
    for (size_t p : r->processes) {
      if ((g = catalog_.GpuOf(p, device)) != nullptr)
        break;
    }
    b += first ? "\n    {" : ",\n    {";
    first = false;
    b += "\"id\": " + std::to_string(device) + ", \"name\": ";
    AppendJsonString(&b, g != nullptr ? g->name : "");
    if (g != nullptr) {
      auto field = [&b](const char* name, int64_t value) {
        b += std::string(", \"") + name + "\": " + std::to_string(value);
      };
      field("totalGlobalMem", g->total_memory_bytes);
      field("computeMajor", g->compute_major);
      field("computeMinor", g->compute_minor);
      field("maxThreadsPerBlock", g->max_threads_per_block);
      field("maxThreadsPerMultiprocessor", g->max_warps_per_sm * g->threads_per_warp);
      field("regsPerBlock", g->max_registers_per_block);
      field("regsPerMultiprocessor", g->max_registers_per_sm);
      field("warpSize", g->threads_per_warp);
      field("sharedMemPerBlock", g->max_shmem_per_block_bytes);
      field("sharedMemPerBlockOptin", g->max_shmem_per_block_optin_bytes);
      field("sharedMemPerMultiprocessor", g->max_shmem_per_sm_bytes);
      field("numSms", g->sm_count);
    }
    b += "}";
  }
  b += first ? "],\n" : "\n  ],\n";
  b += "  \"baseTimeNanoseconds\": " + std::to_string(catalog_.utc_epoch_ns()) + ",\n";
  b += "  \"displayTimeUnit\": \"ms\",\n  \"traceName\": ";
  AppendJsonString(&b, catalog_.source());
  b += ",\n  \"traceEvents\": [";

  // Names of processes, threads, devices and streams (Kineto's metadata events).
  auto meta = [&](const char* what, int64_t pid, int64_t tid, const char* key, const std::string* text,
                  int64_t number) {
    BeginEvent(r);
    b += std::string("{\"ph\": \"M\", \"name\": \"") + what + "\", \"pid\": " + std::to_string(pid) +
         ", \"tid\": " + std::to_string(tid) + ", \"ts\": 0, \"args\": {\"" + key + "\": ";
    if (text != nullptr) {
      AppendJsonString(&b, *text);
    } else {
      b += std::to_string(number);
    }
    b += "}}";
  };
  for (size_t p : r->processes) {
    const ProcessInfo& info = catalog_.processes()[p];
    std::string name =
        BaseName(info.name) + " (rank " + std::to_string(info.rank) + ", pid " + std::to_string(info.pid) + ")";
    std::string labels = "rank " + std::to_string(info.rank) + ", " + info.host;
    meta("process_name", CpuPid(p), 0, "name", &name, 0);
    meta("process_labels", CpuPid(p), 0, "labels", &labels, 0);
    meta("process_sort_index", CpuPid(p), 0, "sort_index", nullptr, CpuPid(p));
    for (const ThreadInfo& t : catalog_.threads()) {
      if (t.process != p)
        continue;
      std::string thread = "thread " + std::to_string(t.tid) + " (" + t.name + ")";
      meta("thread_name", CpuPid(p), t.view_tid, "name", &thread, 0);
    }
    if (!catalog_.tables().nccl_operations.empty()) {
      std::string nccl = "NCCL operations";
      meta("thread_name", CpuPid(p), kNcclOperationsTid, "name", &nccl, 0);
    }
  }
  std::set<std::pair<int64_t, int64_t>> streams;
  for (const StreamInfo& s : catalog_.streams()) {
    if (rank_of_process_[s.process] == static_cast<size_t>(r - ranks_.data())) {
      streams.emplace(s.device_id, s.stream_id);
    }
  }
  for (int64_t device : r->devices) {
    std::string name = "GPU " + std::to_string(device);
    meta("process_name", device, 0, "name", &name, 0);
    meta("process_sort_index", device, 0, "sort_index", nullptr, 0x1000000 + device);
  }
  for (const auto& [device, stream] : streams) {
    std::string name = stream < 0 ? "synchronization" : "stream " + std::to_string(stream);
    meta("thread_name", device, stream < 0 ? 0 : stream, "name", &name, 0);
  }
}

void KinetoExporter::BeginEvent(Rank* r) {
  r->buf += r->first_event ? "\n  " : ",\n  ";
  r->first_event = false;
}

void KinetoExporter::Flush(Rank* r, bool force) {
  if (r->buf.size() < (1 << 16) && !force)
    return;
  r->file->Write(r->buf);
  r->buf.clear();
}

Status KinetoExporter::BeginPass(size_t pass) {
  pass_begin_ = pass * kKinetoRanksPerPass;
  pass_end_ = std::min(ranks_.size(), pass_begin_ + kKinetoRanksPerPass);
  for (size_t i = pass_begin_; i < pass_end_; ++i) {
    Rank& r = ranks_[i];
    std::string path = single_file_ ? output_ : dir_->PathOf("rank_" + std::to_string(r.rank) + ".json");
    Status st = OutputFile::Create(path, single_file_ ? force_ : false, &r.file);
    if (!st.ok())
      return st;
    Header(&r);
  }
  return Status::Ok();
}

void KinetoExporter::Complete(Rank* r,
                              const char* cat,
                              std::string_view name,
                              int64_t pid,
                              int64_t tid,
                              const Event& e) {
  BeginEvent(r);
  std::string& b = r->buf;
  b += std::string("{\"ph\": \"X\", \"cat\": \"") + cat + "\", \"name\": ";
  AppendJsonString(&b, name);
  b += ", \"pid\": " + std::to_string(pid) + ", \"tid\": " + std::to_string(tid) + ", \"ts\": ";
  AppendMicros(&b, e.start_ns);
  b += ", \"dur\": ";
  AppendMicros(&b, e.end_ns - e.start_ns);
}

void KinetoExporter::Flow(Rank* r, char phase, uint64_t id, int64_t pid, int64_t tid, int64_t ts_ns) {
  BeginEvent(r);
  std::string& b = r->buf;
  b += std::string("{\"ph\": \"") + phase + "\", \"id\": " + std::to_string(id) + ", \"pid\": " + std::to_string(pid) +
       ", \"tid\": " + std::to_string(tid) + ", \"ts\": ";
  AppendMicros(&b, ts_ns);
  b += ", \"cat\": \"ac2g\", \"name\": \"ac2g\"";
  if (phase == 'f')
    b += ", \"bp\": \"e\"";  // binds to the enclosing slice: the GPU activity
  b += "}";
}

Status KinetoExporter::OnEvent(const Event& e) {
  if (e.kind == EventKind::kMetric) {
    auto target = metric_target_.find(e.device_id);
    if (target == metric_target_.end()) {
      ++unplaced_metrics_;
      return Status::Ok();
    }
    auto [rank, ordinal] = target->second;
    if (rank < pass_begin_ || rank >= pass_end_)
      return Status::Ok();
    Rank* r = &ranks_[rank];
    BeginEvent(r);
    r->buf += "{\"ph\": \"C\", \"cat\": \"gpu_metrics\", \"name\": ";
    AppendJsonString(&r->buf, e.name);
    r->buf += ", \"pid\": " + std::to_string(ordinal) + ", \"tid\": 0, \"ts\": ";
    AppendMicros(&r->buf, e.start_ns);
    r->buf += ", \"args\": {\"value\": " + std::to_string(e.value) + "}}";
    Flush(r, false);
    return Status::Ok();
  }
  auto process = catalog_.FindProcess(e.global_pid);
  if (!process) {
    ++unplaced_;
    return Status::Ok();
  }
  size_t rank = rank_of_process_[*process];
  if (rank < pass_begin_ || rank >= pass_end_)
    return Status::Ok();
  Rank* r = &ranks_[rank];
  std::string& b = r->buf;
  // Flow ids: Kineto uses the correlation id; it is unique per process, so a rank holding several
  // processes gets ids that include the process.
  const uint64_t flow_id =
      r->processes.size() == 1 ? static_cast<uint64_t>(e.correlation_id) : FlowId(e.global_pid, e.correlation_id);
  auto thread = catalog_.FindThread(e.global_tid);
  int64_t tid = thread ? catalog_.threads()[*thread].view_tid : TidOf(e.global_tid);
  switch (e.kind) {
    case EventKind::kNvtxRange:
    case EventKind::kNvtxStartEnd:
    case EventKind::kNvtxMark: {
      std::string domain = catalog_.DomainName(e.global_pid, e.domain_id);
      if (e.kind == EventKind::kNvtxMark) {
        BeginEvent(r);
        b += "{\"ph\": \"i\", \"s\": \"t\", \"cat\": \"user_annotation\", \"name\": ";
        AppendJsonString(&b, e.name);
        b += ", \"pid\": " + std::to_string(CpuPid(*process)) + ", \"tid\": " + std::to_string(tid) + ", \"ts\": ";
        AppendMicros(&b, e.start_ns);
      } else {
        Complete(r, "user_annotation", e.name, CpuPid(*process), tid, e);
      }
      b += ", \"args\": {\"source\": \"";
      b += e.kind == EventKind::kNvtxStartEnd ? "nvtx start/end"
           : e.kind == EventKind::kNvtxMark   ? "nvtx mark"
                                              : "nvtx";
      b += "\"";
      if (!domain.empty()) {
        b += ", \"domain\": ";
        AppendJsonString(&b, domain);
      }
      b += "}}";
      break;
    }
    case EventKind::kApi: {
      Complete(r, e.event_class == 1 ? "cuda_driver" : "cuda_runtime", ApiDisplayName(e.name), CpuPid(*process), tid,
               e);
      b += ", \"args\": {\"correlation\": " + std::to_string(e.correlation_id);
      if (e.return_value != 0)
        b += ", \"return value\": " + std::to_string(e.return_value);
      b += "}}";
      if (e.gpu_ops > 0)
        Flow(r, 's', flow_id, CpuPid(*process), tid, e.start_ns);
      break;
    }
    case EventKind::kKernel:
    case EventKind::kMemcpy:
    case EventKind::kMemset:
    case EventKind::kSync: {
      // Device-wide synchronizations have no stream: Kineto writes stream -1 (HTA then counts them as
      // host-side), shown on a "synchronization" row.
      int64_t row = e.stream_id < 0 ? 0 : e.stream_id;
      if (e.kind == EventKind::kKernel) {
        Complete(r, "kernel", e.name, e.device_id, row, e);
        b += ", \"args\": {\"device\": " + std::to_string(e.device_id) +
             ", \"stream\": " + std::to_string(e.stream_id) + ", \"correlation\": " + std::to_string(e.correlation_id) +
             ", \"registers per thread\": " + std::to_string(e.registers_per_thread) +
             ", \"shared memory\": " + std::to_string(e.static_shared_bytes + e.dynamic_shared_bytes) +
             ", \"grid\": [" + std::to_string(e.grid[0]) + ", " + std::to_string(e.grid[1]) + ", " +
             std::to_string(e.grid[2]) + "], \"block\": [" + std::to_string(e.block[0]) + ", " +
             std::to_string(e.block[1]) + ", " + std::to_string(e.block[2]) + "]}}";
      } else if (e.kind == EventKind::kMemcpy || e.kind == EventKind::kMemset) {
        bool copy = e.kind == EventKind::kMemcpy;
        Complete(r, copy ? "gpu_memcpy" : "gpu_memset",
                 copy ? MemcpyName(e.copy_kind, e.src_kind, e.dst_kind) : MemsetName(e.mem_kind), e.device_id, row, e);
        int64_t dur = e.end_ns - e.start_ns;
        char bandwidth[32];
        std::snprintf(bandwidth, sizeof(bandwidth), "%.3f", dur > 0 ? static_cast<double>(e.bytes) / dur : 0.0);
        b += ", \"args\": {\"device\": " + std::to_string(e.device_id) +
             ", \"stream\": " + std::to_string(e.stream_id) + ", \"correlation\": " + std::to_string(e.correlation_id) +
             ", \"bytes\": " + std::to_string(e.bytes) + ", \"memory bandwidth (GB/s)\": " + bandwidth + "}}";
      } else {
        Complete(r, "cuda_sync", SyncName(e.sync_type), e.device_id, row, e);
        b += ", \"args\": {\"device\": " + std::to_string(e.device_id) +
             ", \"stream\": " + std::to_string(e.stream_id) + ", \"correlation\": " + std::to_string(e.correlation_id) +
             "}}";
      }
      if (e.has_launch && e.kind != EventKind::kSync)
        Flow(r, 'f', flow_id, e.device_id, row, e.start_ns);
      break;
    }
    case EventKind::kNcclOp: {
      Complete(r, "user_annotation", "nccl:" + e.name, CpuPid(*process), kNcclOperationsTid, e);
      b +=
          std::string(", \"args\": {\"source\": \"nccl\", \"time\": \"") + (e.nccl_gpu_time ? "gpu" : "enqueue") + "\"";
      if (e.bytes >= 0)
        b += ", \"message bytes\": " + std::to_string(e.bytes);
      if (e.nccl_ranks >= 0)
        b += ", \"group size\": " + std::to_string(e.nccl_ranks);
      if (e.nccl_seq >= 0)
        b += ", \"seq\": " + std::to_string(e.nccl_seq);
      b += "}}";
      break;
    }
    case EventKind::kMetric:
      break;
  }
  Flush(r, false);
  return Status::Ok();
}

Status KinetoExporter::EndPass(size_t pass) {
  for (size_t i = pass_begin_; i < pass_end_; ++i) {
    Rank& r = ranks_[i];
    r.buf += "\n  ]\n}\n";
    Flush(&r, true);
    if (single_file_)
      continue;  // committed in Commit, with the rename into place
    Status st = r.file->Commit();
    if (!st.ok())
      return st;
    committed_.push_back(dir_->path() + "/rank_" + std::to_string(r.rank) + ".json");
    r.file.reset();
  }
  return Status::Ok();
}

Status KinetoExporter::Commit(std::vector<std::string>* outputs) {
  if (single_file_) {
    Status st = ranks_[0].file->Commit();
    if (!st.ok())
      return st;
    outputs->push_back(output_);
    return Status::Ok();
  }
  Status st = dir_->Commit();
  if (!st.ok())
    return st;
  outputs->insert(outputs->end(), committed_.begin(), committed_.end());
  return Status::Ok();
}

std::vector<std::string> KinetoExporter::warnings() const {
  std::vector<std::string> out;
  if (unplaced_ > 0)
    out.push_back(std::to_string(unplaced_) + " events of unknown processes were left out");
  if (unplaced_metrics_ > 0) {
    out.push_back(std::to_string(unplaced_metrics_) +
                  " GPU metric samples of GPUs no rank used were left out (the Perfetto export has them)");
  }
  return out;
}

}  // namespace

Status CreateKinetoExporter(const Catalog* catalog,
                            const std::string& output,
                            bool force,
                            std::unique_ptr<ViewerWriter>* out) {
  auto exporter = std::make_unique<KinetoExporter>(catalog, output, force);
  Status st = exporter->Init();
  if (!st.ok())
    return st;
  *out = std::move(exporter);
  return Status::Ok();
}

}  // namespace gt::viewers
