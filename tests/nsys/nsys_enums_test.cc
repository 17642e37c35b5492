// Tests for gt::nsys::EnumTables() and WriteEnumTables(): the 24 ENUM tables with all 386 rows, written
// all-or-nothing, and equal row for row to real nsys exports (skipped when the reference files are absent).
#include <gtest/gtest.h>

#include <iterator>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "nsys_test_util.h"
#include "tools/nsys/nsys_schema.h"

namespace gt::nsys {
namespace {

// Suite names start with lower-case "nsys" so that `ctest -R nsys` selects them (ctest regexes are case-sensitive).

using testing::Db;
using testing::Row;

// Table order and row count per table, as in a 3.25.0 export.
struct ExpectedEnum {
  std::string_view name;
  size_t rows;
};
constexpr ExpectedEnum kExpectedEnumTables[] = {
    {"ENUM_NSYS_EVENT_TYPE", 155},
    {"ENUM_NSYS_EVENT_CLASS", 99},
    {"ENUM_NSYS_GENERIC_EVENT_SOURCE", 4},
    {"ENUM_NSYS_GENERIC_EVENT_GROUP", 5},
    {"ENUM_NSYS_GENERIC_EVENT_FIELD_TYPE", 4},
    {"ENUM_NSYS_GENERIC_EVENT_FIELD_ETW_PROPERTY", 8},
    {"ENUM_NSYS_GENERIC_EVENT_FIELD_ETW_TYPE", 22},
    {"ENUM_NSYS_GENERIC_EVENT_FIELD_ETW_FLAGS", 7},
    {"ENUM_CUDA_MEMCPY_OPER", 14},
    {"ENUM_CUDA_MEM_KIND", 8},
    {"ENUM_CUDA_MEMPOOL_TYPE", 3},
    {"ENUM_CUDA_MEMPOOL_OPER", 4},
    {"ENUM_CUDA_DEV_MEM_EVENT_OPER", 2},
    {"ENUM_CUDA_KERNEL_LAUNCH_TYPE", 4},
    {"ENUM_CUDA_SHARED_MEM_LIMIT_CONFIG", 2},
    {"ENUM_CUDA_UNIF_MEM_MIGRATION", 6},
    {"ENUM_CUDA_UNIF_MEM_ACCESS_TYPE", 5},
    {"ENUM_CUDA_FUNC_CACHE_CONFIG", 4},
    {"ENUM_CUPTI_STREAM_TYPE", 4},
    {"ENUM_CUPTI_SYNC_TYPE", 5},
    {"ENUM_CUPTI_OVERHEAD_TYPE", 9},
    {"ENUM_DIAGNOSTIC_SEVERITY_LEVEL", 5},
    {"ENUM_DIAGNOSTIC_SOURCE_TYPE", 4},
    {"ENUM_DIAGNOSTIC_TIMESTAMP_SOURCE", 3},
};

std::vector<std::string> ExpectedEnumNames() {
  std::vector<std::string> names;
  for (const ExpectedEnum& table : kExpectedEnumTables) {
    names.emplace_back(table.name);
  }
  return names;
}

// (name, label) of row `id` of ENUM table `table`, or ("?", "?") when absent.
std::pair<std::string, std::string> Lookup(std::string_view table, int64_t id) {
  if (const EnumTable* t = FindEnumTable(table)) {
    for (const EnumRow& row : t->rows) {
      if (row.id == id) {
        return {row.name ? row.name : "NULL", row.label ? row.label : "NULL"};
      }
    }
  }
  return {"?", "?"};
}

Row ExpectedRow(const EnumRow& row) {
  auto text = [](const char* s) {
    testing::Cell cell;
    if (s != nullptr) {
      cell.type = SQLITE_TEXT;
      cell.text = s;
    }
    return cell;
  };
  testing::Cell id;
  id.type = SQLITE_INTEGER;
  id.integer = row.id;
  return Row{id, text(row.name), text(row.label)};
}

TEST(nsysEnumsTest, TwentyFourTablesWith386RowsInNsysOrder) {
  ASSERT_EQ(EnumTables().size(), 24u);
  ASSERT_EQ(std::size(kExpectedEnumTables), 24u);
  size_t total = 0;
  for (size_t i = 0; i < EnumTables().size(); ++i) {
    const EnumTable& table = EnumTables()[i];
    EXPECT_EQ(table.name, kExpectedEnumTables[i].name);
    EXPECT_EQ(table.rows.size(), kExpectedEnumTables[i].rows) << table.name;
    total += table.rows.size();
  }
  EXPECT_EQ(total, 386u);
}

TEST(nsysEnumsTest, RowsSortedByUniqueIdWithText) {
  std::set<std::string_view> names;
  for (const EnumTable& table : EnumTables()) {
    EXPECT_TRUE(names.insert(table.name).second) << "duplicate " << table.name;
    EXPECT_TRUE(table.name.starts_with("ENUM_")) << table.name;
    for (size_t i = 0; i < table.rows.size(); ++i) {
      if (i > 0) {
        EXPECT_LT(table.rows[i - 1].id, table.rows[i].id) << table.name;
      }
      EXPECT_NE(table.rows[i].name, nullptr) << table.name << " id " << table.rows[i].id;
      EXPECT_NE(table.rows[i].label, nullptr) << table.name << " id " << table.rows[i].id;
    }
  }
}

// Values the exporter and nsys's reports depend on (fact sheet §3, facts 8, 10, 13, 14, 19).
TEST(nsysEnumsTest, KeyValues) {
  using P = std::pair<std::string, std::string>;
  EXPECT_EQ(Lookup("ENUM_CUDA_MEMCPY_OPER", 1), P("CUDA_MEMCPY_KIND_HTOD", "Host-to-Device"));
  EXPECT_EQ(Lookup("ENUM_CUDA_MEMCPY_OPER", 2), P("CUDA_MEMCPY_KIND_DTOH", "Device-to-Host"));
  EXPECT_EQ(Lookup("ENUM_CUDA_MEMCPY_OPER", 8), P("CUDA_MEMCPY_KIND_DTOD", "Device-to-Device"));
  EXPECT_EQ(Lookup("ENUM_CUDA_MEMCPY_OPER", 10), P("CUDA_MEMCPY_KIND_PTOP", "Peer-to-Peer"));
  EXPECT_EQ(Lookup("ENUM_CUDA_MEM_KIND", 0), P("CUDA_MEMOPR_MEMORY_KIND_PAGEABLE", "Pageable"));
  EXPECT_EQ(Lookup("ENUM_CUDA_MEM_KIND", 2), P("CUDA_MEMOPR_MEMORY_KIND_DEVICE", "Device"));
  EXPECT_EQ(Lookup("ENUM_CUDA_MEM_KIND", 7), P("CUDA_MEMOPR_MEMORY_KIND_UNKNOWN", "Unknown"));
  EXPECT_EQ(Lookup("ENUM_CUDA_KERNEL_LAUNCH_TYPE", 1), P("CUDA_KERNEL_LAUNCH_TYPE_REGULAR", "Regular"));
  EXPECT_EQ(Lookup("ENUM_CUPTI_STREAM_TYPE", 3), P("CUPTI_ACTIVITY_STREAM_CREATE_FLAG_NULL", "Null stream"));
  EXPECT_EQ(Lookup("ENUM_CUPTI_SYNC_TYPE", 3),
            P("CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE", "Stream sync"));
  EXPECT_EQ(Lookup("ENUM_CUPTI_OVERHEAD_TYPE", 7), P("OVERHEAD_LAZY_FUNCTION_LOADING", "Lazy function loading (CUDA)"));
  EXPECT_EQ(Lookup("ENUM_NSYS_EVENT_CLASS", 0), P("TRACE_PROCESS_EVENT_CUDA_RUNTIME", "CUDA runtime"));
  EXPECT_EQ(Lookup("ENUM_NSYS_EVENT_CLASS", 1), P("TRACE_PROCESS_EVENT_CUDA_DRIVER", "CUDA driver"));
  EXPECT_EQ(Lookup("ENUM_NSYS_EVENT_CLASS", 103), P("TRACE_PROCESS_EVENT_CUDA_OVERHEAD", "CUDA overhead"));
  EXPECT_EQ(Lookup("ENUM_NSYS_EVENT_TYPE", 34), P("NvtxMark", "NvtxMark"));
  EXPECT_EQ(Lookup("ENUM_NSYS_EVENT_TYPE", 59), P("NvtxPushPopRange", "NvtxPushPopRange"));
  EXPECT_EQ(Lookup("ENUM_NSYS_EVENT_TYPE", 60), P("NvtxStartEndRange", "NvtxStartEndRange"));
  EXPECT_EQ(Lookup("ENUM_NSYS_EVENT_TYPE", 75), P("NvtxDomainCreate", "NvtxDomainCreate"));
}

TEST(nsysEnumsTest, FindEnumTable) {
  for (const EnumTable& table : EnumTables()) {
    EXPECT_EQ(FindEnumTable(table.name), &table) << table.name;
  }
  EXPECT_EQ(FindEnumTable(""), nullptr);
  EXPECT_EQ(FindEnumTable("ENUM_NOPE"), nullptr);
  EXPECT_EQ(FindEnumTable("enum_cuda_mem_kind"), nullptr);
  EXPECT_EQ(FindEnumTable("StringIds"), nullptr);
  EXPECT_EQ(FindEnumTable("ENUM_OSRT_FILE_ACCESS_EVENT_TYPE"), nullptr);  // 3.24.0-only, not written for 3.25.0
}

TEST(nsysEnumsTest, WriteEnumTablesWritesEveryRow) {
  Db db = testing::OpenMemory();
  ASSERT_NE(db, nullptr);
  gt::Status status = WriteEnumTables(db.get());
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_EQ(testing::SchemaNames(db.get(), "table"), ExpectedEnumNames());
  int64_t total = 0;
  for (const EnumTable& table : EnumTables()) {
    std::vector<Row> expected;
    for (const EnumRow& row : table.rows) {
      expected.push_back(ExpectedRow(row));
    }
    std::string error;
    EXPECT_EQ(testing::TableRows(db.get(), table.name, "id", &error), expected) << table.name;
    EXPECT_EQ(error, "");
    EXPECT_EQ(testing::TableInfo(db.get(), table.name),
              (std::vector<testing::Column>{{0, "id", "INTEGER", 1, std::nullopt, 1},
                                            {1, "name", "TEXT", 0, std::nullopt, 0},
                                            {2, "label", "TEXT", 0, std::nullopt, 0}}))
        << table.name;
    total += testing::QueryInt(db.get(), "SELECT count(*) FROM " + std::string(table.name));
  }
  EXPECT_EQ(total, 386);
  EXPECT_TRUE(testing::SchemaNames(db.get(), "index").empty());
}

// A clash on a late table (the 20th) must leave none of the earlier 19 behind.
TEST(nsysEnumsTest, WriteEnumTablesIsAllOrNothing) {
  Db db = testing::OpenMemory();
  ASSERT_NE(db, nullptr);
  ASSERT_EQ(testing::Exec(db.get(), "CREATE TABLE ENUM_CUPTI_SYNC_TYPE (x)"), "");
  gt::Status status = WriteEnumTables(db.get());
  EXPECT_FALSE(status.ok());
  EXPECT_NE(status.message().find("already exists"), std::string::npos) << status.message();
  EXPECT_EQ(testing::SchemaNames(db.get(), "table"), std::vector<std::string>{"ENUM_CUPTI_SYNC_TYPE"});
  // The savepoint is gone: a new transaction can start, and a retry after removing the clash succeeds.
  EXPECT_EQ(testing::Exec(db.get(), "DROP TABLE ENUM_CUPTI_SYNC_TYPE"), "");
  status = WriteEnumTables(db.get());
  EXPECT_TRUE(status.ok()) << status.message();
  EXPECT_EQ(testing::SchemaNames(db.get(), "table").size(), 24u);
  EXPECT_FALSE(WriteEnumTables(nullptr).ok());
}

// Inside a caller's transaction the writes belong to that transaction: they vanish on its ROLLBACK and persist on
// its COMMIT.
TEST(nsysEnumsTest, WriteEnumTablesNestsInCallerTransaction) {
  Db db = testing::OpenMemory();
  ASSERT_NE(db, nullptr);
  ASSERT_EQ(testing::Exec(db.get(), "BEGIN"), "");
  ASSERT_TRUE(WriteEnumTables(db.get()).ok());
  EXPECT_EQ(testing::SchemaNames(db.get(), "table").size(), 24u);
  ASSERT_EQ(testing::Exec(db.get(), "ROLLBACK"), "");
  EXPECT_TRUE(testing::SchemaNames(db.get(), "table").empty());

  ASSERT_EQ(testing::Exec(db.get(), "BEGIN"), "");
  ASSERT_TRUE(WriteEnumTables(db.get()).ok());
  ASSERT_EQ(testing::Exec(db.get(), "COMMIT"), "");
  EXPECT_EQ(testing::SchemaNames(db.get(), "table").size(), 24u);
}

// ---- Comparison with real nsys exports.

// Our written ENUM tables against `ref`: same 24 table names, same columns, same rows (values and storage classes).
void ExpectEnumTablesEqual(sqlite3* ours, sqlite3* ref, const std::string& label) {
  std::vector<std::string> ref_names = testing::SchemaNames(ref, "table", "ENUM_%");
  std::set<std::string> ref_set(ref_names.begin(), ref_names.end());
  std::vector<std::string> our_names = ExpectedEnumNames();
  EXPECT_EQ(ref_set, std::set<std::string>(our_names.begin(), our_names.end())) << label;
  size_t rows = 0;
  for (const std::string& name : our_names) {
    SCOPED_TRACE(name + " vs " + label);
    EXPECT_EQ(testing::ColumnDiff(testing::TableInfo(ours, name), testing::TableInfo(ref, name)), "");
    std::string error;
    std::vector<Row> expected = testing::TableRows(ref, name, "id", &error);
    EXPECT_EQ(error, "");
    EXPECT_EQ(testing::TableRows(ours, name, "id", &error), expected);
    rows += expected.size();
  }
  EXPECT_EQ(rows, 386u) << label;
}

TEST(nsysEnumsReferenceTest, EqualsEnumDump) {
  std::string why;
  const auto path = testing::ReferenceFile(testing::kEnumsSql, &why);
  if (!path) {
    GTEST_SKIP() << why;
  }
  std::string error;
  Db ref = testing::LoadSqlFile(*path, &error);
  ASSERT_NE(ref, nullptr) << error;
  Db ours = testing::OpenMemory();
  ASSERT_NE(ours, nullptr);
  ASSERT_TRUE(WriteEnumTables(ours.get()).ok());
  EXPECT_EQ(testing::SchemaNames(ref.get(), "table").size(), 24u);
  ExpectEnumTablesEqual(ours.get(), ref.get(), testing::kEnumsSql);
}

// The real 3.24.14 export (its ENUM rows equal 3.25.0's).
TEST(nsysEnumsReferenceTest, EqualsRealExport) {
  std::string why;
  const auto path = testing::ReferenceFile(testing::kMockDb, &why);
  if (!path) {
    GTEST_SKIP() << why;
  }
  std::string error;
  Db ref = testing::OpenReadOnly(*path, &error);
  ASSERT_NE(ref, nullptr) << error;
  Db ours = testing::OpenMemory();
  ASSERT_NE(ours, nullptr);
  ASSERT_TRUE(WriteEnumTables(ours.get()).ok());
  ExpectEnumTablesEqual(ours.get(), ref.get(), testing::kMockDb);
}

// The 3.25.0 DDL dump has no rows, but names the 24 ENUM tables (in the order we write them) and their columns.
TEST(nsysEnumsReferenceTest, TablesAndColumnsEqual3250Schema) {
  std::string why;
  const auto path = testing::ReferenceFile(testing::kSchema3250Sql, &why);
  if (!path) {
    GTEST_SKIP() << why;
  }
  std::string error;
  Db ref = testing::LoadSqlFile(*path, &error);
  ASSERT_NE(ref, nullptr) << error;
  Db ours = testing::OpenMemory();
  ASSERT_NE(ours, nullptr);
  ASSERT_TRUE(WriteEnumTables(ours.get()).ok());
  EXPECT_EQ(testing::SchemaNames(ref.get(), "table", "ENUM_%"), ExpectedEnumNames());
  for (const EnumTable& table : EnumTables()) {
    EXPECT_EQ(
        testing::ColumnDiff(testing::TableInfo(ours.get(), table.name), testing::TableInfo(ref.get(), table.name)), "")
        << table.name;
  }
}

}  // namespace
}  // namespace gt::nsys
