// osrt_sum: OS runtime calls (OSRT_API) per function, nsys's "OS Runtime Summary".
//
// Columns as nsys's osrt_sum (and its cuda_api_sum): Time (%) / Total Time (ns) / Num Calls / Avg (ns)
// / Med (ns) / Min (ns) / Max (ns) / StdDev (ns) / Name, "Time (%)" the share of the summed total
// time of the functions listed, rows by total time descending (Nsight Systems Post-Collection
// Analysis Guide, "Statistical Reports Shipped With Nsight Systems"; our SQL and C++, not NVIDIA's
// script). Counted: eventClass 27 rows (complete calls). nsys's 31/32 rows (OSRT start/finish marks
// of a call cut by the end of the capture, zero long, name "[Unknown]" in the real sample) are not
// calls and are left out; gtrace writes none.
#include <map>

#include "tools/stats/reports.h"
#include "tools/stats/statistics.h"

namespace gt::stats {

gt::Status BuildOsrtSum(Database& db, Table* table) {
  if (!db.HasTable("OSRT_API"))
    return MissingTable(db, *table, "OSRT_API", "was the OS runtime traced (-t osrt)?");
  Statement statement;
  gt::Status status = db.Prepare(
      "SELECT s.value, o.\"end\" - o.start FROM OSRT_API AS o "
      "LEFT JOIN StringIds AS s ON s.id = o.nameId WHERE o.eventClass = 27",
      &statement);
  if (!status.ok())
    return status;
  std::map<std::string, std::vector<int64_t>> groups;
  int64_t grand_total = 0;
  for (bool has_row = false; (status = statement.Step(&has_row)).ok() && has_row;) {
    groups[statement.IsNull(0) ? std::string("[Unknown]") : std::string(statement.Text(0))].push_back(
        statement.Int(1));
    grand_total += statement.Int(1);
  }
  if (!status.ok())
    return status;
  table->columns = {NumberColumn("Time (%)"), NumberColumn("Total Time (ns)"), NumberColumn("Num Calls"),
                    NumberColumn("Avg (ns)"), NumberColumn("Med (ns)"),        NumberColumn("Min (ns)"),
                    NumberColumn("Max (ns)"), NumberColumn("StdDev (ns)"),     TextColumn("Name")};
  for (const auto& [name, summary] : SortedSummaries(&groups)) {
    table->rows.push_back({Percent(summary.total, grand_total), Cell::Int(summary.total), Cell::Int(summary.count),
                           summary.avg, summary.median, Cell::Int(summary.min), Cell::Int(summary.max), summary.stddev,
                           Cell::Text(name)});
  }
  return gt::Status::Ok();
}

}  // namespace gt::stats
