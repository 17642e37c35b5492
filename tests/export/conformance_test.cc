// Our export against the nsys 3.25.0 schema: every table we create has nsys's columns (names,
// order, types, NOT NULL, primary key), the ENUM rows are nsys's, META_DATA_EXPORT has nsys's keys in
// nsys's order, and there are no indexes. Reference files are read when present (skip otherwise).
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "collector/schema_fields.h"
#include "tests/common/synthetic_stream.h"
#include "tests/common/test_util.h"
#include "tools/export/exporter.h"
#include "tools/nsys/nsys_schema.h"

namespace gt {
namespace {

std::string ExportSample(const test::TempDir& dir) {
  test::SyntheticStream s(91186, 1000, 1700000000000000000ull);
  s.info().rank = {2, 0, 4, "RANK"};
  s.BeginChunk(1, 91186, 1000);
  s.Thread(91186, "python");
  test::NvtxSpec push;
  push.kind = field::enums::kNvtxPush;
  push.ts_ns = 1000;
  push.text = "step";
  s.Nvtx(push);
  test::NvtxSpec pop;
  pop.kind = field::enums::kNvtxPop;
  pop.ts_ns = 2000;
  s.Nvtx(pop);
  s.Drops(field::enums::kDropThreadBuffer, 91186, 3, 1500);
  s.EndChunk();
  s.Close();
  s.WriteTo(dir.File("s.gtrace"));
  exporter::ExportOptions o;
  o.inputs = {dir.File("s.gtrace")};
  o.output = dir.File("s.sqlite");
  exporter::ExportResult r;
  Status st = exporter::ExportSqlite(o, &r);
  EXPECT_TRUE(st.ok()) << st.message();
  return o.output;
}

std::vector<std::string> TableInfo(test::Db& db, const std::string& table) {
  return db.Rows("SELECT cid, name, type, \"notnull\", dflt_value, pk FROM pragma_table_info('" + table + "')");
}

TEST(Conformance, EveryTableHasTheNsysColumns) {
  test::TempDir dir;
  test::Db ours(ExportSample(dir));
  ASSERT_TRUE(ours.ok());
  std::vector<std::string> tables = ours.Rows("SELECT name FROM sqlite_master WHERE type='table' ORDER BY name");
  ASSERT_GE(tables.size(), 24u + 11u);
  test::Db fresh(dir.File("fresh.sqlite"), /*read_only=*/false);
  ASSERT_TRUE(nsys::WriteEnumTables(fresh.handle()).ok());
  for (const std::string& t : tables) {
    if (t.rfind("GTRACE_", 0) == 0) continue;  // our own tables (prefixed), e.g. GTRACE_RANKS
    if (t.rfind("ENUM_", 0) != 0) {
      ASSERT_NE(nsys::FindTable(t), nullptr) << "we created a table nsys does not have: " << t;
      ASSERT_TRUE(nsys::CreateTable(fresh.handle(), t).ok()) << t;
    }
    EXPECT_EQ(TableInfo(ours, t), TableInfo(fresh, t)) << t;
  }
  // The tables every export has, by name.
  for (const char* t : {"StringIds", "ThreadNames", "PROCESSES", "ANALYSIS_DETAILS", "META_DATA_CAPTURE",
                        "META_DATA_EXPORT", "TARGET_INFO_SYSTEM_ENV", "TARGET_INFO_SESSION_START_TIME", "NVTX_EVENTS",
                        "DIAGNOSTIC_EVENT", "MPI_RANKS"}) {
    EXPECT_EQ(ours.Int(std::string("SELECT count(*) FROM sqlite_master WHERE type='table' AND name='") + t + "'"), 1)
        << t;
  }
  EXPECT_EQ(ours.Int("SELECT count(*) FROM sqlite_master WHERE type IN ('index','trigger','view')"), 0);
  // ENUM tables: all 24, with every row.
  EXPECT_EQ(ours.Int("SELECT count(*) FROM sqlite_master WHERE type='table' AND name LIKE 'ENUM%'"), 24);
  int64_t rows = 0;
  for (const auto& e : nsys::EnumTables()) rows += *ours.Int("SELECT count(*) FROM " + std::string(e.name));
  EXPECT_EQ(rows, 386);
  // ids: StringIds dense from 0; globalPid = globalTid with tid bits cleared (worked example).
  EXPECT_EQ(ours.Int("SELECT min(id) FROM StringIds"), 0);
  EXPECT_EQ(ours.Int("SELECT max(id) + 1 - count(*) FROM StringIds"), 0);
  EXPECT_EQ(ours.Int("SELECT globalTid FROM ThreadNames"), 0x1016432016432);
  EXPECT_EQ(ours.Int("SELECT globalPid FROM PROCESSES"), 0x1016432000000);
  EXPECT_EQ(ours.Rows("SELECT globalTid, rank FROM MPI_RANKS"), (std::vector<std::string>{"283004824020018|2"}));
  EXPECT_EQ(ours.Rows("SELECT name, value FROM TARGET_INFO_SYSTEM_ENV WHERE name IN ('Hostname','CpuCores') ORDER BY "
                      "nameEnum"),
            (std::vector<std::string>{"CpuCores|4", "Hostname|testhost"}));
}

TEST(Conformance, MetaDataExportKeysAndVersion) {
  test::TempDir dir;
  test::Db ours(ExportSample(dir));
  EXPECT_EQ(ours.Rows("SELECT value FROM META_DATA_EXPORT WHERE name LIKE 'EXPORT_SCHEMA_VERSION%' AND name != "
                      "'EXPORT_SCHEMA_VERSION_CKSUM' ORDER BY rowid"),
            (std::vector<std::string>{"3.25.0", "3", "25", "0"}));
  EXPECT_EQ(ours.Text("SELECT value FROM META_DATA_EXPORT WHERE name = 'EXPORT_PRODUCT_NAME'"), "gtrace");
  std::string ref = test::ReferenceDir();
  if (ref.empty()) GTEST_SKIP() << "reference exports not available";
  test::Db nsys_db(ref + "/nsysai-mock-nsys-2026.1.1.sqlite");
  if (!nsys_db.ok()) GTEST_SKIP() << "nsysai-mock-nsys-2026.1.1.sqlite not available";
  std::vector<std::string> want = nsys_db.Rows("SELECT name FROM META_DATA_EXPORT ORDER BY rowid");
  ASSERT_EQ(want.size(), 34u);
  EXPECT_EQ(ours.Rows("SELECT name FROM META_DATA_EXPORT ORDER BY rowid"), want);
}

TEST(Conformance, TablesEqualThe3250ReferenceDdl) {
  std::string ref = test::ReferenceDir();
  if (ref.empty()) GTEST_SKIP() << "reference exports not available";
  std::ifstream in(ref + "/nsys-3.25.0-schema.sql");
  if (!in) GTEST_SKIP() << "nsys-3.25.0-schema.sql not available";
  std::stringstream ddl;
  ddl << in.rdbuf();
  test::TempDir dir;
  test::Db reference(dir.File("ref.sqlite"), false);
  ASSERT_EQ(sqlite3_exec(reference.handle(), ddl.str().c_str(), nullptr, nullptr, nullptr), SQLITE_OK);
  test::Db ours(ExportSample(dir));
  int compared = 0;
  for (const std::string& t : ours.Rows("SELECT name FROM sqlite_master WHERE type='table'")) {
    std::vector<std::string> want = TableInfo(reference, t);
    if (want.empty()) continue;  // a table of ours the 3.25.0 sample did not contain
    EXPECT_EQ(TableInfo(ours, t), want) << t;
    ++compared;
  }
  // Every table of the sample export except MPI_RANKS (not in that capture) and our GTRACE_* tables
  // is in the reference.
  EXPECT_EQ(compared, static_cast<int>(*ours.Int("SELECT count(*) FROM sqlite_master WHERE type='table' AND name NOT "
                                                 "LIKE 'GTRACE\\_%' ESCAPE '\\'")) - 1);
}

}  // namespace
}  // namespace gt
