// Helpers of the large-case report tests (large_summary_test.cc, large_metrics_test.cc): a
// deterministic generator, the old reports' way of loading rows, and CSV output of a Table.
#pragma once

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <cstdint>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "tools/stats/table.h"

namespace gt::stats::testing {

// Deterministic pseudo-random numbers (no <random> distribution differences between libraries).
struct Lcg {
  uint64_t state = 0x9E3779B97F4A7C15ull;
  uint64_t Next(uint64_t bound) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return (state >> 33) % bound;
  }
};

// Rows of `sql` (text key columns, then one integer value), as the old reports read them.
template <typename Key, typename MakeKey>
std::map<Key, std::vector<int64_t>> LoadGroups(const std::string& path,
                                               const std::string& sql,
                                               MakeKey make_key,
                                               int value_column,
                                               int64_t* grand_total) {
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  sqlite3_stmt* stmt = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
  std::map<Key, std::vector<int64_t>> groups;
  *grand_total = 0;
  while (sqlite3_step(stmt) == SQLITE_ROW) {
    const int64_t value = sqlite3_column_int64(stmt, value_column);
    groups[make_key(stmt)].push_back(value);
    *grand_total += value;
  }
  sqlite3_finalize(stmt);
  sqlite3_close(db);
  return groups;
}

inline std::string ColumnText(sqlite3_stmt* stmt, int column) {
  const unsigned char* text = sqlite3_column_text(stmt, column);
  return text == nullptr ? std::string()
                         : std::string(reinterpret_cast<const char*>(text),
                                       static_cast<size_t>(sqlite3_column_bytes(stmt, column)));
}

inline std::string Csv(const Table& table) {
  std::ostringstream out;
  WriteTable(table, Format::kCsv, out);
  return out.str();
}

inline std::vector<Column> Columns(std::vector<const char*> names) {
  std::vector<Column> columns;
  for (const char* name : names)
    columns.push_back(Column{name, Align::kRight});
  return columns;
}

}  // namespace gt::stats::testing
