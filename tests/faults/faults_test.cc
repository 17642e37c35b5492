// The fault matrix: for each way a job can go wrong, the host application's exit status and output
// are what they are without gtrace, the data is kept as promised, losses are counted, and gtrace
// says so in one `gtrace:` line. (SIGTERM, SIGKILL, fork, an unwritable directory and a program
// without NVTX are in tests/integration/process_test.cc.)
#include <gtest/gtest.h>
#include <signal.h>
#include <time.h>
#include <sys/mount.h>
#include <unistd.h>

#include <sys/stat.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <set>
#include <regex>

#include "gtrace.pb.h"
#include "tests/common/test_util.h"
#include "tools/stream/stream_reader.h"

namespace gt {
namespace {

using test::RunOptions;
using test::RunProgram;
using test::RunResult;
using test::TempDir;

struct Content {
  uint64_t nvtx = 0, thread_drops = 0, cupti_drops = 0, end_drops = 0, kernels = 0, api_calls = 0;
  bool complete = false, read_ok = true;
  std::vector<std::string> pushed;
};

Content Read(const std::string& path) {
  Content c;
  stream::StreamReader r;
  if (!r.Open(path).ok()) return c.read_ok = false, c;
  std::map<uint64_t, std::string> strings, registered;
  schema::Chunk chunk;
  while (true) {
    bool has = false;
    if (!r.Next(&chunk, &has).ok()) return c.read_ok = false, c;
    if (!has) break;
    for (const auto& s : chunk.strings()) strings[s.id()] = s.text();
    for (const auto& s : chunk.nvtx_strings()) registered[s.id()] = s.text();
    for (const auto& e : chunk.nvtx()) {
      ++c.nvtx;
      if (e.kind() != schema::NVTX_EVENT_KIND_PUSH) continue;
      c.pushed.push_back(e.registered_string_id() != 0 ? registered[e.registered_string_id()] : strings[e.string_id()]);
    }
    c.kernels += static_cast<uint64_t>(chunk.cuda_kernels_size());
    c.api_calls += static_cast<uint64_t>(chunk.cuda_api_calls_size());
    for (const auto& d : chunk.drops()) {
      bool cupti = d.source() == schema::DROP_SOURCE_CUPTI || d.source() == schema::DROP_SOURCE_CUPTI_BUFFER;
      (cupti ? c.cupti_drops : c.thread_drops) += d.dropped_records();
      if (d.source() == schema::DROP_SOURCE_PROCESS_END) c.end_drops += d.dropped_records();
    }
  }
  c.complete = r.summary().end_of_stream;
  return c;
}

uint64_t Field(const std::string& out, const std::string& name) {
  std::smatch m;
  std::regex re(name + "=([0-9]+)");
  return std::regex_search(out, m, re) ? std::stoull(m[1]) : 0;
}

int Lines(const std::string& text, const std::string& prefix) {
  int n = 0;
  size_t at = 0;
  while ((at = text.find(prefix, at)) != std::string::npos) {
    if (at == 0 || text[at - 1] == '\n') ++n;
    at += prefix.size();
  }
  return n;
}

RunOptions WithFakeCupti(const TempDir& dir) {
  RunOptions o = test::TracedRun(dir);
  o.env["GTRACE_CUPTI_PATH"] = test::BinaryDir() + "/lib/libgt_fake_cupti.so";
  o.env["GTRACE_FLUSH_MS"] = "50";
  o.timeout_s = 120;
  return o;
}

// 64 threads hammer NVTX and (fake) CUDA for 10 s: the process finishes normally, the stream is
// complete and readable, and every NVTX call and kernel is either in it or counted as dropped.
TEST(Faults, SixtyFourThreadsForTenSeconds) {
  TempDir dir;
  RunResult r = RunProgram({test::SamplePath("hammer"), "64", "10"}, WithFakeCupti(dir));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  uint64_t calls = Field(r.out, "nvtx_calls"), kernels = Field(r.out, "kernels");
  ASSERT_GT(calls, 0u);
  std::vector<std::string> streams = dir.Find(".gtrace");
  // Once (stress-suite, 2026-12-03) no stream was here after an exit status 0; say what the library said.
  std::string listing = dir.path() + ":";
  for (const std::string& n : TempDir::ListDir(dir.path())) listing += " " + n;
  ASSERT_EQ(streams.size(), 1u) << r.err << listing;
  Content c = Read(streams[0]);
  ASSERT_TRUE(c.read_ok);
  EXPECT_TRUE(c.complete);
  EXPECT_EQ(c.nvtx + c.thread_drops, calls);
  // Each launch makes an API record and a kernel record; CUPTI-side losses are counted together.
  EXPECT_EQ(c.kernels + c.api_calls + c.cupti_drops, 2 * kernels);
  // Drops, if any, are announced; nothing else is, except the documented line for threads that
  // waited for the drain thread instead of dropping (GTRACE_FULL_RING=wait, the default: 64 threads
  // on 2 cores, and a slower sanitizer build, make such waits likely, never certain).
  if (c.thread_drops + c.cupti_drops == 0) {
    std::string err = r.err;
    const std::string waited = "gtrace: application threads waited ";
    if (err.rfind(waited, 0) == 0 && Lines(err, "gtrace: ") == 1 && err.back() == '\n') err.clear();
    EXPECT_EQ(err, "") << r.err;
  }
  RunResult e = RunProgram({test::CliPath(), "export", streams[0]});
  EXPECT_EQ(e.exit_code, 0) << e.err;
}

// Issue 28, items 1 and 7: the application owns its descriptor table. Whatever it does to fds
// 3..limit (dup2 its log over them, close them all) or to the stream file (deleted by a cleanup
// job), its own file gets only its own bytes and the stream keeps every range, complete.
struct Takeover {
  RunResult run;
  Content stream;
  std::string log;
};

Takeover RunTakeover(const TempDir& dir, const std::string& mode, const std::string& arg) {
  RunOptions o = test::TracedRun(dir, "takeover");
  o.env["GTRACE_FLUSH_MS"] = "50";
  Takeover t;
  t.run = RunProgram({test::SamplePath("fd_takeover"), mode, arg}, o);
  std::vector<std::string> streams = dir.Find(".gtrace");
  if (streams.size() == 1) t.stream = Read(streams[0]);
  if (access(dir.File("app.log").c_str(), F_OK) == 0) t.log = test::ReadFile(dir.File("app.log"));
  return t;
}

void ExpectEveryRange(const Takeover& t) {
  ASSERT_TRUE(t.stream.read_ok);
  EXPECT_TRUE(t.stream.complete);
  EXPECT_EQ(t.stream.thread_drops, 0u);
  EXPECT_EQ(std::count(t.stream.pushed.begin(), t.stream.pushed.end(), "before"), 500);
  EXPECT_EQ(std::count(t.stream.pushed.begin(), t.stream.pushed.end(), "after"), 500);
  EXPECT_EQ(t.stream.pushed.size(), 1000u);
}

std::string ReopenedLine(const TempDir& dir) {
  return "gtrace: the application closed or replaced gtrace's stream descriptor (closefrom/dup2); reopened " +
         dir.File("takeover.gtrace") + ", nothing lost\n";
}

TEST(Faults, LogDup2edOverLowFdsGetsOnlyTheApplicationsLines) {
  TempDir dir;
  Takeover t = RunTakeover(dir, "low", dir.File("app.log"));
  ASSERT_EQ(t.run.exit_code, 0) << t.run.err;
  EXPECT_EQ(t.run.out, "done\n");
  std::string expected;
  for (int i = 0; i < 17; ++i) expected += "app\n";
  EXPECT_EQ(t.log, expected);
  EXPECT_EQ(t.run.err, "");  // gtrace's descriptor was never in the way
  ExpectEveryRange(t);
}

TEST(Faults, LogDup2edOverEveryFdIsNeverWrittenAndTheStreamIsReopened) {
  TempDir dir;
  Takeover t = RunTakeover(dir, "all", dir.File("app.log"));
  ASSERT_EQ(t.run.exit_code, 0) << t.run.err;
  EXPECT_EQ(t.log, "app\n");
  EXPECT_EQ(t.run.err, ReopenedLine(dir));
  ExpectEveryRange(t);
}

TEST(Faults, ClosefromMidRunLosesNothing) {
  TempDir dir;
  Takeover t = RunTakeover(dir, "closefrom", "-");
  ASSERT_EQ(t.run.exit_code, 0) << t.run.err;
  EXPECT_EQ(t.run.err, ReopenedLine(dir));
  ExpectEveryRange(t);
}

TEST(Faults, StreamDeletedMidRunIsWrittenAgain) {
  TempDir dir;
  Takeover t = RunTakeover(dir, "delete", dir.path());
  ASSERT_EQ(t.run.exit_code, 0) << t.run.err;
  EXPECT_EQ(t.run.err, "gtrace: " + dir.File("takeover.gtrace") +
                           " was deleted while the process ran; written again from gtrace's descriptor\n");
  ExpectEveryRange(t);
}

// Issue 28, item 2: a signal handler's NVTX call during the first NVTX call's session start finishes
// (it used to spin for ever in nvtxInitOnce), and every range of the main thread is kept.
TEST(Faults, NvtxFromASignalHandlerDuringTheSessionStartDoesNotHang) {
  TempDir dir;
  RunOptions o = test::TracedRun(dir, "sig");
  o.timeout_s = 20;
  RunResult r = RunProgram({test::SamplePath("nvtx_signal_init"), dir.File("sig.gtrace")}, o);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "handled\n");
  EXPECT_EQ(r.err, "");
  std::vector<std::string> streams = dir.Find(".gtrace");
  ASSERT_EQ(streams.size(), 1u);
  Content c = Read(streams[0]);
  ASSERT_TRUE(c.read_ok);
  EXPECT_TRUE(c.complete);
  EXPECT_EQ(std::count(c.pushed.begin(), c.pushed.end(), "first"), 1);
  EXPECT_EQ(std::count(c.pushed.begin(), c.pushed.end(), "after"), 100);
}

// Issue 28, item 3: 64 threads recording NVTX without pause when the process ends. Their spinning
// took the drain thread's CPU: exit() took 3.5 s (0.2 s without gtrace), SIGTERM outlasted its 3 s
// wait and left the stream without its end. Now the end decodes for at most 0.5 s, counts the rest
// and closes the stream: bounded, complete, and every record either written or counted (by ring
// slot past the deadline). Measured 0.7-1.1 s from the exit call to the parent's wait, load average
// 5-7 on 2 cores. (Growth now leaves the budget room for threads yet to start: before, the first
// threads grew into all of it and the later ones dropped 58 % of the records as "no free buffer".)
void ExpectBoundedEnd(const std::string& mode) {
  TempDir dir;
  RunOptions o = test::TracedRun(dir, "busy");
  o.timeout_s = 60;
  RunResult r = RunProgram({test::SamplePath("busy_exit"), "64", "2", mode}, o);
  timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  uint64_t returned_ns = static_cast<uint64_t>(now.tv_sec) * 1000000000ull + static_cast<uint64_t>(now.tv_nsec);
  uint64_t exit_at_ns = Field(r.out, "exit_at_ns");
  ASSERT_GT(exit_at_ns, 0u) << r.out << r.err;
  if (mode == "term") {
    EXPECT_EQ(r.term_signal, SIGTERM) << r.err;
  } else {
    EXPECT_EQ(r.exit_code, 0) << r.err;
  }
  // 0.5 s of decoding, the count, the last write and the kernel's exit: within the 3 s the SIGTERM
  // handler waits and well within the 5 s exit() waits. Sanitizer builds decode and count several
  // times slower; there only the stream's completeness is checked.
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
  EXPECT_LT(returned_ns - exit_at_ns, 2500000000ull) << r.err;
#endif
  EXPECT_EQ(r.err.find("did not finish"), std::string::npos) << r.err;
  std::vector<std::string> streams = dir.Find(".gtrace");
  ASSERT_EQ(streams.size(), 1u);
  Content c = Read(streams[0]);
  ASSERT_TRUE(c.read_ok);
  EXPECT_TRUE(c.complete) << r.err;
  EXPECT_GT(c.nvtx, 0u);
  // What the end did not write is in the stream as a count and in the one drop line.
  if (c.end_drops > 0) {
    EXPECT_NE(r.err.find(" recorded just before the process ended were not written"), std::string::npos) << r.err;
  }
}

TEST(Faults, SixtyFourThreadsStillRecordingAtExitEndBoundedAndComplete) { ExpectBoundedEnd("exit"); }
TEST(Faults, SixtyFourThreadsStillRecordingAtSigtermEndBoundedAndComplete) { ExpectBoundedEnd("term"); }

// Issue 28, item 5: a thread per task, one alive at a time, 5,000 of them. Exited threads' buffers
// waited for the drain thread's 10 ms round to be freed, so new threads found none and dropped
// 2-11 % of their records. Now an exiting thread wakes the drain thread, and a new thread that finds
// only retired buffers waits for one to be freed: every range is kept.
TEST(Faults, FiveThousandShortLivedThreadsLoseNothing) {
  TempDir dir;
  RunOptions o = test::TracedRun(dir, "churn");
  o.timeout_s = 120;
  RunResult r = RunProgram({test::SamplePath("thread_churn"), "5000", "20"}, o);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  uint64_t calls = Field(r.out, "nvtx_calls");
  ASSERT_EQ(calls, 200000u);
  std::vector<std::string> streams = dir.Find(".gtrace");
  ASSERT_EQ(streams.size(), 1u);
  Content c = Read(streams[0]);
  ASSERT_TRUE(c.read_ok);
  EXPECT_TRUE(c.complete);
  EXPECT_EQ(c.thread_drops, 0u) << r.err;
  EXPECT_EQ(c.nvtx, calls);
  // The one line a loaded machine may add: threads waited for the drain thread (documented).
  std::string err = r.err;
  const std::string waited = "gtrace: application threads waited ";
  if (err.rfind(waited, 0) == 0 && Lines(err, "gtrace: ") == 1) err.clear();
  EXPECT_EQ(err, "");
}

// Issue 28, item 4: a signal handler that records on a thread inside an NVTX call never corrupts a
// record: every range keeps its whole name, and every call is in the stream or counted as dropped.
TEST(Faults, SignalHandlerRecordingInsideARecordCorruptsNothing) {
  TempDir dir;
  RunOptions o = test::TracedRun(dir, "reentry");
  RunResult r = RunProgram({test::SamplePath("nvtx_signal_reentry"), "1"}, o);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  uint64_t main_calls = Field(r.out, "main_calls"), handler_calls = Field(r.out, "handler_calls");
  ASSERT_GT(handler_calls, 100u) << r.out;  // the timer did interrupt the loop
  std::vector<std::string> streams = dir.Find(".gtrace");
  ASSERT_EQ(streams.size(), 1u);
  Content c = Read(streams[0]);
  ASSERT_TRUE(c.read_ok);
  EXPECT_TRUE(c.complete);
  EXPECT_EQ(c.nvtx + c.thread_drops, main_calls + handler_calls);
  size_t bad = 0;
  for (const std::string& name : c.pushed) {
    if (name != "main-range-with-a-name-longer-than-one-slot-of-sixty-four-bytes-so-it-spans-two") ++bad;
  }
  EXPECT_EQ(bad, 0u) << "of " << c.pushed.size() << " ranges";
}

// os._exit: gtrace's _exit closes the stream first (issue 14), so everything is kept.
TEST(Faults, PythonOsExitKeepsEverything) {
  if (RunProgram({"python3", "-c", "import nvtx"}).exit_code != 0) GTEST_SKIP() << "python3 nvtx package missing";
  TempDir dir;
  RunOptions o = test::TracedRun(dir);
  o.env["GTRACE_FLUSH_MS"] = "50";
  o.env["GTRACE_EXIT_WAIT_MS"] = "2000";  // a loaded CI machine; the bound has its own test
  RunResult r = RunProgram({"python3", test::SourceDir() + "/tests/faults/programs/python_exits.py", "os_exit"}, o);
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_EQ(r.err, "");
  std::vector<std::string> streams = dir.Find(".gtrace");
  ASSERT_EQ(streams.size(), 1u);
  Content c = Read(streams[0]);
  EXPECT_TRUE(c.complete);  // os._exit runs no exit handlers, but it calls _exit
  EXPECT_EQ(c.pushed, (std::vector<std::string>{"before", "after-sleep"}));
}

TEST(Faults, PythonSigintEndsAsWithoutGtrace) {
  if (RunProgram({"python3", "-c", "import nvtx"}).exit_code != 0) GTEST_SKIP() << "python3 nvtx package missing";
  std::string script = test::SourceDir() + "/tests/faults/programs/python_exits.py";
  RunOptions plain;
  plain.unset_env = {"LD_PRELOAD", "NVTX_INJECTION64_PATH"};
  plain.signal_to_send = SIGINT;
  plain.signal_after_output = "ready\n";
  RunResult without = RunProgram({"python3", script, "sigint"}, plain);
  TempDir dir;
  RunOptions o = test::TracedRun(dir);
  o.signal_to_send = SIGINT;
  o.signal_after_output = "ready\n";
  RunResult with = RunProgram({"python3", script, "sigint"}, o);
  EXPECT_EQ(with.exit_code, without.exit_code);
  EXPECT_EQ(with.term_signal, without.term_signal);
  EXPECT_EQ(with.out, "ready\n");
  EXPECT_NE(with.err.find("KeyboardInterrupt"), std::string::npos) << with.err;
  EXPECT_EQ(Lines(with.err, "gtrace:"), 0) << with.err;
  std::vector<std::string> streams = dir.Find(".gtrace");
  ASSERT_EQ(streams.size(), 1u);
  Content c = Read(streams[0]);
  EXPECT_EQ(c.pushed, (std::vector<std::string>{"before", "waiting"}));  // flushed by the SIGINT handler
}

// A full disk: the application runs on, one line says what happened, the file stays readable (it
// ends on a chunk boundary), and what could not be written is counted.
TEST(Faults, DiskFull) {
  TempDir dir;
  std::string mnt = dir.File("tiny");
  ASSERT_EQ(mkdir(mnt.c_str(), 0755), 0);
  if (mount("tmpfs", mnt.c_str(), "tmpfs", 0, "size=128k") != 0) {
    GTEST_SKIP() << "cannot mount a small tmpfs here (needs root): " << strerror(errno);
  }
  RunOptions o = test::TracedRun(dir);
  o.env["GTRACE_OUTPUT"] = mnt + "/full-%p";
  o.env["GTRACE_FLUSH_MS"] = "20";
  RunResult r = RunProgram({test::SamplePath("nvtx_threads"), "--threads", "4", "--iterations", "2000", "--work-us", "50"},
                           o);
  std::vector<std::string> streams;
  for (const auto& f : test::TempDir::ListDir(mnt)) streams.push_back(mnt + "/" + f);
  Content c = streams.empty() ? Content{} : Read(streams[0]);
  umount(mnt.c_str());
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out, "nvtx_threads: 4 threads x 2000 iterations done\n");
  EXPECT_EQ(Lines(r.err, "gtrace:"), 1) << r.err;
  EXPECT_NE(r.err.find("No space left on device"), std::string::npos) << r.err;
  ASSERT_EQ(streams.size(), 1u);
  EXPECT_TRUE(c.read_ok);  // cut back to the last whole chunk: readable, not damaged
  EXPECT_GT(c.nvtx, 0u);
  EXPECT_LT(c.nvtx, 30u + 4u * (2000u * 4u + 3u));  // not everything fitted
}

