// cuda_api_callers (gtrace's own report; nsys has none like it): the slowest CUDA API call sites,
// aggregated by call stack. Source: the backtraced calls, i.e. CUPTI_ACTIVITY_KIND_RUNTIME rows with
// eventClass 67 and their CUDA_CALLCHAINS (written by `gtrace export` for --cudabacktrace, and by
// nsys for its own --cudabacktrace). Rows group calls of the same API with the same stack, compared
// by frame text (function, file:line, module), so equal call sites of different processes (and
// different load addresses) are one row. Durations are those of the backtraced rows. Memory: the
// distinct chains' texts and one index per chain id; the calls are grouped in SQLite (SummarizeByKey).
//
// Columns: Time (%) (share of the listed calls' total), Total Time, Num Calls, Avg, Med, Max, Name (the
// API, version suffix stripped), Caller (the innermost frame outside the CUDA libraries and the
// profilers: libcuda, libcudart, libcupti, libgtrace; frame 0 when every frame is inside them), Python
// Caller (the innermost Python frame, "FUNCTION at FILE:LINE", recorded with --python-backtrace=cuda;
// a Python frame is a row whose module is a .py file or whose originalIP is NULL; empty when the
// stack has none), Stack (every frame, innermost first, separated by " <- ").
#include <sqlite3.h>

#include <algorithm>
#include <array>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "tools/stats/grouped_summary.h"
#include "tools/stats/reports.h"
#include "tools/stats/statistics.h"

namespace gt::stats {
namespace {

bool InsideCudaOrProfiler(const std::string& module) {
  size_t slash = module.rfind('/');
  std::string base = slash == std::string::npos ? module : module.substr(slash + 1);
  for (const char* prefix : {"libcuda.so", "libcudart.so", "libcupti.so", "libgtrace.so", "libcudart_static"}) {
    if (base.rfind(prefix, 0) == 0)
      return true;
  }
  return false;
}

// The texts of every call chain: (caller, Python caller, stack), each distinct triple once. Memory:
// one index per chain id plus the distinct stacks; never a call.
struct ChainTexts {
  std::vector<std::array<std::string, 3>> texts;        // distinct (caller, python caller, stack)
  std::unordered_map<std::string, int64_t> text_index;  // caller \0 python \0 stack -> texts index
  std::unordered_map<int64_t, int64_t> chain_texts;     // chain id -> texts index
};

// One chain's frames, innermost first, as the report prints them.
struct ChainBuilder {
  bool started = false;
  int64_t id = 0;
  bool any_frame = false;
  std::string first_symbol, caller, python_caller, stack;

  void Add(std::string_view symbol, std::string_view module, bool python) {
    if (!any_frame)
      first_symbol.assign(symbol);
    any_frame = true;
    if (!stack.empty())
      stack += " <- ";
    stack += symbol;
    if (caller.empty() && !InsideCudaOrProfiler(std::string(module)))
      caller.assign(symbol);
    if (python_caller.empty() && python)
      python_caller.assign(symbol);
  }
  void FinishInto(ChainTexts* chains) {
    if (caller.empty() && any_frame)
      caller = first_symbol;
    std::string lookup = caller;
    lookup += '\0';
    lookup += python_caller;
    lookup += '\0';
    lookup += stack;
    auto [it, inserted] = chains->text_index.try_emplace(std::move(lookup), static_cast<int64_t>(chains->texts.size()));
    if (inserted)
      chains->texts.push_back({caller, python_caller, stack});
    chains->chain_texts[id] = it->second;
    *this = ChainBuilder();
  }
};

// gt_chain_text(callchainId, part): part 0 caller, 1 Python caller, 2 stack; "" for a chain without
// frames (as the old report read a missing chain). SQLite calls it on the report's thread.
void ChainTextSql(sqlite3_context* context, int argc, sqlite3_value** argv) {
  const auto* chains = static_cast<const ChainTexts*>(sqlite3_user_data(context));
  const int64_t part = argc == 2 ? sqlite3_value_int64(argv[1]) : -1;
  auto it = chains->chain_texts.find(sqlite3_value_int64(argv[0]));
  if (it == chains->chain_texts.end() || part < 0 || part > 2) {
    sqlite3_result_text(context, "", 0, SQLITE_STATIC);
    return;
  }
  const std::string& text = chains->texts[static_cast<size_t>(it->second)][static_cast<size_t>(part)];
  sqlite3_result_text(context, text.data(), static_cast<int>(text.size()), SQLITE_STATIC);
}

// Registers gt_chain_text for one report run and removes it again (its user data is on the stack).
class ScopedChainTextFunction {
 public:
  ScopedChainTextFunction(sqlite3* db, const ChainTexts* chains) : db_(db) {
    ok_ = sqlite3_create_function_v2(db_, "gt_chain_text", 2, SQLITE_UTF8 | SQLITE_DETERMINISTIC,
                                     const_cast<ChainTexts*>(chains), ChainTextSql, nullptr, nullptr,
                                     nullptr) == SQLITE_OK;
  }
  ~ScopedChainTextFunction() {
    sqlite3_create_function_v2(db_, "gt_chain_text", 2, SQLITE_UTF8, nullptr, nullptr, nullptr, nullptr, nullptr);
  }
  ScopedChainTextFunction(const ScopedChainTextFunction&) = delete;
  ScopedChainTextFunction& operator=(const ScopedChainTextFunction&) = delete;
  bool ok() const { return ok_; }

