// Issue 14: nothing recorded before the end is lost when a process ends without exit() — _exit in
// a forked child, exec, posix_spawn, abort (with and without a handler), SIGSEGV (default action and
// a handler that longjmps), _exit from a signal handler and from four threads at once, and Python
// multiprocessing workers (fork, spawn, forkserver; Process and Pool). Each program records its
// ranges well inside one flush interval (500 ms), so before issue 14 none of them reached the
// stream. Every test asserts the exact ranges per stream and per exported process, the stream's end
// reason, and the exit status or signal the program has without gtrace.
#include <gtest/gtest.h>

#include <algorithm>
#include <signal.h>

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "gtrace.pb.h"
#include "tests/common/test_util.h"
#include "tools/stream/stream_reader.h"

namespace gt {
namespace {

using test::Db;
using test::RunOptions;
using test::RunProgram;
using test::RunResult;
using test::TempDir;

using Counts = std::map<std::string, int>;  // range name -> push/pop ranges

struct Stream {
  uint32_t pid = 0;
  Counts ranges;
  bool complete = false;
  bool read_ok = true;
  std::string close_reason;
  schema::EndReason end_reason = schema::END_REASON_UNSPECIFIED;
  uint32_t end_signal = 0;
};

Stream ReadStream(const std::string& path) {
  Stream s;
  stream::StreamReader r;
  if (!r.Open(path).ok())
    return s.read_ok = false, s;
  s.pid = r.header().pid();
  std::map<uint64_t, std::string> strings, registered;  // Python's nvtx package registers its messages
  schema::Chunk chunk;
  while (true) {
    bool has = false;
    if (!r.Next(&chunk, &has).ok())
      return s.read_ok = false, s;
    if (!has)
      break;
    for (const auto& str : chunk.strings())
      strings[str.id()] = str.text();
    for (const auto& str : chunk.nvtx_strings())
      registered[str.id()] = str.text();
    for (const auto& e : chunk.nvtx()) {
      if (e.kind() != schema::NVTX_EVENT_KIND_PUSH)
        continue;
      ++s.ranges[e.registered_string_id() != 0 ? registered[e.registered_string_id()] : strings[e.string_id()]];
    }
    if (chunk.has_stats()) {
      s.close_reason = chunk.stats().close_reason();
      s.end_reason = chunk.stats().end_reason();
      s.end_signal = chunk.stats().end_signal();
    }
  }
  s.complete = r.summary().end_of_stream && !r.summary().truncated;
  return s;
}

std::vector<Stream> ReadAll(const TempDir& dir) {
  std::vector<Stream> out;
  for (const std::string& f : dir.Find(".gtrace"))
    out.push_back(ReadStream(f));
  return out;
}

// The export of `inputs` (a directory or streams): pid -> range name -> count (NVTX push/pop ranges).
std::map<int64_t, Counts> Exported(const TempDir& dir, std::vector<std::string> inputs = {}) {
  std::map<int64_t, Counts> out;
  if (inputs.empty())
    inputs = {dir.path()};
  std::string db_path =
      dir.File("export-" + std::to_string(inputs.size()) + "-" + std::to_string(inputs[0].size()) + ".sqlite");
  std::vector<std::string> argv = {test::CliPath(), "export", "-o", db_path};
  argv.insert(argv.end(), inputs.begin(), inputs.end());
  RunResult e = RunProgram(argv);
  EXPECT_EQ(e.exit_code, 0) << e.err;
  EXPECT_EQ(e.err.find("no end marker"), std::string::npos) << e.err;
  EXPECT_EQ(e.err.find("cut off"), std::string::npos) << e.err;
  Db db(db_path);
  for (const std::string& row :
       db.Rows("SELECT (globalTid >> 24) & 16777215, COALESCE(text, (SELECT value FROM StringIds WHERE id = textId)), "
               "count(*) FROM NVTX_EVENTS WHERE eventType = 59 GROUP BY 1, 2 ORDER BY 1, 2")) {
    size_t a = row.find('|'), b = row.rfind('|');
    out[std::stoll(row.substr(0, a))][row.substr(a + 1, b - a - 1)] = std::stoi(row.substr(b + 1));
  }
  return out;
}

RunOptions Traced(const TempDir& dir) {
  RunOptions o = test::TracedRun(dir);
  o.timeout_s = 60;
  // A CI machine under load may not run the drain thread within the default 100 ms; the bound
  // itself is shown by exit.MarkEnd.BoundedWaitNoDeadlockAndResume.
  o.env["GTRACE_EXIT_WAIT_MS"] = "2000";
  return o;
}

std::string Program() {
  return test::SamplePath("exit_modes");
}

// A forked child that ends with _exit(0): its stream holds its ranges and says "_exit".
TEST(ExitPaths, ForkedChildUnderscoreExit) {
  TempDir dir;
  RunResult r = RunProgram({Program(), "fork_exit", "50"}, Traced(dir));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "child status 0\n");
  EXPECT_EQ(r.err, "");
  std::vector<Stream> s = ReadAll(dir);
  ASSERT_EQ(s.size(), 2u);
  std::map<Counts, Stream> by_ranges;
  for (const Stream& x : s)
    by_ranges[x.ranges] = x;
  ASSERT_EQ(by_ranges.count(Counts{{"child", 50}}), 1u);
  ASSERT_EQ(by_ranges.count(Counts{{"parent", 50}}), 1u);
  const Stream& child = by_ranges[Counts{{"child", 50}}];
  EXPECT_TRUE(child.complete);
  EXPECT_EQ(child.close_reason, "_exit");
  EXPECT_EQ(child.end_reason, schema::END_REASON_UNDERSCORE_EXIT);
  const Stream& parent = by_ranges[Counts{{"parent", 50}}];
  EXPECT_EQ(parent.end_reason, schema::END_REASON_EXIT);
  std::map<int64_t, Counts> exported = Exported(dir);
  EXPECT_EQ(exported, (std::map<int64_t, Counts>{{child.pid, {{"child", 50}}}, {parent.pid, {{"parent", 50}}}}));
}

// exec: the pre-exec image's stream is closed with "exec"; the new image writes its own.
TEST(ExitPaths, ExecClosesThePreExecStream) {
  TempDir dir;
  RunResult r = RunProgram({Program(), "exec", "40"}, Traced(dir));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  std::vector<Stream> s = ReadAll(dir);
  ASSERT_EQ(s.size(), 2u);
  std::map<Counts, Stream> by_ranges;
  for (const Stream& x : s)
    by_ranges[x.ranges] = x;
  ASSERT_EQ(by_ranges.count(Counts{{"before-exec", 40}}), 1u) << s[0].ranges.size() << " " << s[1].ranges.size();
  ASSERT_EQ(by_ranges.count(Counts{{"target", 40}}), 1u);
  const Stream& before = by_ranges[Counts{{"before-exec", 40}}];
  const Stream& after = by_ranges[Counts{{"target", 40}}];
  EXPECT_TRUE(before.complete);
  EXPECT_EQ(before.close_reason, "exec");
  EXPECT_EQ(before.end_reason, schema::END_REASON_EXEC);
  EXPECT_EQ(after.close_reason, "exit");
  EXPECT_EQ(s[0].pid, s[1].pid);  // one process, two images
  // Each image's stream exports on its own; both together: exec_merge_test.cc.
  std::vector<std::string> files = dir.Find(".gtrace");
  std::multiset<Counts> exported;
  for (const std::string& f : files) {
    for (const auto& [pid, counts] : Exported(dir, {f})) {
      EXPECT_EQ(pid, s[0].pid);
      exported.insert(counts);
    }
  }
  EXPECT_EQ(exported, (std::multiset<Counts>{{{"before-exec", 40}}, {{"target", 40}}}));
}

// exec that fails: errno is libc's, and the process records on into the same stream.
TEST(ExitPaths, FailedExecKeepsRecording) {
  TempDir dir;
  RunResult r = RunProgram({Program(), "exec_fail", "30"}, Traced(dir));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "execv returned -1 errno ENOENT\n");
  EXPECT_EQ(r.err, "");
  std::vector<Stream> s = ReadAll(dir);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].ranges, (Counts{{"after", 30}, {"before", 30}}));
  EXPECT_TRUE(s[0].complete);
  EXPECT_EQ(s[0].close_reason, "exit");  // the last end marker counts
  EXPECT_EQ(Exported(dir), (std::map<int64_t, Counts>{{s[0].pid, {{"after", 30}, {"before", 30}}}}));
}

