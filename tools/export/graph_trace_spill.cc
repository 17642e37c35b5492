#include "tools/export/graph_trace_spill.h"

#include <string>
#include <vector>

namespace gt::exporter {

Status GraphTraceSpill::Create(ExportContext& ctx) {
  if (created_)
    return Status::Ok();
  Status st = ctx.db().Exec(
      "CREATE TABLE gt_spill.graph_trace (start INTEGER NOT NULL, \"end\" INTEGER NOT NULL, deviceOrdinal INTEGER "
      "NOT NULL, contextId INTEGER NOT NULL, streamId INTEGER NOT NULL, correlationId INTEGER NOT NULL, graphId "
      "INTEGER NOT NULL);"
      "CREATE TABLE gt_spill.graph_launches (correlationId INTEGER PRIMARY KEY, execId INTEGER NOT NULL);"
      "CREATE TABLE gt_spill.graph_devices (deviceOrdinal INTEGER NOT NULL, contextId INTEGER NOT NULL, deviceId "
      "INTEGER NOT NULL, PRIMARY KEY (deviceOrdinal, contextId));");
  if (st.ok())
    created_ = true;
  return st;
}

Status GraphTraceSpill::AddTrace(ExportContext& ctx,
                                 int64_t start_ns,
                                 int64_t end_ns,
                                 const schema::CudaGraphTrace& r) {
  Status st = Create(ctx);
  if (!st.ok())
    return st;
  Statement* ins = ctx.db().Prepare(
      "INSERT INTO gt_spill.graph_trace (start, \"end\", deviceOrdinal, contextId, streamId, correlationId, graphId) "
      "VALUES (?,?,?,?,?,?,?)",
      &st);
  if (ins == nullptr)
    return st;
  rows_ = true;
  ins->Int(1, start_ns).Int(2, end_ns).Int(3, r.device_id()).Int(4, r.context_id()).Int(5, r.stream_id());
  ins->Int(6, r.correlation_id()).Int(7, r.graph_id());
  return ins->Run();
}

Status GraphTraceSpill::AddLaunch(ExportContext& ctx, uint32_t correlation_id, uint32_t exec_id) {
  Status st = Create(ctx);
  if (!st.ok())
    return st;
  Statement* ins =
      ctx.db().Prepare("INSERT OR REPLACE INTO gt_spill.graph_launches (correlationId, execId) VALUES (?,?)", &st);
  if (ins == nullptr)
    return st;
  rows_ = true;
  return ins->Int(1, correlation_id).Int(2, exec_id).Run();
}

Status GraphTraceSpill::WriteStream(ExportContext& ctx,
                                    StreamContext& s,
                                    CudaTargetInfo* target,
                                    uint64_t* without_exec) {
  *without_exec = 0;
  if (!rows_)
    return Status::Ok();
  rows_ = false;
  Status st;
  // The device column of each distinct (ordinal, context), as DeviceColumn gives it now (a device
  // described after the row still counts, and an unknown one gets its placeholder).
  std::vector<std::pair<int64_t, int64_t>> pairs;
  {
    Statement* q = ctx.db().Prepare("SELECT DISTINCT deviceOrdinal, contextId FROM gt_spill.graph_trace", &st);
    if (q == nullptr)
      return st;
    while (q->Step())
      pairs.emplace_back(q->ColumnInt(0), q->ColumnInt(1));
    q->Reset();
  }
  if (!pairs.empty()) {
    Statement* ins =
        ctx.db().Prepare("INSERT INTO gt_spill.graph_devices (deviceOrdinal, contextId, deviceId) VALUES (?,?,?)", &st);
    if (ins == nullptr)
      return st;
    for (const auto& [ordinal, context] : pairs) {
      const int64_t device = target->DeviceColumn(s, static_cast<uint32_t>(ordinal), static_cast<uint32_t>(context));
      if (!(st = ins->Int(1, ordinal).Int(2, context).Int(3, device).Run()).ok())
        return st;
    }
    Statement* count = ctx.db().Prepare(
        "SELECT count(*) FROM gt_spill.graph_trace AS g WHERE NOT EXISTS (SELECT 1 FROM gt_spill.graph_launches AS l "
        "WHERE l.correlationId = g.correlationId)",
        &st);
    if (count == nullptr)
      return st;
    if (count->Step())
      *without_exec = static_cast<uint64_t>(count->ColumnInt(0));
    count->Reset();
    if (!(st = ctx.EnsureTable("CUPTI_ACTIVITY_KIND_GRAPH_TRACE")).ok())
      return st;
    // LEFT JOINs keep the spilled rows the outer loop, read in rowid (= read) order: no sort.
    Statement* copy = ctx.db().Prepare(
        "INSERT INTO main.CUPTI_ACTIVITY_KIND_GRAPH_TRACE (start, end, deviceId, contextId, greenContextId, streamId, "
        "correlationId, globalPid, graphId, graphExecId) "
        "SELECT g.start, g.\"end\", d.deviceId, g.contextId, 0, g.streamId, g.correlationId, ?, g.graphId, "
        "coalesce(l.execId, 0) FROM gt_spill.graph_trace AS g "
        "LEFT JOIN gt_spill.graph_devices AS d ON d.deviceOrdinal = g.deviceOrdinal AND d.contextId = g.contextId "
        "LEFT JOIN gt_spill.graph_launches AS l ON l.correlationId = g.correlationId ORDER BY g.rowid",
        &st);
    if (copy == nullptr)
      return st;
    if (!(st = copy->Int(1, s.GlobalPid()).Run()).ok())
      return st;
  }
  return ctx.db().Exec(
      "DELETE FROM gt_spill.graph_trace; DELETE FROM gt_spill.graph_launches; DELETE FROM gt_spill.graph_devices;");
}

}  // namespace gt::exporter
