#include "tools/viewers/paraver_exporter.h"

#include <algorithm>
#include <ctime>
#include <map>
#include <tuple>

#include "tools/viewers/activity_names.h"
#include "tools/viewers/end_queue.h"
#include "tools/viewers/output_file.h"
#include "tools/viewers/paraver_pcf.h"

namespace gt::viewers {
namespace {

struct PrvThread {
  int task = 0;    // 1-based
  int thread = 0;  // 1-based within the task
  int cpu = 0;     // 1-based, one CPU per thread
  uint32_t node = 0;
  std::string name;
  int64_t busy_until_ns = -1;  // end of the last state record
};

class ParaverExporter : public ViewerWriter {
 public:
  ParaverExporter(const Catalog* catalog, std::string prv) : catalog_(*catalog), prv_path_(std::move(prv)) {}

  Status Init(bool force);
  Status OnEvent(const Event& e) override;
  Status Commit(std::vector<std::string>* outputs) override;

 private:
  std::string Prefix(int kind, const PrvThread& t) const {
    return std::to_string(kind) + ":" + std::to_string(t.cpu) + ":1:" + std::to_string(t.task) + ":" +
           std::to_string(t.thread) + ":";
  }
  void Line(const std::string& line) {
    buf_ += line;
    buf_ += '\n';
    ++records_;
    if (buf_.size() >= (1 << 20)) {
      prv_->Write(buf_);
      buf_.clear();
    }
  }
  void Later(int64_t time_ns, std::string line) { pending_.Push(time_ns, std::move(line)); }
  // A state for [start, end] on `t`, after what `t` already holds (states never overlap).
  void State(PrvThread* t, int64_t start_ns, int64_t end_ns, int state);
  // Events of (type -> value) at start, and the values they fall back to at end.
  void Events(PrvThread* t, const Event& e, const std::vector<std::pair<int64_t, uint64_t>>& values, bool nest);
  int64_t NvtxType(const Event& e, std::string* domain);
  std::string Header() const;
  std::string RowText() const;

