// nvtx_gpu_proj_sum: NVTX ranges projected onto the GPU work launched inside them (rules and sources
// in nvtx_reports.cc's comment: a GPU op belongs to a range when the CUDA API call that launched it
// lies within the range, on the range's thread; only ranges that start and end on the same thread
// and have an end count; the projection runs from the first op's start to the last op's end; stack
// level and direct children are computed over each thread's push/pop ranges).
//
// Memory (issue 20): per thread, a sorted sweep over two streams SQLite yields in (thread, start)
// order — the ranges, and the API calls joined in SQL to the span of the GPU ops they launched — so
// only the ranges still open at the sweep's time (and the push/pop stack) are held, plus one entry
// per (name, style) group. The projected durations, whose exact median needs every value, go into a
// TEMP table (SQLite's temporary file, not memory) and come back ORDER BY (group, value) through a
// SortedValueSummarizer, as grouped_summary.h does for the other summaries. Byte-identical to the
// load-everything version kept in tests/stats/large_proj_test.cc.
#include <algorithm>
#include <cstdint>
#include <list>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "tools/stats/nvtx_sql.h"
#include "tools/stats/reports.h"
#include "tools/stats/statistics.h"

namespace gt::stats {
namespace {

constexpr int64_t kTidMask = 0xFFFFFF;

// One (name, style) row of the report, while its ranges come in.
struct ProjGroup {
  int64_t id = 0;  // insertion order: the TEMP table's group column
  int64_t count = 0;
  __int128 projected_total = 0;
  int64_t range_total = 0;
  int64_t gpu_ops = 0;
  int64_t level_total = 0;
  int64_t children_total = 0;
};

// A range of the current thread that may still gain calls or children.
struct OpenRange {
  int64_t start = 0;
  int64_t end = 0;
  bool push_pop = true;
  bool projectable = true;  // same thread, not open: counted in the report
  bool on_stack = false;    // push/pop nesting: may still get children
  int64_t level = 0;
  int64_t children = 0;
  int64_t ops_start = 0, ops_end = 0, ops = 0;  // the projection so far
  std::string name;
};

// The report's state and its sweep; lives for one BuildNvtxGpuProjSum call on the report's thread.
class ProjectionSweep {
 public:
  explicit ProjectionSweep(Database& db) : db_(db) {}

  gt::Status Begin() {
    gt::Status status = Exec("DROP TABLE IF EXISTS temp.gt_nvtx_proj");
    if (status.ok())
      status = Exec("CREATE TEMP TABLE gt_nvtx_proj (g INTEGER NOT NULL, v INTEGER NOT NULL)");
    if (status.ok())
      status = Exec("BEGIN");
    if (status.ok())
      status = db_.Prepare("INSERT INTO temp.gt_nvtx_proj VALUES (?1, ?2)", &insert_);
    return status;
  }

  // A range of the thread being swept, in (start, end descending, rowid) order: the push/pop stack
  // as ComputeNesting built it (a range is the child of the innermost earlier one containing it).
  void AddRange(OpenRange range) {
    if (range.push_pop) {
      while (!stack_.empty() && !(stack_.back()->start <= range.start && range.end <= stack_.back()->end)) {
        stack_.back()->on_stack = false;
        stack_.pop_back();
      }
      range.level = static_cast<int64_t>(stack_.size());
      if (!stack_.empty())
        ++stack_.back()->children;
      range.on_stack = true;
    }
    open_.push_back(std::move(range));
    if (open_.back().push_pop)
      stack_.push_back(&open_.back());
  }

  // A call of the thread (in start order, after every range starting at or before it) whose GPU ops
  // span [ops_start, ops_end].
  void AddCall(int64_t start, int64_t end, int64_t ops_start, int64_t ops_end, int64_t ops) {
    for (OpenRange& range : open_) {
      if (!range.projectable || start < range.start || start > range.end || end > range.end)
        continue;
      range.ops_start = range.ops == 0 ? ops_start : std::min(range.ops_start, ops_start);
      range.ops_end = range.ops == 0 ? ops_end : std::max(range.ops_end, ops_end);
      range.ops += ops;
    }
  }

  // Closes the ranges no later call can fall into (the next call starts at `next_call_start`) and
  // whose children are all known.
  gt::Status Close(int64_t next_call_start) {
    for (auto it = open_.begin(); it != open_.end();) {
      if (it->on_stack || it->end >= next_call_start) {
        ++it;
        continue;
      }
      gt::Status status = Finish(*it);
      if (!status.ok())
        return status;
      it = open_.erase(it);
    }
    return gt::Status::Ok();
  }

  // The thread is done: every range is closed.
  gt::Status EndThread() {
    stack_.clear();
    for (OpenRange& range : open_)
      range.on_stack = false;
    return Close(INT64_MAX);
  }