 private:
  sqlite3* db_;
  bool ok_ = false;
};

// The report's group of each (nameId, callchainId) pair, for gt_caller_group in pass 2.
struct CallerGroups {
  struct PairHash {
    size_t operator()(const std::pair<int64_t, int64_t>& p) const {
      return std::hash<int64_t>()(p.first * 1000003 ^ p.second);
    }
  };
  std::unordered_map<std::pair<int64_t, int64_t>, int64_t, PairHash> group;
};

// gt_caller_group(nameId, callchainId): the pair's group index (NULL for a pair pass 1 did not see).
// SQLite calls it on the report's thread.
void CallerGroupSql(sqlite3_context* context, int argc, sqlite3_value** argv) {
  const auto* groups = static_cast<const CallerGroups*>(sqlite3_user_data(context));
  if (argc != 2) {
    sqlite3_result_null(context);
    return;
  }
  auto it = groups->group.find({sqlite3_value_int64(argv[0]), sqlite3_value_int64(argv[1])});
  if (it == groups->group.end()) {
    sqlite3_result_null(context);
    return;
  }
  sqlite3_result_int64(context, it->second);
}

// Registers gt_caller_group for one report run and removes it again (its user data is on the stack).
class ScopedCallerGroupFunction {
 public:
  ScopedCallerGroupFunction(sqlite3* db, const CallerGroups* groups) : db_(db) {
    ok_ = sqlite3_create_function_v2(db_, "gt_caller_group", 2, SQLITE_UTF8 | SQLITE_DETERMINISTIC,
                                     const_cast<CallerGroups*>(groups), CallerGroupSql, nullptr, nullptr,
                                     nullptr) == SQLITE_OK;
  }
  ~ScopedCallerGroupFunction() {
    sqlite3_create_function_v2(db_, "gt_caller_group", 2, SQLITE_UTF8, nullptr, nullptr, nullptr, nullptr, nullptr);
  }
  ScopedCallerGroupFunction(const ScopedCallerGroupFunction&) = delete;
  ScopedCallerGroupFunction& operator=(const ScopedCallerGroupFunction&) = delete;
  bool ok() const { return ok_; }