// Every GTRACE_* variable with a bad value: the application is unaffected, the library says which
// variable it ignored (one line each), and recording goes on with the default.
TEST(Faults, BadValueInEveryVariable) {
  const std::map<std::string, std::string> bad = {
      {"GTRACE_TRACE", "cuda,warp-drive"},     {"GTRACE_BUFFER_MB", "-1"},
      {"GTRACE_THREAD_BUFFER_KB", "huge"},     {"GTRACE_FLUSH_MS", "0"},
      {"GTRACE_FORCE_OVERWRITE", "perhaps"},   {"GTRACE_TRACE_FORK_BEFORE_EXEC", "sometimes"},
      {"GTRACE_CAPTURE_RANGE", "whenever"},    {"GTRACE_CAPTURE_RANGE_END", "later"},
      {"GTRACE_DELAY", "soon"},                {"GTRACE_DURATION", "-3"},
      {"GTRACE_CUDA_GRAPH_TRACE", "sideways"}, {"GTRACE_CUDA_MEMORY_USAGE", "lots"},
      {"GTRACE_CUDA_BUFFER_MB", "0"},          {"GTRACE_NCCL_TRACE", "everything-please"},
      {"GTRACE_NCCL_POOL_EVENTS", "x"},        {"GTRACE_EXIT_WAIT_MS", "0"},
  };
  // NCCL's settings are read when NCCL loads the plugin: those runs use the fake NCCL host.
  for (const auto& [name, value] : bad) {
    TempDir dir;
    RunOptions o = WithFakeCupti(dir);
    o.env[name] = value;
    bool nccl = name.rfind("GTRACE_NCCL_", 0) == 0;
    RunResult r = nccl ? RunProgram({test::SamplePath("fake_nccl_host")}, o)
                       : RunProgram({test::SamplePath("fake_cuda_app"), "exit", "5"}, o);
    EXPECT_EQ(r.exit_code, nccl ? 0 : 5) << name << "\n" << r.err;
    EXPECT_GE(Lines(r.err, "gtrace: "), 1) << name;
    EXPECT_NE(r.err.find(name), std::string::npos) << name << ": the message must name the variable\n" << r.err;
    EXPECT_EQ(dir.Find(".gtrace").size(), 1u) << name;
  }
}

