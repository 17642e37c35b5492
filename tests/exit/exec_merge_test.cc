// The two images of one process around an exec (issue 14 left them exportable only one by one):
// a real traced exec (exit_modes "exec": 40 "before-exec" ranges, execv of itself, 40 "target"
// ranges in the new image) gives two streams with one pid. Exported together — as streams, as the
// directory holding them, or by merging their per-rank databases — they are one process: one
// PROCESSES row and one ThreadNames row (the last image's, as nsys keeps one PID across exec),
// both images' NVTX ranges under that pid in time order, and each part's stream, end reason and
// command line in GTRACE_RANKS and META_DATA_CAPTURE. The same stream twice and streams of one pid
// that overlap in time or where the first did not end by exec are still refused.
#include <gtest/gtest.h>
#include <limits.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <unistd.h>

#include <map>
#include <string>
#include <vector>

#include "tests/common/test_util.h"
#include "tools/stream/stream_reader.h"

namespace gt {
namespace {

using test::Db;
using test::RunProgram;
using test::RunResult;
using test::TempDir;

std::string Program() { return test::SamplePath("exit_modes"); }

std::string RealPath(const std::string& p) {
  char buf[PATH_MAX];
  return realpath(p.c_str(), buf) != nullptr ? buf : p;
}

// One traced run of exit_modes exec 40: the pre-exec and post-exec stream paths and the pid.
struct ExecStreams {
  std::string pre, post;
  int64_t pid = 0;
};

ExecStreams RunExec(const TempDir& dir) {
  test::RunOptions o = test::TracedRun(dir);
  o.timeout_s = 60;
  o.env["GTRACE_EXIT_WAIT_MS"] = "2000";  // a loaded CI machine (see exit_test.cc)
  RunResult r = RunProgram({Program(), "exec", "40"}, o);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  ExecStreams s;
  std::vector<std::string> files = dir.Find(".gtrace");
  EXPECT_EQ(files.size(), 2u);
  for (const std::string& f : files) {
    stream::StreamReader reader;
    if (!reader.Open(f).ok()) {
      ADD_FAILURE() << f;
      continue;
    }
    s.pid = reader.header().pid();
    bool is_post = false;
    for (const std::string& a : reader.header().command_line())
      is_post = is_post || a == "target";
    (is_post ? s.post : s.pre) = f;
  }
  EXPECT_FALSE(s.pre.empty());
  EXPECT_FALSE(s.post.empty());
  return s;
}

RunResult Export(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {test::CliPath(), "export"};
  argv.insert(argv.end(), args.begin(), args.end());
  return RunProgram(argv);
}

std::string Base(const std::string& p) { return p.substr(p.rfind('/') + 1); }

// Every row a merged database of both images must hold.
void ExpectOneProcessTwoImages(const std::string& db_path, const ExecStreams& s) {
  SCOPED_TRACE(db_path);
  Db db(db_path);
  ASSERT_TRUE(db.ok()) << db.error();
  std::string pid = std::to_string(s.pid);
  EXPECT_EQ(db.Rows("SELECT pid, name FROM PROCESSES"),
            (std::vector<std::string>{pid + "|" + RealPath(Program())}));
  EXPECT_EQ(db.Int("SELECT count(DISTINCT globalPid) FROM PROCESSES"), 1);
  EXPECT_EQ(db.Rows("SELECT (t.globalTid >> 24) & 16777215, t.globalTid & 16777215, s.value FROM ThreadNames t "
                    "JOIN StringIds s ON s.id = t.nameId"),
            (std::vector<std::string>{pid + "|" + pid + "|exit_modes"}));
  // NVTX ranges of each image, all on the process's one main thread, the first image's before the second's.
  EXPECT_EQ(db.Rows("SELECT (globalTid >> 24) & 16777215, globalTid & 16777215, "
                    "COALESCE(text, (SELECT value FROM StringIds WHERE id = textId)) AS n, count(*) "
                    "FROM NVTX_EVENTS WHERE eventType = 59 GROUP BY 1, 2, 3 ORDER BY min(start)"),
            (std::vector<std::string>{pid + "|" + pid + "|before-exec|40", pid + "|" + pid + "|target|40"}));
  EXPECT_EQ(db.Int("SELECT (SELECT max(end) FROM NVTX_EVENTS WHERE text = 'before-exec') < "
                   "(SELECT min(start) FROM NVTX_EVENTS WHERE text = 'target')"),
            1);
  EXPECT_EQ(db.Int("SELECT count(*) FROM NVTX_EVENTS WHERE globalTid >> 24 & 16777215 != " + pid), 0);
  // Each part: its stream, how it ended, in start order.
  std::vector<std::string> parts;
  for (const std::string& row :
       db.Rows("SELECT pid, endReason, streamFile FROM GTRACE_RANKS ORDER BY startMonotonicNs")) {
    parts.push_back(row.substr(0, row.rfind('|') + 1) + Base(row.substr(row.rfind('|') + 1)));
  }
  EXPECT_EQ(parts, (std::vector<std::string>{pid + "|exec|" + Base(s.pre), pid + "|exit|" + Base(s.post)}));
  EXPECT_EQ(db.Int("SELECT count(*) FROM GTRACE_RANKS WHERE endMonotonicNs IS NULL"), 0);
  EXPECT_EQ(db.Int("SELECT (SELECT endMonotonicNs FROM GTRACE_RANKS WHERE endReason = 'exec') <= "
                   "(SELECT startMonotonicNs FROM GTRACE_RANKS WHERE endReason = 'exit')"),
            1);
  // The command line (the name of each part) beside its end reason, per PROCESS_<n>.
  std::map<std::string, std::string> cmd, reason;
  for (const std::string& row : db.Rows("SELECT name, value FROM META_DATA_CAPTURE WHERE name LIKE 'PROCESS_%'")) {
    size_t colon = row.find(':'), bar = row.find('|');
    std::string n = row.substr(0, colon), key = row.substr(colon + 1, bar - colon - 1);
    if (key == "COMMAND_LINE")
      cmd[n] = row.substr(bar + 1);
    if (key == "END_REASON")
      reason[n] = row.substr(bar + 1);
  }
  std::map<std::string, std::string> by_reason;
  for (const auto& [n, r] : reason)
    by_reason[r] = cmd[n];
  EXPECT_EQ(reason.size(), 2u);
  EXPECT_EQ(by_reason, (std::map<std::string, std::string>{{"exec", Program() + " exec 40"},
                                                          {"exit", RealPath(Program()) + " target 40"}}));
  EXPECT_EQ(db.Rows("SELECT text FROM DIAGNOSTIC_EVENT"),
            (std::vector<std::string>{"process " + pid + " ended by exec; its stream is complete"}));
}

TEST(ExecMerge, BothStreamsExportTogether) {
  TempDir dir;
  ExecStreams s = RunExec(dir);
  // Given in either order: the same database.
  for (const auto& inputs : {std::vector<std::string>{s.pre, s.post}, std::vector<std::string>{s.post, s.pre}}) {
    std::string out = dir.File("both-" + Base(inputs[0]) + ".sqlite");
    RunResult e = Export({"-o", out, inputs[0], inputs[1]});
    ASSERT_EQ(e.exit_code, 0) << e.err;
    ExpectOneProcessTwoImages(out, s);
  }
}

TEST(ExecMerge, DirectoryExports) {
  TempDir dir;
  ExecStreams s = RunExec(dir);
  TempDir out;
  RunResult e = Export({"-o", out.File("dir.sqlite"), dir.path()});
  ASSERT_EQ(e.exit_code, 0) << e.err;
  ExpectOneProcessTwoImages(out.File("dir.sqlite"), s);
}

TEST(ExecMerge, PerRankDatabasesMerge) {
  TempDir dir;
  ExecStreams s = RunExec(dir);
  // One export session (--per-rank), and two separate exports (two sessions).
  RunResult pr = Export({"--per-rank", "-o", dir.File("ranks"), s.pre, s.post});
  ASSERT_EQ(pr.exit_code, 0) << pr.err;
  std::vector<std::string> dbs = TempDir::ListDir(dir.File("ranks"));
  ASSERT_EQ(dbs.size(), 2u);
  RunResult m = Export({"-o", dir.File("merged.sqlite"), dir.File("ranks/" + dbs[0]), dir.File("ranks/" + dbs[1])});
  ASSERT_EQ(m.exit_code, 0) << m.err;
  ExpectOneProcessTwoImages(dir.File("merged.sqlite"), s);

  ASSERT_EQ(Export({"-o", dir.File("pre.sqlite"), s.pre}).exit_code, 0);
  ASSERT_EQ(Export({"-o", dir.File("post.sqlite"), s.post}).exit_code, 0);
  RunResult m2 = Export({"-o", dir.File("merged2.sqlite"), dir.File("post.sqlite"), dir.File("pre.sqlite")});
  ASSERT_EQ(m2.exit_code, 0) << m2.err;
  ExpectOneProcessTwoImages(dir.File("merged2.sqlite"), s);
}

void Edit(const std::string& path, const std::string& sql) {
  Db db(path, false);
  ASSERT_TRUE(db.ok()) << db.error();
  ASSERT_EQ(sqlite3_exec(db.handle(), sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK) << sql;
}

TEST(ExecMerge, TrueDuplicatesRefused) {
  TempDir dir;
  ExecStreams s = RunExec(dir);
  std::string pid = std::to_string(s.pid);
  auto expect_refused = [&](const std::vector<std::string>& inputs, const std::string& out,
                            const std::string& message) {
    std::vector<std::string> args = {"-o", out};
    args.insert(args.end(), inputs.begin(), inputs.end());
    RunResult e = Export(args);
    EXPECT_EQ(e.exit_code, 1) << e.err;
    EXPECT_NE(e.err.find(message), std::string::npos) << e.err;
    EXPECT_NE(access(out.c_str(), F_OK), 0) << out << " written";
  };
  // The same stream twice (a copy: not caught as the same path).
  std::string copy = dir.File("copy.gtrace.bak");
  ASSERT_EQ(RunProgram({"cp", s.pre, copy}).exit_code, 0);
  expect_refused({s.pre, copy}, dir.File("dup.sqlite"),
                 copy + ": process " + pid + " of host ");
  expect_refused({s.pre, copy}, dir.File("dup.sqlite"), " is in another input too (" + s.pre +
                                                            "): the same stream twice (both start at the same time)");
  // Databases: the first image said to end by exit, then said to end after the second started.
  ASSERT_EQ(Export({"-o", dir.File("pre.sqlite"), s.pre}).exit_code, 0);
  ASSERT_EQ(Export({"-o", dir.File("post.sqlite"), s.post}).exit_code, 0);
  ASSERT_EQ(RunProgram({"cp", dir.File("pre.sqlite"), dir.File("pre-copy.sqlite")}).exit_code, 0);
  expect_refused({dir.File("pre.sqlite"), dir.File("pre-copy.sqlite")}, dir.File("dup2.sqlite"),
                 "pre-copy.sqlite: process " + pid + " of host ");
  expect_refused({dir.File("pre.sqlite"), dir.File("pre-copy.sqlite")}, dir.File("dup2.sqlite"),
                 "pre.sqlite): the same stream twice (both start at the same time)");
  Edit(dir.File("pre.sqlite"), "UPDATE GTRACE_RANKS SET endReason = 'exit'");
  expect_refused({dir.File("pre.sqlite"), dir.File("post.sqlite")}, dir.File("notexec.sqlite"),
                 "): the earlier stream ended by exit, not exec, so the two cannot be images of one process");
  Edit(dir.File("pre.sqlite"),
       "UPDATE GTRACE_RANKS SET endReason = 'exec', endMonotonicNs = " +
           std::to_string(*Db(dir.File("post.sqlite")).Int("SELECT startMonotonicNs FROM GTRACE_RANKS") + 1));
  expect_refused({dir.File("pre.sqlite"), dir.File("post.sqlite")}, dir.File("overlap.sqlite"),
                 "): the two streams overlap in time (the earlier one ended by exec at ");
  // Put back, the pair merges again: the refusals were the edits.
  Edit(dir.File("pre.sqlite"), "UPDATE GTRACE_RANKS SET endMonotonicNs = startMonotonicNs + 1");
  RunResult ok = Export({"-o", dir.File("ok.sqlite"), dir.File("pre.sqlite"), dir.File("post.sqlite")});
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
}

}  // namespace
}  // namespace gt
