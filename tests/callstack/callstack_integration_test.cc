// --cudabacktrace end to end: callstack_app (known call chains, -O0 -g) under LD_PRELOAD=libgtrace.so
// with the fake CUPTI (a test double), exported, and checked row by row: CUDA_CALLCHAINS frames with
// names and file:line, the eventClass-67 rows and their callchainId, classes and thresholds,
// failures that switch backtraces off with one line, modules that vanished or moved, the
// cuda_api_callers report, and thread/process identity of CUDA-only threads.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <regex>
#include <string>
#include <vector>

#include "tests/callstack/callstack_test_util.h"

namespace gt {
namespace {

using test::AppRun;
using test::Db;
using test::Frames;
using test::MarkerLine;
using test::RunApp;
using test::TempDir;

const std::map<std::string, std::string> kMemory10ms = {{"GTRACE_CUDABACKTRACE", "memory:10000000"}};

std::string At(const std::string& function, const std::string& marker) {
  return function + " at " + test::AppSource() + ":" + std::to_string(MarkerLine(marker));
}

int64_t MainTid(Db& db) {
  return db.Int("SELECT pid FROM PROCESSES").value_or(-1);
}

// callchainId of the eventClass-67 rows named `name` on thread `tid`, in start order.
std::vector<int64_t> Chains(Db& db, const std::string& name, int64_t tid) {
  std::vector<int64_t> out;
  for (const std::string& r :
       db.Rows("SELECT r.callchainId FROM CUPTI_ACTIVITY_KIND_RUNTIME r JOIN StringIds s ON "
               "s.id = r.nameId WHERE r.eventClass = 67 AND s.value = '" +
               name + "' AND (r.globalTid & 16777215) = " + std::to_string(tid) + " ORDER BY r.start")) {
    out.push_back(std::stoll(r));
  }
  return out;
}

TEST(CallStacks, KnownChainComesBackSymbolizedInnermostFirst) {
  TempDir dir;
  AppRun r = RunApp(dir, {"chain"}, kMemory10ms);
  ASSERT_EQ(r.run.exit_code, 0) << r.run.err;
  EXPECT_TRUE(test::GtraceLinesOf(r.run.err).empty()) << r.run.err;
  ASSERT_EQ(r.streams.size(), 1u);
  ASSERT_FALSE(r.db.empty()) << r.export_err;
  EXPECT_EQ(r.export_err.find("warning"), std::string::npos) << r.export_err;
  Db db(r.db);
  int64_t main_tid = MainTid(db);
  // main -> a -> b -> cudaMemcpy, twice from the same call site: one chain.
  std::vector<int64_t> b_chains = Chains(db, "cudaMemcpy", main_tid);
  ASSERT_EQ(b_chains.size(), 3u);  // two through a -> b, one from nested()
  EXPECT_EQ(b_chains[0], b_chains[1]);
  std::vector<std::string> f = Frames(db, b_chains[0]);
  ASSERT_GE(f.size(), 4u);
  const std::string app = "|" + test::AppPath() + "|0";
  EXPECT_EQ(f[0], At("chain::b()", "b->api") + app);
  EXPECT_EQ(f[1], At("chain::a()", "a->b") + app);
  EXPECT_EQ(f[2], At("main", "main->a") + app);
  EXPECT_NE(f[3].find("__libc_start"), std::string::npos) << f[3];  // the C library's entry frames follow
  // Depths are dense from 0 and originalIP is the recorded return address, inside the executable.
  EXPECT_EQ(
      db.Int("SELECT max(stackDepth) + 1 - count(*) FROM CUDA_CALLCHAINS WHERE id = " + std::to_string(b_chains[0])),
      0);
  EXPECT_EQ(db.Int("SELECT count(*) FROM CUDA_CALLCHAINS WHERE originalIP IS NULL OR originalIP = 0"), 0);
  // Nested runtime + driver calls: each its own stack, its own line.
  int64_t nested_runtime = b_chains[2];
  EXPECT_EQ(Frames(db, nested_runtime)[0], At("chain::nested()", "nested->runtime") + app);
  std::vector<int64_t> driver = Chains(db, "cuMemcpyHtoD_v2", main_tid);
  ASSERT_EQ(driver.size(), 1u);
  EXPECT_EQ(Frames(db, driver[0])[0], At("chain::nested()", "nested->driver") + app);
  // No frame of gtrace, of the (fake) CUPTI or of libunwind: they are dropped from the top.
  EXPECT_EQ(db.Int("SELECT count(*) FROM CUDA_CALLCHAINS c JOIN StringIds m ON m.id = c.module WHERE m.value LIKE "
                   "'%libgtrace%' OR m.value LIKE '%fake_cupti%' OR m.value LIKE '%libunwind%'"),
            0);
  // Exact counts: 6 slow memory calls kept (b twice, nested runtime + driver, worker's b, cudaMalloc),
  // the instant cudaMemcpy and the kernel launch not; 5 distinct stacks, ids 0..4.
  EXPECT_EQ(db.Rows("SELECT s.value FROM CUPTI_ACTIVITY_KIND_RUNTIME r JOIN StringIds s ON s.id = r.nameId "
                    "WHERE r.eventClass = 67 ORDER BY s.value"),
            (std::vector<std::string>{"cuMemcpyHtoD_v2", "cudaMalloc", "cudaMemcpy", "cudaMemcpy", "cudaMemcpy",
                                      "cudaMemcpy"}));
  EXPECT_EQ(db.Rows("SELECT DISTINCT id FROM CUDA_CALLCHAINS ORDER BY id"),
            (std::vector<std::string>{"0", "1", "2", "3", "4"}));
  EXPECT_EQ(db.Int("SELECT count(DISTINCT callchainId) FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE eventClass = 67"), 5);
  // Each backtrace row has the CUPTI row of the same call (correlation id, thread); only it has the chain.
  EXPECT_EQ(db.Int("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME a JOIN CUPTI_ACTIVITY_KIND_RUNTIME b ON "
                   "a.correlationId = b.correlationId AND a.globalTid = b.globalTid WHERE a.eventClass = 67 AND "
                   "b.eventClass IN (0, 1)"),
            6);
  EXPECT_EQ(db.Int("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE eventClass IN (0, 1) AND callchainId IS "
                   "NOT NULL"),
            0);
  EXPECT_EQ(db.Int("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE eventClass = 67 AND callchainId IS NULL"),
            0);
  // The backtrace row keeps the call's result (cudaMalloc returned 2) and lasts at least the threshold.
  EXPECT_EQ(db.Int("SELECT r.returnValue FROM CUPTI_ACTIVITY_KIND_RUNTIME r JOIN StringIds s ON s.id = r.nameId "
                   "WHERE r.eventClass = 67 AND s.value = 'cudaMalloc'"),
            2);
  EXPECT_EQ(db.Int("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE eventClass = 67 AND end - start < 10000000"),
            0);
  // The worker thread's stack: b, then the thread's lambda.
  std::vector<int64_t> worker = Chains(db, "cudaMemcpy",
                                       db.Int("SELECT t.globalTid & 16777215 FROM ThreadNames t "
                                              "JOIN StringIds s ON s.id = t.nameId WHERE s.value = "
                                              "'cuda-worker'")
                                           .value_or(-1));
  ASSERT_EQ(worker.size(), 1u);
  std::vector<std::string> wf = Frames(db, worker[0]);
  EXPECT_EQ(wf[0], At("chain::b()", "b->api") + app);
  EXPECT_EQ(wf[1].rfind("(anonymous namespace)::ChainRest()::{lambda()#1}::operator()() const at ", 0), 0u) << wf[1];
  // The configuration is in META_DATA_CAPTURE.
  EXPECT_EQ(db.Text("SELECT value FROM META_DATA_CAPTURE WHERE name = 'PROCESS_0:CUDA_BACKTRACE_CLASSES'"),
            "memory:10000000");
  EXPECT_EQ(db.Text("SELECT value FROM META_DATA_CAPTURE WHERE name = 'PROCESS_0:CUDA_BACKTRACE_MAX_FRAMES'"), "64");
}

int64_t BacktraceRows(const AppRun& r) {
  if (r.db.empty())
    return -1;
  Db db(r.db);
  return db.Int("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE eventClass = 67").value_or(-1);
}

TEST(CallStacks, ClassesAndThresholdsSelectTheCalls) {
  TempDir dir;
  AppRun all = RunApp(dir, {"chain"}, {{"GTRACE_CUDABACKTRACE", "all:10000000"}}, "all");
  ASSERT_EQ(all.run.exit_code, 0) << all.run.err;
  EXPECT_EQ(BacktraceRows(all), 7);  // + the kernel launch
  {
    Db db(all.db);
    std::vector<int64_t> launch = Chains(db, "cudaLaunchKernel", MainTid(db));
    ASSERT_EQ(launch.size(), 1u);
    EXPECT_EQ(Frames(db, launch[0])[0], At("chain::launch()", "launch->api") + "|" + test::AppPath() + "|0");
  }
  EXPECT_EQ(BacktraceRows(RunApp(dir, {"chain"}, {{"GTRACE_CUDABACKTRACE", "kernel:10000000"}}, "kernel")), 1);
  EXPECT_EQ(BacktraceRows(RunApp(dir, {"chain"}, {{"GTRACE_CUDABACKTRACE", "sync,other"}}, "sync")), 0);
  // Threshold 0: every memory call, the instant one too.
  EXPECT_EQ(BacktraceRows(RunApp(dir, {"chain"}, {{"GTRACE_CUDABACKTRACE", "memory:0"}}, "zero")), 7);
  // 100 ms: none; then the export has no CUDA_CALLCHAINS table.
  AppRun none = RunApp(dir, {"chain"}, {{"GTRACE_CUDABACKTRACE", "memory:1000000000"}}, "long");
  EXPECT_EQ(BacktraceRows(none), 0);
  // Off (the default): no stacks, no table, and the library never loads libunwind.
  AppRun off = RunApp(dir, {"chain"}, {}, "off");
  ASSERT_EQ(off.run.exit_code, 0) << off.run.err;
  EXPECT_EQ(BacktraceRows(off), 0);
  Db db(off.db);
  EXPECT_EQ(db.Int("SELECT count(*) FROM sqlite_master WHERE name = 'CUDA_CALLCHAINS'"), 0);
  EXPECT_EQ(db.Int("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE eventClass = 0"), 7);  // + 1 driver call
}

TEST(CallStacks, FailuresAreOneLineAndCudaTracingGoesOn) {
  TempDir dir;
  AppRun bad = RunApp(dir, {"chain"}, {{"GTRACE_CUDABACKTRACE", "kernels"}}, "bad");
  ASSERT_EQ(bad.run.exit_code, 0) << bad.run.err;
  EXPECT_EQ(
      test::GtraceLinesOf(bad.run.err),
      (std::vector<std::string>{"gtrace: CUDA backtraces off: GTRACE_CUDABACKTRACE='kernels': unknown class "
                                "'kernels' (known: all, kernel, memory, sync, other, none); CUDA tracing goes on"}));
  EXPECT_EQ(BacktraceRows(bad), 0);
  AppRun nolib =
      RunApp(dir, {"chain"},
             {{"GTRACE_CUDABACKTRACE", "all"}, {"GTRACE_LIBUNWIND_PATH", "/nonexistent/libunwind.so.8"}}, "nolib");
  ASSERT_EQ(nolib.run.exit_code, 0) << nolib.run.err;
  std::vector<std::string> lines = test::GtraceLinesOf(nolib.run.err);
  ASSERT_EQ(lines.size(), 1u) << nolib.run.err;
  EXPECT_EQ(lines[0].rfind("gtrace: CUDA backtraces off: cannot load libunwind (/nonexistent/libunwind.so.8: ", 0), 0u)
      << lines[0];
  EXPECT_EQ(BacktraceRows(nolib), 0);
  Db db(nolib.db);
  EXPECT_EQ(db.Int("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE eventClass = 0"), 7);  // + 1 driver call
  EXPECT_EQ(db.Int("SELECT count(*) FROM DIAGNOSTIC_EVENT WHERE text LIKE 'callstack: CUDA backtraces off: cannot load "
                   "libunwind%'"),
            1);
}

TEST(CallStacks, PythonBacktraceWithoutPythonKeepsNativeStacks) {
  TempDir dir;
  AppRun r = RunApp(dir, {"chain"}, {{"GTRACE_CUDABACKTRACE", "memory:10000000"}, {"GTRACE_PYTHON_BACKTRACE", "cuda"}});
  ASSERT_EQ(r.run.exit_code, 0) << r.run.err;
  EXPECT_EQ(
      test::GtraceLinesOf(r.run.err),
      (std::vector<std::string>{"gtrace: GTRACE_PYTHON_BACKTRACE=cuda: no Python interpreter in this process "
                                "(Py_Version/Py_GetVersion not found); CUDA backtraces keep native frames only"}));
  EXPECT_EQ(BacktraceRows(r), 6);
  Db db(r.db);
  EXPECT_EQ(db.Text("SELECT value FROM META_DATA_CAPTURE WHERE name = 'PROCESS_0:PYTHON_BACKTRACE'"),
            "cuda (no Python frames read)");
  EXPECT_EQ(db.Int("SELECT count(*) FROM CUDA_CALLCHAINS WHERE originalIP IS NULL"), 0);
}

// GTRACE_PYTHON_BACKTRACE alone, or with a value gtrace does not know: one line each, nothing else changes.
TEST(CallStacks, PythonBacktraceMisuseIsOneLine) {
  TempDir dir;
  AppRun alone = RunApp(dir, {"chain"}, {{"GTRACE_PYTHON_BACKTRACE", "cuda"}}, "alone");
  ASSERT_EQ(alone.run.exit_code, 0) << alone.run.err;
  EXPECT_EQ(test::GtraceLinesOf(alone.run.err),
            (std::vector<std::string>{"gtrace: GTRACE_PYTHON_BACKTRACE=cuda has no effect without GTRACE_CUDABACKTRACE "
                                      "(Python frames are added to the stacks it selects)"}));
  EXPECT_EQ(BacktraceRows(alone), 0);
  AppRun bad = RunApp(dir, {"chain"}, {{"GTRACE_CUDABACKTRACE", "memory:10000000"}, {"GTRACE_PYTHON_BACKTRACE", "java"}},
                      "bad");
  ASSERT_EQ(bad.run.exit_code, 0) << bad.run.err;
  EXPECT_EQ(test::GtraceLinesOf(bad.run.err),
            (std::vector<std::string>{"gtrace: GTRACE_PYTHON_BACKTRACE=java: expected cuda or none; Python frames are off"}));
  EXPECT_EQ(BacktraceRows(bad), 6);
}

// A process that announces a CPython gtrace has no layout for (the test double
// libgt_fake_python_version.so exports Py_Version = 3.14.0, as CPython 3.14 would): one line, Python
// frames off, the native stacks exactly as without the option.
TEST(CallStacks, PythonBacktraceOfUnknownVersionIsOffWithOneLine) {
  TempDir dir;
  test::RunOptions o =
      test::AppOptions(dir, "run", {{"GTRACE_CUDABACKTRACE", "memory:10000000"}, {"GTRACE_PYTHON_BACKTRACE", "cuda"}});
  o.preload = false;
  o.env["LD_PRELOAD"] = test::LibraryPath() + ":" + test::BinaryDir() + "/lib/libgt_fake_python_version.so";
  AppRun r;
  r.run = test::RunProgram({test::AppPath(), "chain"}, o);
  r = test::ExportStreams(dir, "run", r);
  ASSERT_EQ(r.run.exit_code, 0) << r.run.err;
  EXPECT_EQ(test::GtraceLinesOf(r.run.err),
            (std::vector<std::string>{"gtrace: GTRACE_PYTHON_BACKTRACE=cuda: Python 3.14 is not one gtrace can read "
                                      "(3.9-3.13); CUDA backtraces keep native frames only"}));
  EXPECT_EQ(BacktraceRows(r), 6);
  Db db(r.db);
  EXPECT_EQ(db.Text("SELECT value FROM META_DATA_CAPTURE WHERE name = 'PROCESS_0:PYTHON_BACKTRACE'"),
            "cuda (no Python frames read)");
  EXPECT_EQ(db.Int("SELECT count(*) FROM CUDA_CALLCHAINS WHERE originalIP IS NULL"), 0);
  std::vector<std::string> first = test::Frames(
      db, db.Int("SELECT callchainId FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE eventClass = 67 ORDER BY start LIMIT 1")
              .value_or(-1));
  ASSERT_FALSE(first.empty());
  // Function, line and module exactly; the file's directory is left out (a ccache build makes it relative).
  EXPECT_EQ(first[0].substr(0, first[0].find(" at ")), "chain::b()") << first[0];
  std::string tail = "callstack_app.cc:" + std::to_string(MarkerLine("b->api")) + "|" + test::AppPath() + "|0";
  ASSERT_GE(first[0].size(), tail.size());
  EXPECT_EQ(first[0].substr(first[0].size() - tail.size()), tail);
}

TEST(CallStacks, VanishedOrChangedModuleKeepsModuleAndOffset) {
  TempDir dir;
  std::string copy = dir.File("moved/callstack_app");
  ASSERT_EQ(mkdir(dir.File("moved").c_str(), 0755), 0);
  test::WriteFile(copy, test::ReadFile(test::AppPath()));
  ASSERT_EQ(chmod(copy.c_str(), 0755), 0);
  test::AppRun r = RunApp(dir, {"chain"}, kMemory10ms, "gone", copy);
  ASSERT_EQ(r.run.exit_code, 0) << r.run.err;
  ASSERT_EQ(unlink(copy.c_str()), 0);  // the module vanished before the export
  r = test::ExportStreams(dir, "gone", r);
  ASSERT_FALSE(r.db.empty()) << r.export_err;
  EXPECT_NE(r.export_err.find("call stacks: " + copy + ": not found; its frames keep module+offset"), std::string::npos)
      << r.export_err;
  {
    Db db(r.db);
    std::vector<std::string> f = Frames(db, Chains(db, "cudaMemcpy", MainTid(db)).at(0));
    std::smatch m;
    ASSERT_TRUE(std::regex_match(f[0], m, std::regex("callstack_app\\+0x([0-9a-f]+)\\|" + copy + "\\|1"))) << f[0];
    // The offset is the address minus the load bias: the same as the file's symbol table gives for b.
    int64_t ip = db.Int("SELECT originalIP FROM CUDA_CALLCHAINS WHERE stackDepth = 0 AND id = " +
                        std::to_string(Chains(db, "cudaMemcpy", MainTid(db)).at(0)))
                     .value_or(0);
    EXPECT_EQ(ip & 0xfff, std::stoll(m[1], nullptr, 16) & 0xfff);  // page offset survives the load bias
    // Frames of other modules (the C library) are still resolved.
    EXPECT_EQ(db.Int("SELECT count(*) FROM CUDA_CALLCHAINS c JOIN StringIds m ON m.id = c.module WHERE m.value LIKE "
                     "'%libc.so%' AND c.unresolved IS NULL") > 0,
              true);
  }
  // Found again by build id in GTRACE_SYMBOL_PATH (the file moved).
  r = test::ExportStreams(dir, "gone", r, {{"GTRACE_SYMBOL_PATH", test::BinaryDir() + "/bin"}});
  {
    Db db(r.db);
    EXPECT_EQ(Frames(db, Chains(db, "cudaMemcpy", MainTid(db)).at(0))[0],
              "chain::b() at " + test::AppSource() + ":" + std::to_string(MarkerLine("b->api")) + "|" + copy + "|0");
  }
  // Another file at the recorded path (a rebuild): its build id differs, so it is not trusted.
  test::WriteFile(copy, test::ReadFile(test::CliPath()));
  r = test::ExportStreams(dir, "gone", r);
  EXPECT_NE(r.export_err.find("call stacks: " + copy + ": build id differs from the recorded "), std::string::npos)
      << r.export_err;
  Db db(r.db);
  EXPECT_EQ(Frames(db, Chains(db, "cudaMemcpy", MainTid(db)).at(0))[0].rfind("callstack_app+0x", 0), 0u);
}

// Splits one CSV line (no quoted commas in the cells asserted here).
std::vector<std::string> Cells(const std::string& line) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    size_t comma = line.find(',', start);
    out.push_back(line.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos)
      break;
    start = comma + 1;
  }
  return out;
}

