#include "tools/stats/grouped_summary.h"

#include <sqlite3.h>

#include <algorithm>
#include <string_view>
#include <unordered_map>

namespace gt::stats {
namespace {

// The key texts of a row, each length-prefixed, as one hash-map key.
void AppendKeyPart(std::string_view text, std::string* lookup) {
  const uint64_t size = text.size();
  lookup->append(reinterpret_cast<const char*>(&size), sizeof(size));
  lookup->append(text);
}

// Groups by key, for gt_group_index(k0, ...) in pass 2. Lives on SummarizeByKey's stack while the
// function is registered; SQLite calls it on that thread, inside sqlite3_step.
struct GroupIndex {
  std::unordered_map<std::string, int64_t> index;  // length-prefixed key texts -> group, in key order
  std::string lookup;                              // reused buffer
};

// gt_group_index(k0, ...): the group's position in key order (NULL for a key pass 1 did not see).
void GroupIndexSql(sqlite3_context* context, int argc, sqlite3_value** argv) {
  auto* groups = static_cast<GroupIndex*>(sqlite3_user_data(context));
  groups->lookup.clear();
  for (int i = 0; i < argc; ++i) {
    const unsigned char* text = sqlite3_value_text(argv[i]);
    const int bytes = sqlite3_value_bytes(argv[i]);
    AppendKeyPart(text == nullptr ? std::string_view()
                                  : std::string_view(reinterpret_cast<const char*>(text), static_cast<size_t>(bytes)),
                  &groups->lookup);
  }
  auto it = groups->index.find(groups->lookup);
  if (it == groups->index.end()) {
    sqlite3_result_null(context);
    return;
  }
  sqlite3_result_int64(context, it->second);
}

// Registers gt_group_index for the scope of one report pass, and removes it again (its user data is
// a stack object).
class ScopedGroupFunction {
 public:
  ScopedGroupFunction(sqlite3* db, int key_columns, GroupIndex* groups) : db_(db), key_columns_(key_columns) {
    ok_ = sqlite3_create_function_v2(db_, "gt_group_index", key_columns_, SQLITE_UTF8 | SQLITE_DETERMINISTIC, groups,
                                     GroupIndexSql, nullptr, nullptr, nullptr) == SQLITE_OK;
  }
  ~ScopedGroupFunction() {
    sqlite3_create_function_v2(db_, "gt_group_index", key_columns_, SQLITE_UTF8, nullptr, nullptr, nullptr, nullptr,
                               nullptr);
  }
  ScopedGroupFunction(const ScopedGroupFunction&) = delete;
  ScopedGroupFunction& operator=(const ScopedGroupFunction&) = delete;
  bool ok() const { return ok_; }