// posix_spawn: parent and child each keep everything; the parent goes on.
TEST(ExitPaths, PosixSpawnLosesNothing) {
  TempDir dir;
  RunResult r = RunProgram({Program(), "spawn", "25"}, Traced(dir));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("spawn rc 0 child status 0\n"), std::string::npos) << r.out;
  EXPECT_EQ(r.err, "");
  std::vector<Stream> s = ReadAll(dir);
  ASSERT_EQ(s.size(), 2u);
  std::map<Counts, Stream> by_ranges;
  for (const Stream& x : s)
    by_ranges[x.ranges] = x;
  ASSERT_EQ(by_ranges.count(Counts{{"parent", 25}, {"parent-after", 25}}), 1u);
  ASSERT_EQ(by_ranges.count(Counts{{"target", 25}}), 1u);
  for (const Stream& x : s)
    EXPECT_EQ(x.close_reason, "exit");
  EXPECT_EQ(Exported(dir).size(), 2u);
}

// The export says how each process ended: META_DATA_CAPTURE PROCESS_n:END_REASON and, for ends
// without exit(), one DIAGNOSTIC_EVENT row; `gtrace info` too.
TEST(ExitPaths, ExportAndInfoShowTheEndReason) {
  TempDir dir;
  RunResult r = RunProgram({Program(), "fork_exit", "10"}, Traced(dir));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::string> files = dir.Find(".gtrace");
  ASSERT_EQ(files.size(), 2u);
  RunResult e = RunProgram({test::CliPath(), "export", "-o", dir.File("e.sqlite"), dir.path()});
  ASSERT_EQ(e.exit_code, 0) << e.err;
  Db db(dir.File("e.sqlite"));
  EXPECT_EQ(db.Rows("SELECT value FROM META_DATA_CAPTURE WHERE name LIKE 'PROCESS_%:END_REASON' ORDER BY value"),
            (std::vector<std::string>{"_exit", "exit"}));
  std::vector<std::string> rows = db.Rows("SELECT severity, text FROM DIAGNOSTIC_EVENT");
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_NE(rows[0].find("1|process "), std::string::npos) << rows[0];
  EXPECT_NE(rows[0].find(" ended by _exit; its stream is complete"), std::string::npos) << rows[0];
  std::string infos;
  for (const std::string& f : files)
    infos += RunProgram({test::CliPath(), "info", f}).out;
  EXPECT_NE(infos.find("closed         yes (_exit)"), std::string::npos) << infos;
  EXPECT_NE(infos.find("closed         yes (exit)"), std::string::npos) << infos;
}