  // The report rows, in SortedSummaries' order (projected total descending, ties by name, style).
  gt::Status Summarize(Table* table) {
    gt::Status status = Exec("COMMIT");
    if (!status.ok())
      return status;
    std::vector<Summary> summaries(groups_.size());
    std::vector<const ProjGroup*> by_id(groups_.size());
    for (const auto& [key, group] : groups_)
      by_id[static_cast<size_t>(group.id)] = &group;
    Statement values;
    status = db_.Prepare("SELECT g, v FROM temp.gt_nvtx_proj ORDER BY g, v", &values);
    if (!status.ok())
      return status;
    const gt::Status changed = gt::Status::Error(db_.path() + ": projected values lost");
    bool has_row = false;
    for (size_t g = 0; g < by_id.size(); ++g) {
      SortedValueSummarizer summarizer(by_id[g]->count, by_id[g]->projected_total, 1, 1);
      for (int64_t n = 0; n < by_id[g]->count; ++n) {
        if (!(status = values.Step(&has_row)).ok())
          return status;
        if (!has_row || values.Int(0) != static_cast<int64_t>(g))
          return changed;
        summarizer.Add(values.Int(1));
      }
      summaries[g] = summarizer.Finish();
    }
    std::vector<std::pair<const std::pair<std::string, std::string>*, const ProjGroup*>> order;
    for (const auto& [key, group] : groups_)
      order.emplace_back(&key, &group);  // key order: the tie order
    std::stable_sort(order.begin(), order.end(), [&](const auto& a, const auto& b) {
      return summaries[static_cast<size_t>(a.second->id)].total > summaries[static_cast<size_t>(b.second->id)].total;
    });
    for (const auto& [key, group] : order) {
      const Summary& summary = summaries[static_cast<size_t>(group->id)];
      const int64_t n = summary.count;
      table->rows.push_back({Cell::Text(key->first), Cell::Text(key->second), Cell::Int(summary.total),
                             Cell::Int(group->range_total), Cell::Int(n), summary.avg, summary.median,
                             Cell::Int(summary.min), Cell::Int(summary.max), summary.stddev, Cell::Int(group->gpu_ops),
                             Cell::Fixed(RoundDiv(group->gpu_ops * 10, n), 1),
                             Cell::Fixed(RoundDiv(group->level_total * 10, n), 1),
                             Cell::Fixed(RoundDiv(group->children_total * 10, n), 1)});
    }
    values.Reset();  // a table with a reader open cannot be dropped
    return Exec("DROP TABLE temp.gt_nvtx_proj");
  }

 private:
  gt::Status Exec(const std::string& sql) {
    Statement statement;
    gt::Status status = db_.Prepare(sql, &statement);
    return status.ok() ? statement.Execute() : status;
  }

  gt::Status Finish(const OpenRange& range) {
    if (!range.projectable || range.ops == 0)
      return gt::Status::Ok();
    auto [it, inserted] = groups_.try_emplace({range.name, range.push_pop ? "PushPop" : "StartEnd"});
    ProjGroup& group = it->second;
    if (inserted)
      group.id = static_cast<int64_t>(groups_.size()) - 1;
    const int64_t projected = range.ops_end - range.ops_start;
    ++group.count;
    group.projected_total += projected;
    group.range_total += range.end - range.start;
    group.gpu_ops += range.ops;
    group.level_total += range.level;
    group.children_total += range.children;
    insert_.BindInt(1, group.id);
    insert_.BindInt(2, projected);
    return insert_.Execute();
  }

