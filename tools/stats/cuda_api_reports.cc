// CUDA API reports: cuda_api_sum and cuda_api_trace, over CUPTI_ACTIVITY_KIND_RUNTIME (runtime and
// driver calls share that table, eventClass 0/1).
//
// Sources matched (our SQL and C++, written from these descriptions, not from NVIDIA's scripts):
//  - Nsight Systems Post-Collection Analysis Guide, "Statistical Reports Shipped With Nsight Systems":
//    cuda_api_sum columns Time / Total Time / Num Calls / Avg / Med / Min / Max / StdDev / Name ("Time" is
//    the share of the summed Total Time of the functions listed); cuda_api_trace columns Start /
//    Duration / Name / Result / CorrID / Pid / Tid / T-Pri / Thread Name.
//  - Real output: `nsys stats -r cuda_api_trace -f csv` of nsys 2023.2.3 prints the header
//    "Start (ns),Duration (ns),Name,Result,CorrID,Pid,Tid,T-Pri,Thread Name" in start order, names
//    without the 4-digit CUPTI suffix ("cudaMalloc"); cuda_api_sum tables of nsys 2023–2026 print
//    "cudaStreamIsCapturing_v10000", "cudaGetDeviceProperties_v2_v12000", "cudaLaunchKernelExC_v11060"
//    unchanged — the suffix rule in StripApiVersionSuffix; rows ordered by total time descending.
//  - Fact sheet §3 facts 3, 7, 17: pid/tid from globalTid, thread name and priority from ThreadNames
//    (nsys's cuda_api_trace refuses a file without that table).
// Not confirmed: whether nsys groups cuda_api_sum by name id or by the stripped name (we group by the
// printed name, so two ids printing the same name are one row). eventClass-67 rows (the second row of
// a call whose stack was recorded with --cudabacktrace, same correlation id) are not counted: each call
// is counted once, by its runtime/driver row.
#include "tools/stats/grouped_summary.h"
#include "tools/stats/reports.h"
#include "tools/stats/statistics.h"

namespace gt::stats {

gt::Status BuildCudaApiSum(Database& db, Table* table) {
  if (!db.HasTable(kRuntimeTable))
    return MissingTable(db, *table, kRuntimeTable, "was CUDA traced?");
  // Grouped by the printed name inside SQLite (grouped_summary.h): memory per name, not per call.
  std::vector<KeyedSummary> groups;
  int64_t grand_total = 0;
  gt::Status status = SummarizeByKey(db,
                                     "SELECT gt_strip_api_version(s.value) AS k0, r.\"end\" - r.start AS v "
                                     "FROM CUPTI_ACTIVITY_KIND_RUNTIME AS r "
                                     "LEFT JOIN StringIds AS s ON s.id = r.nameId WHERE r.eventClass IS NOT 67",
                                     1, 1, 1, &groups, &grand_total);
  if (!status.ok())
    return status;
  table->columns = {NumberColumn("Time (%)"), NumberColumn("Total Time (ns)"), NumberColumn("Num Calls"),
                    NumberColumn("Avg (ns)"), NumberColumn("Med (ns)"),        NumberColumn("Min (ns)"),
                    NumberColumn("Max (ns)"), NumberColumn("StdDev (ns)"),     TextColumn("Name")};
  for (const KeyedSummary& group : groups) {
    const Summary& summary = group.summary;
    table->rows.push_back({Percent(summary.total, grand_total), Cell::Int(summary.total), Cell::Int(summary.count),
                           summary.avg, summary.median, Cell::Int(summary.min), Cell::Int(summary.max), summary.stddev,
                           Cell::Text(group.key[0])});
  }
  return gt::Status::Ok();
}

gt::Status StreamCudaApiTrace(Database& db, Table* table, const RowSink& row) {
  if (!db.HasTable(kRuntimeTable))
    return MissingTable(db, *table, kRuntimeTable, "was CUDA traced?");
  if (!db.HasTable("ThreadNames")) {
    return MissingTable(db, *table, "ThreadNames", "the export must name every traced thread");
  }
  // One ThreadNames row per thread (the last written, in case an exporter wrote a rename), so a thread
  // named twice does not duplicate its calls; unnamed threads keep their calls with an empty name.
  Statement statement;
  gt::Status status = db.Prepare(
      "WITH names AS ("
      "  SELECT globalTid, priority, nameId, max(rowid) FROM ThreadNames GROUP BY globalTid) "
      "SELECT r.start, r.\"end\" - r.start, s.value, r.returnValue, r.correlationId, r.globalTid,"
      "       n.priority, tn.value "
      "FROM CUPTI_ACTIVITY_KIND_RUNTIME AS r "
      "LEFT JOIN StringIds AS s ON s.id = r.nameId "
      "LEFT JOIN names AS n ON n.globalTid = r.globalTid "
      "LEFT JOIN StringIds AS tn ON tn.id = n.nameId "
      "WHERE r.eventClass IS NOT 67 "
      "ORDER BY r.start, r.rowid",
      &statement);
  if (!status.ok())
    return status;
  table->columns = {NumberColumn("Start (ns)"), NumberColumn("Duration (ns)"), TextColumn("Name"),
                    NumberColumn("Result"),     NumberColumn("CorrID"),        NumberColumn("Pid"),
                    NumberColumn("Tid"),        NumberColumn("T-Pri"),         TextColumn("Thread Name")};
  // Each row is printed as SQLite yields it (its sorter spills past its cache): memory O(1) in the rows.
  std::vector<Cell> cells;
  for (bool has_row = false; (status = statement.Step(&has_row)).ok() && has_row;) {
    const auto optional_int = [&](int column) {
      return statement.IsNull(column) ? Cell::Null() : Cell::Int(statement.Int(column));
    };
    const std::optional<int64_t> global_tid = statement.OptInt(5);
    cells = {Cell::Int(statement.Int(0)),
             Cell::Int(statement.Int(1)),
             Cell::Text(StripApiVersionSuffix(statement.TextView(2))),
             Cell::Int(statement.Int(3)),
             optional_int(4),
             global_tid ? Cell::Int(PidOf(*global_tid)) : Cell::Null(),
             global_tid ? Cell::Int(TidOf(*global_tid)) : Cell::Null(),
             optional_int(6),
             statement.IsNull(7) ? Cell::Null() : Cell::Text(statement.Text(7))};
    row(cells);
  }
  return status;
}

}  // namespace gt::stats
