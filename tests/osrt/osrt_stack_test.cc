// OS runtime backtraces end to end (issue 18, --osrt-backtrace-threshold): tests/osrt/programs/
// osrt_stacks (built -O0 -g with frame pointers) under LD_PRELOAD=libgtrace.so with -t osrt, exported
// by the gtrace CLI, asserted with SQL on OSRT_API and OSRT_CALLCHAINS:
//  - the planted pthread_mutex_lock, read and nanosleep of the main thread each have a chain whose
//    frames are, innermost first, the planted function, RunPlanted and main, at the lines of the
//    `// LINE:` markers (no gtrace frame on top: depth 0 is the libc function's caller);
//  - with the record threshold 0 every call is a row, and exactly the rows at least the backtrace
//    threshold long have a chain (callchainId != 0), the others 0;
//  - OSRT_CALLCHAINS has nsys's columns and values (kernelMode 0, thumbCode 0, unresolved 0,
//    specialEntry/unwindMethod NULL, originalIP the return address); the depth limit cuts stacks;
//  - without the backtrace threshold there is no chain and libunwind is not loaded.
// File paths in the symbols may be relative (ccache's CCACHE_BASEDIR): only their ends are compared.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "tests/common/test_util.h"

namespace gt {
namespace {

using test::Db;
using test::RunOptions;
using test::RunProgram;
using test::RunResult;
using test::TempDir;

constexpr int64_t kMs = 1000000;

int MarkerLine(const std::string& marker) {
  std::string text = test::ReadFile(test::SourceDir() + "/tests/osrt/programs/osrt_stacks.cc");
  std::string needle = "// LINE: " + marker;
  int line = 1;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text.compare(i, needle.size(), needle) == 0 && (i + needle.size() == text.size() || text[i + needle.size()] == '\n'))
      return line;
    if (text[i] == '\n')
      ++line;
  }
  return 0;
}

std::string Export(const TempDir& dir, const std::map<std::string, std::string>& env, RunResult* run) {
  RunOptions o = test::TracedRun(dir);
  o.env["GTRACE_TRACE"] = "osrt";
  o.unset_env.push_back("DEBUGINFOD_URLS");
  o.unset_env.push_back("GTRACE_SYMBOL_PATH");
  for (const auto& [k, v] : env)
    o.env[k] = v;
  *run = RunProgram({test::SamplePath("osrt_stacks")}, o);
  std::string db = dir.File("out.sqlite");
  std::vector<std::string> cmd = {test::CliPath(), "export", "-o", db};
  for (const std::string& s : dir.Find(".gtrace"))
    cmd.push_back(s);
  RunOptions eo;
  eo.unset_env = {"DEBUGINFOD_URLS", "GTRACE_SYMBOL_PATH"};
  RunResult ex = RunProgram(cmd, eo);
  EXPECT_EQ(ex.exit_code, 0) << ex.err;
  return db;
}

// The chain of main's longest call of `function` as "symbol" lines, innermost first.
std::vector<std::string> MainChain(Db& db, const std::string& function) {
  return db.Rows(
      "SELECT s.value FROM OSRT_CALLCHAINS c JOIN StringIds s ON s.id = c.symbol WHERE c.id = (SELECT a.callchainId "
      "FROM OSRT_API a JOIN StringIds n ON n.id = a.nameId WHERE n.value = '" + function +
      "' AND a.callchainId != 0 AND (a.globalTid & 16777215) = ((a.globalTid >> 24) & 16777215) ORDER BY "
      "a.\"end\" - a.start DESC LIMIT 1) ORDER BY c.stackDepth");
}

// "Name() at <any path>/osrt_stacks.cc:LINE"
::testing::AssertionResult IsFrame(const std::string& symbol, const std::string& function, const std::string& marker) {
  std::string tail = "osrt_stacks.cc:" + std::to_string(MarkerLine(marker));
  bool ok = symbol.rfind(function + " at ", 0) == 0 && symbol.size() >= tail.size() &&
            symbol.compare(symbol.size() - tail.size(), tail.size(), tail) == 0;
  if (ok)
    return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "'" << symbol << "' is not '" << function << " at ..." << tail << "'";
}

