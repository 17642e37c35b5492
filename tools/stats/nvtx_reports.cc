// NVTX reports: nvtx_sum and nvtx_gpu_proj_sum.
//
// Sources matched (our SQL and C++, written from these descriptions, not from NVIDIA's scripts):
//  - Nsight Systems Post-Collection Analysis Guide, "Statistical Reports Shipped With Nsight Systems":
//    nvtx_sum columns Time / Total Time / Instances / Avg / Med / Min / Max / StdDev / Style / Range;
//    nvtx_gpu_proj_sum columns Range / Style / Total Proj Time / Total Range Time / Range Instances /
//    Proj Avg / Med / Min / Max / StdDev / Total GPU Ops / Avg GPU Ops / Avg Range Lvl / Avg Num Child, and
//    its rules: a GPU op is "contained" by a range when the CUDA API call that launched it lies within
//    the range; only ranges that start and end on the same thread count; the projected range runs from
//    the first enclosed GPU op's start to the last one's end; children are not subtracted.
//  - Real output of nsys 2025.3.2 / 2026.1.1 (`nsys stats -r nvtx_sum`, `-r nvtx_gpu_proj_sum -f csv`):
//    headers "Time (%)", "Total Time (ns)", ..., "Style" values "PushPop"/"StartEnd", ranges of the
//    default domain printed as ":name" (a named domain gives "Domain:name"), rows ordered by total time
//    descending, one decimal on averages/medians/stddev and on the Avg GPU Ops/Lvl/Child columns.
//  - nsys's NVTX reports (and the fact sheet §3 facts 10–11): event types 59/70 push/pop, 60/71
//    start/end, domain names from the type-75 row with the same domainId in the same process, name
//    text from `text` or the registered string `textId`, a range still open at the end of the capture
//    ends at the last NVTX timestamp.
// Not confirmed (no public sample): how nsys counts range instances with no GPU op in
// nvtx_gpu_proj_sum (we leave them out), and how it computes Lvl/NumChild for start/end ranges (we give
// them level 0 and no children; push/pop nesting is computed per thread).
// nvtx_gpu_proj_sum is in nvtx_gpu_proj_report.cc; the SQL both share in nvtx_sql.h.
#include <string>
#include <vector>

#include "tools/stats/grouped_summary.h"
#include "tools/stats/nvtx_sql.h"
#include "tools/stats/reports.h"
#include "tools/stats/statistics.h"

namespace gt::stats {

gt::Status RequireNvtx(Database& db, const Table& table) {
  if (!db.HasTable(kNvtxTable))
    return MissingTable(db, table, kNvtxTable, "was NVTX traced?");
  return gt::Status::Ok();
}

gt::Status LastTimestamp(Database& db, int64_t* last_timestamp) {
  Statement statement;
  gt::Status status =
      db.Prepare("SELECT max(coalesce(max(start), 0), coalesce(max(\"end\"), 0)) FROM NVTX_EVENTS", &statement);
  bool has_row = false;
  if (status.ok())
    status = statement.Step(&has_row);
  if (!status.ok())
    return status;
  *last_timestamp = has_row ? statement.Int(0) : 0;
  return gt::Status::Ok();
}

namespace {

// Fills one summary row: Time (%), Total, count, Avg, Med, Min, Max, StdDev.
void AppendTimeColumns(const Summary& summary, int64_t grand_total, std::vector<Cell>* row) {
  row->push_back(Percent(summary.total, grand_total));
  row->push_back(Cell::Int(summary.total));
  row->push_back(Cell::Int(summary.count));
  row->push_back(summary.avg);
  row->push_back(summary.median);
  row->push_back(Cell::Int(summary.min));
  row->push_back(Cell::Int(summary.max));
  row->push_back(summary.stddev);
}

}  // namespace

gt::Status BuildNvtxSum(Database& db, Table* table) {
  gt::Status status = RequireNvtx(db, *table);
  if (!status.ok())
    return status;
  int64_t last_timestamp = 0;
  status = LastTimestamp(db, &last_timestamp);
  if (!status.ok())
    return status;
  // Grouped by (name, style) inside SQLite (grouped_summary.h): memory per name, not per range.
  const std::string rows_sql = std::string(kDomainNamesSql) + "SELECT " + kRangeNameSql +
                               " AS k0, "
                               "       CASE WHEN r.eventType IN (59, 70) THEN 'PushPop' ELSE 'StartEnd' END AS k1, "
                               "       CASE WHEN r.\"end\" IS NULL THEN max(" +
                               std::to_string(last_timestamp) +
                               ", r.start) "
                               "            ELSE r.\"end\" END - r.start AS v " +
                               kRangesFromSql;
  std::vector<KeyedSummary> groups;
  int64_t grand_total = 0;
  status = SummarizeByKey(db, rows_sql, 2, 1, 1, &groups, &grand_total);
  if (!status.ok())
    return status;
  table->columns = {NumberColumn("Time (%)"), NumberColumn("Total Time (ns)"), NumberColumn("Instances"),
                    NumberColumn("Avg (ns)"), NumberColumn("Med (ns)"),        NumberColumn("Min (ns)"),
                    NumberColumn("Max (ns)"), NumberColumn("StdDev (ns)"),     TextColumn("Style"),
                    TextColumn("Range")};
  for (const KeyedSummary& group : groups) {
    std::vector<Cell> row;
    AppendTimeColumns(group.summary, grand_total, &row);
    row.push_back(Cell::Text(group.key[1]));
    row.push_back(Cell::Text(group.key[0]));
    table->rows.push_back(std::move(row));
  }
  return gt::Status::Ok();
}

}  // namespace gt::stats
