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
#include <algorithm>
#include <map>
#include <tuple>
#include <unordered_map>

#include "tools/stats/grouped_summary.h"
#include "tools/stats/reports.h"
#include "tools/stats/statistics.h"

namespace gt::stats {
namespace {

constexpr int64_t kTidMask = 0xFFFFFF;

struct NvtxRange {
  int64_t start = 0;
  int64_t end = 0;
  int64_t global_tid = 0;
  bool push_pop = true;
  bool same_thread = true;  // ended on the thread that started it
  bool open = false;        // no end recorded
  std::string name;         // "<domain>:<text>"
};

const char* StyleName(bool push_pop) {
  return push_pop ? "PushPop" : "StartEnd";
}

gt::Status RequireNvtx(Database& db, const Table& table) {
  if (!db.HasTable(kNvtxTable))
    return MissingTable(db, table, kNvtxTable, "was NVTX traced?");
  return gt::Status::Ok();
}

// A domain is announced once per process by an eventType-75 row; its name is text or a registered
// string. The earliest announcement wins if a process announced the same id twice.
constexpr char kDomainNamesSql[] =
    "WITH domain_names AS ("
    "  SELECT e.domainId AS domain_id, e.globalTid >> 24 AS process,"
    "         coalesce(e.text, s.value) AS name, min(e.start) AS first_seen"
    "  FROM NVTX_EVENTS AS e LEFT JOIN StringIds AS s ON s.id = e.textId"
    "  WHERE e.eventType = 75"
    "  GROUP BY e.domainId, e.globalTid >> 24) ";
// "<domain>:<text>" of range row `r` (after kDomainNamesSql, with kRangesFromSql).
constexpr char kRangeNameSql[] = "coalesce(d.name, '') || ':' || coalesce(r.text, s.value, '')";
constexpr char kRangesFromSql[] =
    "FROM NVTX_EVENTS AS r "
    "LEFT JOIN domain_names AS d ON d.domain_id = r.domainId AND d.process = (r.globalTid >> 24) "
    "LEFT JOIN StringIds AS s ON s.id = r.textId "
    "WHERE r.eventType IN (59, 60, 70, 71) ";

// The latest NVTX timestamp: where a range still open at the end of the capture ends.
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

// Loads every push/pop and start/end range with its domain-prefixed name, ordered by thread and start
// (nvtx_gpu_proj_sum, which nests ranges per thread).
gt::Status LoadRanges(Database& db, std::vector<NvtxRange>* ranges) {
  int64_t last_timestamp = 0;
  gt::Status status = LastTimestamp(db, &last_timestamp);
  if (!status.ok())
    return status;
  const std::string end_tid = db.HasColumn(kNvtxTable, "endGlobalTid") ? "r.endGlobalTid" : "NULL";
  const std::string sql = std::string(kDomainNamesSql) + "SELECT r.eventType, r.start, r.\"end\", r.globalTid, " +
                          end_tid + ", " + kRangeNameSql + " " + kRangesFromSql +
                          "ORDER BY r.globalTid, r.start, r.rowid";
  Statement statement;
  status = db.Prepare(sql, &statement);
  if (!status.ok())
    return status;
  for (bool has_row = false; (status = statement.Step(&has_row)).ok() && has_row;) {
    NvtxRange range;
    const int64_t event_type = statement.Int(0);
    range.push_pop = event_type == 59 || event_type == 70;
    range.start = statement.Int(1);
    range.open = statement.IsNull(2);
    range.end = range.open ? std::max(last_timestamp, range.start) : statement.Int(2);
    range.global_tid = statement.Int(3);
    const std::optional<int64_t> end_global_tid = statement.OptInt(4);
    range.same_thread = !end_global_tid || *end_global_tid == range.global_tid;
    range.name = statement.Text(5);
    ranges->push_back(std::move(range));
  }
  return status;
}

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

// GPU work launched by one API call: span and number of ops (graph launches can have many).
struct OpSpan {
  int64_t start = 0;
  int64_t end = 0;
  int64_t count = 0;
};

struct PairHash {
  size_t operator()(const std::pair<int64_t, int64_t>& key) const {
    return std::hash<int64_t>()(key.first) * 1000003u ^ std::hash<int64_t>()(key.second);
  }
};

using OpsByLaunch = std::unordered_map<std::pair<int64_t, int64_t>, OpSpan, PairHash>;  // (globalPid, corrId)

gt::Status LoadGpuOps(Database& db, std::string_view gpu_table, OpsByLaunch* ops) {
  Statement statement;
  gt::Status status =
      db.Prepare("SELECT globalPid, correlationId, min(start), max(\"end\"), count(*) FROM " + std::string(gpu_table) +
                     " WHERE correlationId IS NOT NULL GROUP BY globalPid, correlationId",
                 &statement);
  if (!status.ok())
    return status;
  for (bool has_row = false; (status = statement.Step(&has_row)).ok() && has_row;) {
    OpSpan span{statement.Int(2), statement.Int(3), statement.Int(4)};
    auto [it, inserted] = ops->try_emplace({statement.Int(0), statement.Int(1)}, span);
    if (!inserted) {
      it->second.start = std::min(it->second.start, span.start);
      it->second.end = std::max(it->second.end, span.end);
      it->second.count += span.count;
    }
  }
  return status;
}

struct ApiCall {
  int64_t start = 0;
  int64_t end = 0;
  int64_t correlation_id = 0;
};

// API calls per thread, sorted by start.
gt::Status LoadApiCalls(Database& db, std::map<int64_t, std::vector<ApiCall>>* calls) {
  Statement statement;
  gt::Status status = db.Prepare(
      "SELECT globalTid, start, \"end\", correlationId FROM CUPTI_ACTIVITY_KIND_RUNTIME "
      "WHERE globalTid IS NOT NULL AND correlationId IS NOT NULL AND eventClass IS NOT 67 "  // not backtrace rows
      "ORDER BY globalTid, start",
      &statement);
  if (!status.ok())
    return status;
  for (bool has_row = false; (status = statement.Step(&has_row)).ok() && has_row;) {
    (*calls)[statement.Int(0)].push_back(ApiCall{statement.Int(1), statement.Int(2), statement.Int(3)});
  }
  return status;
}

// Stack level and direct-child count of each push/pop range of one thread (indices into `ranges`).
// A range is the child of the innermost earlier range that contains it.
void ComputeNesting(const std::vector<NvtxRange>& ranges,
                    const std::vector<size_t>& thread_ranges,
                    std::vector<int64_t>* level,
                    std::vector<int64_t>* children) {
  std::vector<size_t> order;
  for (size_t index : thread_ranges) {
    if (ranges[index].push_pop)
      order.push_back(index);
  }
  // By start; the outer (longer) range first when two start together.
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (ranges[a].start != ranges[b].start)
      return ranges[a].start < ranges[b].start;
    return ranges[a].end > ranges[b].end;
  });
  std::vector<size_t> stack;
  for (size_t index : order) {
    const NvtxRange& range = ranges[index];
    while (!stack.empty() && !(ranges[stack.back()].start <= range.start && range.end <= ranges[stack.back()].end)) {
      stack.pop_back();
    }
    (*level)[index] = static_cast<int64_t>(stack.size());
    if (!stack.empty())
      ++(*children)[stack.back()];
    stack.push_back(index);
  }
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

gt::Status BuildNvtxGpuProjSum(Database& db, Table* table) {
  gt::Status status = RequireNvtx(db, *table);
  if (!status.ok())
    return status;
  if (!db.HasTable(kRuntimeTable))
    return MissingTable(db, *table, kRuntimeTable, "was CUDA traced?");
  OpsByLaunch ops;
  bool any_gpu_table = false;
  for (std::string_view gpu_table : {kKernelTable, kMemcpyTable, kMemsetTable}) {
    if (!db.HasTable(gpu_table))
      continue;  // nsys omits empty tables
    any_gpu_table = true;
    status = LoadGpuOps(db, gpu_table, &ops);
    if (!status.ok())
      return status;
  }
  if (!any_gpu_table) {
    return MissingTable(db, *table, "CUPTI_ACTIVITY_KIND_KERNEL, _MEMCPY or _MEMSET", "no GPU work was traced");
  }
  std::vector<NvtxRange> ranges;
  status = LoadRanges(db, &ranges);
  if (!status.ok())
    return status;
  std::map<int64_t, std::vector<ApiCall>> calls_by_thread;
  status = LoadApiCalls(db, &calls_by_thread);
  if (!status.ok())
    return status;

  std::map<int64_t, std::vector<size_t>> ranges_by_thread;
  for (size_t i = 0; i < ranges.size(); ++i)
    ranges_by_thread[ranges[i].global_tid].push_back(i);
  std::vector<int64_t> level(ranges.size(), 0);
  std::vector<int64_t> children(ranges.size(), 0);
  for (const auto& [tid, indices] : ranges_by_thread)
    ComputeNesting(ranges, indices, &level, &children);

  struct Group {
    std::vector<int64_t> projected;
    int64_t range_total = 0;
    int64_t gpu_ops = 0;
    int64_t level_total = 0;
    int64_t children_total = 0;
  };
  std::map<std::pair<std::string, std::string>, Group> groups;  // (name, style)
  for (size_t i = 0; i < ranges.size(); ++i) {
    const NvtxRange& range = ranges[i];
    if (!range.same_thread || range.open)
      continue;
    auto thread_calls = calls_by_thread.find(range.global_tid);
    if (thread_calls == calls_by_thread.end())
      continue;
    const std::vector<ApiCall>& calls = thread_calls->second;
    const int64_t global_pid = range.global_tid & ~kTidMask;
    OpSpan projected{0, 0, 0};
    auto call = std::lower_bound(calls.begin(), calls.end(), range.start,
                                 [](const ApiCall& c, int64_t start) { return c.start < start; });
    for (; call != calls.end() && call->start <= range.end; ++call) {
      if (call->end > range.end)
        continue;
      // Correlation ids are unique per process only: match the launching process too.
      auto launched = ops.find({global_pid, call->correlation_id});
      if (launched == ops.end())
        continue;
      const OpSpan& span = launched->second;
      projected.start = projected.count == 0 ? span.start : std::min(projected.start, span.start);
      projected.end = projected.count == 0 ? span.end : std::max(projected.end, span.end);
      projected.count += span.count;
    }
    if (projected.count == 0)
      continue;
    Group& group = groups[{range.name, StyleName(range.push_pop)}];
    group.projected.push_back(projected.end - projected.start);
    group.range_total += range.end - range.start;
    group.gpu_ops += projected.count;
    group.level_total += level[i];
    group.children_total += children[i];
  }

  std::map<std::pair<std::string, std::string>, std::vector<int64_t>> projections;
  for (auto& [key, group] : groups)
    projections[key] = group.projected;
  table->columns = {TextColumn("Range"),
                    TextColumn("Style"),
                    NumberColumn("Total Proj Time (ns)"),
                    NumberColumn("Total Range Time (ns)"),
                    NumberColumn("Range Instances"),
                    NumberColumn("Proj Avg (ns)"),
                    NumberColumn("Proj Med (ns)"),
                    NumberColumn("Proj Min (ns)"),
                    NumberColumn("Proj Max (ns)"),
                    NumberColumn("Proj StdDev (ns)"),
                    NumberColumn("Total GPU Ops"),
                    NumberColumn("Avg GPU Ops"),
                    NumberColumn("Avg Range Lvl"),
                    NumberColumn("Avg Num Child")};
  for (const auto& [key, summary] : SortedSummaries(&projections)) {
    const Group& group = groups[key];
    const int64_t n = summary.count;
    table->rows.push_back(
        {Cell::Text(key.first), Cell::Text(key.second), Cell::Int(summary.total), Cell::Int(group.range_total),
         Cell::Int(n), summary.avg, summary.median, Cell::Int(summary.min), Cell::Int(summary.max), summary.stddev,
         Cell::Int(group.gpu_ops), Cell::Fixed(RoundDiv(group.gpu_ops * 10, n), 1),
         Cell::Fixed(RoundDiv(group.level_total * 10, n), 1), Cell::Fixed(RoundDiv(group.children_total * 10, n), 1)});
  }
  return gt::Status::Ok();
}

}  // namespace gt::stats