TEST(CallStacks, CudaApiCallersReportAggregatesByStack) {
  TempDir dir;
  AppRun r = RunApp(dir, {"chain"}, kMemory10ms);
  ASSERT_FALSE(r.db.empty()) << r.export_err;
  test::RunResult s =
      test::RunProgram({test::CliPath(), "stats", "--report", "cuda_api_callers", "--format", "csv", r.db});
  ASSERT_EQ(s.exit_code, 0) << s.err;
  std::vector<std::string> lines;
  size_t pos = 0;
  while (pos < s.out.size()) {
    size_t end = s.out.find('\n', pos);
    if (end == std::string::npos)
      end = s.out.size();
    if (end > pos)
      lines.push_back(s.out.substr(pos, end - pos));
    pos = end + 1;
  }
  ASSERT_EQ(lines.size(), 6u) << s.out;
  EXPECT_EQ(lines[0], "Time (%),Total Time (ns),Num Calls,Avg (ns),Med (ns),Max (ns),Name,Caller,Python Caller,Stack");
  std::vector<std::string> rows;
  int64_t previous_total = INT64_MAX;
  for (size_t i = 1; i < lines.size(); ++i) {
    std::vector<std::string> c = Cells(lines[i]);
    ASSERT_GE(c.size(), 10u) << lines[i];
    EXPECT_EQ(c[8], "") << "no Python frames in a C++ program: " << lines[i];
    int64_t total = std::stoll(c[1]);
    EXPECT_LE(total, previous_total) << "rows are ordered by total time";
    previous_total = total;
    rows.push_back(c[2] + " " + c[6] + " " + c[7]);
  }
  std::sort(rows.begin(), rows.end());
  auto at = [](const char* f, const char* m) { return At(f, m); };
  EXPECT_EQ(rows, (std::vector<std::string>{
                      "1 cuMemcpyHtoD_v2 " + at("chain::nested()", "nested->driver"),
                      "1 cudaMalloc " + at("chain::alloc(unsigned long)", "alloc->api"),
                      "1 cudaMemcpy " + at("chain::b()", "b->api"),  // the worker thread's
                      "1 cudaMemcpy " + at("chain::nested()", "nested->runtime"),
                      "2 cudaMemcpy " + at("chain::b()", "b->api"),  // main -> a -> b, twice
                  }));
  // cuda_api_sum counts each call once (its CUPTI row), not its backtrace row too.
  test::RunResult sum =
      test::RunProgram({test::CliPath(), "stats", "--report", "cuda_api_sum", "--format", "csv", r.db});
  ASSERT_EQ(sum.exit_code, 0) << sum.err;
  EXPECT_NE(sum.out.find(",5,"), std::string::npos) << sum.out;  // cudaMemcpy: 5 calls
  EXPECT_EQ(sum.out.find(",9,"), std::string::npos) << sum.out;
  // Without stacks the report says how to get them.
  AppRun off = RunApp(dir, {"chain"}, {}, "off");
  test::RunResult none = test::RunProgram({test::CliPath(), "stats", "--report", "cuda_api_callers", off.db});
  EXPECT_NE(none.exit_code, 0);
  EXPECT_NE(none.err.find("no CUDA_CALLCHAINS table"), std::string::npos) << none.err;
}

