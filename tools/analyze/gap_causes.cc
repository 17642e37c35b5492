#include "tools/analyze/gap_causes.h"

#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>

#include "tools/stats/database.h"

namespace gt::analyze {
namespace {

using stats::Database;
using stats::Statement;

constexpr int64_t kPidMask = -16777216;  // globalTid -> globalPid

Status ForEachRow(Database& db, const std::string& sql, const std::function<void(Statement&)>& row) {
  Statement st;
  Status s = db.Prepare(sql, &st);
  if (!s.ok())
    return s;
  while (true) {
    bool has = false;
    if (!(s = st.Step(&has)).ok())
      return s;
    if (!has)
      return Status::Ok();
    row(st);
  }
}

std::string List(const std::set<int64_t>& values) {
  std::string out;
  for (int64_t v : values)
    out += (out.empty() ? "" : ",") + std::to_string(v);
  return out;
}

// The GPU work that ended each gap of this database: (globalPid, start) -> (correlationId, what).
struct GpuWork {
  int64_t correlation_id = 0;
  std::string what;
};

Status FindGpuWork(Database& db,
                   const std::set<int64_t>& ends,
                   std::map<std::pair<int64_t, int64_t>, GpuWork>* out) {
  struct Table {
    const char* name;
    const char* what;
  };
  for (const Table& t : {Table{"CUPTI_ACTIVITY_KIND_KERNEL", "kernel"}, Table{"CUPTI_ACTIVITY_KIND_MEMCPY", "memcpy"},
                         Table{"CUPTI_ACTIVITY_KIND_MEMSET", "memset"}}) {
    if (!db.HasTable(t.name))
      continue;
    bool kernel = std::string(t.what) == "kernel";
    std::string name_sql = kernel && db.HasColumn(t.name, "shortName")
                               ? "(SELECT value FROM StringIds WHERE id = k.shortName)"
                               : "''";
    Status st = ForEachRow(db,
                           std::string("SELECT k.globalPid, k.start, k.correlationId, ") + name_sql + " FROM " +
                               t.name + " k WHERE k.start IN (" + List(ends) + ")",
                           [&](Statement& q) {
                             auto key = std::make_pair(q.Int(0), q.Int(1));
                             if (out->count(key) != 0)
                               return;  // two activities starting together: the first table wins
                             std::string what = t.what;
                             if (kernel && !q.TextView(3).empty())
                               what += " " + q.Text(3);
                             (*out)[key] = {q.Int(2), what};
                           });
    if (!st.ok())
      return st;
  }
  return Status::Ok();
}

Status OsCalls(Database& db, GapCauses* g) {
  int64_t end = g->start_ns + g->duration_ns;
  bool chains = db.HasTable("OSRT_CALLCHAINS");
  std::string caller = chains ? "(SELECT s.value FROM OSRT_CALLCHAINS c JOIN StringIds s ON s.id = c.symbol WHERE "
                                "c.id = o.callchainId AND c.stackDepth = 0)"
                              : "NULL";
  std::string in_gap = "(min(o.\"end\", " + std::to_string(end) + ") - max(o.start, " + std::to_string(g->start_ns) + "))";
  return ForEachRow(db,
                    "SELECT (SELECT value FROM StringIds WHERE id = o.nameId), o.start, o.\"end\" - o.start, " + in_gap +
                        ", CASE WHEN o.callchainId != 0 THEN " + caller + " END FROM OSRT_API o WHERE o.globalTid = " +
                        std::to_string(g->launch_tid) + " AND o.start < " + std::to_string(end) + " AND o.\"end\" > " +
                        std::to_string(g->start_ns) + " ORDER BY 4 DESC, o.start LIMIT " +
                        std::to_string(kMaxOsCallsPerGap),
                    [&](Statement& q) {
                      GapCause c;
                      c.source = GapCause::Source::kOsCall;
                      c.name = q.Text(0);
                      c.start_ns = q.Int(1);
                      c.duration_ns = q.Int(2);
                      c.in_gap_ns = q.Int(3);
                      c.caller = q.Text(4);
                      g->causes.push_back(std::move(c));
                    });
}

Status SampledFrames(Database& db, GapCauses* g) {
  int64_t end = g->start_ns + g->duration_ns;
  std::string where = "e.globalTid = " + std::to_string(g->launch_tid) + " AND e.start >= " +
                      std::to_string(g->start_ns) + " AND e.start < " + std::to_string(end);
  Status st = ForEachRow(db, "SELECT count(*) FROM COMPOSITE_EVENTS e WHERE " + where,
                         [&](Statement& q) { g->samples_in_gap = q.Int(0); });
  if (!st.ok() || g->samples_in_gap == 0)
    return st;
  return ForEachRow(db,
                    "SELECT s.value, count(*) FROM COMPOSITE_EVENTS e JOIN SAMPLING_CALLCHAINS c ON c.id = e.id AND "
                    "c.stackDepth = 0 JOIN StringIds s ON s.id = c.symbol WHERE " +
                        where + " GROUP BY s.value ORDER BY 2 DESC, 1 LIMIT " + std::to_string(kMaxFramesPerGap),
                    [&](Statement& q) {
                      GapCause c;
                      c.source = GapCause::Source::kSample;
                      c.name = q.Text(0);
                      c.samples = q.Int(1);
                      g->causes.push_back(std::move(c));
                    });
}

Status AttributeInDatabase(Database& db, std::vector<GapCauses*>& open) {
  std::set<int64_t> pids, ends;
  for (GapCauses* g : open) {
    pids.insert(g->global_pid);
    ends.insert(g->start_ns + g->duration_ns);
  }
  std::map<std::pair<int64_t, int64_t>, GpuWork> work;
  Status st = FindGpuWork(db, ends, &work);
  if (!st.ok())
    return st;
  // The launching API calls, by (globalPid, correlationId).
  std::set<int64_t> correlations;
  for (GapCauses* g : open) {
    auto it = work.find({g->global_pid, g->start_ns + g->duration_ns});
    if (it != work.end())
      correlations.insert(it->second.correlation_id);
  }
  std::map<std::pair<int64_t, int64_t>, std::pair<int64_t, std::string>> launches;
  if (!correlations.empty() && db.HasTable("CUPTI_ACTIVITY_KIND_RUNTIME")) {
    st = ForEachRow(db,
                    "SELECT r.globalTid, r.correlationId, (SELECT value FROM StringIds WHERE id = r.nameId) FROM "
                    "CUPTI_ACTIVITY_KIND_RUNTIME r WHERE r.correlationId IN (" +
                        List(correlations) + ") AND r.eventClass != 67",
                    [&](Statement& q) {
                      int64_t tid = q.Int(0);
                      if (pids.count(tid & kPidMask) != 0)
                        launches[{tid & kPidMask, q.Int(1)}] = {tid, q.Text(2)};
                    });
    if (!st.ok())
      return st;
  }
  bool osrt = db.HasTable("OSRT_API");
  bool samples = db.HasTable("COMPOSITE_EVENTS") && db.HasTable("SAMPLING_CALLCHAINS");
  for (GapCauses* g : open) {
    auto w = work.find({g->global_pid, g->start_ns + g->duration_ns});
    if (w == work.end())
      continue;  // another database's process
    g->gpu_work = w->second.what;
    auto l = launches.find({g->global_pid, w->second.correlation_id});
    if (l == launches.end())
      continue;
    g->launch_tid = l->second.first;
    g->launch_api = l->second.second;
    if (osrt && !(st = OsCalls(db, g)).ok())
      return st;
    if (samples && !(st = SampledFrames(db, g)).ok())
      return st;
  }
  return Status::Ok();
}

}  // namespace

void AddCauseGaps(int32_t rank, int64_t global_pid, const std::vector<GpuGap>& gaps, Analysis* a) {
  for (const GpuGap& g : gaps) {
    GapCauses c;
    c.rank = rank;
    c.global_pid = global_pid;
    c.start_ns = g.start_ns;
    c.duration_ns = g.duration_ns;
    a->gap_causes.push_back(std::move(c));
  }
  // Longest first; equal lengths by rank and start (independent of the order ranks were read in).
  std::sort(a->gap_causes.begin(), a->gap_causes.end(), [](const GapCauses& x, const GapCauses& y) {
    if (x.duration_ns != y.duration_ns)
      return x.duration_ns > y.duration_ns;
    return x.rank != y.rank ? x.rank < y.rank : x.start_ns < y.start_ns;
  });
  if (a->gap_causes.size() > kMaxCauseGaps)
    a->gap_causes.resize(kMaxCauseGaps);
}

void NoteCauseGaps(const AnalyzeOptions& o, uint64_t gaps_seen, Analysis* a) {
  if (gaps_seen > a->gap_causes.size()) {
    a->notes.push_back(std::to_string(gaps_seen) + " GPU idle gaps of at least " + std::to_string(o.gap_cause_min_ns) +
                       " ns: the " + std::to_string(a->gap_causes.size()) + " longest are attributed (gpu_gap_causes)");
  }
}

Status AttributeGaps(const AnalyzeOptions& o, Analysis* a) {
  if (a->gap_causes.empty())
    return Status::Ok();
  for (const std::string& path : o.databases) {
    std::vector<GapCauses*> open;
    for (GapCauses& g : a->gap_causes) {
      if (g.launch_tid == 0 && g.gpu_work.empty())
        open.push_back(&g);
    }
    if (open.empty())
      break;
    std::unique_ptr<Database> db;
    Status st = Database::Open(path, &db);
    if (st.ok())
      st = AttributeInDatabase(*db, open);
    if (!st.ok())
      return Status::Error("gpu_gap_causes: " + st.message());
  }
  return Status::Ok();
}

}  // namespace gt::analyze
