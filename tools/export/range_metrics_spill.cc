#include "tools/export/range_metrics_spill.h"

#include <cstring>

namespace gt::exporter {

Status RangeMetricsSpill::Add(ExportContext& ctx, const RangeRow& row) {
  Status st;
  if (!created_) {
    st = ctx.db().Exec(
        "CREATE TABLE gt_spill.range_rows (stream INTEGER NOT NULL, pid INTEGER NOT NULL, globalPid INTEGER NOT "
        "NULL, globalTid INTEGER, deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, mode INTEGER NOT NULL, "
        "rangeName TEXT NOT NULL, rangeIndex INTEGER NOT NULL, passId INTEGER NOT NULL, passStart INTEGER NOT NULL, "
        "passEnd INTEGER NOT NULL, vals BLOB)");
    if (!st.ok())
      return st;
    created_ = true;
  }
  Statement* ins = ctx.db().Prepare(
      "INSERT INTO gt_spill.range_rows (stream, pid, globalPid, globalTid, deviceId, contextId, mode, rangeName, "
      "rangeIndex, passId, passStart, passEnd, vals) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
      &st);
  if (ins == nullptr)
    return st;
  ins->Int(1, static_cast<int64_t>(row.stream)).Int(2, row.pid).Int(3, row.global_pid).OptInt(4, row.global_tid);
  ins->Int(5, row.device_id).Int(6, row.context_id).Int(7, row.mode).Text(8, row.range_name);
  ins->Int(9, row.range_index).Int(10, static_cast<int64_t>(row.pass_id)).Int(11, row.pass_start_ns);
  ins->Int(12, row.pass_end_ns);
  // The values as the doubles' bytes: exact, and one column whatever the number of metrics.
  if (row.values.empty()) {
    ins->Null(13);
  } else {
    ins->Blob(13, row.values.data(), row.values.size() * sizeof(double));
  }
  if (!(st = ins->Run()).ok())
    return st;
  ++rows_;
  if (row.mode == schema::RANGE_METRICS_MODE_KERNEL)
    ++kernel_rows_;
  return Status::Ok();
}

Status RangeMetricsSpill::ForEach(ExportContext& ctx, const std::function<Status(const RangeRow&)>& fn) {
  if (rows_ == 0)
    return Status::Ok();
  Status st;
  // Its own statement text (not shared with another reader): the cursor stays open while `fn`
  // inserts into the output.
  Statement* q = ctx.db().Prepare(
      "SELECT stream, pid, globalPid, globalTid, deviceId, contextId, mode, rangeName, rangeIndex, passId, "
      "passStart, passEnd, vals FROM gt_spill.range_rows ORDER BY rowid",
      &st);
  if (q == nullptr)
    return st;
  RangeRow row;
  while (q->Step()) {
    row.stream = static_cast<size_t>(q->ColumnInt(0));
    row.pid = static_cast<uint32_t>(q->ColumnInt(1));
    row.global_pid = q->ColumnInt(2);
    row.global_tid = q->ColumnIsNull(3) ? std::nullopt : std::optional<int64_t>(q->ColumnInt(3));
    row.device_id = static_cast<uint32_t>(q->ColumnInt(4));
    row.context_id = static_cast<uint32_t>(q->ColumnInt(5));
    row.mode = static_cast<int32_t>(q->ColumnInt(6));
    row.range_name = q->ColumnText(7);
    row.range_index = static_cast<uint32_t>(q->ColumnInt(8));
    row.pass_id = static_cast<uint64_t>(q->ColumnInt(9));
    row.pass_start_ns = q->ColumnInt(10);
    row.pass_end_ns = q->ColumnInt(11);
    std::string_view blob = q->ColumnBlob(12);
    row.values.resize(blob.size() / sizeof(double));
    if (!row.values.empty())
      std::memcpy(row.values.data(), blob.data(), row.values.size() * sizeof(double));
    if (!(st = fn(row)).ok()) {
      q->Reset();
      return st;
    }
  }
  q->Reset();
  return Status::Ok();
}

}  // namespace gt::exporter