TEST(OsrtStacks, PlantedCallsNameTheirCallersInOrder) {
  TempDir dir;
  RunResult run;
  std::string path = Export(dir, {{"GTRACE_OSRT_THRESHOLD", "0"}, {"GTRACE_OSRT_BACKTRACE_THRESHOLD", "2000000"}}, &run);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.out, "done\n");
  Db db(path);
  ASSERT_TRUE(db.ok()) << db.error();

  struct Planted {
    const char* libc;
    const char* stage;
    const char* marker;
    const char* run_marker;
  };
  for (const Planted& p : {Planted{"pthread_mutex_lock", "LockStage()", "lock", "run-lock"},
                           Planted{"read", "ReadStage()", "read", "run-read"},
                           Planted{"nanosleep", "NapStage()", "nap", "run-nap"}}) {
    SCOPED_TRACE(p.libc);
    std::vector<std::string> chain = MainChain(db, p.libc);
    ASSERT_GE(chain.size(), 3u) << ::testing::PrintToString(chain);
    EXPECT_TRUE(IsFrame(chain[0], p.stage, p.marker));
    EXPECT_TRUE(IsFrame(chain[1], "RunPlanted()", p.run_marker));
    EXPECT_TRUE(IsFrame(chain[2], "main", "main"));
    for (const std::string& s : chain)
      EXPECT_EQ(s.find("libgtrace"), std::string::npos) << s;
  }
  // Every call is a row (threshold 0: the 500 fast lock calls too), and a row has a chain exactly
  // when it lasted the backtrace threshold or longer (a fast call stretched past 2 ms by the
  // scheduler gets one too, which is right).
  EXPECT_GE(db.Int("SELECT count(*) FROM OSRT_API").value_or(0), 500);
  EXPECT_EQ(db.Int("SELECT count(*) FROM OSRT_API WHERE (\"end\" - start >= 2000000) != (callchainId != 0)"), 0);
  // The helpers' long sleeps are chained too, from their thread functions.
  std::vector<std::string> writer = db.Rows(
      "SELECT s.value FROM OSRT_API a JOIN StringIds n ON n.id = a.nameId JOIN OSRT_CALLCHAINS c ON c.id = "
      "a.callchainId JOIN StringIds s ON s.id = c.symbol WHERE n.value = 'clock_nanosleep' AND c.stackDepth = 0");
  ASSERT_EQ(writer.size(), 1u);
  EXPECT_EQ(writer[0].rfind("(anonymous namespace)::Writer(void*) at ", 0), 0u) << writer[0];
  // nsys's column values; every chain id used exists, ids from 1.
  EXPECT_EQ(db.Int("SELECT count(*) FROM OSRT_CALLCHAINS WHERE kernelMode != 0 OR thumbCode != 0 OR specialEntry IS "
                   "NOT NULL OR unwindMethod IS NOT NULL OR originalIP IS NULL OR unresolved IS NULL"),
            0);
  EXPECT_EQ(db.Int("SELECT min(id) FROM OSRT_CALLCHAINS"), 1);
  EXPECT_EQ(db.Int("SELECT count(*) FROM OSRT_API WHERE callchainId != 0 AND callchainId NOT IN (SELECT id FROM "
                   "OSRT_CALLCHAINS)"),
            0);
  EXPECT_EQ(db.Int("SELECT count(*) FROM OSRT_CALLCHAINS c JOIN StringIds s ON s.id = c.symbol JOIN StringIds m ON "
                   "m.id = c.module WHERE c.stackDepth = 0 AND m.value LIKE '%libgtrace%'"),
            0);
  EXPECT_EQ(db.Text("SELECT value FROM META_DATA_CAPTURE WHERE name = 'PROCESS_0:OSRT_BACKTRACE_THRESHOLD'"), "2000000");
  EXPECT_EQ(db.Text("SELECT value FROM META_DATA_CAPTURE WHERE name = 'PROCESS_0:OSRT_BACKTRACE_DEPTH'"), "24");
}

