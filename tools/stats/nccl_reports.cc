// nccl_sum: NCCL operations per collective and message-size bucket, with GPU time statistics and
// nccl-tests' algorithm and bus bandwidths, across ranks and per rank. A gtrace report (nsys has
// none by this name); columns and rules are documented in docs/nccl.md.
//
// Sources, in order of preference (so nothing is counted twice — the same collective appears in
// both when NVTX and the NCCL plugin were traced):
//   1. GTRACE_NCCL_OPERATIONS (gtrace's NCCL profiler plugin): time = GPU time from the kernel
//      channels (last channel end - first channel start); operations without kernel-channel times
//      are counted in "Untimed" only. Source "plugin".
//   2. When that table is absent or empty (NCCL runs single-rank collectives as plain copies, without
//      profiler events), NCCL's own NVTX ranges (NVTX_EVENTS in a domain named "NCCL", e.g. a real nsys
//      export): time = the API call on the host. Message size and communicator size come from the
//      ranges' binaryData payloads when the export has them (`nsys export --include-blobs=true`;
//      32-byte header {domainId, schemaId, size, offset} then NCCL's payload: commId at 0, message
//      size at 8; ncclCommInitRank-like payloads give nRanks at 8 and rank at 12); without payloads
//      the size is "unknown" and bandwidths are empty. Source "nvtx".
// nccl-tests formulas (NVIDIA/nccl-tests src/*.cu, doc/PERFORMANCE.md): size S = count * type size,
// times nRanks for AllGather, ReduceScatter, AlltoAll, Gather, Scatter; algbw = S / t; busbw =
// algbw * factor, factor 2(n-1)/n for AllReduce, (n-1)/n for AllGather, ReduceScatter, AlltoAll,
// Gather, Scatter, 1 for Broadcast, Reduce, Send, Recv. A row's bandwidths are sum(S) / sum(t) (so
// a row of equal sizes gives S / average time, as nccl-tests prints), in GB/s (1e9 B/s = B/ns),
// 2 decimals. Buckets: S in [2^k, 2^(k+1)) bytes. Rows: one "all" row per (collective, bucket,
// communicator size), then one row per rank (the rank in the communicator) when more than one rank
// contributed. Order: collective name, bucket, communicator size, "all" first then ranks ascending.
#include <algorithm>
#include <cstring>
#include <functional>
#include <map>
#include <optional>
#include <tuple>

#include "tools/stats/reports.h"
#include "tools/stats/statistics.h"