  const Catalog& catalog_;
  std::string prv_path_, pcf_path_, row_path_;
  std::unique_ptr<OutputFile> prv_, pcf_, row_;
  std::string buf_;
  uint64_t records_ = 0;
  prv::ParaverLabels labels_;
  EndQueue<std::string> pending_;  // records due later than the current event
  std::vector<PrvThread> threads_;
  std::vector<size_t> host_thread_, stream_thread_, nccl_thread_;  // catalog index -> threads_ index
  std::map<int64_t, size_t> metric_thread_;                        // GPU id -> threads_ index
  // Per (thread, type): the open nested values, (end, value), innermost last.
  std::map<std::pair<size_t, int64_t>, std::vector<std::pair<int64_t, uint64_t>>> open_;
  std::map<std::string, int64_t> domain_types_;
};

Status ParaverExporter::Init(bool force) {
  if (prv_path_.size() < 4 || prv_path_.compare(prv_path_.size() - 4, 4, ".prv") != 0)
    prv_path_ += ".prv";
  std::string stem = prv_path_.substr(0, prv_path_.size() - 4);
  pcf_path_ = stem + ".pcf";
  row_path_ = stem + ".row";
  // All three are checked before any is written.
  for (const std::string* p : {&prv_path_, &pcf_path_, &row_path_}) {
    Status st = OutputFile::CheckWritable(*p, force);
    if (!st.ok())
      return st;
  }
  // Threads: per task, host threads, GPU streams, NCCL operations, then metric threads.
  const auto& processes = catalog_.processes();
  std::vector<std::vector<size_t>> per_task(processes.size());
  host_thread_.assign(catalog_.threads().size(), 0);
  stream_thread_.assign(catalog_.streams().size(), 0);
  nccl_thread_.assign(processes.size(), SIZE_MAX);
  auto add = [&](size_t process, std::string name) {
    PrvThread t;
    t.task = static_cast<int>(process) + 1;
    t.node = processes[process].host_index + 1;
    t.name = std::move(name);
    threads_.push_back(std::move(t));
    per_task[process].push_back(threads_.size() - 1);
    return threads_.size() - 1;
  };
  for (size_t i = 0; i < catalog_.threads().size(); ++i) {
    const ThreadInfo& t = catalog_.threads()[i];
    const ProcessInfo& p = processes[t.process];
    host_thread_[i] = add(t.process, t.name + " (rank " + std::to_string(p.rank) + ", pid " + std::to_string(p.pid) +
                                         ", tid " + std::to_string(t.tid) + ")");
  }
  for (size_t i = 0; i < catalog_.streams().size(); ++i) {
    const StreamInfo& s = catalog_.streams()[i];
    std::string name = "CUDA-D" + std::to_string(s.device_id) +
                       (s.stream_id < 0 ? ".sync" : ".S" + std::to_string(s.stream_id)) + " (rank " +
                       std::to_string(processes[s.process].rank) + ")";
    stream_thread_[i] = add(s.process, std::move(name));
  }
  for (size_t p = 0; p < processes.size(); ++p) {
    if (processes[p].has_nccl_operations) {
      nccl_thread_[p] = add(p, "NCCL operations (rank " + std::to_string(processes[p].rank) + ")");
    }
  }
  for (const MetricInfo& m : catalog_.metrics()) {
    if (metric_thread_.count(m.gpu) != 0)
      continue;
    size_t owner = 0;  // the first process that uses this GPU, else the first process
    for (const StreamInfo& s : catalog_.streams()) {
      const GpuInfo* g = catalog_.GpuOf(s.process, s.device_id);
      if (g != nullptr && g->id == m.gpu) {
        owner = s.process;
        break;
      }
    }
    metric_thread_[m.gpu] = add(owner, "GPU " + std::to_string(m.gpu) + " metrics");
  }
  // Thread numbers within tasks; one CPU per thread, numbered node by node (the header gives each
  // node its CPU count, so node 1 owns the first ones), then in task order.
  int cpu = 0;
  for (size_t p = 0; p < per_task.size(); ++p) {
    for (size_t k = 0; k < per_task[p].size(); ++k)
      threads_[per_task[p][k]].thread = static_cast<int>(k) + 1;
  }
  std::vector<size_t> order(threads_.size());
  for (size_t i = 0; i < order.size(); ++i)
    order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const PrvThread& x = threads_[a];
    const PrvThread& y = threads_[b];
    return std::tuple(x.node, x.task, x.thread) < std::tuple(y.node, y.task, y.thread);
  });
  for (size_t i : order)
    threads_[i].cpu = ++cpu;

  labels_.NamedType(prv::kRuntimeApi, "CUDA runtime API call");
  labels_.NamedType(prv::kDriverApi, "CUDA driver API call");
  labels_.NamedType(prv::kKernel, "CUDA kernel");
  labels_.NamedType(prv::kNcclKernel, "NCCL kernel");
  labels_.NamedType(prv::kMemoryTransfer, "CUDA memory transfer");
  labels_.NamedType(prv::kGpuSync, "CUDA GPU synchronization");
  for (int s = 1; s <= 4; ++s)
    labels_.Value(prv::kGpuSync, SyncName(s));
  labels_.NumericType(prv::kTransferBytes, "Memory transfer size (bytes)");
  const char* kLaunch[] = {"Kernel GrdX",
                           "Kernel GrdY",
                           "Kernel GrdZ",
                           "Kernel BlkX",
                           "Kernel BlkY",
                           "Kernel BlkZ",
                           "Kernel Static Shared Memory (bytes)",
                           "Kernel Dynamic Shared Memory (bytes)"};
  for (int i = 0; i < 8; ++i)
    labels_.NumericType(prv::kGridX + i, kLaunch[i]);
  labels_.NumericType(prv::kRegistersPerThread, "Kernel Registers/Thread");
  labels_.NumericType(prv::kCorrelation, "Correlation ID");
  for (size_t i = 0; i < catalog_.metrics().size(); ++i) {
    const MetricInfo& m = catalog_.metrics()[i];
    labels_.NumericType(prv::kMetricBase + static_cast<int64_t>(i), "GPU " + std::to_string(m.gpu) + " " + m.name);
  }
  Status st = OutputFile::Create(prv_path_, force, &prv_);
  if (!st.ok())
    return st;
  prv_->Write(Header());
  return Status::Ok();
}