TEST(OsrtStacks, DepthLimitAndOffByDefault) {
  TempDir dir;
  RunResult run;
  std::string path = Export(dir,
                            {{"GTRACE_OSRT_THRESHOLD", "1000000"},
                             {"GTRACE_OSRT_BACKTRACE_THRESHOLD", "0"},
                             {"GTRACE_OSRT_BACKTRACE_DEPTH", "2"}},
                            &run);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  Db db(path);
  ASSERT_TRUE(db.ok()) << db.error();
  std::vector<std::string> chain = MainChain(db, "read");
  ASSERT_EQ(chain.size(), 2u) << ::testing::PrintToString(chain);
  EXPECT_TRUE(IsFrame(chain[0], "ReadStage()", "read"));
  EXPECT_TRUE(IsFrame(chain[1], "RunPlanted()", "run-read"));
  EXPECT_EQ(db.Int("SELECT max(stackDepth) FROM OSRT_CALLCHAINS"), 1);
  EXPECT_EQ(db.Int("SELECT count(*) FROM OSRT_API WHERE callchainId = 0"), 0);  // threshold 0: every recorded call

  // No backtrace threshold: no chains, no table, libunwind never loaded (no unwinder line).
  TempDir plain;
  path = Export(plain, {{"GTRACE_OSRT_THRESHOLD", "1000000"}}, &run);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  Db db2(path);
  ASSERT_TRUE(db2.ok()) << db2.error();
  EXPECT_GE(db2.Int("SELECT count(*) FROM OSRT_API").value_or(0), 5);
  EXPECT_EQ(db2.Int("SELECT count(*) FROM OSRT_API WHERE callchainId != 0"), 0);
  EXPECT_EQ(db2.Int("SELECT count(*) FROM sqlite_master WHERE name = 'OSRT_CALLCHAINS'"), 0);
  EXPECT_EQ(db2.Int("SELECT count(*) FROM META_DATA_CAPTURE WHERE name LIKE '%OSRT_BACKTRACE%'"), 0);
  (void)kMs;
}

// Two runs exported separately, then merged (gtrace export -o merged DB DB): every call keeps its own
// chain (OSRT_CALLCHAINS ids of the second database are offset, 0 stays 0).
TEST(OsrtStacks, MergedDatabasesKeepEachCallsChain) {
  const std::string kCallsWithChains =
      "SELECT n.value || '|' || (a.\"end\" - a.start) || '|' || coalesce((SELECT group_concat(v, ' <- ') FROM "
      "(SELECT s.value AS v FROM OSRT_CALLCHAINS c JOIN StringIds s ON s.id = c.symbol WHERE c.id = a.callchainId "
      "ORDER BY c.stackDepth)), '-') FROM OSRT_API a JOIN StringIds n ON n.id = a.nameId ORDER BY 1";
  TempDir one, two;
  RunResult run;
  std::map<std::string, std::string> env = {{"GTRACE_OSRT_THRESHOLD", "1000000"},
                                            {"GTRACE_OSRT_BACKTRACE_THRESHOLD", "2000000"}};
  std::string a = Export(one, env, &run);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  std::string b = Export(two, env, &run);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  std::vector<std::string> expected;
  for (const std::string& path : {a, b}) {
    Db db(path);
    ASSERT_TRUE(db.ok()) << db.error();
    std::vector<std::string> rows = db.Rows(kCallsWithChains);
    EXPECT_GE(rows.size(), 5u);
    expected.insert(expected.end(), rows.begin(), rows.end());
  }
  std::sort(expected.begin(), expected.end());
  std::string merged = one.File("merged.sqlite");
  RunResult mr = RunProgram({test::CliPath(), "export", "-o", merged, a, b});
  ASSERT_EQ(mr.exit_code, 0) << mr.err;
  Db db(merged);
  ASSERT_TRUE(db.ok()) << db.error();
  std::vector<std::string> got = db.Rows(kCallsWithChains);
  std::sort(got.begin(), got.end());
  EXPECT_EQ(got, expected);
  EXPECT_EQ(db.Int("SELECT count(*) FROM OSRT_API WHERE callchainId != 0 AND callchainId NOT IN (SELECT id FROM "
                   "OSRT_CALLCHAINS)"),
            0);
  EXPECT_GE(db.Int("SELECT count(DISTINCT id) FROM OSRT_CALLCHAINS").value_or(0), 10);  // 5+ per run, not shared
}

}  // namespace
}  // namespace gt