namespace gt::stats {
namespace {

constexpr std::string_view kOperationsTable = "GTRACE_NCCL_OPERATIONS";

struct Op {
  std::string func;
  std::optional<int64_t> size_bytes;  // nccl-tests S
  int64_t n_ranks = 0;                // 0 = unknown
  int64_t rank = -1;
  std::optional<int64_t> time_ns;
};

// nccl-tests bus-bandwidth factor num/den and the size multiplier (the export computes S with the same
// table: tools/export/nccl_model.cc NcclTestsFactors).
bool Factors(const std::string& func, int64_t n, int64_t* multiplier, int64_t* num, int64_t* den) {
  if (n <= 0) return false;
  *multiplier = 1;
  *num = 1;
  *den = 1;
  if (func == "AllReduce") {
    *num = 2 * (n - 1);
    *den = n;
  } else if (func == "AllGather" || func == "ReduceScatter" || func == "AlltoAll" || func == "Gather" ||
             func == "Scatter") {
    *multiplier = n;
    *num = n - 1;
    *den = n;
  } else if (func != "Broadcast" && func != "Reduce" && func != "Send" && func != "Recv") {
    return false;
  }
  return true;
}

// Bucket index: -1 unknown size, 0 for S = 0, else k + 1 for S in [2^k, 2^(k+1)).
int Bucket(const std::optional<int64_t>& s) {
  if (!s) return -1;
  if (*s <= 0) return 0;
  return 64 - __builtin_clzll(static_cast<uint64_t>(*s));
}

std::string BytesLabel(uint64_t v) {
  static const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  int u = 0;
  while (u < 6 && v >= 1024 && v % 1024 == 0) {
    v /= 1024;
    ++u;
  }
  return std::to_string(v) + " " + kUnits[u];
}

std::string BucketLabel(int bucket) {
  if (bucket < 0) return "unknown";
  if (bucket == 0) return "0 B";
  uint64_t lo = uint64_t{1} << (bucket - 1);
  std::string hi = bucket >= 64 ? "16 EiB" : BytesLabel(uint64_t{1} << bucket);
  return "[" + BytesLabel(lo) + ", " + hi + ")";
}

gt::Status Query(Database& db, const std::string& sql, const std::function<void(Statement&)>& row) {
  Statement st;
  gt::Status status = db.Prepare(sql, &st);
  if (!status.ok()) return status;
  for (;;) {
    bool has = false;
    status = st.Step(&has);
    if (!status.ok()) return status;
    if (!has) return gt::Status::Ok();
    row(st);
  }
}

gt::Status LoadPluginOps(Database& db, std::vector<Op>* ops) {
  return Query(db,
               "SELECT func, algBytes, nRanks, rank, gpuStart, gpuEnd FROM GTRACE_NCCL_OPERATIONS "
               "ORDER BY globalPid, eventId",
               [ops](Statement& s) {
                 Op o;
                 o.func = s.Text(0);
                 o.size_bytes = s.OptInt(1);
                 o.n_ranks = s.IsNull(2) ? 0 : s.Int(2);
                 o.rank = s.IsNull(3) ? -1 : s.Int(3);
                 if (!s.IsNull(4) && !s.IsNull(5)) o.time_ns = s.Int(5) - s.Int(4);
                 ops->push_back(o);
               });
}

uint64_t U64At(const std::string& b, size_t at) {
  uint64_t v = 0;
  if (at + 8 <= b.size()) std::memcpy(&v, b.data() + at, 8);
  return v;
}
int32_t I32At(const std::string& b, size_t at) {
  int32_t v = 0;
  if (at + 4 <= b.size()) std::memcpy(&v, b.data() + at, 4);
  return v;
}

// NCCL's static schema ids (1<<24 + NVTX_SID_*) of its collective and communicator payloads.
constexpr uint64_t kSchemaBase = uint64_t{1} << 24;
bool IsCommInitLike(uint64_t sid) {  // CommInitRank, CommDestroy, CommAbort, InitRankConfig, InitRankScalable, Revoke
  return sid == kSchemaBase + 0 || sid == kSchemaBase + 2 || sid == kSchemaBase + 3 || sid == kSchemaBase + 11 ||
         sid == kSchemaBase + 12 || sid == kSchemaBase + 19;
}

gt::Status LoadNvtxOps(Database& db, std::vector<Op>* ops) {
  struct Range {
    std::string name;
    int64_t time;
    std::string blob;
  };
  std::vector<Range> ranges;
  const bool blobs = db.HasColumn(kNvtxTable, "binaryData");
  gt::Status status = Query(
      db,
      std::string("WITH d AS (SELECT DISTINCT domainId, globalTid >> 24 AS p FROM NVTX_EVENTS "
                  "WHERE eventType = 75 AND text = 'NCCL') "
                  "SELECT coalesce(e.text, s.value), e.\"end\" - e.start, ") +
          (blobs ? "e.binaryData" : "NULL") +
          " FROM NVTX_EVENTS AS e JOIN d ON d.domainId = e.domainId AND d.p = (e.globalTid >> 24) "
          "LEFT JOIN StringIds AS s ON s.id = e.textId WHERE e.eventType IN (59, 60) AND e.\"end\" IS NOT NULL "
          "ORDER BY e.globalTid, e.start",
      [&ranges](Statement& s) { ranges.push_back({s.Text(0), s.Int(1), s.Text(2)}); });
  if (!status.ok()) return status;
  std::map<uint64_t, std::pair<int64_t, int64_t>> comms;  // commId -> (nRanks, rank)
  auto payload = [](const std::string& blob, uint64_t* sid) -> std::optional<std::string> {
    if (blob.size() < 32) return std::nullopt;
    *sid = U64At(blob, 8);
    uint64_t size = U64At(blob, 16), offset = U64At(blob, 24);
    if (offset < 32 || offset > blob.size() || size > blob.size() - offset) return std::nullopt;
    return blob.substr(offset, size);
  };
  for (const Range& r : ranges) {
    uint64_t sid = 0;
    if (auto p = payload(r.blob, &sid); p && IsCommInitLike(sid) && p->size() >= 16) {
      comms[U64At(*p, 0)] = {I32At(*p, 8), I32At(*p, 12)};
    }
  }
  for (const Range& r : ranges) {
    if (r.name.rfind("nccl", 0) != 0) continue;
    Op o;
    o.func = r.name.substr(4);
    int64_t multiplier = 0, num = 0, den = 0;
    if (!Factors(o.func, 1, &multiplier, &num, &den)) continue;  // not a collective or send/recv
    o.time_ns = r.time;
    uint64_t sid = 0;
    if (auto p = payload(r.blob, &sid); p && p->size() >= 16) {
      auto comm = comms.find(U64At(*p, 0));
      if (comm != comms.end()) {
        o.n_ranks = comm->second.first;
        o.rank = comm->second.second;
      }
      int64_t message = static_cast<int64_t>(U64At(*p, 8));
      if (o.n_ranks > 0 && Factors(o.func, o.n_ranks, &multiplier, &num, &den)) o.size_bytes = message * multiplier;
    }
    ops->push_back(o);
  }
  return gt::Status::Ok();
}

struct Group {
  std::vector<int64_t> times;
  int64_t total_size = 0;
  bool size_known = true;
  int64_t untimed = 0;
};

void AppendRow(const std::string& func, int bucket, int64_t n_ranks, const std::string& rank, Group& g,
               const std::string& source, Table* table) {
  std::vector<Cell> row = {Cell::Text(func), Cell::Text(BucketLabel(bucket)),
                           n_ranks > 0 ? Cell::Int(n_ranks) : Cell::Null(), Cell::Text(rank)};
  int64_t count = static_cast<int64_t>(g.times.size());
  row.push_back(Cell::Int(count));
  if (count > 0) {
    Summary s = Summarize(&g.times);
    row.insert(row.end(), {Cell::Int(s.total), s.avg, s.median, Cell::Int(s.min), Cell::Int(s.max)});
    int64_t multiplier = 0, num = 0, den = 0;
    bool sized = g.size_known && bucket >= 0;
    row.push_back(sized ? Cell::Int(g.total_size) : Cell::Null());
    if (sized && s.total > 0) {
      row.push_back(Cell::Fixed(RoundDiv(static_cast<__int128>(g.total_size) * 100, s.total), 2));
      if (Factors(func, n_ranks, &multiplier, &num, &den)) {
        row.push_back(Cell::Fixed(RoundDiv(static_cast<__int128>(g.total_size) * num * 100,
                                           static_cast<__int128>(s.total) * den),
                                  2));
      } else {
        row.push_back(Cell::Null());
      }
    } else {
      row.insert(row.end(), {Cell::Null(), Cell::Null()});
    }
  } else {
    for (int i = 0; i < 8; ++i) row.push_back(Cell::Null());
  }
  row.push_back(Cell::Int(g.untimed));
  row.push_back(Cell::Text(source));
  table->rows.push_back(std::move(row));
}

}  // namespace

gt::Status BuildNcclSum(Database& db, Table* table) {
  std::vector<Op> ops;
  std::string source;
  gt::Status status;
  if (db.HasTable(kOperationsTable)) {
    source = "plugin";
    status = LoadPluginOps(db, &ops);
    if (!status.ok()) return status;
  }
  if (ops.empty() && db.HasTable(kNvtxTable)) {
    // No plugin operations (not traced, or a single-rank communicator: NCCL runs those as copies
    // without profiler events): NCCL's own NVTX ranges, if any.
    source = "nvtx";
    status = LoadNvtxOps(db, &ops);
  } else if (!db.HasTable(kOperationsTable)) {
    return MissingTable(db, *table, "GTRACE_NCCL_OPERATIONS or NVTX_EVENTS", "was NCCL traced (-t nccl or nvtx)?");
  }
  if (!status.ok()) return status;
  // (func, bucket, nRanks) -> "all" group and per-rank groups.
  using Key = std::tuple<std::string, int, int64_t>;
  std::map<Key, std::pair<Group, std::map<int64_t, Group>>> groups;
  for (const Op& o : ops) {
    auto& entry = groups[{o.func, Bucket(o.size_bytes), o.n_ranks}];
    for (Group* g : {&entry.first, &entry.second[o.rank]}) {
      if (!o.time_ns) {
        ++g->untimed;
        continue;
      }
      g->times.push_back(*o.time_ns);
      if (o.size_bytes) {
        g->total_size += *o.size_bytes;
      } else {
        g->size_known = false;
      }
    }
  }
  table->columns = {TextColumn("Collective"),   TextColumn("Size Range"),    NumberColumn("Ranks"),
                    TextColumn("Rank"),         NumberColumn("Count"),       NumberColumn("Total Time (ns)"),
                    NumberColumn("Avg (ns)"),   NumberColumn("Med (ns)"),    NumberColumn("Min (ns)"),
                    NumberColumn("Max (ns)"),   NumberColumn("Total Size (B)"), NumberColumn("AlgBW (GB/s)"),
                    NumberColumn("BusBW (GB/s)"), NumberColumn("Untimed"),   TextColumn("Source")};
  for (auto& [key, entry] : groups) {
    const auto& [func, bucket, n_ranks] = key;
    AppendRow(func, bucket, n_ranks, "all", entry.first, source, table);
    if (entry.second.size() < 2) continue;
    for (auto& [rank, g] : entry.second) {
      AppendRow(func, bucket, n_ranks, rank >= 0 ? std::to_string(rank) : "?", g, source, table);
    }
  }
  return gt::Status::Ok();
}

}  // namespace gt::stats
