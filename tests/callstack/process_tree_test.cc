// Processes: every descendant of a profiled process gets its own stream (fork + exec chains, a `bash -c`
// in between, a DataLoader-style child forked without exec), one merged database shows who started
// whom (GTRACE_PROCESS_TREE, META_DATA_CAPTURE PROCESS_n:PPID), and a process never registers twice
// (LD_PRELOAD and CUDA_INJECTION64_PATH naming the same file or two copies of it).
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "gtrace.pb.h"
#include "tests/callstack/callstack_test_util.h"
#include "tools/stream/stream_reader.h"

namespace gt {
namespace {

using test::AppRun;
using test::Db;
using test::RunApp;
using test::TempDir;

schema::StreamHeader Header(const std::string& path) {
  stream::StreamReader r;
  Status st = r.Open(path);
  EXPECT_TRUE(st.ok()) << st.message();
  return r.header();
}

// Headers by pid.
std::map<uint32_t, schema::StreamHeader> Headers(const AppRun& r) {
  std::map<uint32_t, schema::StreamHeader> out;
  for (const std::string& s : r.streams) {
    schema::StreamHeader h = Header(s);
    out[h.pid()] = h;
  }
  return out;
}

std::string Gpid(Db& db, uint32_t pid) {
  return std::to_string(db.Int("SELECT globalPid FROM PROCESSES WHERE pid = " + std::to_string(pid)).value_or(-1));
}

// "pid|parentGlobalPid|tracedAncestorGlobalPid|traced|forkedWithoutExec|name" rows in pid order.
std::vector<std::string> Tree(Db& db) {
  return db.Rows(
      "SELECT pid, coalesce(parentGlobalPid, 'NULL'), coalesce(tracedAncestorGlobalPid, 'NULL'), traced, "
      "coalesce(forkedWithoutExec, 'NULL'), name FROM GTRACE_PROCESS_TREE ORDER BY pid");
}

TEST(ProcessTree, ForkExecChainOfThreeGivesThreeStreamsAndOneTree) {
  TempDir dir;
  AppRun r = RunApp(dir, {"tree", "0", "exec"}, {{"GTRACE_CUDABACKTRACE", "memory:0"}});
  ASSERT_EQ(r.run.exit_code, 0) << r.run.err;
  EXPECT_TRUE(test::GtraceLinesOf(r.run.err).empty()) << r.run.err;
  ASSERT_EQ(r.streams.size(), 3u);
  ASSERT_FALSE(r.db.empty()) << r.export_err;
  std::map<uint32_t, schema::StreamHeader> h = Headers(r);
  ASSERT_EQ(h.size(), 3u);
  // Order by parentage: level 0 is the one whose parent has no stream.
  std::vector<uint32_t> level(3);
  for (const auto& [pid, header] : h) {
    if (h.count(header.ppid()) == 0)
      level[0] = pid;
  }
  for (int l = 1; l < 3; ++l) {
    for (const auto& [pid, header] : h) {
      if (header.ppid() == level[l - 1])
        level[l] = pid;
    }
    ASSERT_NE(level[l], 0u) << "no child of " << level[l - 1];
  }
  for (uint32_t pid : level) {
    EXPECT_FALSE(h[pid].forked_without_exec());
    ASSERT_GE(h[pid].ancestors_size(), 1);
    EXPECT_EQ(h[pid].ancestors(0).pid(), h[pid].ppid());
  }
  EXPECT_EQ(h[level[2]].ancestors(0).name(), "callstack_app");
  EXPECT_EQ(h[level[2]].ancestors(1).pid(), level[0]);
  Db db(r.db);
  EXPECT_EQ(db.Int("SELECT count(*) FROM PROCESSES"), 3);
  const std::string g0 = Gpid(db, level[0]), g1 = Gpid(db, level[1]), g2 = Gpid(db, level[2]);
  const std::string app = test::AppPath();
  uint32_t outside = h[level[0]].ppid();  // the test runner: untraced parent of the first process
  std::vector<std::string> expected = {
      std::to_string(level[0]) + "|" + std::to_string(std::stoll(g0) - ((int64_t{level[0]} - outside) << 24)) +
          "|NULL|1|0|" + app,
      std::to_string(level[1]) + "|" + g0 + "|" + g0 + "|1|0|" + app,
      std::to_string(level[2]) + "|" + g1 + "|" + g1 + "|1|0|" + app,
  };
  std::vector<std::string> tree = Tree(db);
  ASSERT_EQ(tree.size(), 4u) << "three traced processes and the first one's parent";
  std::vector<std::string> traced;
  for (const std::string& row : tree) {
    if (row.find("|1|0|" + app) != std::string::npos)
      traced.push_back(row);
  }
  std::sort(traced.begin(), traced.end(), [&](const std::string& a, const std::string& b) {
    auto pos = [&](const std::string& row) {
      uint32_t pid = static_cast<uint32_t>(std::stoul(row));
      return std::find(level.begin(), level.end(), pid) - level.begin();
    };
    return pos(a) < pos(b);
  });
  EXPECT_EQ(traced, expected);
  EXPECT_EQ(db.Int("SELECT count(*) FROM GTRACE_PROCESS_TREE WHERE traced = 0 AND pid = " + std::to_string(outside)),
            1);
  // Parent links are in META_DATA_CAPTURE too, and each process's call is its own (its stack, its pid).
  EXPECT_EQ(db.Int("SELECT count(*) FROM META_DATA_CAPTURE WHERE name LIKE 'PROCESS_%:PPID'"), 3);
  EXPECT_EQ(db.Int("SELECT count(DISTINCT globalTid >> 24) FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE eventClass = 67"), 3);
  EXPECT_EQ(db.Int("SELECT count(DISTINCT callchainId) FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE eventClass = 67"), 3);
  EXPECT_EQ(db.Int("SELECT count(*) FROM ThreadNames"), 3);
}

TEST(ProcessTree, BashBetweenTwoTracedProcessesIsShownUntraced) {
  TempDir dir;
  AppRun r = RunApp(dir, {"tree", "0", "bash"});
  ASSERT_EQ(r.run.exit_code, 0) << r.run.err;
  ASSERT_EQ(r.streams.size(), 3u);
  ASSERT_FALSE(r.db.empty()) << r.export_err;
  std::map<uint32_t, schema::StreamHeader> h = Headers(r);
  // The level-1 process's parent is bash, which has no stream; bash's parent is level 0.
  uint32_t p1 = 0, bash = 0, p0 = 0;
  for (const auto& [pid, header] : h) {
    if (header.ancestors_size() >= 2 && header.ancestors(0).name() == "bash" && h.count(header.ancestors(1).pid())) {
      p1 = pid;
      bash = header.ppid();
      p0 = header.ancestors(1).pid();
    }
  }
  ASSERT_NE(p1, 0u) << "no traced process under bash";
  Db db(r.db);
  const std::string g0 = Gpid(db, p0), g1 = Gpid(db, p1);
  const int64_t gbash = std::stoll(g0) - ((int64_t{p0} - bash) << 24);
  EXPECT_EQ(db.Rows("SELECT coalesce(parentGlobalPid, 'NULL'), tracedAncestorGlobalPid, traced, name FROM "
                    "GTRACE_PROCESS_TREE WHERE pid = " +
                    std::to_string(bash)),
            (std::vector<std::string>{g0 + "|" + g0 + "|0|bash"}));
  EXPECT_EQ(db.Rows("SELECT parentGlobalPid, tracedAncestorGlobalPid, traced FROM GTRACE_PROCESS_TREE WHERE pid = " +
                    std::to_string(p1)),
            (std::vector<std::string>{std::to_string(gbash) + "|" + g0 + "|1"}));
  EXPECT_EQ(db.Int("SELECT count(*) FROM GTRACE_PROCESS_TREE WHERE traced = 1"), 3);
  EXPECT_EQ(db.Int("SELECT count(*) FROM GTRACE_PROCESS_TREE WHERE traced = 1 AND tracedAncestorGlobalPid = " + g1), 1);
}

// The in-job recipe (docs/multi-rank.md): each process's stream exported on its own, the databases
// merged afterwards. Each database alone sees only its own process and parent; the merge keeps one
// row per process (the traced one) and re-derives the traced ancestors: the same tree as exporting
// the streams together.
TEST(ProcessTree, DatabasesExportedSeparatelyMergeIntoTheSameTree) {
  TempDir dir;
  AppRun r = RunApp(dir, {"tree", "0", "bash"});
  ASSERT_EQ(r.run.exit_code, 0) << r.run.err;
  ASSERT_EQ(r.streams.size(), 3u);
  ASSERT_FALSE(r.db.empty()) << r.export_err;
  std::vector<std::string> merge_args = {test::CliPath(), "export", "-o", dir.File("merged.sqlite")};
  for (size_t i = 0; i < r.streams.size(); ++i) {
    std::string one = dir.File("one-" + std::to_string(i) + ".sqlite");
    test::RunResult e = test::RunProgram({test::CliPath(), "export", "-o", one, r.streams[i]});
    ASSERT_EQ(e.exit_code, 0) << e.err;
    Db single(one);
    EXPECT_EQ(single.Int("SELECT count(*) FROM GTRACE_PROCESS_TREE WHERE traced = 1"), 1);
    merge_args.push_back(one);
  }
  test::RunResult m = test::RunProgram(merge_args);
  ASSERT_EQ(m.exit_code, 0) << m.err;
  Db direct(r.db), merged(dir.File("merged.sqlite"));
  std::vector<std::string> want = Tree(direct);
  ASSERT_EQ(want.size(), 5u) << "three traced processes, bash, and the first one's parent";
  EXPECT_EQ(Tree(merged), want);
  EXPECT_EQ(merged.Int("SELECT count(*) FROM GTRACE_PROCESS_TREE WHERE traced = 1 AND tracedAncestorGlobalPid IS NULL"),
            1);
}

TEST(ProcessTree, DataLoaderStyleForkWithoutExecIsMarked) {
  TempDir dir;
  AppRun r = RunApp(dir, {"loader"});
  ASSERT_EQ(r.run.exit_code, 0) << r.run.err;
  ASSERT_EQ(r.streams.size(), 2u);
  std::map<uint32_t, schema::StreamHeader> h = Headers(r);
  uint32_t parent = 0, child = 0;
  for (const auto& [pid, header] : h)
    (h.count(header.ppid()) ? child : parent) = pid;
  ASSERT_NE(child, 0u);
  EXPECT_TRUE(h[child].forked_without_exec());
  EXPECT_FALSE(h[parent].forked_without_exec());
  EXPECT_EQ(std::vector<std::string>(h[child].command_line().begin(), h[child].command_line().end()),
            std::vector<std::string>(h[parent].command_line().begin(), h[parent].command_line().end()));
  Db db(r.db);
  EXPECT_EQ(db.Rows("SELECT forkedWithoutExec, tracedAncestorGlobalPid FROM GTRACE_PROCESS_TREE WHERE pid = " +
                    std::to_string(child)),
            (std::vector<std::string>{"1|" + Gpid(db, parent)}));
  EXPECT_EQ(db.Text("SELECT value FROM META_DATA_CAPTURE WHERE name LIKE 'PROCESS_%:FORKED_WITHOUT_EXEC'"), "true");
  EXPECT_EQ(db.Int("SELECT count(*) FROM NVTX_EVENTS WHERE text = 'load-batch' AND (globalTid >> 24) & 16777215 = " +
                   std::to_string(child)),
            1);
}

// One stream and one CUPTI subscriber per process whatever names the library twice.
void ExpectSingleRegistration(const AppRun& r) {
  ASSERT_EQ(r.run.exit_code, 0) << r.run.err;
  EXPECT_TRUE(test::GtraceLinesOf(r.run.err).empty()) << r.run.err;
  ASSERT_EQ(r.streams.size(), 1u);
  size_t subscribes = 0;
  for (size_t p = r.log.find(" subscribe "); p != std::string::npos; p = r.log.find(" subscribe ", p + 1))
    ++subscribes;
  EXPECT_EQ(subscribes, 1u) << r.log;
  ASSERT_FALSE(r.db.empty()) << r.export_err;
  Db db(r.db);
  EXPECT_EQ(db.Int("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE eventClass IN (0, 1)"), 8);
  EXPECT_EQ(db.Int("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE eventClass = 67"), 6);
  // NVTX (the thread name) went to the same recorder.
  EXPECT_EQ(
      db.Int("SELECT count(*) FROM ThreadNames t JOIN StringIds s ON s.id = t.nameId WHERE s.value = 'nvtx-name'"), 1);
}

TEST(Registration, PreloadAndCudaInjectionOfTheSameFileRegisterOnce) {
  TempDir dir;
  AppRun r = RunApp(dir, {"chain"},
                    {{"GTRACE_CUDABACKTRACE", "memory:10000000"}, {"CUDA_INJECTION64_PATH", test::LibraryPath()}});
  ExpectSingleRegistration(r);
}

TEST(Registration, TwoCopiesOfTheLibraryRegisterOnce) {
  TempDir dir;
  ASSERT_EQ(mkdir(dir.File("copy").c_str(), 0755), 0);
  std::string copy = dir.File("copy/libgtrace.so");
  test::WriteFile(copy, test::ReadFile(test::LibraryPath()));
  // LD_PRELOAD names the build's library; CUDA (NVTX staying with the preloaded copy), or CUDA and NVTX,
  // are pointed at the copy. Without forwarding, the first case records two streams for one process.
  AppRun cuda_only = RunApp(
      dir, {"chain"}, {{"GTRACE_CUDABACKTRACE", "memory:10000000"}, {"CUDA_INJECTION64_PATH", copy}}, "cuda-copy");
  ExpectSingleRegistration(cuda_only);
  AppRun both = RunApp(
      dir, {"chain"},
      {{"GTRACE_CUDABACKTRACE", "memory:10000000"}, {"CUDA_INJECTION64_PATH", copy}, {"NVTX_INJECTION64_PATH", copy}},
      "both-copy");
  ExpectSingleRegistration(both);
}

}  // namespace
}  // namespace gt
