// Helpers shared by the gt_nsys tests: SQLite handles, reference-file lookup, and readers for `pragma table_info`
// and table rows that compare and print well in gtest.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace gt::nsys::testing {

struct DbCloser {
  void operator()(sqlite3* db) const { sqlite3_close(db); }
};
using Db = std::unique_ptr<sqlite3, DbCloser>;

// Reference files (see shared/reference/README.md).
inline constexpr char kSchema3250Sql[] = "nsys-3.25.0-schema.sql";     // 3.25.0 DDL dump
inline constexpr char kMockDb[] = "nsysai-mock-nsys-2026.1.1.sqlite";  // real export, 3.24.14
inline constexpr char kFlameoxDb[] = "flameox-nsys-2025.5.2.sqlite";   // real export, 3.24.0
inline constexpr char kSchema3240Sql[] = "nsys-3.24.0-schema.sql";     // 3.24.0 DDL dump
inline constexpr char kEnumsSql[] = "nsys-enums-3.24.14.sql";          // ENUM tables dump

// The reference folder: environment variable GT_TEST_REFERENCE_DIR if set (lets one point the tests at a missing
// folder without rebuilding), else the compile definition of the same name; "" when neither is set.
std::string ReferenceDir();

// Full path of reference file `file_name`, or nullopt with `*why` saying what is missing (for GTEST_SKIP).
std::optional<std::string> ReferenceFile(std::string_view file_name, std::string* why);

// A fresh in-memory database; nullptr on failure.
Db OpenMemory();

// Opens an existing database read-only (URI "file:...?mode=ro"); nullptr with `*error` on failure.
Db OpenReadOnly(const std::string& path, std::string* error);

// Executes the SQL text of file `path` (a sqlite3 .dump or .schema) in a fresh in-memory database.
Db LoadSqlFile(const std::string& path, std::string* error);

// Executes `sql` (may hold several statements); returns "" or the error message.
std::string Exec(sqlite3* db, const std::string& sql);

struct Column {
  int64_t cid = 0;
  std::string name;
  std::string type;
  int64_t notnull = 0;
  std::optional<std::string> dflt_value;
  int64_t pk = 0;
  bool operator==(const Column&) const = default;
};
void PrintTo(const Column& column, std::ostream* os);

// `pragma table_info(table)`; empty when the table does not exist.
std::vector<Column> TableInfo(sqlite3* db, std::string_view table);

// "" when `actual` equals `expected`, else one line per differing column (whole vectors are unreadable in gtest
// output for 40-column tables).
std::string ColumnDiff(const std::vector<Column>& actual, const std::vector<Column>& expected);

// Names from sqlite_master of the given type ("table", "index", "trigger", "view") whose name matches the LIKE
// pattern, in rowid (creation) order.
std::vector<std::string> SchemaNames(sqlite3* db, std::string_view type, std::string_view like = "%");

bool HasTable(sqlite3* db, std::string_view table);

// One SQLite value with its storage class, so that 1 and '1' compare unequal.
struct Cell {
  int type = SQLITE_NULL;  // SQLITE_INTEGER, SQLITE_FLOAT, SQLITE_TEXT, SQLITE_BLOB or SQLITE_NULL
  int64_t integer = 0;
  double real = 0;
  std::string text;  // TEXT and BLOB bytes
  bool operator==(const Cell&) const = default;
};
void PrintTo(const Cell& cell, std::ostream* os);
using Row = std::vector<Cell>;

// All rows of `SELECT * FROM "table" ORDER BY <order_by>`; `*error` set on failure.
std::vector<Row> TableRows(sqlite3* db, std::string_view table, std::string_view order_by, std::string* error);

// The single integer result of `sql`, or -1 on error.
int64_t QueryInt(sqlite3* db, const std::string& sql);

}  // namespace gt::nsys::testing
