// osrt_sum: OS runtime calls (OSRT_API) per function, nsys's "OS Runtime Summary".
//
// Columns as nsys's osrt_sum (and its cuda_api_sum): Time (%) / Total Time (ns) / Num Calls / Avg (ns)
// / Med (ns) / Min (ns) / Max (ns) / StdDev (ns) / Name, "Time (%)" the share of the summed total
// time of the functions listed, rows by total time descending (Nsight Systems Post-Collection
// Analysis Guide, "Statistical Reports Shipped With Nsight Systems"; our SQL and C++, not NVIDIA's
// script). Counted: eventClass 27 rows (complete calls). nsys's 31/32 rows (OSRT start/finish marks
// of a call cut by the end of the capture, zero long, name "[Unknown]" in the real sample) are not
// calls and are left out; gtrace writes none.
#include "tools/stats/grouped_summary.h"
#include "tools/stats/reports.h"
#include "tools/stats/statistics.h"

namespace gt::stats {

gt::Status BuildOsrtSum(Database& db, Table* table) {
  if (!db.HasTable("OSRT_API"))
    return MissingTable(db, *table, "OSRT_API", "was the OS runtime traced (-t osrt)?");
  // Grouped by name inside SQLite (grouped_summary.h): memory per function name, not per call.
  std::vector<KeyedSummary> groups;
  int64_t grand_total = 0;
  gt::Status status = SummarizeByKey(db,
                                     "SELECT coalesce(s.value, '[Unknown]') AS k0, o.\"end\" - o.start AS v "
                                     "FROM OSRT_API AS o LEFT JOIN StringIds AS s ON s.id = o.nameId "
                                     "WHERE o.eventClass = 27",
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

}  // namespace gt::stats