 private:
  sqlite3* db_;
  bool ok_ = false;
};

}  // namespace

gt::Status BuildCudaApiCallers(Database& db, Table* table) {
  if (!db.HasTable(kRuntimeTable))
    return MissingTable(db, *table, kRuntimeTable, "was CUDA traced?");
  if (!db.HasTable("CUDA_CALLCHAINS")) {
    return MissingTable(db, *table, "CUDA_CALLCHAINS", "record with --cudabacktrace (e.g. --cudabacktrace=all)");
  }
  // Pass over the frames, one chain at a time (ordered by id, depth): each chain's texts, interned,
  // so equal stacks of different chains share one entry.
  ChainTexts chains;
  Statement frames;
  gt::Status status = db.Prepare(
      "SELECT c.id, coalesce(s.value, ''), coalesce(m.value, ''), c.originalIP IS NULL FROM CUDA_CALLCHAINS AS c "
      "LEFT JOIN StringIds AS s ON s.id = c.symbol LEFT JOIN StringIds AS m ON m.id = c.module "
      "ORDER BY c.id, c.stackDepth",
      &frames);
  if (!status.ok())
    return status;
  ChainBuilder chain;
  for (;;) {
    bool has_row = false;
    if (!(status = frames.Step(&has_row)).ok())
      return status;
    if (!has_row)
      break;
    const int64_t id = frames.Int(0);
    if (chain.started && chain.id != id)
      chain.FinishInto(&chains);
    if (!chain.started) {
      chain.started = true;
      chain.id = id;
    }
    const std::string_view module = frames.TextView(2);
    const bool python = frames.Int(3) != 0 || (module.size() > 3 && module.compare(module.size() - 3, 3, ".py") == 0);
    chain.Add(frames.TextView(1), module, python);
  }
  if (chain.started)
    chain.FinishInto(&chains);

  // Pass 1, unsorted: count and total per (nameId, callchainId) — integers, a few thousand pairs —
  // then the report's groups (stripped API name, caller, Python caller, stack): several pairs can
  // share one (names that differ in their version suffix, equal stacks of different chains).
  struct PairTotals {
    int64_t count = 0;
    __int128 total = 0;
    int64_t group = 0;
  };
  CallerGroups caller_groups;
  std::unordered_map<std::pair<int64_t, int64_t>, PairTotals, CallerGroups::PairHash> pairs;
  {
    Statement calls;
    // A NULL nameId reads as -1 (string ids are >= 0) and, like an id without a string, names "".
    status = db.Prepare(
        "SELECT coalesce(r.nameId, -1), r.callchainId, coalesce(r.\"end\" - r.start, 0) "
        "FROM CUPTI_ACTIVITY_KIND_RUNTIME AS r WHERE r.eventClass = 67 AND r.callchainId IS NOT NULL",
        &calls);
    if (!status.ok())
      return status;
    for (bool has_row = false; (status = calls.Step(&has_row)).ok() && has_row;) {
      PairTotals& totals = pairs[{calls.Int(0), calls.Int(1)}];
      ++totals.count;
      totals.total += calls.Int(2);
    }
    if (!status.ok())
      return status;
  }
  // Each pair's group key; groups numbered in key order (std::string order: bytes, then length — the
  // order SortedSummaries breaks ties in).
  std::map<std::array<std::string, 4>, std::vector<PairTotals*>> by_key;
  {
    std::unordered_map<int64_t, std::string> names;  // nameId -> stripped name
    for (auto& [pair, totals] : pairs) {
      auto name_it = names.find(pair.first);
      if (name_it == names.end()) {
        std::string text;
        if (pair.first >= 0) {  // one query per distinct API name (a few hundred at most)
          Statement name;
          bool has_row = false;
          status = db.Prepare("SELECT value FROM StringIds WHERE id = " + std::to_string(pair.first), &name);
          if (status.ok())
            status = name.Step(&has_row);
          if (!status.ok())
            return status;
          if (has_row)
            text = name.Text(0);
        }
        name_it = names.emplace(pair.first, StripApiVersionSuffix(text)).first;
      }
      std::array<std::string, 4> key = {name_it->second, "", "", ""};
      auto chain = chains.chain_texts.find(pair.second);
      if (chain != chains.chain_texts.end()) {
        const auto& texts = chains.texts[static_cast<size_t>(chain->second)];
        key[1] = texts[0];
        key[2] = texts[1];
        key[3] = texts[2];
      }
      by_key[std::move(key)].push_back(&totals);
    }
  }
  std::vector<GroupTotals> group_totals;
  group_totals.reserve(by_key.size());
  for (auto& [key, members] : by_key) {
    GroupTotals totals;
    for (PairTotals* member : members) {
      member->group = static_cast<int64_t>(group_totals.size());
      totals.count += member->count;
      totals.total += member->total;
    }
    group_totals.push_back(totals);
  }
  for (const auto& [pair, totals] : pairs)
    caller_groups.group[pair] = totals.group;

  // Pass 2: the calls ordered by (group, duration), the group found by gt_caller_group(nameId,
  // callchainId) (an integer hash lookup), summarised group by group (grouped_summary.h).
  ScopedCallerGroupFunction function(db.handle(), &caller_groups);
  if (!function.ok())
    return gt::Status::Error(db.path() + ": cannot register gt_caller_group");
  std::vector<Summary> summaries;
  status = SummarizeSortedGroups(db,
                                 "SELECT gt_caller_group(coalesce(r.nameId, -1), r.callchainId) AS g, "
                                 "coalesce(r.\"end\" - r.start, 0) AS v FROM CUPTI_ACTIVITY_KIND_RUNTIME AS r "
                                 "WHERE r.eventClass = 67 AND r.callchainId IS NOT NULL ORDER BY g, v",
                                 group_totals, 1, 1, &summaries);
  if (!status.ok())
    return status;
  std::vector<KeyedSummary> groups;
  groups.reserve(by_key.size());
  __int128 sum_of_totals = 0;
  size_t g = 0;
  for (auto& [key, members] : by_key) {
    groups.push_back(KeyedSummary{{key[0], key[1], key[2], key[3]}, summaries[g]});
    sum_of_totals += group_totals[g].total;
    ++g;
  }
  std::stable_sort(groups.begin(), groups.end(),
                   [](const KeyedSummary& a, const KeyedSummary& b) { return a.summary.total > b.summary.total; });
  const int64_t grand_total = static_cast<int64_t>(sum_of_totals);
  table->columns = {NumberColumn("Time (%)"),    NumberColumn("Total Time (ns)"),
                    NumberColumn("Num Calls"),   NumberColumn("Avg (ns)"),
                    NumberColumn("Med (ns)"),    NumberColumn("Max (ns)"),
                    TextColumn("Name"),          TextColumn("Caller"),
                    TextColumn("Python Caller"), TextColumn("Stack")};
  for (const KeyedSummary& group : groups) {
    const Summary& summary = group.summary;
    table->rows.push_back({Percent(summary.total, grand_total), Cell::Int(summary.total), Cell::Int(summary.count),
                           summary.avg, summary.median, Cell::Int(summary.max), Cell::Text(group.key[0]),
                           Cell::Text(group.key[1]), Cell::Text(group.key[2]), Cell::Text(group.key[3])});
  }
  return gt::Status::Ok();
}

}  // namespace gt::stats
