#include "tools/viewers/catalog.h"

#include <algorithm>
#include <set>

namespace gt::viewers {
namespace {

constexpr char kRuntime[] = "CUPTI_ACTIVITY_KIND_RUNTIME";
constexpr char kKernel[] = "CUPTI_ACTIVITY_KIND_KERNEL";
constexpr char kMemcpy[] = "CUPTI_ACTIVITY_KIND_MEMCPY";
constexpr char kMemset[] = "CUPTI_ACTIVITY_KIND_MEMSET";
constexpr char kSync[] = "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION";
constexpr char kNvtx[] = "NVTX_EVENTS";
constexpr char kNcclOperations[] = "GTRACE_NCCL_OPERATIONS";

// Runs `sql` and calls `row` for every result row.
template <typename F>
Status ForEachRow(SqliteReader* db, const std::string& sql, F row) {
  Query q;
  Status st = db->Prepare(sql, &q);
  if (!st.ok())
    return Status::Error(db->path() + ": " + st.message());
  bool has_row = false;
  while ((st = q.Step(&has_row)).ok() && has_row)
    row(q);
  if (!st.ok())
    return Status::Error(db->path() + ": " + st.message());
  return Status::Ok();
}

// "coalesce(<col>, 0)" when the column exists, else "0": old exports lack some device columns.
std::string ColumnOr(SqliteReader* db, const char* table, const char* column, const char* fallback) {
  if (db->HasColumn(table, column))
    return std::string("coalesce(") + column + ", " + fallback + ")";
  return fallback;
}

}  // namespace

Status Catalog::Load(SqliteReader* db, Catalog* out) {
  Catalog& c = *out;
  c = Catalog();
  c.source_ = db->path();
  TablePresence& t = c.tables_;
  t.runtime = db->HasTable(kRuntime);
  t.kernel = db->HasTable(kKernel);
  t.memcpy = db->HasTable(kMemcpy);
  t.memset = db->HasTable(kMemset);
  t.sync = db->HasTable(kSync);
  t.nvtx = db->HasTable(kNvtx);
  t.metrics = db->HasTable("GPU_METRICS");
  // The NCCL engineer's table; used only when it has the columns we rely on (docs/viewers.md).
  if (db->HasTable(kNcclOperations) && db->HasColumn(kNcclOperations, "globalPid") &&
      db->HasColumn(kNcclOperations, "func") &&
      ((db->HasColumn(kNcclOperations, "gpuStart") && db->HasColumn(kNcclOperations, "gpuEnd")) ||
       (db->HasColumn(kNcclOperations, "enqueueStart") && db->HasColumn(kNcclOperations, "enqueueEnd")))) {
    t.nccl_operations = kNcclOperations;
  }
  Status st;
  if (!(st = c.LoadSession(db)).ok())
    return st;
  if (!(st = c.LoadProcesses(db)).ok())
    return st;
  if (!(st = c.LoadThreads(db)).ok())
    return st;
  if (!(st = c.LoadStreams(db)).ok())
    return st;
  if (!(st = c.LoadGpus(db)).ok())
    return st;
  if (!(st = c.LoadDomainsAndMetrics(db)).ok())
    return st;
  c.AssignViewIds();
  return Status::Ok();
}

Status Catalog::LoadSession(SqliteReader* db) {
  if (db->HasTable("TARGET_INFO_SESSION_START_TIME")) {
    utc_epoch_ns_ = db->ScalarInt("SELECT utcEpochNs FROM TARGET_INFO_SESSION_START_TIME LIMIT 1").value_or(0);
  }
  if (db->HasTable("ANALYSIS_DETAILS")) {
    end_ns_ = db->ScalarInt("SELECT max(duration) FROM ANALYSIS_DETAILS").value_or(0);
  }
  // Event counts (progress) and the latest end (Paraver's trace length): one aggregate per table.
  struct Source {
    bool present;
    std::string table, filter, end_column;
  } sources[] = {
      {tables_.runtime, kRuntime, "", "end"},
      {tables_.kernel, kKernel, "", "end"},
      {tables_.memcpy, kMemcpy, "", "end"},
      {tables_.memset, kMemset, "", "end"},
      {tables_.sync, kSync, "", "end"},
      {tables_.nvtx, kNvtx, " WHERE eventType IN (34, 59, 60)", "coalesce(end, start)"},
      {tables_.metrics, "GPU_METRICS", "", "timestamp"},
      {!tables_.nccl_operations.empty(), tables_.nccl_operations, "",
       db->HasColumn(kNcclOperations, "gpuEnd") ? "coalesce(gpuEnd, enqueueEnd)" : "enqueueEnd"},
  };
  for (const Source& s : sources) {
    if (!s.present)
      continue;
    Status st = ForEachRow(db, "SELECT count(*), max(" + s.end_column + ") FROM " + s.table + s.filter, [&](Query& q) {
      total_rows_ += static_cast<uint64_t>(q.Int(0));
      end_ns_ = std::max(end_ns_, q.Int(1));
    });
    if (!st.ok())
      return st;
  }
  return Status::Ok();
}

Status Catalog::LoadProcesses(SqliteReader* db) {
  // Only processes that carry events: nsys lists every process of the machine in PROCESSES.
  std::vector<std::string> parts;
  if (tables_.runtime) {
    parts.push_back(std::string("SELECT DISTINCT globalTid & ") + std::to_string(kPidMask) + " FROM " + kRuntime +
                    " WHERE globalTid IS NOT NULL");
  }
  if (tables_.nvtx) {
    parts.push_back(std::string("SELECT DISTINCT globalTid & ") + std::to_string(kPidMask) + " FROM " + kNvtx +
                    " WHERE eventType IN (34, 59, 60) AND globalTid IS NOT NULL");
  }
  for (const auto& [present, table] : {std::pair{tables_.kernel, kKernel}, std::pair{tables_.memcpy, kMemcpy},
                                       std::pair{tables_.memset, kMemset}, std::pair{tables_.sync, kSync}}) {
    if (present)
      parts.push_back(std::string("SELECT DISTINCT globalPid FROM ") + table + " WHERE globalPid IS NOT NULL");
  }
  if (!tables_.nccl_operations.empty()) {
    parts.push_back("SELECT DISTINCT globalPid FROM " + tables_.nccl_operations + " WHERE globalPid IS NOT NULL");
  }
  if (parts.empty())
    return Status::Ok();
  std::string sql;
  for (const std::string& p : parts)
    sql += (sql.empty() ? "" : " UNION ") + p;
  std::vector<int64_t> gpids;
  Status st = ForEachRow(db, sql, [&](Query& q) { gpids.push_back(q.Int(0)); });
  if (!st.ok())
    return st;
  std::sort(gpids.begin(), gpids.end());

  std::map<int64_t, std::string> names;
  if (db->HasTable("PROCESSES")) {
    st = ForEachRow(db, "SELECT globalPid, name FROM PROCESSES WHERE globalPid IS NOT NULL ORDER BY rowid",
                    [&](Query& q) { names.emplace(q.Int(0), q.Text(1)); });
    if (!st.ok())
      return st;
  }
  std::map<int64_t, int32_t> launcher_ranks;
  if (db->HasTable("MPI_RANKS")) {
    st = ForEachRow(db, "SELECT globalTid & " + std::to_string(kPidMask) + ", rank FROM MPI_RANKS ORDER BY rowid",
                    [&](Query& q) { launcher_ranks.emplace(q.Int(0), static_cast<int32_t>(q.Int(1))); });
    if (!st.ok())
      return st;
  }
  std::map<int64_t, std::string> host_names;
  if (db->HasTable("TARGET_INFO_SYSTEM_ENV")) {
    st = ForEachRow(db, "SELECT globalVid, value FROM TARGET_INFO_SYSTEM_ENV WHERE name = 'Hostname'",
                    [&](Query& q) { host_names.emplace(HostKeyOf(q.Int(0)), q.Text(1)); });
    if (!st.ok())
      return st;
  }
  for (int64_t gp : gpids) {
    ProcessInfo p;
    p.global_pid = gp;
    p.pid = PidOf(gp);
    auto n = names.find(gp);
    p.name = n != names.end() && !n->second.empty() ? n->second : "process " + std::to_string(p.pid);
    auto h = host_names.find(HostKeyOf(gp));
    p.host = h != host_names.end() ? h->second : "";
    processes_.push_back(std::move(p));
  }
  if (!tables_.nccl_operations.empty()) {
    std::set<int64_t> with_ops;
    st = ForEachRow(db, "SELECT DISTINCT globalPid FROM " + tables_.nccl_operations,
                    [&](Query& q) { with_ops.insert(q.Int(0)); });
    if (!st.ok())
      return st;
    for (ProcessInfo& p : processes_)
      p.has_nccl_operations = with_ops.count(p.global_pid) != 0;
  }
  AssignRanks(launcher_ranks);
  // Hosts, densely numbered in rank order.
  std::map<int64_t, uint32_t> host_index;
  for (ProcessInfo& p : processes_) {
    auto [it, added] = host_index.emplace(HostKeyOf(p.global_pid), static_cast<uint32_t>(hosts_.size()));
    if (added)
      hosts_.push_back(p.host.empty() ? "host" + std::to_string(hosts_.size()) : p.host);
    p.host_index = it->second;
    if (p.host.empty())
      p.host = hosts_[it->second];
  }
  return Status::Ok();
}

void Catalog::AssignRanks(const std::map<int64_t, int32_t>& launcher_ranks) {
  // Launcher ranks are kept, even when several processes share one (a worker's forked children
  // inherit RANK): they all belong to that rank. Processes without one get the next free ranks, in
  // pid order, so every process is in some rank.
  int32_t next = 0;
  for (const auto& entry : launcher_ranks)
    next = std::max(next, entry.second + 1);
  std::set<int32_t> ranks;
  for (ProcessInfo& p : processes_) {
    auto r = launcher_ranks.find(p.global_pid);
    if (r != launcher_ranks.end()) {
      p.rank = r->second;
      p.rank_from_launcher = true;
    } else {
      p.rank = next++;
    }
    ranks.insert(p.rank);
  }
  world_size_ = static_cast<int32_t>(ranks.size());
  std::stable_sort(processes_.begin(), processes_.end(), [](const ProcessInfo& a, const ProcessInfo& b) {
    return a.rank != b.rank ? a.rank < b.rank : a.global_pid < b.global_pid;
  });
  process_index_.clear();
  for (size_t i = 0; i < processes_.size(); ++i)
    process_index_[processes_[i].global_pid] = i;
}

Status Catalog::LoadThreads(SqliteReader* db) {
  std::string sql;
  if (tables_.runtime)
    sql = std::string("SELECT DISTINCT globalTid FROM ") + kRuntime + " WHERE globalTid IS NOT NULL";
  if (tables_.nvtx) {
    sql += std::string(sql.empty() ? "" : " UNION ") + "SELECT DISTINCT globalTid FROM " + kNvtx +
           " WHERE eventType IN (34, 59, 60) AND globalTid IS NOT NULL";
  }
  if (sql.empty())
    return Status::Ok();
  std::map<int64_t, std::string> names;
  if (db->HasTable("ThreadNames")) {
    Status st = ForEachRow(db,
                           "SELECT t.globalTid, s.value FROM ThreadNames t JOIN StringIds s ON s.id = t.nameId "
                           "ORDER BY t.rowid",
                           [&](Query& q) { names.emplace(q.Int(0), q.Text(1)); });
    if (!st.ok())
      return st;
  }
  Status st = ForEachRow(db, sql, [&](Query& q) {
    int64_t gt = q.Int(0);
    auto p = FindProcess(gt & kPidMask);
    if (!p)
      return;
    ThreadInfo t;
    t.global_tid = gt;
    t.process = *p;
    t.tid = TidOf(gt);
    auto n = names.find(gt);
    t.name = n != names.end() && !n->second.empty() ? n->second : "thread " + std::to_string(t.tid);
    threads_.push_back(std::move(t));
  });
  if (!st.ok())
    return st;
  std::sort(threads_.begin(), threads_.end(), [](const ThreadInfo& a, const ThreadInfo& b) {
    return a.process != b.process ? a.process < b.process : a.tid < b.tid;
  });
  for (size_t i = 0; i < threads_.size(); ++i)
    thread_index_[threads_[i].global_tid] = i;
  return Status::Ok();
}

Status Catalog::LoadStreams(SqliteReader* db) {
  std::string sql;
  for (const auto& [present, table] :
       {std::pair{tables_.kernel, kKernel}, std::pair{tables_.memcpy, kMemcpy}, std::pair{tables_.memset, kMemset}}) {
    if (!present)
      continue;
    sql += std::string(sql.empty() ? "" : " UNION ") + "SELECT DISTINCT globalPid, deviceId, streamId FROM " + table;
  }
  if (tables_.sync) {
    sql += std::string(sql.empty() ? "" : " UNION ") + "SELECT DISTINCT globalPid, deviceId, CASE streamId WHEN " +
           std::to_string(kInvalidStream) + " THEN -1 ELSE streamId END FROM " + kSync;
  }
  if (sql.empty())
    return Status::Ok();
  Status st = ForEachRow(db, sql, [&](Query& q) {
    auto p = FindProcess(q.Int(0));
    if (!p)
      return;
    streams_.push_back(StreamInfo{*p, q.Int(1), q.Int(2)});
  });
  if (!st.ok())
    return st;
  // By process, device, stream; a device's no-stream synchronization row after its streams.
  std::sort(streams_.begin(), streams_.end(), [](const StreamInfo& a, const StreamInfo& b) {
    return std::tuple(a.process, a.device_id, a.stream_id < 0, a.stream_id) <
           std::tuple(b.process, b.device_id, b.stream_id < 0, b.stream_id);
  });
  for (size_t i = 0; i < streams_.size(); ++i) {
    const StreamInfo& s = streams_[i];
    stream_index_[{processes_[s.process].global_pid, s.device_id, s.stream_id}] = i;
  }
  return Status::Ok();
}

Status Catalog::LoadGpus(SqliteReader* db) {
  const char* g = "TARGET_INFO_GPU";
  if (db->HasTable(g)) {
    std::string sql = "SELECT id, " + ColumnOr(db, g, "cuDevice", "-1") + ", " + ColumnOr(db, g, "name", "''");
    for (const char* col : {"totalMemory", "smCount", "computeMajor", "computeMinor", "maxThreadsPerBlock",
                            "maxShmemPerBlock", "maxShmemPerBlockOptin", "maxShmemPerSm", "maxRegistersPerBlock",
                            "maxRegistersPerSm", "threadsPerWarp", "maxWarpsPerSm"}) {
      sql += ", " + ColumnOr(db, g, col, "0");
    }
    sql += " FROM TARGET_INFO_GPU ORDER BY id";
    Status st = ForEachRow(db, sql, [&](Query& q) {
      GpuInfo gpu;
      gpu.id = q.Int(0);
      gpu.cu_device = q.Int(1);
      gpu.name = q.Text(2);
      int64_t* fields[] = {&gpu.total_memory_bytes,
                           &gpu.sm_count,
                           &gpu.compute_major,
                           &gpu.compute_minor,
                           &gpu.max_threads_per_block,
                           &gpu.max_shmem_per_block_bytes,
                           &gpu.max_shmem_per_block_optin_bytes,
                           &gpu.max_shmem_per_sm_bytes,
                           &gpu.max_registers_per_block,
                           &gpu.max_registers_per_sm,
                           &gpu.threads_per_warp,
                           &gpu.max_warps_per_sm};
      for (int i = 0; i < 12; ++i)
        *fields[i] = q.Int(3 + i);
      gpus_.push_back(std::move(gpu));
    });
    if (!st.ok())
      return st;
  }
  if (db->HasTable("TARGET_INFO_CUDA_DEVICE")) {
    Status st =
        ForEachRow(db, "SELECT pid, cudaId, gpuId FROM TARGET_INFO_CUDA_DEVICE WHERE gpuId IS NOT NULL", [&](Query& q) {
          cuda_device_to_gpu_.emplace(std::pair{static_cast<uint32_t>(q.Int(0)), q.Int(1)}, q.Int(2));
        });
    if (!st.ok())
      return st;
  }
  return Status::Ok();
}

Status Catalog::LoadDomainsAndMetrics(SqliteReader* db) {
  if (tables_.nvtx) {
    bool has_text_id = db->HasColumn(kNvtx, "textId");
    std::string sql = "SELECT n.globalTid & " + std::to_string(kPidMask) + ", n.domainId, " +
                      (has_text_id ? "coalesce(n.text, s.value)" : "n.text") + " FROM NVTX_EVENTS n " +
                      (has_text_id ? "LEFT JOIN StringIds s ON s.id = n.textId " : "") +
                      "WHERE n.eventType = 75 AND n.globalTid IS NOT NULL ORDER BY n.start";
    Status st = ForEachRow(db, sql, [&](Query& q) { domains_.emplace(std::pair{q.Int(0), q.Int(1)}, q.Text(2)); });
    if (!st.ok())
      return st;
  }
  if (tables_.metrics) {
    bool named = db->HasTable("TARGET_INFO_GPU_METRICS");
    std::string sql =
        "SELECT m.typeId, m.metricId, " +
        std::string(named ? "(SELECT metricName FROM TARGET_INFO_GPU_METRICS d WHERE d.typeId = m.typeId AND "
                            "d.metricId = m.metricId LIMIT 1)"
                          : "NULL") +
        " FROM (SELECT DISTINCT typeId, metricId FROM GPU_METRICS) m ORDER BY m.typeId & 255, m.metricId";
    Status st = ForEachRow(db, sql, [&](Query& q) {
      MetricInfo m;
      m.type_id = q.Int(0);
      m.metric_id = q.Int(1);
      m.gpu = m.type_id & 0xFF;
      m.name = q.IsNull(2) ? "metric " + std::to_string(m.metric_id) : q.Text(2);
      metric_index_[{m.type_id, m.metric_id}] = metrics_.size();
      metrics_.push_back(std::move(m));
    });
    if (!st.ok())
      return st;
  }
  return Status::Ok();
}

void Catalog::AssignViewIds() {
  // Viewers key processes by pid and threads by tid; pids and tids are unique only per host.
  std::set<int64_t> used_pids;
  int32_t next_pid = 0x40000000;
  for (ProcessInfo& p : processes_) {
    p.view_pid = static_cast<int32_t>(p.pid);
    if (!used_pids.insert(p.view_pid).second) {
      while (!used_pids.insert(next_pid).second)
        ++next_pid;
      p.view_pid = next_pid;
    }
  }
  std::set<int64_t> used_tids;
  int64_t next_tid = int64_t{1} << 32;
  for (ThreadInfo& t : threads_) {
    // A process's main thread follows the process when its pid was remapped.
    const ProcessInfo& p = processes_[t.process];
    t.view_tid = t.tid == p.pid ? p.view_pid : t.tid;
    if (!used_tids.insert(t.view_tid).second) {
      while (!used_tids.insert(next_tid).second)
        ++next_tid;
      t.view_tid = next_tid;
    }
  }
}

std::optional<size_t> Catalog::FindProcess(int64_t global_pid) const {
  auto it = process_index_.find(global_pid);
  if (it == process_index_.end())
    return std::nullopt;
  return it->second;
}

std::optional<size_t> Catalog::FindThread(int64_t global_tid) const {
  auto it = thread_index_.find(global_tid);
  if (it == thread_index_.end())
    return std::nullopt;
  return it->second;
}

std::optional<size_t> Catalog::FindStream(int64_t global_pid, int64_t device_id, int64_t stream_id) const {
  auto it = stream_index_.find({global_pid, device_id, stream_id});
  if (it == stream_index_.end())
    return std::nullopt;
  return it->second;
}

std::optional<size_t> Catalog::FindMetric(int64_t type_id, int64_t metric_id) const {
  auto it = metric_index_.find({type_id, metric_id});
  if (it == metric_index_.end())
    return std::nullopt;
  return it->second;
}

std::string Catalog::DomainName(int64_t global_pid, int64_t domain_id) const {
  if (domain_id == 0)
    return "";
  auto it = domains_.find({global_pid, domain_id});
  return it == domains_.end() ? "" : it->second;
}

const GpuInfo* Catalog::GpuOf(size_t process, int64_t device_id) const {
  int64_t gpu_id = -1;
  auto it = cuda_device_to_gpu_.find({processes_[process].pid, device_id});
  if (it != cuda_device_to_gpu_.end())
    gpu_id = it->second;
  for (const GpuInfo& g : gpus_) {
    if (gpu_id >= 0 ? g.id == gpu_id : g.cu_device == device_id)
      return &g;
  }
  // One GPU and no mapping: it is the one.
  if (gpu_id < 0 && gpus_.size() == 1)
    return &gpus_[0];
  return nullptr;
}

}  // namespace gt::viewers
