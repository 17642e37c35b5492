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
// Memory: one entry per group (and per communicator for the NVTX source); the operations stay in
// SQLite. Two passes over them: an unsorted one counts and sums per (collective, bucket,
// communicator size, rank), then one sort by (collective, bucket, communicator size, time) feeds
// each group's exact median (the "all" group and its ranks from the same sorted block).
#include <sqlite3.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <map>
#include <optional>
#include <string_view>
#include <tuple>
#include <vector>

#include "tools/stats/grouped_summary.h"
#include "tools/stats/reports.h"
#include "tools/stats/statistics.h"

namespace gt::stats {
namespace {

constexpr std::string_view kOperationsTable = "GTRACE_NCCL_OPERATIONS";


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

uint64_t U64At(std::string_view b, size_t at) {
  uint64_t v = 0;
  if (at + 8 <= b.size()) std::memcpy(&v, b.data() + at, 8);
  return v;
}
int32_t I32At(std::string_view b, size_t at) {
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

// The payload of a binaryData blob (after the 32-byte header) and its schema id.
std::optional<std::string_view> Payload(std::string_view blob, uint64_t* sid) {
  if (blob.size() < 32) return std::nullopt;
  *sid = U64At(blob, 8);
  uint64_t size = U64At(blob, 16), offset = U64At(blob, 24);
  if (offset < 32 || offset > blob.size() || size > blob.size() - offset) return std::nullopt;
  return blob.substr(offset, size);
}

std::string_view ValueBytes(sqlite3_value* value) {
  const void* bytes = sqlite3_value_blob(value);
  if (bytes == nullptr) return std::string_view();
  return std::string_view(static_cast<const char*>(bytes), static_cast<size_t>(sqlite3_value_bytes(value)));
}

using Comms = std::map<uint64_t, std::pair<int64_t, int64_t>>;  // commId -> (nRanks, rank)

// gt_nccl_nvtx(name, binaryData, part): one NCCL NVTX range as an operation; part 0 the collective
// (NULL when the range is not a collective or send/recv), 1 the nccl-tests size S (NULL unknown),
// 2 nRanks (0 unknown), 3 the rank (-1 unknown). User data: the Comms read from the ranges before.
void NvtxOpSql(sqlite3_context* context, int argc, sqlite3_value** argv) {
  const auto* comms = static_cast<const Comms*>(sqlite3_user_data(context));
  const unsigned char* text = argc == 3 ? sqlite3_value_text(argv[0]) : nullptr;
  const std::string_view name =
      text == nullptr ? std::string_view()
                      : std::string_view(reinterpret_cast<const char*>(text),
                                         static_cast<size_t>(sqlite3_value_bytes(argv[0])));
  int64_t multiplier = 0, num = 0, den = 0;
  if (name.substr(0, 4) != "nccl" || !Factors(std::string(name.substr(4)), 1, &multiplier, &num, &den)) {
    sqlite3_result_null(context);
    return;
  }
  const std::string func(name.substr(4));
  const int64_t part = sqlite3_value_int64(argv[2]);
  if (part == 0) {
    sqlite3_result_text(context, func.data(), static_cast<int>(func.size()), SQLITE_TRANSIENT);
    return;
  }
  int64_t n_ranks = 0, rank = -1;
  std::optional<int64_t> size_bytes;
  uint64_t sid = 0;
  if (auto p = Payload(ValueBytes(argv[1]), &sid); p && p->size() >= 16) {
    auto comm = comms->find(U64At(*p, 0));
    if (comm != comms->end()) {
      n_ranks = comm->second.first;
      rank = comm->second.second;
    }
    const int64_t message = static_cast<int64_t>(U64At(*p, 8));
    if (n_ranks > 0 && Factors(func, n_ranks, &multiplier, &num, &den)) size_bytes = message * multiplier;
  }
  if (part == 1 && size_bytes) {
    sqlite3_result_int64(context, *size_bytes);
  } else if (part == 2) {
    sqlite3_result_int64(context, n_ranks);
  } else if (part == 3) {
    sqlite3_result_int64(context, rank);
  } else {
    sqlite3_result_null(context);
  }
}

// gt_nccl_bucket(S): Bucket() of a size, -1 for NULL.
void BucketSql(sqlite3_context* context, int argc, sqlite3_value** argv) {
  if (argc != 1 || sqlite3_value_type(argv[0]) == SQLITE_NULL) {
    sqlite3_result_int64(context, -1);
    return;
  }
  sqlite3_result_int64(context, Bucket(sqlite3_value_int64(argv[0])));
}

// Registers a report's SQL function for one report run and removes it again (user data on the stack).
class ScopedFunction {
 public:
  using Function = void (*)(sqlite3_context*, int, sqlite3_value**);
  ScopedFunction(sqlite3* db, const char* name, int args, void* data, Function function)
      : db_(db), name_(name), args_(args) {
    ok_ = sqlite3_create_function_v2(db_, name_, args_, SQLITE_UTF8 | SQLITE_DETERMINISTIC, data, function, nullptr,
                                     nullptr, nullptr) == SQLITE_OK;
  }
  ~ScopedFunction() {
    sqlite3_create_function_v2(db_, name_, args_, SQLITE_UTF8, nullptr, nullptr, nullptr, nullptr, nullptr);
  }
  ScopedFunction(const ScopedFunction&) = delete;
  ScopedFunction& operator=(const ScopedFunction&) = delete;
  bool ok() const { return ok_; }

 private:
  sqlite3* db_;
  const char* name_;
  int args_;
  bool ok_ = false;
};

// NCCL's NVTX ranges (their name, host duration and payload) as SQL with columns n, t, b.
std::string NvtxRangesSql(Database& db) {
  const bool blobs = db.HasColumn(kNvtxTable, "binaryData");
  return std::string("WITH d AS (SELECT DISTINCT domainId, globalTid >> 24 AS p FROM NVTX_EVENTS "
                     "WHERE eventType = 75 AND text = 'NCCL') "
                     "SELECT coalesce(e.text, s.value) AS n, e.\"end\" - e.start AS t, ") +
         (blobs ? "e.binaryData" : "NULL") +
         " AS b FROM NVTX_EVENTS AS e JOIN d ON d.domainId = e.domainId AND d.p = (e.globalTid >> 24) "
         "LEFT JOIN StringIds AS s ON s.id = e.textId WHERE e.eventType IN (59, 60) AND e.\"end\" IS NOT NULL "
         "ORDER BY e.globalTid, e.start";
}

// The communicators described by NCCL's NVTX payloads (commInit-like ranges), in range order so a
// later description of the same commId wins. Memory: one entry per communicator.
gt::Status LoadNvtxComms(Database& db, Comms* comms) {
  return Query(db, "SELECT b FROM (" + NvtxRangesSql(db) + ")", [comms](Statement& s) {
    const std::string_view blob = s.TextView(0);
    uint64_t sid = 0;
    if (auto p = Payload(blob, &sid); p && IsCommInitLike(sid) && p->size() >= 16) {
      (*comms)[U64At(*p, 0)] = {I32At(*p, 8), I32At(*p, 12)};
    }
  });
}

struct Group {
  int64_t timed = 0;
  int64_t total_size = 0;
  bool size_known = true;
  int64_t untimed = 0;
};

void AppendRow(const std::string& func, int bucket, int64_t n_ranks, const std::string& rank, const Group& g,
               const Summary* s, const std::string& source, Table* table) {
  std::vector<Cell> row = {Cell::Text(func), Cell::Text(BucketLabel(bucket)),
                           n_ranks > 0 ? Cell::Int(n_ranks) : Cell::Null(), Cell::Text(rank)};
  row.push_back(Cell::Int(g.timed));
  if (g.timed > 0 && s != nullptr) {
    row.insert(row.end(), {Cell::Int(s->total), s->avg, s->median, Cell::Int(s->min), Cell::Int(s->max)});
    int64_t multiplier = 0, num = 0, den = 0;
    bool sized = g.size_known && bucket >= 0;
    row.push_back(sized ? Cell::Int(g.total_size) : Cell::Null());
    if (sized && s->total > 0) {
      row.push_back(Cell::Fixed(RoundDiv(static_cast<__int128>(g.total_size) * 100, s->total), 2));
      if (Factors(func, n_ranks, &multiplier, &num, &den)) {
        row.push_back(Cell::Fixed(RoundDiv(static_cast<__int128>(g.total_size) * num * 100,
                                           static_cast<__int128>(s->total) * den),
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
  // The operations as SQL (func, size, n_ranks, rank, time), from the plugin's table or NCCL's NVTX
  // ranges; nothing is loaded per operation.
  std::string ops_sql;
  std::string source;
  Comms comms;
  gt::Status status;
  bool plugin_ops = false;
  if (db.HasTable(kOperationsTable)) {
    source = "plugin";
    status = Query(db, "SELECT EXISTS (SELECT 1 FROM GTRACE_NCCL_OPERATIONS)",
                   [&plugin_ops](Statement& s) { plugin_ops = s.Int(0) != 0; });
    if (!status.ok()) return status;
    ops_sql =
        "SELECT CAST(coalesce(func, '') AS TEXT) AS func, algBytes AS size, coalesce(nRanks, 0) AS n_ranks, "
        "coalesce(rank, -1) AS rank, CASE WHEN gpuStart IS NOT NULL AND gpuEnd IS NOT NULL THEN gpuEnd - gpuStart "
        "END AS time FROM GTRACE_NCCL_OPERATIONS";
  }
  if (!plugin_ops && db.HasTable(kNvtxTable)) {
    // No plugin operations (not traced, or a single-rank communicator: NCCL runs those as copies
    // without profiler events): NCCL's own NVTX ranges, if any.
    source = "nvtx";
    status = LoadNvtxComms(db, &comms);
    if (!status.ok()) return status;
    ops_sql = "SELECT * FROM (SELECT gt_nccl_nvtx(n, b, 0) AS func, gt_nccl_nvtx(n, b, 1) AS size, "
              "gt_nccl_nvtx(n, b, 2) AS n_ranks, gt_nccl_nvtx(n, b, 3) AS rank, t AS time FROM (" +
              NvtxRangesSql(db) + ")) WHERE func IS NOT NULL";
  } else if (!db.HasTable(kOperationsTable)) {
    return MissingTable(db, *table, "GTRACE_NCCL_OPERATIONS or NVTX_EVENTS", "was NCCL traced (-t nccl or nvtx)?");
  }
  ScopedFunction nvtx_function(db.handle(), "gt_nccl_nvtx", 3, &comms, NvtxOpSql);
  ScopedFunction bucket_function(db.handle(), "gt_nccl_bucket", 1, nullptr, BucketSql);
  if (!nvtx_function.ok() || !bucket_function.ok())
    return gt::Status::Error(db.path() + ": cannot register the nccl_sum SQL functions");
  // Pass 1, unsorted: counts, sizes and GPU-time totals per (collective, bucket, communicator
  // size, rank) in a map (memory per group); the "all" group of a (collective, bucket, communicator
  // size) is the sum of its ranks'.
  struct RankGroup {
    Group group;
    __int128 time_total = 0;
    Summary summary;
  };
  struct Block {  // one (collective, bucket, communicator size)
    RankGroup all;
    std::map<int64_t, RankGroup> ranks;
  };
  std::map<std::tuple<std::string, int, int64_t>, Block> blocks;
  {
    Statement ops;
    status = db.Prepare("SELECT func, size, n_ranks, rank, time FROM (" + ops_sql + ")", &ops);
    if (!status.ok()) return status;
    std::tuple<std::string, int, int64_t> key;
    for (bool has_row = false; (status = ops.Step(&has_row)).ok() && has_row;) {
      std::get<0>(key).assign(ops.TextView(0));
      std::get<1>(key) = Bucket(ops.OptInt(1));
      std::get<2>(key) = ops.Int(2);
      Block& block = blocks[key];
      for (RankGroup* g : {&block.all, &block.ranks[ops.Int(3)]}) {
        if (ops.IsNull(4)) {
          ++g->group.untimed;
          continue;
        }
        ++g->group.timed;
        g->time_total += ops.Int(4);
        if (ops.IsNull(1)) {
          g->group.size_known = false;
        } else {
          // Wraps like int64 addition in two's complement instead of overflowing (UB).
          g->group.total_size =
              static_cast<int64_t>(static_cast<uint64_t>(g->group.total_size) + static_cast<uint64_t>(ops.Int(1)));
        }
      }
    }
    if (!status.ok()) return status;
  }
  // Pass 2: the timed operations ordered by (collective, bucket, communicator size, time): each
  // block's values arrive ascending, and so do each rank's among them, so one sort feeds the "all"
  // summarizer and the ranks' summarizers together (SQLite's sorter spills past its memory).
  {
    Statement ops;
    status = db.Prepare("SELECT func, size, n_ranks, rank, time FROM (" + ops_sql +
                            ") WHERE time IS NOT NULL ORDER BY func, gt_nccl_bucket(size), n_ranks, time",
                        &ops);
    if (!status.ok()) return status;
    const gt::Status changed = gt::Status::Error(db.path() + ": rows changed while a report read them");
    struct Open {
      RankGroup* group;
      SortedValueSummarizer summarizer;
    };
    std::vector<Open> open;             // the current block's "all" group first, then its ranks
    std::map<int64_t, size_t> rank_of;  // rank -> index in open
    std::tuple<std::string, int, int64_t> key;
    auto finish = [&open]() {
      for (Open& o : open) {
        if (o.summarizer.added() != o.group->group.timed) return false;
        o.group->summary = o.summarizer.Finish();
      }
      open.clear();
      return true;
    };
    for (bool has_row = false; (status = ops.Step(&has_row)).ok() && has_row;) {
      const std::string_view func = ops.TextView(0);
      const int bucket = Bucket(ops.OptInt(1));
      const int64_t n_ranks = ops.Int(2);
      if (open.empty() || func != std::get<0>(key) || bucket != std::get<1>(key) || n_ranks != std::get<2>(key)) {
        if (!finish()) return changed;
        key = {std::string(func), bucket, n_ranks};
        auto it = blocks.find(key);
        if (it == blocks.end()) return changed;
        Block& block = it->second;
        open.push_back(Open{&block.all, SortedValueSummarizer(block.all.group.timed, block.all.time_total, 1, 1)});
        rank_of.clear();
        for (auto& [rank, g] : block.ranks) {
          rank_of[rank] = open.size();
          open.push_back(Open{&g, SortedValueSummarizer(g.group.timed, g.time_total, 1, 1)});
        }
      }
      auto r = rank_of.find(ops.Int(3));
      if (r == rank_of.end()) return changed;
      const int64_t time = ops.Int(4);
      open[0].summarizer.Add(time);
      open[r->second].summarizer.Add(time);
    }
    if (!status.ok()) return status;
    if (!finish()) return changed;
  }

  table->columns = {TextColumn("Collective"),   TextColumn("Size Range"),    NumberColumn("Ranks"),
                    TextColumn("Rank"),         NumberColumn("Count"),       NumberColumn("Total Time (ns)"),
                    NumberColumn("Avg (ns)"),   NumberColumn("Med (ns)"),    NumberColumn("Min (ns)"),
                    NumberColumn("Max (ns)"),   NumberColumn("Total Size (B)"), NumberColumn("AlgBW (GB/s)"),
                    NumberColumn("BusBW (GB/s)"), NumberColumn("Untimed"),   TextColumn("Source")};
  // Rows in the report's order: collective, bucket, communicator size (the map's order, SQLite's
  // BINARY order for the text), "all" first, then the ranks ascending when more than one.
  for (const auto& [key, block] : blocks) {
    const auto& [func, bucket, n_ranks] = key;
    AppendRow(func, bucket, n_ranks, "all", block.all.group, block.all.group.timed > 0 ? &block.all.summary : nullptr,
              source, table);
    if (block.ranks.size() < 2) continue;
    for (const auto& [rank, g] : block.ranks) {
      AppendRow(func, bucket, n_ranks, rank >= 0 ? std::to_string(rank) : "?", g.group,
                g.group.timed > 0 ? &g.summary : nullptr, source, table);
    }
  }
  return gt::Status::Ok();
}

}  // namespace gt::stats
