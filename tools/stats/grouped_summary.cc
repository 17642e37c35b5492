#include "tools/stats/grouped_summary.h"

#include <algorithm>

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
  std::string keys;
  std::string normalised = "SELECT ";
  for (int i = 0; i < key_columns; ++i) {
    const std::string k = "k" + std::to_string(i);
    keys += (i > 0 ? ", " : "") + k;
    normalised += "CAST(coalesce(" + k + ", '') AS TEXT) AS " + k + ", ";
  }
  normalised += "coalesce(v, 0) AS v FROM (" + rows_sql + ")";

  // Pass 1: one row per group, in key order.
  std::vector<KeyedSummary> groups;
  std::vector<std::pair<int64_t, int64_t>> count_total;
  {
    Statement statement;
    gt::Status status = db.Prepare(
        "SELECT " + keys + ", count(*), sum(v) FROM (" + normalised + ") GROUP BY " + keys + " ORDER BY " + keys,
        &statement);
    if (!status.ok())
      return status;
    for (bool has_row = false; (status = statement.Step(&has_row)).ok() && has_row;) {
      KeyedSummary group;
      for (int i = 0; i < key_columns; ++i)
        group.key.push_back(statement.Text(i));
      groups.push_back(std::move(group));
      count_total.emplace_back(statement.Int(key_columns), statement.Int(key_columns + 1));
    }
    if (!status.ok())
      return status;
  }

  // Pass 2: every value, ascending within its group, groups in the same key order as pass 1.
  Statement statement;
  gt::Status status = db.Prepare("SELECT v FROM (" + normalised + ") ORDER BY " + keys + ", v", &statement);
  if (!status.ok())
    return status;
  int64_t sum_of_totals = 0;
  bool has_row = false;
  for (size_t g = 0; g < groups.size(); ++g) {
    const auto [count, total] = count_total[g];
    SortedValueSummarizer summarizer(count, total, unit, decimals);
    for (int64_t i = 0; i < count; ++i) {
      status = statement.Step(&has_row);
      if (!status.ok())
        return status;
      if (!has_row)
        return gt::Status::Error(db.path() + ": rows changed while a report read them");
      summarizer.Add(statement.Int(0));
    }
    groups[g].summary = summarizer.Finish();
    sum_of_totals += total;
  }
  status = statement.Step(&has_row);
  if (!status.ok())
    return status;
  if (has_row)
    return gt::Status::Error(db.path() + ": rows changed while a report read them");

  std::stable_sort(groups.begin(), groups.end(),
                   [](const KeyedSummary& a, const KeyedSummary& b) { return a.summary.total > b.summary.total; });
  *out = std::move(groups);
  if (grand_total != nullptr)
    *grand_total = sum_of_totals;
  return gt::Status::Ok();
}

}  // namespace gt::stats