 private:
  sqlite3* db_;
  int key_columns_;
  bool ok_ = false;
};

}  // namespace

gt::Status SummarizeByKey(Database& db,
                          const std::string& rows_sql,
                          int key_columns,
                          int64_t unit,
                          int decimals,
                          std::vector<KeyedSummary>* out,
                          int64_t* grand_total) {
  // Normalised rows: keys as text (NULL -> ''), value as integer (NULL -> 0), as Statement::Text and
  // Int read them.
  std::string keys;  // "k0, k1, ..."
  std::string normalised = "SELECT ";
  for (int i = 0; i < key_columns; ++i) {
    const std::string k = "k" + std::to_string(i);
    keys += (i > 0 ? ", " : "") + k;
    normalised += "CAST(coalesce(" + k + ", '') AS TEXT) AS " + k + ", ";
  }
  normalised += "coalesce(v, 0) AS v FROM (" + rows_sql + ")";

  // Pass 1, unsorted: count and total per group in a hash map (one entry per group, found through
  // a reused buffer, so no allocation per row), then the groups in key order (std::string's order:
  // bytes, then length — SortedSummaries' tie order).
  struct Group {
    std::vector<std::string> key;
    int64_t count = 0;
    __int128 total = 0;
  };
  std::vector<Group> groups;
  GroupIndex group_index;
  {
    std::string& lookup = group_index.lookup;
    Statement statement;
    gt::Status status = db.Prepare(normalised, &statement);
    if (!status.ok())
      return status;
    for (bool has_row = false; (status = statement.Step(&has_row)).ok() && has_row;) {
      lookup.clear();
      for (int i = 0; i < key_columns; ++i)
        AppendKeyPart(statement.TextView(i), &lookup);
      auto [it, inserted] = group_index.index.try_emplace(lookup, static_cast<int64_t>(groups.size()));
      if (inserted) {
        Group group;
        for (int i = 0; i < key_columns; ++i)
          group.key.emplace_back(statement.TextView(i));
        groups.push_back(std::move(group));
      }
      Group& group = groups[static_cast<size_t>(it->second)];
      ++group.count;
      group.total += statement.Int(key_columns);
    }
    if (!status.ok())
      return status;
  }
  std::sort(groups.begin(), groups.end(), [](const Group& a, const Group& b) { return a.key < b.key; });
  for (size_t g = 0; g < groups.size(); ++g) {
    group_index.lookup.clear();
    for (const std::string& text : groups[g].key)
      AppendKeyPart(text, &group_index.lookup);
    group_index.index[group_index.lookup] = static_cast<int64_t>(g);
  }

  // Pass 2: every value ordered by (group position, value): SQLite sorts two integers per row
  // (spilling to temporary files past its memory), and each group's values stream, ascending,
  // through a SortedValueSummarizer. A row whose group differs from pass 1's count is an error.
  ScopedGroupFunction function(db.handle(), key_columns, &group_index);
  if (!function.ok())
    return gt::Status::Error(db.path() + ": cannot register gt_group_index");
  Statement statement;
  gt::Status status =
      db.Prepare("SELECT gt_group_index(" + keys + ") AS g, v FROM (" + normalised + ") ORDER BY g, v", &statement);
  if (!status.ok())
    return status;
  std::vector<KeyedSummary> summaries;
  summaries.reserve(groups.size());
  __int128 sum_of_totals = 0;
  bool has_row = false;
  const gt::Status changed = gt::Status::Error(db.path() + ": rows changed while a report read them");
  for (size_t g = 0; g < groups.size(); ++g) {
    Group& group = groups[g];
    SortedValueSummarizer summarizer(group.count, group.total, unit, decimals);
    for (int64_t n = 0; n < group.count; ++n) {
      status = statement.Step(&has_row);
      if (!status.ok())
        return status;
      if (!has_row || statement.IsNull(0) || statement.Int(0) != static_cast<int64_t>(g))
        return changed;
      summarizer.Add(statement.Int(1));
    }
    summaries.push_back(KeyedSummary{std::move(group.key), summarizer.Finish()});
    sum_of_totals += group.total;
  }
  status = statement.Step(&has_row);
  if (!status.ok())
    return status;
  if (has_row)
    return changed;

  std::stable_sort(summaries.begin(), summaries.end(),
                   [](const KeyedSummary& a, const KeyedSummary& b) { return a.summary.total > b.summary.total; });
  *out = std::move(summaries);
  if (grand_total != nullptr)
    *grand_total = static_cast<int64_t>(sum_of_totals);
  return gt::Status::Ok();
}

gt::Status SummarizeSortedGroups(Database& db,
                                 const std::string& sorted_sql,
                                 const std::vector<GroupTotals>& groups,
                                 int64_t unit,
                                 int decimals,
                                 std::vector<Summary>* out) {
  Statement statement;
  gt::Status status = db.Prepare(sorted_sql, &statement);
  if (!status.ok())
    return status;
  const gt::Status changed = gt::Status::Error(db.path() + ": rows changed while a report read them");
  std::vector<Summary> summaries(groups.size());
  bool has_row = false;
  for (size_t g = 0; g < groups.size(); ++g) {
    if (groups[g].count == 0)
      continue;
    SortedValueSummarizer summarizer(groups[g].count, groups[g].total, unit, decimals);
    for (int64_t n = 0; n < groups[g].count; ++n) {
      if (!(status = statement.Step(&has_row)).ok())
        return status;
      if (!has_row || statement.IsNull(0) || statement.Int(0) != static_cast<int64_t>(g))
        return changed;
      summarizer.Add(statement.Int(1));
    }
    summaries[g] = summarizer.Finish();
  }
  if (!(status = statement.Step(&has_row)).ok())
    return status;
  if (has_row)
    return changed;
  *out = std::move(summaries);
  return gt::Status::Ok();
}

}  // namespace gt::stats
