// The test helper's CREATE TABLE statements must match nsys's DDL column for column (names, order,
// declared types, NOT NULL, primary key), so the report tests exercise the real schema. Compared against
// shared/reference when present; skipped otherwise.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <tuple>

#include "tests/stats/nsys_test_db.h"

namespace gt::stats::testing {
namespace {

using ColumnInfo = std::tuple<std::string, std::string, int, int>;  // name, type, notnull, pk

std::vector<ColumnInfo> TableInfo(sqlite3* db, const std::string& table) {
  std::vector<ColumnInfo> columns;
  sqlite3_stmt* stmt = nullptr;
  sqlite3_prepare_v2(db, ("SELECT name, type, \"notnull\", pk FROM pragma_table_info('" + table + "')").c_str(), -1,
                     &stmt, nullptr);
  while (sqlite3_step(stmt) == SQLITE_ROW) {
    columns.emplace_back(reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0)),
                         reinterpret_cast<const char*>(sqlite3_column_text(stmt, 1)), sqlite3_column_int(stmt, 2),
                         sqlite3_column_int(stmt, 3));
  }
  sqlite3_finalize(stmt);
  return columns;
}

TEST(StatsTestSchema, HelperDdlMatchesNsysReferenceDdl) {
  const std::string dir = ReferenceDir();
  const std::string schema_path = dir + "/nsys-3.25.0-schema.sql";
  const std::string export_b = dir + "/nsysai-mock-nsys-2026.1.1.sqlite";
  if (!std::filesystem::exists(schema_path) || !std::filesystem::exists(export_b)) {
    GTEST_SKIP() << "reference data not found in " << dir;
  }
  std::ifstream in(schema_path);
  const std::string ddl((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  sqlite3* reference = nullptr;
  ASSERT_EQ(sqlite3_open(":memory:", &reference), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(reference, ddl.c_str(), nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3* older = nullptr;  // 3.24.14 export: the TARGET_INFO tables the 3.25.0 sample lacks
  ASSERT_EQ(sqlite3_open_v2(("file:" + export_b + "?mode=ro").c_str(), &older, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI,
                            nullptr),
            SQLITE_OK);
  sqlite3* ours = nullptr;
  ASSERT_EQ(sqlite3_open(":memory:", &ours), SQLITE_OK);
  for (const auto& [table, create] : NsysTableDdl()) {
    ASSERT_EQ(sqlite3_exec(ours, create.c_str(), nullptr, nullptr, nullptr), SQLITE_OK) << table;
    std::vector<ColumnInfo> expected = TableInfo(reference, table);
    if (expected.empty())
      expected = TableInfo(older, table);
    ASSERT_FALSE(expected.empty()) << table << " is in neither reference";
    EXPECT_EQ(TableInfo(ours, table), expected) << table;
  }
  sqlite3_close(ours);
  sqlite3_close(older);
  sqlite3_close(reference);
}

}  // namespace
}  // namespace gt::stats::testing
