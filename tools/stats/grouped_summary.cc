#include "tools/stats/grouped_summary.h"

#include <algorithm>
#include <string_view>
#include <unordered_map>

namespace gt::stats {

gt::Status SummarizeByKey(Database& db,
                          const std::string& rows_sql,
                          int key_columns,
                          int64_t unit,
                          int decimals,
                          std::vector<KeyedSummary>* out,
                          int64_t* grand_total) {
  // Normalised rows: keys as text (NULL -> ''), value as integer (NULL -> 0), so that SQLite's
  // BINARY order of the keys is std::string's order (both compare bytes, then length).
  std::string keys;  // "k0, k1, ..."
  std::string normalised = "SELECT ";
  for (int i = 0; i < key_columns; ++i) {
    const std::string k = "k" + std::to_string(i);
    keys += (i > 0 ? ", " : "") + k;
    normalised += "CAST(coalesce(" + k + ", '') AS TEXT) AS " + k + ", ";
  }
  normalised += "coalesce(v, 0) AS v FROM (" + rows_sql + ")";

  // Pass 1, unsorted: count and total per group in a hash map (one entry per group, found through
  // a reused buffer, so no allocation per row), then the groups in key order.
  struct Group {
    std::vector<std::string> key;
    int64_t count = 0;
    __int128 total = 0;
  };
  std::vector<Group> groups;
  {
    std::unordered_map<std::string, size_t> index;  // key texts, each length-prefixed -> groups[i]
    std::string lookup;
    Statement statement;
    gt::Status status = db.Prepare(normalised, &statement);
    if (!status.ok())
      return status;
    for (bool has_row = false; (status = statement.Step(&has_row)).ok() && has_row;) {
      lookup.clear();
      for (int i = 0; i < key_columns; ++i) {
        const std::string_view text = statement.TextView(i);
        const uint64_t size = text.size();
        lookup.append(reinterpret_cast<const char*>(&size), sizeof(size));
        lookup.append(text);
      }
      auto [it, inserted] = index.try_emplace(lookup, groups.size());
      if (inserted) {
        Group group;
        for (int i = 0; i < key_columns; ++i)
          group.key.emplace_back(statement.TextView(i));
        groups.push_back(std::move(group));
      }
      Group& group = groups[it->second];
      ++group.count;
      group.total += statement.Int(key_columns);
    }
    if (!status.ok())
      return status;
  }
  // std::string's order is SQLite's BINARY order (bytes, then length): the order of pass 2.
  std::sort(groups.begin(), groups.end(), [](const Group& a, const Group& b) { return a.key < b.key; });

  // Pass 2: every value, ascending within its group, groups in key order; the keys are checked
  // against pass 1's so a mismatch of the two orders is an error, never a wrong row.
  Statement statement;
  gt::Status status = db.Prepare(normalised + " ORDER BY " + keys + ", v", &statement);
  if (!status.ok())
    return status;
  std::vector<KeyedSummary> summaries;
  summaries.reserve(groups.size());
  __int128 sum_of_totals = 0;
  bool has_row = false;
  const gt::Status changed = gt::Status::Error(db.path() + ": rows changed while a report read them");
  for (Group& group : groups) {
    SortedValueSummarizer summarizer(group.count, group.total, unit, decimals);
    for (int64_t n = 0; n < group.count; ++n) {
      status = statement.Step(&has_row);
      if (!status.ok())
        return status;
      if (!has_row)
        return changed;
      for (int i = 0; i < key_columns; ++i) {
        if (statement.TextView(i) != group.key[i])
          return changed;
      }
      summarizer.Add(statement.Int(key_columns));
    }
    summaries.push_back(KeyedSummary{std::move(group.key), summarizer.Finish()});
    sum_of_totals += group.total;
  }
  status = statement.Step(&has_row);
  if (!status.ok())
    return status;
  if (has_row)
    return changed;
  std::vector<KeyedSummary>& groups_out = summaries;
  std::stable_sort(groups_out.begin(), groups_out.end(),
                   [](const KeyedSummary& a, const KeyedSummary& b) { return a.summary.total > b.summary.total; });
  *out = std::move(groups_out);
  if (grand_total != nullptr)
    *grand_total = static_cast<int64_t>(sum_of_totals);
  return gt::Status::Ok();
}

}  // namespace gt::stats