// Every `gtrace profile` option with a bad value: exit 2 and a message naming the option, before the
// command runs.
TEST(Faults, BadValueInEveryProfileFlag) {
  RunResult help = RunProgram({test::CliPath(), "profile", "--help"});
  ASSERT_EQ(help.exit_code, 0);
  std::regex flag_re("--([a-z0-9-]+)=([A-Z][A-Z_\\[\\]@.:|a-z]*)");
  std::vector<std::string> flags;
  for (auto it = std::sregex_iterator(help.out.begin(), help.out.end(), flag_re); it != std::sregex_iterator(); ++it) {
    flags.push_back((*it)[1]);
  }
  ASSERT_GE(flags.size(), 10u) << help.out;
  // Options whose value is any text by nature (a name pattern, a range name, a path).
  const std::set<std::string> free_text = {"output", "nvtx-capture"};
  TempDir dir;
  for (const std::string& f : flags) {
    if (free_text.count(f)) continue;
    RunOptions o;
    o.cwd = dir.path();
    RunResult r = RunProgram({test::CliPath(), "profile", "--" + f + "=\x01nonsense", "--", "true"}, o);
    EXPECT_EQ(r.exit_code, 2) << f << "\n" << r.err;
    EXPECT_NE(r.err.find(f), std::string::npos) << f << "\n" << r.err;
  }
}

// A host that uses libprotobuf itself runs exactly as without gtrace.
TEST(Faults, HostWithItsOwnProtobuf) {
  RunOptions plain;
  plain.unset_env = {"LD_PRELOAD"};
  RunResult without = RunProgram({test::SamplePath("protobuf_user")}, plain);
  TempDir dir;
  RunResult with = RunProgram({test::SamplePath("protobuf_user")}, test::TracedRun(dir));
  ASSERT_EQ(without.exit_code, 0) << without.err;
  EXPECT_EQ(with.exit_code, 0);
  EXPECT_EQ(with.out, without.out);
  EXPECT_EQ(with.err, "");
}

}  // namespace
}  // namespace gt
