#include "tools/analyze/analysis.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <unordered_map>

#include "tools/analyze/gap_causes.h"
#include "tools/analyze/gpu_time.h"
#include "tools/analyze/steps.h"
#include "tools/stats/database.h"

namespace gt::analyze {
namespace {

using stats::Database;
using stats::Statement;

constexpr int64_t kPidMask = -16777216;  // globalTid -> globalPid
constexpr int64_t kNone = INT64_MIN;

Status ForEach(Database& db, const std::string& sql, const std::function<void(Statement&)>& row) {
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

// One rank's NCCL collective operation, as a pass over GTRACE_NCCL_OPERATIONS reads it. Passes
// stream the operations; none is kept (a long job has millions).
struct Op {
  uint32_t rank_index = 0;
  uint32_t comm = 0, func = 0;  // interned
  uint64_t seq = 0, count = 0;
  int64_t gpu_start = kNone, gpu_end = kNone, host = kNone;
  int64_t Entry(bool gpu) const { return gpu ? gpu_start : host; }
};

// A collective instance: the same communicator, function and sequence number on every rank.
struct InstanceKey {
  uint32_t comm = 0, func = 0;
  uint64_t seq = 0;
  bool operator==(const InstanceKey& o) const { return comm == o.comm && func == o.func && seq == o.seq; }
};
struct KeyHash {
  size_t operator()(const InstanceKey& k) const {
    return std::hash<uint64_t>()(k.seq * 0x9e3779b97f4a7c15ULL ^ (uint64_t{k.comm} << 32 | k.func));
  }
};
struct InstanceAgg {
  InstanceKey key;
  uint32_t count = 0;
  int64_t first = INT64_MAX, last = INT64_MIN, end = INT64_MIN;
  uint32_t first_rank = 0, last_rank = 0;  // rank indices
  int64_t total_wait = 0;
};

struct RankData {
  RankResult result;
  size_t db = 0;
  uint64_t ops = 0;                                 // collectives it recorded
  std::vector<std::pair<int64_t, int64_t>> ranges;  // NVTX step ranges
  std::vector<std::pair<int64_t, int64_t>> steps;   // analysed iterations
  std::vector<int64_t> bound_entry;                 // pattern: entry into each boundary instance
  std::vector<int64_t> step_wait;                   // per step: waiting for last arrivers
  std::vector<Interval> comm_spans;                 // plugin-only traces: NCCL operations on the GPU
};

class Analyzer {
 public:
  Analyzer(const AnalyzeOptions& o, Analysis* a) : o_(o), a_(a) {}

  Status Run() {
    if (o_.databases.empty())
      return Status::Error("no database given");
    // Databases are opened for each pass and closed after it: a thousand per-rank databases would
    // otherwise hold a thousand page caches.
    dbs_.resize(o_.databases.size());
    Status st;
    if (!(st = EachDb([&](size_t i) { return ReadRanks(i); })).ok())
      return st;
    std::sort(ranks_.begin(), ranks_.end(),
              [](const RankData& x, const RankData& y) { return x.result.rank < y.result.rank; });
    for (size_t r = 0; r < ranks_.size(); ++r)
      by_gpid_[ranks_[r].result.global_pid] = r;
    st = EachDb([&](size_t i) {
      Status s = CountOps(i);
      if (s.ok() && !o_.step_range.empty())
        s = ReadRanges(i);
      return s;
    });
    if (!st.ok())
      return st;
    gpu_entries_ = ops_total_ > 0 && ops_with_gpu_ == ops_total_;
    if (!(st = Steps()).ok())
      return st;
    if (ops_total_ > 0) {
      if (!(st = EachDb([&](size_t i) { return ArrivalPass(i); })).ok())
        return st;
      PatternSteps();
      for (RankData& r : ranks_)
        r.step_wait.assign(r.steps.size(), 0);
      if (!(st = EachDb([&](size_t i) { return WaitPass(i); })).ok())
        return st;
      Instances();
    } else {
      a_->notes.push_back("no NCCL collectives (GTRACE_NCCL_OPERATIONS): no straggler analysis");
      for (RankData& r : ranks_)
        r.step_wait.assign(r.steps.size(), 0);
    }
    StepTable();
    if (!(st = Window()).ok())
      return st;
    if (!(st = EachDb([&](size_t i) { return GpuPass(i); })).ok())
      return st;
    Pop();
    uint64_t cause_gaps = 0;
    for (const auto& [r, n] : cause_gaps_seen_)
      cause_gaps += n;
    NoteCauseGaps(o_, cause_gaps, a_);
    for (RankData& r : ranks_)
      a_->ranks.push_back(std::move(r.result));
    return AttributeGaps(o_, a_);
  }

 private:
  template <typename Fn>
  Status EachDb(Fn fn) {
    for (size_t i = 0; i < dbs_.size(); ++i) {
      Status st = Use(i);
      if (st.ok())
        st = fn(i);
      dbs_[i].reset();
      if (!st.ok())
        return st;
    }
    return Status::Ok();
  }

  Status Use(size_t i) { return dbs_[i] != nullptr ? Status::Ok() : Database::Open(o_.databases[i], &dbs_[i]); }

  // Ranks: GTRACE_RANKS (gtrace databases), else PROCESSES and MPI_RANKS (nsys's own).
  Status ReadRanks(size_t i) {
    Database& db = *dbs_[i];
    Status st;
    std::vector<RankData> found;
    std::string session;
    if (db.HasTable("GTRACE_RANKS")) {
      st = ForEach(db, "SELECT globalPid, rank, localRank, hostName, sessionId FROM GTRACE_RANKS ORDER BY rowid",
                   [&](Statement& q) {
                     RankData r;
                     r.db = i;
                     r.result.global_pid = q.Int(0);
                     r.result.rank = q.IsNull(1) ? -1 : static_cast<int32_t>(q.Int(1));
                     r.result.local_rank = q.IsNull(2) ? -1 : static_cast<int32_t>(q.Int(2));
                     r.result.host = q.Text(3);
                     session = q.Text(4);
                     found.push_back(std::move(r));
                   });
    } else if (db.HasTable("PROCESSES")) {
      std::map<int64_t, int64_t> mpi;
      if (db.HasTable("MPI_RANKS")) {
        st = ForEach(db, "SELECT globalTid, rank FROM MPI_RANKS",
                     [&](Statement& q) { mpi[q.Int(0) & kPidMask] = q.Int(1); });
        if (!st.ok())
          return st;
      }
      st = ForEach(db, "SELECT DISTINCT globalPid FROM PROCESSES ORDER BY globalPid", [&](Statement& q) {
        RankData r;
        r.db = i;
        r.result.global_pid = q.Int(0);
        auto it = mpi.find(r.result.global_pid);
        r.result.rank = it != mpi.end() ? static_cast<int32_t>(it->second) : -1;
        found.push_back(std::move(r));
      });
    } else {
      return Status::Error(db.path() + ": no GTRACE_RANKS or PROCESSES table: not an export gtrace can analyze");
    }
    if (!st.ok())
      return st;
    if (i == 0) {
      session_ = session;
    } else if (session.empty() || session != session_) {
      return Status::Error(db.path() + " and " + o_.databases[0] +
                           " were exported separately (different sessions): their clocks are not on one time line. "
                           "Merge them first: gtrace export " +
                           o_.databases[0] + " " + db.path() + " ... -o merged.sqlite");
    }
    for (RankData& r : found) {
      if (!seen_pids_.insert(r.result.global_pid).second) {
        return Status::Error(db.path() + ": process " + std::to_string((r.result.global_pid >> 24) & 0xffffff) +
                             " is in another input too");
      }
      ranks_.push_back(std::move(r));
    }
    // Processes without a launcher rank take the next free numbers, in input order.
    int32_t next = 0;
    for (const RankData& r : ranks_)
      next = std::max(next, r.result.rank + 1);
    for (RankData& r : ranks_) {
      if (r.result.rank < 0)
        r.result.rank = next++;
    }
    return Status::Ok();
  }

  uint32_t Intern(std::map<std::string, uint32_t>* m, std::vector<std::string>* names, const std::string& s) {
    auto [it, added] = m->try_emplace(s, static_cast<uint32_t>(names->size()));
    if (added)
      names->push_back(s);
    return it->second;
  }


  // Streams database i's collectives (`where` narrows the query) to fn(const Op&).
  template <typename Fn>
  Status ForEachOp(size_t i, const std::string& where, Fn fn) {
    Database& db = *dbs_[i];
    if (!db.HasTable("GTRACE_NCCL_OPERATIONS"))
      return Status::Ok();
    return ForEach(db,
                   "SELECT globalPid, commId, func, seqNumber, gpuStart, gpuEnd, apiStart, enqueueStart, count FROM "
                   "GTRACE_NCCL_OPERATIONS WHERE kind = 'Coll' AND seqNumber IS NOT NULL AND commId IS NOT NULL" +
                       where,
                   [&](Statement& q) {
                     auto it = by_gpid_.find(q.Int(0));
                     if (it == by_gpid_.end())
                       return;
                     Op op;
                     op.rank_index = static_cast<uint32_t>(it->second);
                     op.comm = Intern(&comm_index_, &comm_names_, std::to_string(q.Int(1)));
                     op.func = Intern(&func_index_, &funcs_, q.Text(2));
                     op.seq = static_cast<uint64_t>(q.Int(3));
                     op.gpu_start = q.IsNull(4) ? kNone : q.Int(4);
                     op.gpu_end = q.IsNull(5) ? kNone : q.Int(5);
                     op.host = !q.IsNull(6) ? q.Int(6) : q.IsNull(7) ? kNone : q.Int(7);
                     op.count = static_cast<uint64_t>(q.Int(8));
                     fn(op);
                   });
  }

  Status CountOps(size_t i) {
    Database& db = *dbs_[i];
    if (!db.HasTable("GTRACE_NCCL_OPERATIONS"))
      return Status::Ok();
    return ForEach(db,
                   "SELECT globalPid, count(*), count(gpuStart) FROM GTRACE_NCCL_OPERATIONS WHERE kind = 'Coll' AND "
                   "seqNumber IS NOT NULL AND commId IS NOT NULL GROUP BY globalPid",
                   [&](Statement& q) {
                     auto it = by_gpid_.find(q.Int(0));
                     if (it == by_gpid_.end())
                       return;
                     ranks_[it->second].ops += static_cast<uint64_t>(q.Int(1));
                     ops_total_ += static_cast<uint64_t>(q.Int(1));
                     ops_with_gpu_ += static_cast<uint64_t>(q.Int(2));
                   });
  }

  // Iterations of every rank: NVTX ranges; else the collective pattern of the lowest rank with
  // collectives (its boundary instances here, each rank's entries into them in ArrivalPass).
  Status Steps() {
    if (!o_.step_range.empty()) {
      size_t with = 0;
      for (RankData& r : ranks_) {
        std::sort(r.ranges.begin(), r.ranges.end());
        for (size_t k = o_.skip_steps; k < r.ranges.size(); ++k)
          r.steps.push_back(r.ranges[k]);
        with += r.ranges.empty() ? 0 : 1;
        r.ranges.clear();
        r.ranges.shrink_to_fit();
      }
      a_->step_source = "NVTX range '" + o_.step_range + "' (" + std::to_string(with) + " of " +
                        std::to_string(ranks_.size()) + " ranks)";
      if (with == 0)
        a_->notes.push_back("no rank has an NVTX range named '" + o_.step_range + "'");
      return Status::Ok();
    }
    const RankData* ref = nullptr;
    for (const RankData& r : ranks_) {
      if (r.ops > 0) {
        ref = &r;
        break;
      }
    }
    if (ref == nullptr) {
      a_->step_source = "none (no NVTX range named with --step-range and no NCCL collectives)";
      return Status::Ok();
    }
    std::vector<Op> ops;
    Status st = Use(ref->db);
    if (st.ok()) {
      st = ForEachOp(ref->db, " AND globalPid = " + std::to_string(ref->result.global_pid), [&](const Op& op) {
        if (op.host != kNone)
          ops.push_back(op);
      });
    }
    dbs_[ref->db].reset();
    if (!st.ok())
      return st;
    std::sort(ops.begin(), ops.end(), [](const Op& x, const Op& y) { return x.host < y.host; });
    std::vector<uint64_t> sig;
    std::vector<int64_t> t;
    for (const Op& op : ops) {
      sig.push_back((static_cast<uint64_t>(op.comm) * 1000003 + op.func) * 1000000007ULL ^ op.count);
      t.push_back(op.host);
    }
    StepPattern p = FindStepPattern(sig, t);
    if (!p.found) {
      a_->step_source = "none (collective pattern: " + p.reason + ")";
      return Status::Ok();
    }
    a_->step_source = "collective pattern of rank " + std::to_string(ref->result.rank) + ": " +
                      std::to_string(p.period) + " collective(s) per iteration, from " + funcs_[ops[p.phase].func] +
                      " #" + std::to_string(ops[p.phase].seq);
    for (size_t i = p.phase; i < ops.size(); i += p.period) {
      bounds_.emplace(InstanceKey{ops[i].comm, ops[i].func, ops[i].seq}, static_cast<uint32_t>(bounds_.size()));
    }
    for (RankData& r : ranks_)
      r.bound_entry.assign(bounds_.size(), kNone);
    return Status::Ok();
  }

  // Pattern iterations: on each rank, from its entry into one boundary instance to the next.
  void PatternSteps() {
    if (bounds_.empty())
      return;
    for (RankData& r : ranks_) {
      size_t n = 0;
      while (n < r.bound_entry.size() && r.bound_entry[n] != kNone)
        ++n;
      for (size_t k = o_.skip_steps; k + 1 < n; ++k)
        r.steps.emplace_back(r.bound_entry[k], r.bound_entry[k + 1]);
      r.bound_entry.clear();
      r.bound_entry.shrink_to_fit();
    }
  }

  // First pass over the collectives: per instance its arrivals (first, last, count, end); the
  // entries into the pattern's boundary instances.
  Status ArrivalPass(size_t i) {
    return ForEachOp(i, "", [&](const Op& op) {
      int64_t e = op.Entry(gpu_entries_);
      if (e == kNone)
        return;
      InstanceKey key{op.comm, op.func, op.seq};
      auto [it, added] = inst_index_.try_emplace(key, static_cast<uint32_t>(insts_.size()));
      if (added)
        insts_.push_back(InstanceAgg{key});
      InstanceAgg& in = insts_[it->second];
      ++in.count;
      // Equal entries: the lower rank (rank_index follows the rank order), whatever order the
      // databases list the ranks in (a merge of rank-0..rank-15 reads rank-10 before rank-2).
      if (e < in.first || (e == in.first && op.rank_index < in.first_rank)) {
        in.first = e;
        in.first_rank = op.rank_index;
      }
      if (e > in.last || (e == in.last && op.rank_index < in.last_rank)) {
        in.last = e;
        in.last_rank = op.rank_index;
      }
      in.end = std::max(in.end, op.gpu_end);
      if (!bounds_.empty()) {
        auto b = bounds_.find(key);
        if (b != bounds_.end())
          ranks_[op.rank_index].bound_entry[b->second] = e;
      }
    });
  }

  // Second pass: each arrival's wait for the last arriver, per rank, instance and iteration.
  Status WaitPass(size_t i) {
    return ForEachOp(i, "", [&](const Op& op) {
      int64_t e = op.Entry(gpu_entries_);
      if (e == kNone)
        return;
      auto it = inst_index_.find(InstanceKey{op.comm, op.func, op.seq});
      InstanceAgg& in = insts_[it->second];
      if (in.count < 2)
        return;
      int64_t w = in.last - e;
      in.total_wait += w;
      RankData& rd = ranks_[op.rank_index];
      rd.result.waited_ns += w;
      ++rd.result.collectives;
      auto s = std::upper_bound(rd.steps.begin(), rd.steps.end(), std::make_pair(e, INT64_MAX));
      if (s != rd.steps.begin()) {
        size_t k = static_cast<size_t>(s - rd.steps.begin()) - 1;
        if (e < rd.steps[k].second)
          rd.step_wait[k] += w;
      }
      if (o_.keep_entries)
        a_->entries.push_back({it->second, rd.result.rank, e, w});
    });
  }

  // Instances seen by two or more ranks, in time order; who was last and what it cost the others.
  void Instances() {
    a_->entry_source = gpu_entries_ ? "gpu" : "host";
    std::vector<uint32_t> order;
    for (uint32_t k = 0; k < insts_.size(); ++k) {
      if (insts_[k].count >= 2)
        order.push_back(k);
    }
    // Time order; equal first entries by communicator, function and sequence number, so the order
    // (and the collectives report) is the same whatever order the rows were read in -- and equal to
    // the engine queries' (python/gtrace/analyze_sql.py).
    std::sort(order.begin(), order.end(), [&](uint32_t x, uint32_t y) {
      const InstanceAgg& a = insts_[x];
      const InstanceAgg& b = insts_[y];
      if (a.first != b.first)
        return a.first < b.first;
      int64_t ca = std::stoll(comm_names_[a.key.comm]), cb = std::stoll(comm_names_[b.key.comm]);
      if (ca != cb)
        return ca < cb;
      if (funcs_[a.key.func] != funcs_[b.key.func])
        return funcs_[a.key.func] < funcs_[b.key.func];
      return a.key.seq < b.key.seq;
    });
    std::vector<uint32_t> new_index(insts_.size(), UINT32_MAX);
    for (uint32_t k : order) {
      const InstanceAgg& g = insts_[k];
      InstanceResult in;
      in.comm_id = static_cast<uint64_t>(std::stoll(comm_names_[g.key.comm]));
      in.func = funcs_[g.key.func];
      in.seq = g.key.seq;
      in.ranks = g.count;
      in.first_rank = ranks_[g.first_rank].result.rank;
      in.last_rank = ranks_[g.last_rank].result.rank;
      in.first_entry_ns = g.first;
      in.last_entry_ns = g.last;
      in.end_ns = g.end;
      in.total_wait_ns = g.total_wait;
      RankResult& lr = ranks_[g.last_rank].result;
      ++lr.times_last;
      lr.wait_caused_ns += g.total_wait;
      new_index[k] = static_cast<uint32_t>(a_->instances.size());
      a_->instances.push_back(std::move(in));
    }
    for (Entry& e : a_->entries)
      e.instance = new_index[e.instance];
    std::sort(a_->entries.begin(), a_->entries.end(), [](const Entry& x, const Entry& y) {
      return x.instance != y.instance ? x.instance < y.instance : x.rank < y.rank;
    });
    insts_.clear();
    inst_index_.clear();
  }

  Status ReadRanges(size_t i) {
    Database& db = *dbs_[i];
    if (!db.HasTable("NVTX_EVENTS"))
      return Status::Ok();
    std::string name;
    for (char c : o_.step_range)
      name += c == '\'' ? std::string("''") : std::string(1, c);
    return ForEach(db,
                   "SELECT e.globalTid & " + std::to_string(kPidMask) +
                       ", e.start, e.end FROM NVTX_EVENTS e LEFT JOIN StringIds s ON s.id = e.textId WHERE "
                       "e.eventType IN (59, 60) AND e.end IS NOT NULL AND coalesce(e.text, s.value) = '" +
                       name + "'",
                   [&](Statement& q) {
                     auto it = by_gpid_.find(q.Int(0));
                     if (it != by_gpid_.end())
                       ranks_[it->second].ranges.emplace_back(q.Int(1), q.Int(2));
                   });
  }

  // Per iteration across ranks: spread, and the rank the others waited for.
  void StepTable() {
    size_t common = SIZE_MAX;
    size_t with = 0;
    for (const RankData& r : ranks_) {
      if (r.steps.empty())
        continue;
      ++with;
      common = std::min(common, r.steps.size());
    }
    if (with == 0)
      return;
    if (with < ranks_.size()) {
      a_->notes.push_back(std::to_string(ranks_.size() - with) +
                          " rank(s) have no iterations; left out of the step tables");
    }
    for (size_t k = 0; k < common; ++k) {
      StepResult s;
      s.index = static_cast<uint32_t>(k + o_.skip_steps);
      s.start_ns = INT64_MAX;
      std::vector<int64_t> dur, work;
      int64_t best_work = INT64_MIN;
      for (size_t r = 0; r < ranks_.size(); ++r) {
        RankData& rd = ranks_[r];
        if (rd.steps.size() <= k)
          continue;
        int64_t d = rd.steps[k].second - rd.steps[k].first;
        int64_t w = d - rd.step_wait[k];
        s.start_ns = std::min(s.start_ns, rd.steps[k].first);
        dur.push_back(d);
        work.push_back(w);
        rd.result.steps++;
        rd.result.step_total_ns += d;
        rd.result.wait_total_ns += rd.step_wait[k];
        if (w > best_work) {
          best_work = w;
          s.slowest_rank = rd.result.rank;
        }
      }
      s.ranks = static_cast<uint32_t>(dur.size());
      std::sort(dur.begin(), dur.end());
      std::sort(work.begin(), work.end());
      s.min_ns = dur.front();
      s.max_ns = dur.back();
      s.median_ns = dur[dur.size() / 2];
      s.slowest_work_ns = best_work;
      s.median_work_ns = work[work.size() / 2];
      for (RankData& rd : ranks_) {
        if (rd.result.rank == s.slowest_rank)
          ++rd.result.times_slowest;
      }
      a_->steps.push_back(s);
    }
    // The window: the analysed iterations, common to every rank.
    int64_t w0 = INT64_MAX, w1 = INT64_MIN;
    for (const RankData& rd : ranks_) {
      if (rd.steps.empty())
        continue;
      w0 = std::min(w0, rd.steps.front().first);
      w1 = std::max(w1, rd.steps[common - 1].second);
    }
    window_ = {w0, w1};
  }

  Status Window() {
    if (window_.second > window_.first)
      return Status::Ok();
    // No iterations: the span of all GPU activity.
    int64_t w0 = INT64_MAX, w1 = INT64_MIN;
    for (size_t i = 0; i < dbs_.size(); ++i) {
      Status open = Use(i);
      if (!open.ok())
        return open;
      std::unique_ptr<Database> db = std::move(dbs_[i]);
      for (const char* t : {"CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET"}) {
        if (!db->HasTable(t))
          continue;
        Status st = ForEach(*db, std::string("SELECT min(start), max(end) FROM ") + t, [&](Statement& q) {
          if (q.IsNull(0))
            return;
          w0 = std::min(w0, q.Int(0));
          w1 = std::max(w1, q.Int(1));
        });
        if (!st.ok())
          return st;
      }
    }
    if (w1 > w0) {
      window_ = {w0, w1};
      a_->notes.push_back("no iterations: POP factors and gaps over the span of all GPU activity");
    }
    return Status::Ok();
  }

  void FinishRank(size_t r, std::vector<Interval>* iv, bool has_comm_kernels) {
    RankData& rd = ranks_[r];
    if (!has_comm_kernels) {
      // Plugin-only traces: NCCL kernels are the operations' GPU spans.
      iv->insert(iv->end(), rd.comm_spans.begin(), rd.comm_spans.end());
    }
    rd.comm_spans.clear();
    rd.comm_spans.shrink_to_fit();
    if (iv->empty())
      return;
    GpuTimeOptions go;
    go.window_start_ns = window_.first;
    go.window_end_ns = window_.second;
    go.gap_min_ns = o_.gap_min_ns;
    go.keep_gaps = o_.top;
    go.cause_min_ns = o_.gap_cause_min_ns;
    go.keep_cause_gaps = kMaxCauseGaps;
    go.bins = o_.heatmap_bins;
    GpuTime t = MeasureGpuTime(iv, go);
    RankResult& res = rd.result;
    res.has_gpu = true;
    res.compute_ns = t.compute_ns;
    res.comm_ns = t.comm_ns;
    res.busy_ns = t.busy_ns;
    res.overlap_ns = t.overlap_ns;
    res.idle_ns = t.idle_ns;
    res.gaps = t.gaps;
    res.gap_ns = t.gap_ns;
    res.largest_gap_ns = t.largest.duration_ns;
    res.largest_gap_start_ns = t.largest.start_ns;
    res.bin_busy_ns = std::move(t.bin_busy_ns);
    for (const GpuGap& g : t.top_gaps)
      a_->top_gaps.push_back({res.rank, g.start_ns, g.duration_ns});
    // Longest first; equal lengths by rank and start, so the order does not depend on the order the
    // ranks were read in (and equals the engine queries').
    std::sort(a_->top_gaps.begin(), a_->top_gaps.end(), [](const GapResult& x, const GapResult& y) {
      if (x.duration_ns != y.duration_ns)
        return x.duration_ns > y.duration_ns;
      return x.rank != y.rank ? x.rank < y.rank : x.start_ns < y.start_ns;
    });
    if (a_->top_gaps.size() > o_.top)
      a_->top_gaps.resize(o_.top);
    cause_gaps_seen_[r] = t.cause_gaps_seen;  // set, not added: a rank read again replaces its count
    AddCauseGaps(res.rank, res.global_pid, t.cause_gaps, a_);
  }

  // GPU activity of database i, one rank at a time: rows come grouped by process in gtrace's
  // databases; if they are not, the kernels are read again sorted by process.
  Status GpuPass(size_t i) {
    if (window_.second <= window_.first)
      return Status::Ok();
    Database& db = *dbs_[i];
    std::set<int64_t> nccl_names;
    Status st = ForEach(db, "SELECT id FROM StringIds WHERE value LIKE '%nccl%'",
                        [&](Statement& q) { nccl_names.insert(q.Int(0)); });
    if (!st.ok())
      return st;
    // Without NCCL kernels in KERNEL (no CUDA tracing), the NCCL operations' GPU spans stand in.
    bool nccl_kernels = false;
    if (db.HasTable("CUPTI_ACTIVITY_KIND_KERNEL")) {
      st = ForEach(db,
                   "SELECT 1 FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE shortName IN (SELECT id FROM StringIds WHERE value "
                   "LIKE '%nccl%') LIMIT 1",
                   [&](Statement&) { nccl_kernels = true; });
      if (!st.ok())
        return st;
    }
    if (!nccl_kernels) {
      st = ForEachOp(i, " AND gpuStart IS NOT NULL AND gpuEnd IS NOT NULL", [&](const Op& op) {
        ranks_[op.rank_index].comm_spans.push_back({op.gpu_start, op.gpu_end, true});
      });
      if (!st.ok())
        return st;
    }
    std::unordered_map<int64_t, std::vector<Interval>> copies;  // memcpy / memset, by process
    for (const char* t : {"CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET"}) {
      if (!db.HasTable(t))
        continue;
      st = ForEach(db, std::string("SELECT globalPid, start, end FROM ") + t, [&](Statement& q) {
        copies[q.Int(0)].push_back({q.Int(1), q.Int(2), false});
      });
      if (!st.ok())
        return st;
    }
    std::set<size_t> done;
    auto finish = [&](size_t r, std::vector<Interval>* iv, bool comm) {
      auto c = copies.find(ranks_[r].result.global_pid);
      if (c != copies.end())
        iv->insert(iv->end(), c->second.begin(), c->second.end());
      FinishRank(r, iv, comm);
      done.insert(r);
    };
    bool has_kernels = db.HasTable("CUPTI_ACTIVITY_KIND_KERNEL");
    for (const char* order : {"", " ORDER BY globalPid"}) {
      bool regrouped = false;
      size_t cur = SIZE_MAX;
      std::vector<Interval> iv;
      bool comm = false;
      if (has_kernels) {
        st = ForEach(db, std::string("SELECT globalPid, start, end, shortName FROM CUPTI_ACTIVITY_KIND_KERNEL") + order,
                     [&](Statement& q) {
                       if (regrouped)
                         return;
                       auto it = by_gpid_.find(q.Int(0));
                       if (it == by_gpid_.end())
                         return;
                       if (it->second != cur) {
                         if (cur != SIZE_MAX)
                           finish(cur, &iv, comm);
                         if (done.count(it->second) != 0) {
                           regrouped = true;
                           return;
                         }
                         cur = it->second;
                         iv.clear();
                         comm = false;
                       }
                       bool c = nccl_names.count(q.Int(3)) != 0;
                       comm |= c;
                       iv.push_back({q.Int(1), q.Int(2), c});
                     });
        if (!st.ok())
          return st;
      }
      if (regrouped) {
        // Undo this database's partial results and read again in process order.
        std::set<int32_t> undone;
        for (size_t r : done) {
          ranks_[r].result = Reset(ranks_[r].result);
          undone.insert(ranks_[r].result.rank);
        }
        std::erase_if(a_->top_gaps, [&](const GapResult& g) { return undone.count(g.rank) != 0; });
        std::erase_if(a_->gap_causes, [&](const GapCauses& g) { return undone.count(g.rank) != 0; });
        done.clear();
        a_->notes.push_back(db.path() + ": kernel rows not grouped by process; read again sorted (slower)");
        continue;
      }
      if (cur != SIZE_MAX)
        finish(cur, &iv, comm);
      break;
    }
    // Ranks of this database without kernels (copies only, or plugin-only NCCL).
    for (size_t r = 0; r < ranks_.size(); ++r) {
      if (ranks_[r].db != i || done.count(r) != 0)
        continue;
      std::vector<Interval> iv;
      finish(r, &iv, false);
    }
    return Status::Ok();
  }

  static RankResult Reset(const RankResult& r) {
    RankResult out = r;
    out.has_gpu = false;
    out.compute_ns = out.comm_ns = out.busy_ns = out.overlap_ns = out.idle_ns = 0;
    out.gaps = 0;
    out.gap_ns = out.largest_gap_ns = out.largest_gap_start_ns = 0;
    out.bin_busy_ns.clear();
    return out;
  }

  void Pop() {
    PopResult& p = a_->pop;
    p.window_start_ns = window_.first;
    p.window_ns = window_.second - window_.first;
    double sum_c = 0, sum_b = 0, max_c = 0, comm = 0, overlap = 0;
    for (const RankData& r : ranks_) {
      if (!r.result.has_gpu)
        continue;
      ++p.ranks;
      sum_c += static_cast<double>(r.result.compute_ns);
      sum_b += static_cast<double>(r.result.busy_ns);
      max_c = std::max(max_c, static_cast<double>(r.result.compute_ns));
      comm += static_cast<double>(r.result.comm_ns);
      overlap += static_cast<double>(r.result.overlap_ns);
    }
    if (p.ranks == 0 || p.window_ns <= 0 || max_c <= 0 || sum_b <= 0) {
      a_->notes.push_back("no GPU activity in the window: no POP factors");
      return;
    }
    double n = p.ranks, w = static_cast<double>(p.window_ns);
    p.valid = true;
    p.mean_compute_ns = std::llround(sum_c / n);
    p.max_compute_ns = std::llround(max_c);
    p.mean_busy_ns = std::llround(sum_b / n);
    p.load_balance = sum_c / n / max_c;
    p.communication = max_c / (sum_b / n);
    p.orchestration = sum_b / n / w;
    p.parallel = p.load_balance * p.communication * p.orchestration;
    p.overlap = comm > 0 ? overlap / comm : 0;
    a_->heat_start_ns = window_.first;
    a_->heat_bin_ns = o_.heatmap_bins > 0 ? p.window_ns / o_.heatmap_bins : 0;
  }

  const AnalyzeOptions& o_;
  Analysis* a_;
  std::vector<std::unique_ptr<Database>> dbs_;
  std::string session_;
  std::set<int64_t> seen_pids_;
  std::vector<RankData> ranks_;
  std::unordered_map<int64_t, size_t> by_gpid_;
  std::map<std::string, uint32_t> comm_index_, func_index_;
  std::vector<std::string> comm_names_, funcs_;
  std::pair<int64_t, int64_t> window_{0, 0};
  uint64_t ops_total_ = 0, ops_with_gpu_ = 0;
  std::map<size_t, uint64_t> cause_gaps_seen_;  // rank index -> gaps of at least gap_cause_min_ns
  bool gpu_entries_ = false;  // every collective has a GPU start: entries are NCCL kernel starts
  std::unordered_map<InstanceKey, uint32_t, KeyHash> bounds_;      // pattern boundary -> iteration
  std::unordered_map<InstanceKey, uint32_t, KeyHash> inst_index_;  // -> insts_
  std::vector<InstanceAgg> insts_;
};

}  // namespace

Status RunAnalysis(const AnalyzeOptions& options, Analysis* out) {
  Analyzer a(options, out);
  return a.Run();
}

}  // namespace gt::analyze