  Database& db_;
  Statement insert_;
  std::list<OpenRange> open_;      // the current thread's ranges not closed yet (stable addresses)
  std::vector<OpenRange*> stack_;  // push/pop nesting, innermost last
  std::map<std::pair<std::string, std::string>, ProjGroup> groups_;  // (name, style)
};

// Merges each thread's ranges and calls by start (a range before a call that starts with it) into
// the sweep.
gt::Status Sweep(Statement* ranges, Statement* calls, ProjectionSweep* sweep) {
  gt::Status status;
  bool range_ready = false;
  bool call_ready = false;
  if (!(status = ranges->Step(&range_ready)).ok() || !(status = calls->Step(&call_ready)).ok())
    return status;
  while (range_ready) {
    const int64_t tid = ranges->Int(0);
    // Calls of threads before this one (no range there) are skipped.
    while (call_ready && calls->Int(0) < tid) {
      if (!(status = calls->Step(&call_ready)).ok())
        return status;
    }
    // Merge this thread's ranges and calls by start, a range before a call that starts with it.
    for (;;) {
      const bool range_here = range_ready && ranges->Int(0) == tid;
      const bool call_here = call_ready && calls->Int(0) == tid;
      if (!range_here && !call_here)
        break;
      if (range_here && (!call_here || ranges->Int(1) <= calls->Int(1))) {
        OpenRange range;
        range.start = ranges->Int(1);
        range.end = ranges->Int(2);
        range.push_pop = ranges->Int(3) != 0;
        range.projectable = ranges->Int(4) != 0;
        range.name = ranges->Text(5);
        sweep->AddRange(std::move(range));
        if (!(status = ranges->Step(&range_ready)).ok())
          return status;
      } else {
        sweep->AddCall(calls->Int(1), calls->Int(2), calls->Int(3), calls->Int(4), calls->Int(5));
        if (!(status = calls->Step(&call_ready)).ok())
          return status;
      }
      const bool more_calls = call_ready && calls->Int(0) == tid;
      if (!(status = sweep->Close(more_calls ? calls->Int(1) : INT64_MAX)).ok())
        return status;
    }
    if (!(status = sweep->EndThread()).ok())
      return status;
  }

  return gt::Status::Ok();
}

}  // namespace

gt::Status BuildNvtxGpuProjSum(Database& db, Table* table) {
  gt::Status status = RequireNvtx(db, *table);
  if (!status.ok())
    return status;
  if (!db.HasTable(kRuntimeTable))
    return MissingTable(db, *table, kRuntimeTable, "was CUDA traced?");
  std::string ops_sql;
  for (std::string_view gpu_table : {kKernelTable, kMemcpyTable, kMemsetTable}) {
    if (!db.HasTable(gpu_table))
      continue;  // nsys omits empty tables
    ops_sql += std::string(ops_sql.empty() ? "" : " UNION ALL ") +
               "SELECT coalesce(globalPid, 0) AS pid, correlationId AS corr, start, \"end\" FROM " +
               std::string(gpu_table) + " WHERE correlationId IS NOT NULL";
  }
  if (ops_sql.empty()) {
    return MissingTable(db, *table, "CUPTI_ACTIVITY_KIND_KERNEL, _MEMCPY or _MEMSET", "no GPU work was traced");
  }
  int64_t last_timestamp = 0;
  status = LastTimestamp(db, &last_timestamp);
  if (!status.ok())
    return status;

  // Ranges by (thread, start, end descending, rowid): nesting order (see AddRange). Columns: thread,
  // start, end (an open range ends at the last NVTX timestamp), push/pop, projectable, name.
  const std::string end_tid = db.HasColumn(kNvtxTable, "endGlobalTid") ? "r.endGlobalTid" : "NULL";
  const std::string last = std::to_string(last_timestamp);
  Statement ranges;
  status = db.Prepare(std::string(kDomainNamesSql) +
                          "SELECT coalesce(r.globalTid, 0) AS tid, r.start AS start, "
                          "CASE WHEN r.\"end\" IS NULL THEN max(" +
                          last +
                          ", r.start) ELSE r.\"end\" END AS stop, "
                          "r.eventType IN (59, 70), "
                          "r.\"end\" IS NOT NULL AND (" +
                          end_tid + " IS NULL OR " + end_tid + " = coalesce(r.globalTid, 0)), " + kRangeNameSql + " " +
                          kRangesFromSql + "ORDER BY tid, start, stop DESC, r.rowid",
                      &ranges);
  if (!status.ok())
    return status;
  // The calls that launched GPU work, with the span and count of that work, by (thread, start).
  // Correlation ids are unique per process only: the ops are matched on the launching process too.
  // CROSS JOIN keeps the calls outside, so SQLite looks each one up in an automatic index of the ops
  // (left to itself it scanned the calls once per op: quadratic).
  Statement calls;
  status = db.Prepare(
      "WITH ops AS (SELECT pid, corr, min(start) AS ops_start, max(\"end\") AS ops_end, count(*) AS n FROM (" +
          ops_sql +
          ") GROUP BY pid, corr) "
          "SELECT c.globalTid, c.start, c.\"end\", o.ops_start, o.ops_end, o.n "
          "FROM CUPTI_ACTIVITY_KIND_RUNTIME AS c CROSS JOIN ops AS o "
          "ON o.pid = (c.globalTid & ~" +
          std::to_string(kTidMask) +
          ") AND o.corr = c.correlationId "
          "WHERE c.globalTid IS NOT NULL AND c.correlationId IS NOT NULL AND c.eventClass IS NOT 67 "
          "ORDER BY c.globalTid, c.start",
      &calls);
  if (!status.ok())
    return status;

  ProjectionSweep sweep(db);
  status = sweep.Begin();
  if (!status.ok())
    return status;
  status = Sweep(&ranges, &calls, &sweep);
  if (!status.ok())
    return status;

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
  // The readers are done before the TEMP table's transaction ends.
  ranges.Reset();
  calls.Reset();
  return sweep.Summarize(table);
}

}  // namespace gt::stats