TEST(Identity, ThreadNamesAndProcessesCoverCudaOnlyThreads) {
  TempDir dir;
  for (const char* spec : {"memory:10000000", ""}) {
    AppRun r = RunApp(dir, {"chain"}, {{"GTRACE_CUDABACKTRACE", spec}}, spec[0] ? "stacks" : "plain");
    ASSERT_FALSE(r.db.empty()) << r.export_err;
    Db db(r.db);
    int64_t pid = MainTid(db);
    // Main thread: its OS name; worker: OS name only (it made CUDA calls, no NVTX); the third: NVTX wins.
    EXPECT_EQ(db.Rows("SELECT s.value FROM ThreadNames t JOIN StringIds s ON s.id = t.nameId ORDER BY t.globalTid"),
              (std::vector<std::string>{"callstack_app", "cuda-worker", "nvtx-name"}))
        << spec;
    EXPECT_EQ(db.Int("SELECT count(DISTINCT globalTid) FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE globalTid NOT IN "
                     "(SELECT globalTid FROM ThreadNames)"),
              0);
    EXPECT_EQ(db.Int("SELECT count(DISTINCT globalTid) FROM CUPTI_ACTIVITY_KIND_RUNTIME"), 3);
    EXPECT_EQ(db.Rows("SELECT pid, name FROM PROCESSES"),
              (std::vector<std::string>{std::to_string(pid) + "|" + test::AppPath()}));
    EXPECT_EQ(db.Int("SELECT count(*) FROM ThreadNames WHERE (globalTid >> 24) & 16777215 != " + std::to_string(pid)),
              0);
  }
}

