#include "tools/viewers/event_source.h"

#include <algorithm>
#include <functional>

namespace gt::viewers {
namespace {

constexpr char kRuntime[] = "CUPTI_ACTIVITY_KIND_RUNTIME";
constexpr char kKernel[] = "CUPTI_ACTIVITY_KIND_KERNEL";
constexpr char kMemcpy[] = "CUPTI_ACTIVITY_KIND_MEMCPY";
constexpr char kMemset[] = "CUPTI_ACTIVITY_KIND_MEMSET";
constexpr char kSync[] = "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION";
const std::string kMask = std::to_string(kPidMask);

// Column expression when the column exists, else a constant (older schemas lack a few columns).
std::string Col(SqliteReader* db, const char* table, const char* alias, const char* column, const char* fallback) {
  return db->HasColumn(table, column) ? std::string(alias) + "." + column : std::string(fallback);
}

// The columns every GPU-activity cursor selects first: start, end, globalPid, deviceId, streamId,
// correlationId (NULL: -1).
void DecodeGpuHead(const Query& q, Event* e) {
  e->start_ns = q.Int(0);
  e->end_ns = std::max(q.Int(1), e->start_ns);
  e->global_pid = q.Int(2);
  e->device_id = q.Int(3);
  e->stream_id = q.Int(4);
  e->correlation_id = q.IsNull(5) ? -1 : q.Int(5);
}

}  // namespace

// One table's rows in start order, decoded into Events.
struct EventSource::Cursor {
  Query query;
  std::function<bool(const Query&, Event*)> decode;  // false: skip this row
  Event current;
  bool pending = false;
  int priority = 0;  // tie-break between tables at equal start times
};

EventSource::EventSource(SqliteReader* db, const Catalog* catalog) : db_(db), catalog_(catalog) {}

EventSource::~EventSource() {
  if (have_launch_table_) {
    cursors_.clear();  // finalize statements before dropping what they read
    (void)db_->Exec("DROP TABLE IF EXISTS temp.gt_viewer_launch; DROP TABLE IF EXISTS temp.gt_viewer_gpu_ops;");
  }
}

Status EventSource::Open(SqliteReader* db, const Catalog* catalog, std::unique_ptr<EventSource>* out) {
  std::unique_ptr<EventSource> source(new EventSource(db, catalog));
  Status st = source->BuildLaunchTable();
  if (st.ok())
    st = source->AddCursors();
  if (!st.ok())
    return Status::Error(db->path() + ": " + st.message());
  *out = std::move(source);
  return Status::Ok();
}

Status EventSource::BuildLaunchTable() {
  const TablePresence& t = catalog_->tables();
  std::string gpu;
  for (const auto& [present, table] :
       {std::pair{t.kernel, kKernel}, std::pair{t.memcpy, kMemcpy}, std::pair{t.memset, kMemset}}) {
    if (!present)
      continue;
    gpu += std::string(gpu.empty() ? "" : " UNION ALL ") +
           "SELECT globalPid AS gpid, correlationId AS corr, start, deviceId AS device, streamId AS stream FROM " +
           table;
  }
  if (gpu.empty() || !t.runtime)
    return Status::Ok();
  // nsys has no indexes; these TEMP tables make the launch <-> activity join a lookup, not a scan.
  // min(start) picks one row per group, and SQLite returns that row's other bare columns: the first
  // GPU activity of a launch (device, stream), and one API row should a correlation id repeat.
  std::string sql =
      "DROP TABLE IF EXISTS temp.gt_viewer_launch; DROP TABLE IF EXISTS temp.gt_viewer_gpu_ops;"
      "CREATE TEMP TABLE gt_viewer_gpu_ops AS SELECT gpid, corr, count(*) AS n, min(start) AS first_start, device,"
      " stream FROM (" +
      gpu +
      ") WHERE gpid IS NOT NULL AND corr IS NOT NULL GROUP BY gpid, corr;"
      "CREATE UNIQUE INDEX temp.gt_viewer_gpu_ops_key ON gt_viewer_gpu_ops (gpid, corr);"
      "CREATE TEMP TABLE gt_viewer_launch AS SELECT g.gpid AS gpid, g.corr AS corr, g.n AS n, g.first_start AS"
      " first_start, g.device AS device, g.stream AS stream, min(r.start) AS start, r.globalTid AS tid FROM " +
      kRuntime + " r JOIN temp.gt_viewer_gpu_ops g ON g.gpid = (r.globalTid & " + kMask +
      ") AND g.corr = r.correlationId WHERE r.eventClass IN (0, 1) GROUP BY g.gpid, g.corr;"
      "CREATE UNIQUE INDEX temp.gt_viewer_launch_key ON gt_viewer_launch (gpid, corr);";
  Status st = db_->Exec(sql);
  if (!st.ok())
    return st;
  have_launch_table_ = true;
  return Status::Ok();
}

Status EventSource::AddCursors() {
  const TablePresence& t = catalog_->tables();
  const Catalog* catalog = catalog_;
  auto add = [&](const std::string& sql, int priority, std::function<bool(const Query&, Event*)> decode) {
    auto c = std::make_unique<Cursor>();
    Status st = db_->Prepare(sql, &c->query);
    if (!st.ok())
      return st;
    c->decode = std::move(decode);
    c->priority = priority;
    cursors_.push_back(std::move(c));
    return Status::Ok();
  };
  Status st;
  // Launch columns of a GPU table aliased `g`: (tid, start, n) of its API call, or NULLs.
  const std::string launch_cols = have_launch_table_ ? ", l.tid, l.start, l.n" : ", NULL, NULL, NULL";
  const std::string launch_join =
      have_launch_table_ ? " LEFT JOIN temp.gt_viewer_launch l ON l.gpid = g.globalPid AND l.corr = g.correlationId"
                         : "";
  auto decode_launch = [](const Query& q, int col, Event* e) {
    e->has_launch = !q.IsNull(col);
    e->launch_tid = q.Int(col);
    e->launch_start_ns = q.Int(col + 1);
    e->launch_gpu_ops = q.Int(col + 2);
  };

  if (t.nvtx) {
    const char* n = "NVTX_EVENTS";
    bool text_id = db_->HasColumn(n, "textId");
    std::string sql = "SELECT n.start, n.end, n.eventType, n.globalTid, " +
                      std::string(text_id ? "coalesce(n.text, s.value)" : "n.text") + ", " +
                      Col(db_, n, "n", "domainId", "0") + ", " + Col(db_, n, "n", "color", "NULL") +
                      " FROM NVTX_EVENTS n " + (text_id ? "LEFT JOIN StringIds s ON s.id = n.textId " : "") +
                      "WHERE n.eventType IN (34, 59, 60) AND n.globalTid IS NOT NULL ORDER BY n.start, n.end DESC";
    st = add(sql, 0, [this](const Query& q, Event* e) {
      int64_t type = q.Int(2);
      e->kind = type == 34 ? EventKind::kNvtxMark : type == 60 ? EventKind::kNvtxStartEnd : EventKind::kNvtxRange;
      e->start_ns = q.Int(0);
      if (e->kind != EventKind::kNvtxMark && q.IsNull(1)) {
        ++skipped_unended_;
        return false;
      }
      e->end_ns = e->kind == EventKind::kNvtxMark ? e->start_ns : std::max(q.Int(1), e->start_ns);
      e->global_tid = q.Int(3);
      e->global_pid = e->global_tid & kPidMask;
      e->name = q.Text(4);
      e->domain_id = q.Int(5);
      e->color_argb = q.IsNull(6) ? -1 : (q.Int(6) & 0xFFFFFFFF);
      return true;
    });
    if (!st.ok())
      return st;
  }
  if (t.runtime) {
    std::string sql =
        std::string("SELECT r.start, r.end, r.globalTid, r.correlationId, s.value, r.eventClass, r.returnValue, ") +
        (have_launch_table_ ? "l.n, l.first_start, l.device, l.stream" : "NULL, NULL, NULL, NULL") + " FROM " +
        kRuntime + " r LEFT JOIN StringIds s ON s.id = r.nameId" +
        (have_launch_table_ ? " LEFT JOIN temp.gt_viewer_launch l ON l.gpid = (r.globalTid & " + kMask +
                                  ") AND l.corr = r.correlationId AND l.tid = r.globalTid AND l.start = r.start"
                            : "") +
        " WHERE r.eventClass IN (0, 1) AND r.globalTid IS NOT NULL ORDER BY r.start, r.end DESC";
    st = add(sql, 1, [](const Query& q, Event* e) {
      e->kind = EventKind::kApi;
      e->start_ns = q.Int(0);
      e->end_ns = std::max(q.Int(1), e->start_ns);
      e->global_tid = q.Int(2);
      e->global_pid = e->global_tid & kPidMask;
      e->correlation_id = q.IsNull(3) ? -1 : q.Int(3);
      e->name = q.Text(4);
      e->event_class = q.Int(5);
      e->return_value = q.Int(6);
      e->gpu_ops = q.Int(7);
      e->first_gpu_start_ns = q.Int(8);
      e->first_gpu_device = q.IsNull(9) ? -1 : q.Int(9);
      e->first_gpu_stream = q.IsNull(10) ? -1 : q.Int(10);
      return true;
    });
    if (!st.ok())
      return st;
  }
  if (t.kernel) {
    std::string sql = std::string(
                          "SELECT g.start, g.end, g.globalPid, g.deviceId, g.streamId, g.correlationId, "
                          "coalesce(sd.value, ss.value, 'kernel'), coalesce(ss.value, sd.value, 'kernel'), "
                          "g.gridX, g.gridY, g.gridZ, g.blockX, g.blockY, g.blockZ, g.registersPerThread, "
                          "g.staticSharedMemory, g.dynamicSharedMemory") +
                      launch_cols + " FROM " + kKernel +
                      " g LEFT JOIN StringIds sd ON sd.id = g.demangledName"
                      " LEFT JOIN StringIds ss ON ss.id = g.shortName" +
                      launch_join + " ORDER BY g.start, g.end DESC";
    st = add(sql, 2, [decode_launch](const Query& q, Event* e) {
      e->kind = EventKind::kKernel;
      DecodeGpuHead(q, e);
      e->name = q.Text(6);
      e->short_name = q.Text(7);
      for (int i = 0; i < 3; ++i) {
        e->grid[i] = q.Int(8 + i);
        e->block[i] = q.Int(11 + i);
      }
      e->registers_per_thread = q.Int(14);
      e->static_shared_bytes = q.Int(15);
      e->dynamic_shared_bytes = q.Int(16);
      decode_launch(q, 17, e);
      return true;
    });
    if (!st.ok())
      return st;
  }
  if (t.memcpy) {
    std::string sql = std::string(
                          "SELECT g.start, g.end, g.globalPid, g.deviceId, g.streamId, g.correlationId, "
                          "g.bytes, g.copyKind, ") +
                      Col(db_, kMemcpy, "g", "srcKind", "NULL") + ", " + Col(db_, kMemcpy, "g", "dstKind", "NULL") +
                      launch_cols + " FROM " + kMemcpy + " g" + launch_join + " ORDER BY g.start, g.end DESC";
    st = add(sql, 3, [decode_launch](const Query& q, Event* e) {
      e->kind = EventKind::kMemcpy;
      DecodeGpuHead(q, e);
      e->bytes = q.Int(6);
      e->copy_kind = q.Int(7);
      e->src_kind = q.IsNull(8) ? -1 : q.Int(8);
      e->dst_kind = q.IsNull(9) ? -1 : q.Int(9);
      decode_launch(q, 10, e);
      return true;
    });
    if (!st.ok())
      return st;
  }
  if (t.memset) {
    std::string sql = std::string(
                          "SELECT g.start, g.end, g.globalPid, g.deviceId, g.streamId, g.correlationId, "
                          "g.bytes, ") +
                      Col(db_, kMemset, "g", "memKind", "NULL") + launch_cols + " FROM " + kMemset + " g" +
                      launch_join + " ORDER BY g.start, g.end DESC";
    st = add(sql, 4, [decode_launch](const Query& q, Event* e) {
      e->kind = EventKind::kMemset;
      DecodeGpuHead(q, e);
      e->bytes = q.Int(6);
      e->mem_kind = q.IsNull(7) ? -1 : q.Int(7);
      decode_launch(q, 8, e);
      return true;
    });
    if (!st.ok())
      return st;
  }
  if (t.sync) {
    std::string sql = std::string("SELECT start, end, globalPid, deviceId, streamId, correlationId, syncType FROM ") +
                      kSync + " ORDER BY start, end DESC";
    st = add(sql, 5, [](const Query& q, Event* e) {
      e->kind = EventKind::kSync;
      DecodeGpuHead(q, e);
      e->stream_id = q.Int(4) == kInvalidStream ? -1 : q.Int(4);
      e->sync_type = q.Int(6);
      return true;
    });
    if (!st.ok())
      return st;
  }
  if (t.metrics) {
    st = add("SELECT timestamp, typeId, metricId, value FROM GPU_METRICS ORDER BY timestamp, typeId, metricId", 6,
             [catalog](const Query& q, Event* e) {
               auto m = catalog->FindMetric(q.Int(1), q.Int(2));
               if (!m)
                 return false;
               e->kind = EventKind::kMetric;
               e->start_ns = e->end_ns = q.Int(0);
               e->metric = *m;
               e->device_id = catalog->metrics()[*m].gpu;
               e->name = catalog->metrics()[*m].name;
               e->value = q.Int(3);
               return true;
             });
    if (!st.ok())
      return st;
  }
  if (!t.nccl_operations.empty()) {
    const char* o = "GTRACE_NCCL_OPERATIONS";
    bool gpu = db_->HasColumn(o, "gpuStart") && db_->HasColumn(o, "gpuEnd");
    bool enqueue = db_->HasColumn(o, "enqueueStart") && db_->HasColumn(o, "enqueueEnd");
    // GPU time when the plugin measured it, else the host-side enqueue interval.
    std::string start = gpu && enqueue ? "coalesce(gpuStart, enqueueStart)" : gpu ? "gpuStart" : "enqueueStart";
    std::string end = gpu && enqueue ? "coalesce(gpuEnd, enqueueEnd)" : gpu ? "gpuEnd" : "enqueueEnd";
    std::string sql = "SELECT " + start + " AS s, " + end + " AS e, globalPid, func, " +
                      Col(db_, o, o, "globalTid", "NULL") + ", " + Col(db_, o, o, "messageBytes", "NULL") + ", " +
                      Col(db_, o, o, "nRanks", "NULL") + ", " + Col(db_, o, o, "seqNumber", "NULL") + ", " +
                      Col(db_, o, o, "algo", "NULL") + ", " + Col(db_, o, o, "proto", "NULL") + ", " +
                      (gpu ? "gpuStart IS NOT NULL" : "0") + " FROM " + o +
                      " WHERE s IS NOT NULL AND e IS NOT NULL AND globalPid IS NOT NULL ORDER BY s, e DESC";
    st = add(sql, 7, [](const Query& q, Event* e) {
      e->kind = EventKind::kNcclOp;
      e->start_ns = q.Int(0);
      e->end_ns = std::max(q.Int(1), e->start_ns);
      e->global_pid = q.Int(2);
      e->name = q.Text(3);
      e->global_tid = q.Int(4);
      e->bytes = q.IsNull(5) ? -1 : q.Int(5);
      e->nccl_ranks = q.IsNull(6) ? -1 : q.Int(6);
      e->nccl_seq = q.IsNull(7) ? -1 : q.Int(7);
      e->nccl_algo = q.Text(8);
      e->nccl_proto = q.Text(9);
      e->nccl_gpu_time = q.Int(10) != 0;
      return true;
    });
    if (!st.ok())
      return st;
  }
  for (size_t i = 0; i < cursors_.size(); ++i) {
    if (!(st = Advance(i)).ok())
      return st;
  }
  return Status::Ok();
}

Status EventSource::Advance(size_t index) {
  Cursor& c = *cursors_[index];
  c.pending = false;
  bool has_row = false;
  Status st;
  while ((st = c.query.Step(&has_row)).ok() && has_row) {
    ++rows_read_;
    c.current = Event();
    if (c.decode(c.query, &c.current)) {
      c.pending = true;
      break;
    }
  }
  if (!st.ok())
    return st;
  if (c.pending) {
    heap_.push_back(index);
    std::push_heap(heap_.begin(), heap_.end(), [this](size_t a, size_t b) { return Later(a, b); });
  }
  return Status::Ok();
}

bool EventSource::Later(size_t a, size_t b) const {
  const Cursor& x = *cursors_[a];
  const Cursor& y = *cursors_[b];
  if (x.current.start_ns != y.current.start_ns)
    return x.current.start_ns > y.current.start_ns;
  return x.priority > y.priority;
}

Status EventSource::Next(Event* event, bool* done) {
  if (heap_.empty()) {
    *done = true;
    return Status::Ok();
  }
  *done = false;
  std::pop_heap(heap_.begin(), heap_.end(), [this](size_t a, size_t b) { return Later(a, b); });
  size_t index = heap_.back();
  heap_.pop_back();
  *event = std::move(cursors_[index]->current);
  Status st = Advance(index);
  if (!st.ok())
    return Status::Error(db_->path() + ": " + st.message());
  return Status::Ok();
}

}  // namespace gt::viewers
