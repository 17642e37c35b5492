// The merge catalog covers every table gtrace may write: a table without a rule, or a time/id-like
// column nobody classified, fails here before a merge could copy it wrong.
#include "tools/export/merge_catalog.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <set>

#include "tests/common/rank_simulator.h"
#include "tests/common/test_util.h"
#include "tools/export/multi_export.h"
#include "tools/nsys/nsys_schema.h"

namespace gt::exporter {
namespace {

void CheckTable(test::Db& db, const std::string& table) {
  const TableRule* rule = FindTableRule(table);
  ASSERT_NE(rule, nullptr) << "no merge rule for " << table << " (tools/export/merge_catalog.cc)";
  if (rule->mode != TableMode::kCopy)
    return;
  std::vector<std::string> cols = db.Rows("SELECT name FROM pragma_table_info('" + table + "')");
  std::set<std::string> have(cols.begin(), cols.end());
  std::set<std::string> listed;
  bool times = false;
  for (const ColumnRule& c : rule->columns) {
    listed.insert(std::string(c.column));
    EXPECT_EQ(have.count(std::string(c.column)), 1u) << table << "." << c.column << " is not a column";
    times |= c.kind == ColumnKind::kTime || c.kind == ColumnKind::kTimeOrZero;
  }
  for (const std::string& c : cols) {
    if (LooksLikeTimeOrId(c))
      EXPECT_EQ(listed.count(c), 1u) << table << "." << c << " is not classified";
  }
  if (times) {
    EXPECT_EQ(have.count(std::string(rule->process_key)), 1u) << table << ": times need a process key column";
  }
}

TEST(MergeCatalog, EveryNsysTableHasARule) {
  test::TempDir dir;
  test::Db db(dir.File("all.sqlite"), false);
  for (const nsys::TableDef& t : nsys::Tables()) {
    ASSERT_TRUE(nsys::CreateTable(db.handle(), t.name).ok()) << t.name;
    CheckTable(db, std::string(t.name));
  }
  EXPECT_EQ(FindTableRule("ENUM_CUDA_MEMCPY_OPER")->mode, TableMode::kSkip);
  EXPECT_EQ(FindTableRule("SOMETHING_NEW"), nullptr);
}

TEST(MergeCatalog, EveryGtraceTableOfAnNcclExportHasARule) {
  test::TempDir dir;
  test::SimConfig c;
  c.ranks = 2;
  c.ranks_per_host = 1;
  c.steps = 3;
  c.cuda_api = true;
  test::SimTruth truth;
  test::SimulateRanks(c, dir.path(), &truth);
  MultiExportOptions o;
  o.inputs = truth.paths;
  o.output = dir.File("x.sqlite");
  MultiExportResult r;
  ASSERT_TRUE(ExportMany(o, &r).ok());
  test::Db db(o.output);
  std::vector<std::string> tables = db.Rows("SELECT name FROM sqlite_master WHERE type = 'table'");
  int ours = 0;
  for (const std::string& t : tables) {
    CheckTable(db, t);
    ours += t.rfind("GTRACE_", 0) == 0 ? 1 : 0;
  }
  EXPECT_GE(ours, 7);  // ranks, alignment and the NCCL tables
}

}  // namespace
}  // namespace gt::exporter