// A stream cut by SIGKILL: END_REASON "cut" and the time of its last complete chunk.
TEST(ExitPaths, CutStreamShowsItsLastChunkTime) {
  TempDir dir;
  RunOptions o = Traced(dir);
  o.env["GTRACE_FLUSH_MS"] = "20";
  o.signal_to_send = SIGKILL;
  o.signal_after_output = "ready\n";
  o.signal_after_ms = 300;  // 15 flush intervals
  RunResult r = RunProgram({Program(), "signal_exit_wait", "5"}, o);
  EXPECT_EQ(r.term_signal, SIGKILL);
  std::vector<std::string> files = dir.Find(".gtrace");
  ASSERT_EQ(files.size(), 1u);
  Stream s = ReadStream(files[0]);
  EXPECT_FALSE(s.complete);
  EXPECT_EQ(s.ranges, (Counts{{"before", 5}}));
  RunResult e = RunProgram({test::CliPath(), "export", "-o", dir.File("c.sqlite"), files[0]});
  ASSERT_EQ(e.exit_code, 0) << e.err;
  Db db(dir.File("c.sqlite"));
  EXPECT_EQ(db.Text("SELECT value FROM META_DATA_CAPTURE WHERE name = 'PROCESS_0:END_REASON'"), "cut");
  std::optional<std::string> last =
      db.Text("SELECT value FROM META_DATA_CAPTURE WHERE name = 'PROCESS_0:LAST_CHUNK_TIME'");
  ASSERT_TRUE(last.has_value());
  // The last complete chunk is the one that holds the ranges (or a later clock snapshot).
  int64_t last_ns = std::stoll(*last);
  EXPECT_GE(last_ns, *db.Int("SELECT min(start) FROM NVTX_EVENTS"));
  EXPECT_EQ(db.Int("SELECT count(*) FROM DIAGNOSTIC_EVENT WHERE text LIKE '%no end marker%' AND timestamp = " + *last),
            1);
  RunResult info = RunProgram({test::CliPath(), "info", files[0]});
  EXPECT_NE(info.out.find("closed         no; last complete chunk at +"), std::string::npos) << info.out;
}

