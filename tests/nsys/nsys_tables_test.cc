// Tests for gt::nsys::Tables(), FindTable() and CreateTable(): every DDL runs, names are unique, and each table's
// `pragma table_info` equals the real nsys export it was taken from (skipped when the reference files are absent).
#include <gtest/gtest.h>

#include <iterator>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "nsys_test_util.h"
#include "tools/nsys/nsys_schema.h"

namespace gt::nsys {
namespace {

// Suite names start with lower-case "nsys" so that `ctest -R nsys` selects them (ctest regexes are case-sensitive).

using testing::Column;
using testing::Db;

// Every table Tables() must hold, in order: 23 from the 3.25.0 export, 3 from 3.24.14, 2 from 3.24.0, 7 doc-only,
// 2 CPU-sampling tables from a 3.16.1 export.
constexpr std::string_view kExpectedTables[] = {
    "StringIds",
    "ANALYSIS_FILE",
    "ProcessStreams",
    "NVTX_PAYLOAD_SCHEMAS",
    "NVTX_PAYLOAD_SCHEMA_ENTRIES",
    "TARGET_INFO_SYSTEM_ENV",
    "TARGET_INFO_SESSION_START_TIME",
    "ANALYSIS_DETAILS",
    "CUPTI_ACTIVITY_KIND_CUDA_EVENT",
    "DIAGNOSTIC_EVENT",
    "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION",
    "PROFILER_OVERHEAD",
    "CUPTI_ACTIVITY_KIND_OVERHEAD",
    "CUPTI_ACTIVITY_KIND_MEMSET",
    "CUPTI_ACTIVITY_KIND_MEMCPY",
    "CUPTI_ACTIVITY_KIND_KERNEL",
    "PROCESSES",
    "CUPTI_ACTIVITY_KIND_RUNTIME",
    "NVTX_EVENTS",
    "ThreadNames",
    "TARGET_INFO_CUDA_STREAM",
    "META_DATA_CAPTURE",
    "META_DATA_EXPORT",
    "TARGET_INFO_GPU",
    "TARGET_INFO_CUDA_DEVICE",
    "TARGET_INFO_CUDA_CONTEXT_INFO",
    "CUPTI_ACTIVITY_KIND_GRAPH_TRACE",
    "CUDA_GRAPH_EVENTS",
    "OSRT_API",
    "OSRT_CALLCHAINS",
    "CUDA_CALLCHAINS",
    "GPU_METRICS",
    "TARGET_INFO_GPU_METRICS",
    "CUDA_GPU_MEMORY_USAGE_EVENTS",
    "CUDA_GPU_MEMORY_POOL_EVENTS",
    "MPI_RANKS",
    "TARGET_INFO_NVTX_CUDA_DEVICE",
    "COMPOSITE_EVENTS",
    "SAMPLING_CALLCHAINS",
};

// The first `n` entries of kExpectedTables, as strings (what the SQLite readers return).
std::vector<std::string> ExpectedTables(size_t n = std::size(kExpectedTables)) {
  return std::vector<std::string>(std::begin(kExpectedTables), std::begin(kExpectedTables) + n);
}

TEST(nsysTablesTest, SchemaVersionConstants) {
  EXPECT_STREQ(kSchemaVersion, "3.25.0");
  EXPECT_EQ(std::string(kSchemaVersionMajor) + "." + kSchemaVersionMinor + "." + kSchemaVersionMicro, kSchemaVersion);
}

TEST(nsysTablesTest, ExactlyTheExpectedTablesInOrder) {
  std::vector<std::string> names;
  for (const TableDef& table : Tables()) {
    names.emplace_back(table.name);
  }
  EXPECT_EQ(names, ExpectedTables());
}

TEST(nsysTablesTest, NamesUniqueAndNoEnumTables) {
  std::set<std::string> seen;
  for (const TableDef& table : Tables()) {
    EXPECT_TRUE(seen.insert(std::string(table.name)).second) << "duplicate " << table.name;
    EXPECT_NE(table.name.substr(0, 5), "ENUM_") << table.name;
  }
  EXPECT_EQ(seen.size(), 39u);
}

// Each DDL runs on its own in a fresh database and creates exactly one table, the one it is listed under, with no
// index beyond what a composite primary key implies.
TEST(nsysTablesTest, EveryDdlExecutesAndCreatesExactlyItsTable) {
  for (const TableDef& table : Tables()) {
    SCOPED_TRACE(std::string(table.name));
    Db db = testing::OpenMemory();
    ASSERT_NE(db, nullptr);
    EXPECT_EQ(testing::Exec(db.get(), std::string(table.create_sql)), "");
    EXPECT_EQ(testing::SchemaNames(db.get(), "table"), std::vector<std::string>{std::string(table.name)});
    EXPECT_TRUE(table.create_sql.starts_with("CREATE TABLE " + std::string(table.name) + " ("));
    EXPECT_EQ(table.create_sql.find(';'), std::string_view::npos);
    EXPECT_EQ(table.create_sql.find("REFERENCES"), std::string_view::npos);
    EXPECT_FALSE(testing::TableInfo(db.get(), table.name).empty());
  }
}

TEST(nsysTablesTest, FindTableFindsEachAndOnlyThose) {
  for (const TableDef& table : Tables()) {
    EXPECT_EQ(FindTable(table.name), &table) << table.name;
  }
  EXPECT_EQ(FindTable(""), nullptr);
  EXPECT_EQ(FindTable("NO_SUCH_TABLE"), nullptr);
  EXPECT_EQ(FindTable("stringids"), nullptr);  // exact, case-sensitive
  EXPECT_EQ(FindTable("CUPTI_ACTIVITY_KIND_KERNEL "), nullptr);
  EXPECT_EQ(FindTable("ENUM_CUDA_MEM_KIND"), nullptr);  // ENUM tables live in EnumTables()
  EXPECT_EQ(FindTable("OSRT_ARGUMENTS"), nullptr);      // not a table gtrace writes (no OS call arguments)
}

TEST(nsysTablesTest, CreateTableCreatesAllIntoOneDatabase) {
  Db db = testing::OpenMemory();
  ASSERT_NE(db, nullptr);
  for (const TableDef& table : Tables()) {
    gt::Status status = CreateTable(db.get(), table.name);
    EXPECT_TRUE(status.ok()) << table.name << ": " << status.message();
  }
  EXPECT_EQ(testing::SchemaNames(db.get(), "table"), ExpectedTables());
}

TEST(nsysTablesTest, CreateTableRejectsUnknownDuplicateAndNull) {
  Db db = testing::OpenMemory();
  ASSERT_NE(db, nullptr);

  gt::Status unknown = CreateTable(db.get(), "NO_SUCH_TABLE");
  EXPECT_FALSE(unknown.ok());
  EXPECT_NE(unknown.message().find("unknown table 'NO_SUCH_TABLE'"), std::string::npos) << unknown.message();

  gt::Status enum_table = CreateTable(db.get(), "ENUM_CUDA_MEM_KIND");
  EXPECT_FALSE(enum_table.ok());
  EXPECT_NE(enum_table.message().find("WriteEnumTables"), std::string::npos) << enum_table.message();
  EXPECT_TRUE(testing::SchemaNames(db.get(), "table").empty());

  ASSERT_TRUE(CreateTable(db.get(), "StringIds").ok());
  gt::Status again = CreateTable(db.get(), "StringIds");
  EXPECT_FALSE(again.ok());
  EXPECT_NE(again.message().find("already exists"), std::string::npos) << again.message();

  EXPECT_FALSE(CreateTable(nullptr, "StringIds").ok());
}

// nsys writes no indexes, triggers or views; the only index SQLite adds by itself is the one behind
// CUDA_CALLCHAINS's, OSRT_CALLCHAINS's and SAMPLING_CALLCHAINS's composite PRIMARY KEY (id, stackDepth),
// as in real exports.
TEST(nsysTablesTest, FullSchemaHasNoIndexTriggerOrView) {
  Db db = testing::OpenMemory();
  ASSERT_NE(db, nullptr);
  gt::Status enums = WriteEnumTables(db.get());
  ASSERT_TRUE(enums.ok()) << enums.message();
  for (const TableDef& table : Tables()) {
    ASSERT_TRUE(CreateTable(db.get(), table.name).ok()) << table.name;
  }
  EXPECT_EQ(testing::SchemaNames(db.get(), "table").size(), 39u + 24u);
  EXPECT_TRUE(testing::SchemaNames(db.get(), "trigger").empty());
  EXPECT_TRUE(testing::SchemaNames(db.get(), "view").empty());
  EXPECT_EQ(testing::QueryInt(db.get(), "SELECT count(*) FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL"),
            0);
  EXPECT_EQ(testing::SchemaNames(db.get(), "index"),
            (std::vector<std::string>{"sqlite_autoindex_OSRT_CALLCHAINS_1", "sqlite_autoindex_CUDA_CALLCHAINS_1",
                                      "sqlite_autoindex_SAMPLING_CALLCHAINS_1"}));
}

// ---- Documentation-only tables: no real export has them, so their shape is pinned here as transcribed from the
// SQLite Schema Reference (see nsys_tables.cc for sources). Catches accidental edits of the DDL.

Column Col(int64_t cid, const char* name, const char* type, int64_t notnull, int64_t pk = 0) {
  return Column{cid, name, type, notnull, std::nullopt, pk};
}

TEST(nsysTablesTest, DocumentedTablesHaveDocumentedColumns) {
  const std::map<std::string, std::vector<Column>> expected = {
      {"CUDA_CALLCHAINS",
       {Col(0, "id", "INTEGER", 1, 1), Col(1, "symbol", "INTEGER", 1), Col(2, "module", "INTEGER", 1),
        Col(3, "unresolved", "INTEGER", 0), Col(4, "originalIP", "INTEGER", 0), Col(5, "stackDepth", "INTEGER", 1, 2)}},
      {"GPU_METRICS",
       {Col(0, "rawTimestamp", "INTEGER", 1), Col(1, "timestamp", "INTEGER", 1), Col(2, "typeId", "INTEGER", 1),
        Col(3, "metricId", "INTEGER", 1), Col(4, "value", "INTEGER", 1)}},
      {"TARGET_INFO_GPU_METRICS",
       {Col(0, "typeId", "INTEGER", 1), Col(1, "sourceId", "INTEGER", 1), Col(2, "typeName", "TEXT", 1),
        Col(3, "metricId", "INTEGER", 1), Col(4, "metricName", "TEXT", 1)}},
      {"CUDA_GPU_MEMORY_USAGE_EVENTS",
       {Col(0, "start", "INTEGER", 1), Col(1, "globalPid", "INTEGER", 1), Col(2, "deviceId", "INTEGER", 1),
        Col(3, "contextId", "INTEGER", 1), Col(4, "address", "INTEGER", 1), Col(5, "pc", "INTEGER", 1),
        Col(6, "bytes", "INTEGER", 1), Col(7, "memKind", "INTEGER", 1), Col(8, "memoryOperationType", "INTEGER", 1),
        Col(9, "name", "TEXT", 0), Col(10, "correlationId", "INTEGER", 0), Col(11, "streamId", "INTEGER", 0),
        Col(12, "localMemoryPoolAddress", "INTEGER", 0), Col(13, "localMemoryPoolReleaseThreshold", "INTEGER", 0),
        Col(14, "localMemoryPoolSize", "INTEGER", 0), Col(15, "localMemoryPoolUtilizedSize", "INTEGER", 0),
        Col(16, "importedMemoryPoolAddress", "INTEGER", 0), Col(17, "importedMemoryPoolProcessId", "INTEGER", 0)}},
      {"CUDA_GPU_MEMORY_POOL_EVENTS",
       {Col(0, "start", "INTEGER", 1), Col(1, "globalPid", "INTEGER", 1), Col(2, "deviceId", "INTEGER", 1),
        Col(3, "address", "INTEGER", 1), Col(4, "operationType", "INTEGER", 1), Col(5, "poolType", "INTEGER", 1),
        Col(6, "correlationId", "INTEGER", 0), Col(7, "minBytesToKeep", "INTEGER", 0),
        Col(8, "localMemoryPoolReleaseThreshold", "INTEGER", 0), Col(9, "localMemoryPoolSize", "INTEGER", 0),
        Col(10, "localMemoryPoolUtilizedSize", "INTEGER", 0)}},
      {"MPI_RANKS", {Col(0, "globalTid", "INTEGER", 1), Col(1, "rank", "INTEGER", 1)}},
      {"COMPOSITE_EVENTS",
       {Col(0, "id", "INTEGER", 1, 1), Col(1, "start", "INTEGER", 1), Col(2, "cpu", "INTEGER", 0),
        Col(3, "threadState", "INTEGER", 0), Col(4, "globalTid", "INTEGER", 0), Col(5, "cpuCycles", "INTEGER", 1)}},
      {"SAMPLING_CALLCHAINS",
       {Col(0, "id", "INTEGER", 1, 1), Col(1, "symbol", "INTEGER", 1), Col(2, "module", "INTEGER", 1),
        Col(3, "kernelMode", "INTEGER", 0), Col(4, "thumbCode", "INTEGER", 0), Col(5, "unresolved", "INTEGER", 0),
        Col(6, "specialEntry", "INTEGER", 0), Col(7, "originalIP", "INTEGER", 0), Col(8, "unwindMethod", "INTEGER", 0),
        Col(9, "stackDepth", "INTEGER", 1, 2)}},
      {"TARGET_INFO_NVTX_CUDA_DEVICE",
       {Col(0, "name", "TEXT", 1), Col(1, "hwId", "INTEGER", 1), Col(2, "vmId", "INTEGER", 1),
        Col(3, "deviceId", "INTEGER", 1)}},
  };
  Db db = testing::OpenMemory();
  ASSERT_NE(db, nullptr);
  for (const auto& [name, columns] : expected) {
    ASSERT_TRUE(CreateTable(db.get(), name).ok()) << name;
    EXPECT_EQ(testing::ColumnDiff(testing::TableInfo(db.get(), name), columns), "") << name;
  }
}

// ---- Comparison with real nsys exports.

struct Reference {
  std::string label;  // file name, reported per table
  Db db;
};

// Every table of Tables() that some reference holds must have the same `pragma table_info` (cid, name, type,
// notnull, dflt_value, pk) as the first reference holding it, in the order: 3.25.0 DDL dump, 3.24.14 export, 3.24.0
// export and 3.24.0 DDL dump (the last two have identical schemas; both are checked). All four files are required:
// with one missing the precedence would silently change (3.24.x KERNEL differs from 3.25.0).
TEST(nsysTablesReferenceTest, TableInfoEqualsReference) {
  std::string why;
  const auto schema325 = testing::ReferenceFile(testing::kSchema3250Sql, &why);
  const auto mock = schema325 ? testing::ReferenceFile(testing::kMockDb, &why) : std::nullopt;
  const auto flameox = mock ? testing::ReferenceFile(testing::kFlameoxDb, &why) : std::nullopt;
  const auto schema324 = flameox ? testing::ReferenceFile(testing::kSchema3240Sql, &why) : std::nullopt;
  if (!schema324) {
    GTEST_SKIP() << why;
  }

  std::vector<Reference> tiers[3];
  std::string error;
  tiers[0].push_back({testing::kSchema3250Sql, testing::LoadSqlFile(*schema325, &error)});
  ASSERT_NE(tiers[0].back().db, nullptr) << error;
  tiers[1].push_back({testing::kMockDb, testing::OpenReadOnly(*mock, &error)});
  ASSERT_NE(tiers[1].back().db, nullptr) << error;
  tiers[2].push_back({testing::kFlameoxDb, testing::OpenReadOnly(*flameox, &error)});
  ASSERT_NE(tiers[2].back().db, nullptr) << error;
  tiers[2].push_back({testing::kSchema3240Sql, testing::LoadSqlFile(*schema324, &error)});
  ASSERT_NE(tiers[2].back().db, nullptr) << error;

  Db ours = testing::OpenMemory();
  ASSERT_NE(ours, nullptr);
  std::map<std::string, std::string> checked;  // table -> label of the first reference that held it
  for (const TableDef& table : Tables()) {
    ASSERT_TRUE(CreateTable(ours.get(), table.name).ok()) << table.name;
    const std::vector<Column> actual = testing::TableInfo(ours.get(), table.name);
    ASSERT_FALSE(actual.empty()) << table.name;
    for (const auto& tier : tiers) {
      bool found = false;
      for (const Reference& ref : tier) {
        if (!testing::HasTable(ref.db.get(), table.name)) {
          continue;
        }
        found = true;
        checked.emplace(std::string(table.name), ref.label);
        EXPECT_EQ(testing::ColumnDiff(actual, testing::TableInfo(ref.db.get(), table.name)), "")
            << table.name << " vs " << ref.label;
      }
      if (found) {
        break;
      }
    }
  }

  // A silently skipped comparison would show up here.
  EXPECT_EQ(checked.size(), 30u);
  std::map<std::string, int> per_source;
  for (const auto& [table, label] : checked) {
    ++per_source[label];
  }
  EXPECT_EQ(per_source[testing::kSchema3250Sql], 23);
  EXPECT_EQ(per_source[testing::kMockDb], 3);
  EXPECT_EQ(per_source[testing::kFlameoxDb], 4);  // + OSRT_API, OSRT_CALLCHAINS
  EXPECT_EQ(checked["TARGET_INFO_GPU"], testing::kMockDb);
  EXPECT_EQ(checked["TARGET_INFO_CUDA_DEVICE"], testing::kMockDb);
  EXPECT_EQ(checked["TARGET_INFO_CUDA_CONTEXT_INFO"], testing::kMockDb);
  EXPECT_EQ(checked["CUPTI_ACTIVITY_KIND_GRAPH_TRACE"], testing::kFlameoxDb);
  EXPECT_EQ(checked["CUDA_GRAPH_EVENTS"], testing::kFlameoxDb);
  for (const char* doc_only :
       {"CUDA_CALLCHAINS", "GPU_METRICS", "TARGET_INFO_GPU_METRICS", "CUDA_GPU_MEMORY_USAGE_EVENTS",
        "CUDA_GPU_MEMORY_POOL_EVENTS", "MPI_RANKS", "TARGET_INFO_NVTX_CUDA_DEVICE", "COMPOSITE_EVENTS",
        "SAMPLING_CALLCHAINS"}) {
    EXPECT_EQ(checked.count(doc_only), 0u) << doc_only << " now has a reference; review its source comment";
  }
}

// The 3.25.0 DDL dump holds exactly the 23 non-ENUM tables we take from it, and nothing we lack.
TEST(nsysTablesReferenceTest, AllNonEnumTablesOf3250AreCovered) {
  std::string why;
  const auto path = testing::ReferenceFile(testing::kSchema3250Sql, &why);
  if (!path) {
    GTEST_SKIP() << why;
  }
  std::string error;
  Db ref = testing::LoadSqlFile(*path, &error);
  ASSERT_NE(ref, nullptr) << error;
  std::vector<std::string> ref_tables;
  for (const std::string& name : testing::SchemaNames(ref.get(), "table")) {
    if (!name.starts_with("ENUM_")) {
      ref_tables.push_back(name);
    }
  }
  EXPECT_EQ(ref_tables, ExpectedTables(23));
}

}  // namespace
}  // namespace gt::nsys