std::string ParaverExporter::Header() const {
  // #Paraver (date):ftime_ns:nodes(cpus,...):applications:tasks(threads:node,...)
  char date[32];
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  localtime_r(&now, &tm);
  std::strftime(date, sizeof(date), "%d/%m/%Y at %H:%M", &tm);
  std::vector<int> cpus(catalog_.hosts().size(), 0);
  std::vector<int> per_task(catalog_.processes().size(), 0);
  for (const PrvThread& t : threads_) {
    ++cpus[t.node - 1];
    ++per_task[t.task - 1];
  }
  std::string h = std::string("#Paraver (") + date + "):" + std::to_string(std::max<int64_t>(catalog_.end_ns(), 1)) +
                  "_ns:" + std::to_string(cpus.size()) + "(";
  for (size_t i = 0; i < cpus.size(); ++i)
    h += (i ? "," : "") + std::to_string(cpus[i]);
  h += "):1:" + std::to_string(per_task.size()) + "(";
  for (size_t i = 0; i < per_task.size(); ++i) {
    h += (i ? "," : "") + std::to_string(per_task[i]) + ":" + std::to_string(catalog_.processes()[i].host_index + 1);
  }
  return h + ")\n";
}

std::string ParaverExporter::RowText() const {
  std::vector<const PrvThread*> by_cpu(threads_.size());
  for (const PrvThread& t : threads_)
    by_cpu[t.cpu - 1] = &t;
  std::string out = "LEVEL CPU SIZE " + std::to_string(threads_.size()) + "\n";
  for (const PrvThread* t : by_cpu)
    out += std::to_string(t->cpu) + "." + catalog_.hosts()[t->node - 1] + "\n";
  out += "\nLEVEL NODE SIZE " + std::to_string(catalog_.hosts().size()) + "\n";
  for (const std::string& h : catalog_.hosts())
    out += h + "\n";
  // Threads in application order: task by task.
  std::vector<const PrvThread*> by_task(by_cpu);
  std::sort(by_task.begin(), by_task.end(), [](const PrvThread* a, const PrvThread* b) {
    return std::pair{a->task, a->thread} < std::pair{b->task, b->thread};
  });
  out += "\nLEVEL THREAD SIZE " + std::to_string(threads_.size()) + "\n";
  for (const PrvThread* t : by_task)
    out += t->name + "\n";
  return out;
}

void ParaverExporter::State(PrvThread* t, int64_t start_ns, int64_t end_ns, int state) {
  int64_t begin = std::max(start_ns, t->busy_until_ns);
  if (end_ns <= begin)
    return;
  std::string line = Prefix(1, *t) + std::to_string(begin) + ":" + std::to_string(end_ns) + ":" + std::to_string(state);
  if (begin > start_ns) {
    Later(begin, std::move(line));  // cut by an earlier state: due later than the current event
  } else {
    Line(line);
  }
  t->busy_until_ns = end_ns;
}

void ParaverExporter::Events(PrvThread* t,
                             const Event& e,
                             const std::vector<std::pair<int64_t, uint64_t>>& values,
                             bool nest) {
  std::string begin = Prefix(2, *t) + std::to_string(e.start_ns);
  std::string end = Prefix(2, *t) + std::to_string(e.end_ns);
  size_t thread = static_cast<size_t>(t - threads_.data());
  for (const auto& [type, value] : values) {
    begin += ":" + std::to_string(type) + ":" + std::to_string(value);
    uint64_t restore = 0;
    if (nest) {
      // Ending an inner range shows its enclosing range again (same type, same thread).
      auto& open = open_[{thread, type}];
      std::erase_if(open, [&](const auto& o) { return o.first <= e.start_ns; });
      if (!open.empty() && e.end_ns <= open.back().first)
        restore = open.back().second;
      open.emplace_back(e.end_ns, value);
    }
    end += ":" + std::to_string(type) + ":" + std::to_string(restore);
  }
  Line(begin);
  if (e.end_ns > e.start_ns || e.kind != EventKind::kNvtxMark)
    Later(e.end_ns, std::move(end));
}