// ASan and UBSan handle SIGSEGV themselves (a report, then their own exit): the crash-signal path is
// shown by the plain build.
bool SanitizerHandlesSegv() {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_UNDEFINED__)
  return true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(undefined_behavior_sanitizer)
  return true;
#else
  return false;
#endif
#else
  return false;
#endif
}

void ExpectEndedBySignal(const std::string& mode, int sig, const std::string& reason, schema::EndReason kind) {
  // Without gtrace first: the same signal.
  RunOptions plain;
  plain.unset_env = {"LD_PRELOAD", "NVTX_INJECTION64_PATH"};
  RunResult without = RunProgram({Program(), mode, "20"}, plain);
  EXPECT_EQ(without.term_signal, sig) << mode;
  TempDir dir;
  RunResult r = RunProgram({Program(), mode, "20"}, Traced(dir));
  EXPECT_EQ(r.term_signal, without.term_signal) << mode << ": " << r.err;
  EXPECT_EQ(r.exit_code, without.exit_code) << mode;
  // One line says where the process died (collector/crash_report.h): the signal, the thread, and
  // the stack as module+offset with the program's own frames in it.
  const std::string head = std::string("gtrace: the process got ") + (sig == SIGSEGV ? "SIGSEGV at address 0x" : "SIGABRT on thread ");
  EXPECT_EQ(r.err.rfind(head, 0), 0u) << mode << ": " << r.err;
  EXPECT_NE(r.err.find("'exit_modes'; its stack (module+file offset, innermost first): "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(" < exit_modes+0x"), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  std::vector<Stream> s = ReadAll(dir);
  ASSERT_EQ(s.size(), 1u) << mode;
  EXPECT_EQ(s[0].ranges, (Counts{{"before", 20}})) << mode;
  EXPECT_TRUE(s[0].complete) << mode;
  EXPECT_EQ(s[0].close_reason, reason) << mode;
  EXPECT_EQ(s[0].end_reason, kind) << mode;
  EXPECT_EQ(s[0].end_signal, kind == schema::END_REASON_SIGNAL ? static_cast<uint32_t>(sig) : 0u) << mode;
  EXPECT_EQ(Exported(dir), (std::map<int64_t, Counts>{{s[0].pid, {{"before", 20}}}})) << mode;
}

TEST(ExitPaths, AbortWithoutHandler) {
  ExpectEndedBySignal("abort", SIGABRT, "abort", schema::END_REASON_ABORT);
}

TEST(ExitPaths, SegvDefaultAction) {
  if (SanitizerHandlesSegv()) GTEST_SKIP() << "sanitizer build: ASan/UBSan take SIGSEGV themselves";
  ExpectEndedBySignal("segv", SIGSEGV, "signal SIGSEGV", schema::END_REASON_SIGNAL);
}

void ExpectExitCode(const std::string& mode, int code, const Counts& ranges, const std::string& reason) {
  RunOptions plain;
  plain.unset_env = {"LD_PRELOAD", "NVTX_INJECTION64_PATH"};
  RunResult without = RunProgram({Program(), mode, "20"}, plain);
  EXPECT_EQ(without.exit_code, code) << mode;
  TempDir dir;
  RunResult r = RunProgram({Program(), mode, "20"}, Traced(dir));
  EXPECT_EQ(r.exit_code, code) << mode << ": " << r.err;
  EXPECT_EQ(r.term_signal, 0) << mode;
  EXPECT_EQ(r.out, without.out) << mode;
  EXPECT_EQ(r.err, "") << mode;
  std::vector<Stream> s = ReadAll(dir);
  ASSERT_EQ(s.size(), 1u) << mode;
  EXPECT_EQ(s[0].ranges, ranges) << mode;
  EXPECT_TRUE(s[0].complete) << mode;
  EXPECT_EQ(s[0].close_reason, reason) << mode;
  EXPECT_EQ(Exported(dir), (std::map<int64_t, Counts>{{s[0].pid, ranges}})) << mode;
}

// abort() with the application's SIGABRT handler, which calls _exit(42).
TEST(ExitPaths, AbortWithHandler) {
  ExpectExitCode("abort_handler", 42, {{"before", 20}}, "_exit");
}

// SIGSEGV with a handler that siglongjmps back: the program goes on and exits normally.
TEST(ExitPaths, SegvHandlerThatLongjmps) {
  if (SanitizerHandlesSegv()) GTEST_SKIP() << "sanitizer build: ASan/UBSan take SIGSEGV themselves";
  ExpectExitCode("segv_longjmp", 0, {{"after", 20}, {"before", 20}}, "exit");
}

// _exit from a signal handler.
TEST(ExitPaths, UnderscoreExitFromSignalHandler) {
  ExpectExitCode("signal_exit", 9, {{"before", 20}}, "_exit");
}

// Four threads call _exit at the same moment: every thread's ranges are in, exit status 5.
TEST(ExitPaths, UnderscoreExitFromFourThreadsAtOnce) {
  ExpectExitCode("threads_exit", 5, {{"thread", 80}}, "_exit");
}

// Python multiprocessing (issue 14's report): four workers x 100 ranges, every start method.
void ExpectWorkers(const std::string& method, const std::string& kind) {
  if (RunProgram({"python3", "-c", "import nvtx"}).exit_code != 0)
    GTEST_SKIP() << "python3 nvtx package missing";
  TempDir dir;
  RunOptions o = Traced(dir);
  o.timeout_s = 120;
  RunResult r = RunProgram({"python3", test::SourceDir() + "/tests/exit/programs/mp_workers.py", method, kind}, o);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "done 0 0 0 0\n");
  EXPECT_EQ(r.err, "");
  std::multiset<Counts> with_ranges;
  for (const Stream& s : ReadAll(dir)) {
    EXPECT_TRUE(s.read_ok);
    if (s.ranges.empty())
      continue;  // a helper process that loaded NVTX without recording
    EXPECT_TRUE(s.complete) << s.pid << " " << s.close_reason;
    with_ranges.insert(s.ranges);
  }
  std::multiset<Counts> expected = {
      {{"parent", 1}}, {{"work", 100}}, {{"work", 100}}, {{"work", 100}}, {{"work", 100}}};
  EXPECT_EQ(with_ranges, expected);
  std::multiset<Counts> exported;
  for (const auto& [pid, counts] : Exported(dir))
    exported.insert(counts);
  EXPECT_EQ(exported, expected);
}

TEST(ExitPaths, PythonForkProcess) {
  ExpectWorkers("fork", "process");
}
TEST(ExitPaths, PythonForkPool) {
  ExpectWorkers("fork", "pool");
}
TEST(ExitPaths, PythonSpawnProcess) {
  ExpectWorkers("spawn", "process");
}
TEST(ExitPaths, PythonSpawnPool) {
  ExpectWorkers("spawn", "pool");
}
TEST(ExitPaths, PythonForkserverPool) {
  ExpectWorkers("forkserver", "pool");
}

}  // namespace
}  // namespace gt
