// nvtx_gpu_proj_sum, now a sorted sweep with a TEMP table for the medians, on a generated database
// of 30,000 NVTX ranges (nested push/pop, start/end, open, ended on another thread, equal starts,
// three threads of two processes, a domain) over 40,000 API calls launching kernels, memcpys and
// memsets (graph-like launches with several ops, calls without ops, ops whose correlation id only
// matches in the other process, backtrace rows), against the report as it was before (every range,
// call and op loaded; kept here verbatim but for its name): byte-identical CSV.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "tests/stats/large_summary_util.h"
#include "tests/stats/nsys_test_db.h"
#include "tools/stats/database.h"
#include "tools/stats/reports.h"
#include "tools/stats/statistics.h"

namespace gt::stats::testing {
namespace {
namespace old_proj {

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

gt::Status OldNvtxGpuProjSum(Database& db, Table* table) {
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

}  // namespace old_proj

std::string ReferenceProj(const std::string& path) {
  std::unique_ptr<Database> db;
  EXPECT_TRUE(Database::Open(path, &db).ok());
  Table table;
  EXPECT_TRUE(old_proj::OldNvtxGpuProjSum(*db, &table).ok());
  return Csv(table);
}

TEST(LargeSummaries, NvtxGpuProjSumMatchesTheLoadEverythingReference) {
  TestDb db("large_proj");
  db.Create({"NVTX_EVENTS", "CUPTI_ACTIVITY_KIND_RUNTIME", "CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY",
             "CUPTI_ACTIVITY_KIND_MEMSET"});
  db.Exec("BEGIN");
  Lcg rng;
  const int64_t threads[] = {GlobalTid(100, 101), GlobalTid(100, 102), GlobalTid(200, 201)};
  db.AddNvtx({.start = 0, .event_type = 75, .text = "Dom", .global_tid = threads[0], .domain_id = 3});
  // Ranges: per thread a walk that nests push/pop ranges up to 4 deep, with start/end ranges across.
  int64_t corr = 0;
  for (int t = 0; t < 3; ++t) {
    const int64_t tid = threads[t];
    int64_t time = 1000;
    for (int i = 0; i < 10000; ++i) {
      NvtxRow range;
      range.global_tid = tid;
      range.start = time;
      const int64_t length = 10 + static_cast<int64_t>(rng.Next(i % 5 == 0 ? 20000 : 3000));
      const uint64_t kind = rng.Next(20);
      if (kind == 0) {
        range.event_type = 60;  // start/end, overlapping the push/pop ones
        if (rng.Next(4) == 0)
          range.end_global_tid = threads[(t + 1) % 3];  // ended elsewhere: not projected
      }
      if (kind != 1)
        range.end = range.start + length;  // else open: ends at the last timestamp, not projected, still nests
      const uint64_t name = rng.Next(40);
      if (name < 4)
        range.registered_text = "reg-" + std::to_string(name);
      else
        range.text = "range-" + std::to_string(name);
      range.domain_id = rng.Next(5) == 0 ? 3 : 0;
      db.AddNvtx(range);
      // Children share the start sometimes (the longer first), or start inside.
      time += rng.Next(3) == 0 ? 0 : static_cast<int64_t>(rng.Next(length + 200));
    }
    // API calls of this thread over the same span, each launching 0-3 ops.
    for (int i = 0; i < 13000; ++i) {
      const int64_t start = 1000 + static_cast<int64_t>(rng.Next(static_cast<uint64_t>(time)));
      const int64_t id = ++corr;
      db.AddRuntime(start, start + 1 + static_cast<int64_t>(rng.Next(400)), tid, id, "cudaLaunchKernel_v7000", 0,
                    rng.Next(40) == 0 ? 67 : 0);
      const int64_t pid = (tid >> 24) & 0xFFFFFF;
      const uint64_t ops = rng.Next(8) == 0 ? 3 : rng.Next(4) == 0 ? 0 : 1;
      for (uint64_t op = 0; op < ops; ++op) {
        const int64_t op_start = start + static_cast<int64_t>(rng.Next(50000));
        const int64_t op_end = op_start + static_cast<int64_t>(rng.Next(7000));
        // A few ops carry the id in the other process: they must not match.
        const int64_t op_pid = rng.Next(50) == 0 ? (pid == 100 ? 200 : 100) : pid;
        switch (rng.Next(3)) {
          case 0:
            db.AddKernel({.start = op_start,
                          .end = op_end,
                          .correlation_id = id,
                          .global_pid = GlobalPid(op_pid),
                          .demangled_name = "k",
                          .short_name = "k"});
            break;
          case 1:
            db.AddMemcpy(
                {.start = op_start, .end = op_end, .correlation_id = id, .global_pid = GlobalPid(op_pid), .bytes = 8});
            break;
          default:
            db.AddMemset(
                {.start = op_start, .end = op_end, .correlation_id = id, .global_pid = GlobalPid(op_pid), .bytes = 8});
        }
      }
    }
  }
  db.Exec("COMMIT");
  const std::string expected = ReferenceProj(db.path());
  EXPECT_GT(std::count(expected.begin(), expected.end(), '\n'), 60);  // many groups
  EXPECT_EQ(RunOk(db.path(), "nvtx_gpu_proj_sum"), expected);
}

}  // namespace
}  // namespace gt::stats::testing