int64_t ParaverExporter::NvtxType(const Event& e, std::string* domain) {
  *domain = catalog_.DomainName(e.global_pid, e.domain_id);
  if (*domain == "NCCL") {
    labels_.NamedType(prv::kNcclRange, "NCCL regions (NVTX domain NCCL)");
    return prv::kNcclRange;
  }
  if (e.kind == EventKind::kNvtxStartEnd) {
    labels_.NamedType(prv::kNvtxStartEnd, "NVTX start/end ranges");
    return prv::kNvtxStartEnd;
  }
  if (domain->empty()) {
    labels_.NamedType(prv::kNvtxRange, "NVTX push/pop ranges");
    return prv::kNvtxRange;
  }
  auto [it, added] = domain_types_.emplace(*domain, 0);
  if (added) {
    // 9600 + 100 k, as nsys2prv numbers other domains; 100 domains at most, then they share one.
    int64_t k = std::min<int64_t>(static_cast<int64_t>(domain_types_.size()) - 1, 99);
    it->second = prv::kNvtxDomainBase + 100 * k;
    labels_.NamedType(it->second, k < 99 ? "NVTX ranges of domain " + *domain : "NVTX ranges of other domains");
  }
  return it->second;
}

Status ParaverExporter::OnEvent(const Event& e) {
  pending_.PopThrough(e.start_ns, [this](int64_t, const std::string& line) { Line(line); });
  auto process = catalog_.FindProcess(e.global_pid);
  switch (e.kind) {
    case EventKind::kNvtxRange:
    case EventKind::kNvtxStartEnd:
    case EventKind::kNvtxMark: {
      auto thread = catalog_.FindThread(e.global_tid);
      if (!thread)
        break;
      PrvThread* t = &threads_[host_thread_[*thread]];
      std::string domain;
      if (e.kind == EventKind::kNvtxMark) {
        labels_.NamedType(prv::kNvtxMark, "NVTX marks");
        Line(Prefix(2, *t) + std::to_string(e.start_ns) + ":" + std::to_string(prv::kNvtxMark) + ":" +
             std::to_string(labels_.Value(prv::kNvtxMark, e.name)));
        break;
      }
      int64_t type = NvtxType(e, &domain);
      Events(t, e, {{type, labels_.Value(type, e.name)}}, true);
      break;
    }
    case EventKind::kApi: {
      auto thread = catalog_.FindThread(e.global_tid);
      if (!thread)
        break;
      PrvThread* t = &threads_[host_thread_[*thread]];
      std::string name = ApiDisplayName(e.name);
      int state = prv::kStateOthers;
      switch (CategorizeApi(name)) {
        case ApiCategory::kLaunch:
          state = prv::kStateConfiguringAccelerator;
          break;
        case ApiCategory::kMemoryTransfer:
          state = prv::kStateMemoryTransfer;
          break;
        case ApiCategory::kSynchronization:
          state = prv::kStateSynchronization;
          break;
        case ApiCategory::kAllocation:
          state = prv::kStateAllocating;
          break;
        case ApiCategory::kFree:
          state = prv::kStateFreeing;
          break;
        case ApiCategory::kOther:
          break;
      }
      // Only the outermost call of a thread gets a state (a runtime call wraps driver calls).
      if (e.start_ns >= t->busy_until_ns)
        State(t, e.start_ns, e.end_ns, state);
      int64_t type = e.event_class == 1 ? prv::kDriverApi : prv::kRuntimeApi;
      std::vector<std::pair<int64_t, uint64_t>> values = {{type, labels_.Value(type, name)}};
      if (e.gpu_ops > 0)
        values.emplace_back(prv::kCorrelation, static_cast<uint64_t>(e.correlation_id));
      Events(t, e, values, true);
      if (e.gpu_ops > 0) {
        auto stream = catalog_.FindStream(e.global_pid, e.first_gpu_device, e.first_gpu_stream);
        if (stream) {
          const PrvThread& r = threads_[stream_thread_[*stream]];
          std::string s = std::to_string(e.start_ns), g = std::to_string(e.first_gpu_start_ns);
          Line("3:" + std::to_string(t->cpu) + ":1:" + std::to_string(t->task) + ":" + std::to_string(t->thread) + ":" +
               s + ":" + s + ":" + std::to_string(r.cpu) + ":1:" + std::to_string(r.task) + ":" +
               std::to_string(r.thread) + ":" + g + ":" + g + ":0:" + std::to_string(e.correlation_id));
        }
      }
      break;
    }
    case EventKind::kKernel:
    case EventKind::kMemcpy:
    case EventKind::kMemset:
    case EventKind::kSync: {
      auto stream = catalog_.FindStream(e.global_pid, e.device_id, e.stream_id);
      if (!stream)
        break;
      PrvThread* t = &threads_[stream_thread_[*stream]];
      std::vector<std::pair<int64_t, uint64_t>> values;
      if (e.kind == EventKind::kKernel) {
        State(t, e.start_ns, e.end_ns, prv::kStateRunning);
        int64_t type = IsNcclKernel(e.name) ? prv::kNcclKernel : prv::kKernel;
        values = {{type, labels_.Value(type, e.name)}};
        int64_t launch[8] = {e.grid[0],
                             e.grid[1],
                             e.grid[2],
                             e.block[0],
                             e.block[1],
                             e.block[2],
                             e.static_shared_bytes,
                             e.dynamic_shared_bytes};
        for (int i = 0; i < 8; ++i)
          values.emplace_back(prv::kGridX + i, static_cast<uint64_t>(std::max<int64_t>(launch[i], 0)));
        values.emplace_back(prv::kRegistersPerThread,
                            static_cast<uint64_t>(std::max<int64_t>(e.registers_per_thread, 0)));
      } else if (e.kind == EventKind::kSync) {
        values = {{prv::kGpuSync, labels_.Value(prv::kGpuSync, SyncName(e.sync_type))}};
      } else {
        State(t, e.start_ns, e.end_ns, prv::kStateMemoryTransfer);
        std::string name =
            e.kind == EventKind::kMemcpy ? MemcpyName(e.copy_kind, e.src_kind, e.dst_kind) : MemsetName(e.mem_kind);
        values = {{prv::kMemoryTransfer, labels_.Value(prv::kMemoryTransfer, name)},
                  {prv::kTransferBytes, static_cast<uint64_t>(std::max<int64_t>(e.bytes, 0))}};
      }
      if (e.correlation_id >= 0 && e.kind != EventKind::kSync) {
        values.emplace_back(prv::kCorrelation, static_cast<uint64_t>(e.correlation_id));
      }
      Events(t, e, values, false);
      break;
    }
    case EventKind::kMetric: {
      auto it = metric_thread_.find(e.device_id);
      if (it == metric_thread_.end())
        break;
      Line(Prefix(2, threads_[it->second]) + std::to_string(e.start_ns) + ":" +
           std::to_string(prv::kMetricBase + static_cast<int64_t>(e.metric)) + ":" +
           std::to_string(std::max<int64_t>(e.value, 0)));
      break;
    }
    case EventKind::kNcclOp: {
      if (!process || nccl_thread_[*process] == SIZE_MAX)
        break;
      labels_.NamedType(prv::kNcclOperation, "NCCL operation");
      labels_.NumericType(prv::kNcclBytes, "NCCL message size (bytes)");
      Events(&threads_[nccl_thread_[*process]], e,
             {{prv::kNcclOperation, labels_.Value(prv::kNcclOperation, e.name)},
              {prv::kNcclBytes, static_cast<uint64_t>(std::max<int64_t>(e.bytes, 0))}},
             true);
      break;
    }
  }
  return Status::Ok();
}

Status ParaverExporter::Commit(std::vector<std::string>* outputs) {
  pending_.PopAll([this](int64_t, const std::string& line) { Line(line); });
  prv_->Write(buf_);
  buf_.clear();
  Status st = OutputFile::Create(pcf_path_, true, &pcf_);
  if (st.ok())
    st = OutputFile::Create(row_path_, true, &row_);
  if (!st.ok())
    return st;
  pcf_->Write(labels_.PcfText());
  row_->Write(RowText());
  for (OutputFile* f : {prv_.get(), pcf_.get(), row_.get()}) {
    if (!(st = f->Commit()).ok())
      return st;
    outputs->push_back(f->path());
  }
  return Status::Ok();
}

}  // namespace

Status CreateParaverExporter(const Catalog* catalog,
                             const std::string& output,
                             bool force,
                             std::unique_ptr<ViewerWriter>* out) {
  auto exporter = std::make_unique<ParaverExporter>(catalog, output);
  Status st = exporter->Init(force);
  if (!st.ok())
    return st;
  *out = std::move(exporter);
  return Status::Ok();
}

}  // namespace gt::viewers