TEST(CallStacks, ProfileFlags) {
  TempDir dir;
  test::RunOptions o = test::AppOptions(dir, "cli", {});
  o.preload = false;
  test::RunResult r =
      test::RunProgram({test::CliPath(), "profile", "--cudabacktrace=memory:10000000", "--python-backtrace=none", "-o",
                        dir.File("cli-%p"), "--export=sqlite", test::AppPath(), "chain"},
                       o);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::string> dbs = dir.Find(".sqlite");
  ASSERT_EQ(dbs.size(), 1u);
  Db db(dbs[0]);
  EXPECT_EQ(db.Int("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE eventClass = 67"), 6);
  EXPECT_EQ(db.Text("SELECT value FROM META_DATA_CAPTURE WHERE name = 'PROCESS_0:GTRACE_CUDABACKTRACE'"),
            "memory:10000000");
  for (const char* bad : {"--cudabacktrace=kernels", "--cudabacktrace=memory:1us", "--python-backtrace=java"}) {
    test::RunResult e = test::RunProgram({test::CliPath(), "profile", bad, test::AppPath(), "chain"}, o);
    EXPECT_EQ(e.exit_code, 2) << bad;
    EXPECT_NE(e.err.find("gtrace: profile: --"), std::string::npos) << e.err;
  }
}

}  // namespace
}  // namespace gt
