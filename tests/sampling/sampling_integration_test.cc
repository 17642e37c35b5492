// CPU sampling end to end (issue 18): cpu_burn under LD_PRELOAD=libgtrace.so with
// GTRACE_SAMPLE=process-tree, exported by the gtrace CLI, asserted with SQL on COMPOSITE_EVENTS /
// SAMPLING_CALLCHAINS and with the cpu_samples_* reports:
//  - the main thread's samples split 70/30 between burn_a and burn_b (within 5 points), their count
//    matches its CPU time at 1 kHz, their stacks are burn_x <- main, their times lie inside the loop
//    (on the CLOCK_MONOTONIC stream and on the tick stream);
//  - a thread started after the session (burn-worker) is sampled too, in worker_c;
//  - perf_event_open refused by seccomp (a container's default profile): one `gtrace:` line, the
//    program's output and exit status unchanged, no samples.
// Skipped, with the reason, where this machine refuses perf_event_open itself (perf_event_paranoid 3,
// a seccomp profile around the test runner).
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "tests/common/test_util.h"
#include "tests/common/traced_export.h"

namespace gt {
namespace {

using test::Db;
using test::RunOptions;
using test::RunProgram;
using test::RunResult;
using test::TempDir;

struct SampledRun {
  RunResult run;
  std::string db;
  long cpu_ms = 0, loop_start_ns = 0, loop_end_ns = 0;
};

SampledRun SampleAndExport(const TempDir& dir, std::vector<std::string> argv, std::map<std::string, std::string> env) {
  SampledRun r;
  RunOptions o = test::TracedRun(dir);
  o.preload = true;
  o.env["GTRACE_TRACE"] = "none";
  o.env["GTRACE_SAMPLE"] = "process-tree";
  o.env["CPU_BURN_WAIT_SAMPLED"] = "1";  // each thread starts its work once it is sampled (cpu_burn.cc)
  for (auto& [k, v] : env)
    o.env[k] = v;
  r.run = RunProgram(argv, o);
  std::istringstream out(r.run.out);
  std::string word;
  out >> word >> r.cpu_ms >> word >> r.loop_start_ns >> r.loop_end_ns;
  r.db = dir.File("out.sqlite");
  std::vector<std::string> streams = dir.Find(".gtrace");
  EXPECT_EQ(streams.size(), 1u);
  RunResult ex = test::CliExport(streams, r.db);
  EXPECT_EQ(ex.exit_code, 0) << ex.err;
  return r;
}

// The line of cpu_burn.cc that expands GT_BURN_FOR with this seed: where the symbolizer puts a sample
// inside that burner's loop (the macro expands at its invocation's line).
int BurnLoopLine(const std::string& seed) {
  std::ifstream in(test::SourceDir() + "/tests/sampling/programs/cpu_burn.cc");
  std::string line;
  for (int n = 1; std::getline(in, line); ++n)
    if (line.find("GT_BURN_FOR(ns, " + seed) != std::string::npos)
      return n;
  ADD_FAILURE() << "no GT_BURN_FOR(ns, " << seed << " in cpu_burn.cc";
  return -1;
}

// Per-thread leaf functions: "thread|function|samples".
constexpr char kMainThread[] = "(e.globalTid & 16777215) = ((e.globalTid >> 24) & 16777215)";
std::string LeafCount(const char* thread_cond, const char* function) {
  return std::string(
             "SELECT count(*) FROM COMPOSITE_EVENTS e JOIN SAMPLING_CALLCHAINS c ON c.id = e.id AND "
             "c.stackDepth = 0 JOIN StringIds s ON s.id = c.symbol WHERE ") +
         thread_cond + " AND s.value LIKE '" + function + " at %'";
}

TEST(SamplingKnown, SharesStacksAndThreadsOfThePlantedWork) {
  if (std::string why = test::PerfEventRefusal(); !why.empty())
    GTEST_SKIP() << why;
  TempDir dir;
  SampledRun r = SampleAndExport(dir, {test::SamplePath("cpu_burn"), "1000", "200"}, {});
  ASSERT_EQ(r.run.exit_code, 0) << r.run.err;
  EXPECT_EQ(r.run.out.rfind("done ", 0), 0u) << r.run.out;
  EXPECT_EQ(r.run.err.find("gtrace:"), std::string::npos) << r.run.err;
  Db db(r.db);
  ASSERT_TRUE(db.ok()) << db.error();

  // Main thread: one sample per ms of its CPU time (cpu-clock), 70 % burn_a, 30 % burn_b.
  int64_t main_n = *db.Int(std::string("SELECT count(*) FROM COMPOSITE_EVENTS e WHERE ") + kMainThread);
  EXPECT_GE(main_n, r.cpu_ms * 90 / 100) << "main thread CPU ms " << r.cpu_ms;
  EXPECT_LE(main_n, r.cpu_ms + 2);
  int64_t a = *db.Int(LeafCount(kMainThread, "burn_a"));
  int64_t b = *db.Int(LeafCount(kMainThread, "burn_b"));
  ASSERT_GT(main_n, 0);
  double a_pct = 100.0 * static_cast<double>(a) / static_cast<double>(main_n);
  double b_pct = 100.0 * static_cast<double>(b) / static_cast<double>(main_n);
  EXPECT_NEAR(a_pct, 70.0, 5.0) << a << " of " << main_n;
  EXPECT_NEAR(b_pct, 30.0, 5.0) << b << " of " << main_n;
  EXPECT_GE(a + b, main_n * 97 / 100);  // nearly every sample lands in a burner's own loop
  // Their stacks: burn_x <- main, symbolized with file:line from the DWARF of cpu_burn. Counted from the
  // leaf: a sample in the prologue of a callee (ThreadCpuNs, called every ~20 us, before its `push rbp`)
  // also has main one frame up, as the kernel's frame-pointer walk skips the burner there; and a sample
  // in a burner's own prologue or epilogue (its `{` / `}` lines) has main's caller there. So every
  // sample inside the burners' loops (the GT_BURN_FOR lines) has main right above it, exactly.
  const std::string loop_leaf = "(l.value LIKE 'burn_a at %cpu_burn.cc:" + std::to_string(BurnLoopLine("1ul")) +
                                "' OR l.value LIKE 'burn_b at %cpu_burn.cc:" + std::to_string(BurnLoopLine("2ul")) +
                                "')";
  const std::string with_caller =
      "SELECT count(*) FROM COMPOSITE_EVENTS e JOIN SAMPLING_CALLCHAINS c0 ON c0.id = e.id AND c0.stackDepth = 0 "
      "JOIN StringIds l ON l.id = c0.symbol LEFT JOIN SAMPLING_CALLCHAINS c1 ON c1.id = e.id AND c1.stackDepth = 1 "
      "LEFT JOIN StringIds m ON m.id = c1.symbol WHERE " +
      std::string(kMainThread) + " AND " + loop_leaf;
  int64_t in_loops = *db.Int(with_caller);
  EXPECT_GE(in_loops, main_n * 97 / 100);
  EXPECT_EQ(*db.Int(with_caller + " AND m.value LIKE 'main at %cpu_burn.cc:%'"), in_loops);
  // Inside the loop on CLOCK_MONOTONIC: session start + systemClockNs maps back to it.
  int64_t zero = *db.Int("SELECT systemClockNs FROM TARGET_INFO_SESSION_START_TIME");
  EXPECT_EQ(*db.Int(std::string("SELECT count(*) FROM COMPOSITE_EVENTS e JOIN SAMPLING_CALLCHAINS c ON c.id = e.id "
                                "AND c.stackDepth = 0 JOIN StringIds s ON s.id = c.symbol WHERE ") +
                    kMainThread + " AND s.value LIKE 'burn_%' AND e.start + " + std::to_string(zero) + " BETWEEN " +
                    std::to_string(r.loop_start_ns) + " AND " + std::to_string(r.loop_end_ns)),
            a + b);

  // The worker started after the session: sampled from its first drain cycle on, in worker_c.
  const char* kWorker =
      "e.globalTid IN (SELECT t.globalTid FROM ThreadNames t JOIN StringIds n ON n.id = t.nameId WHERE n.value = "
      "'burn-worker')";
  int64_t worker_n = *db.Int(std::string("SELECT count(*) FROM COMPOSITE_EVENTS e WHERE ") + kWorker);
  EXPECT_GE(worker_n, 100);  // 200 ms of CPU; the first drain cycle(s) of its life are not sampled
  EXPECT_LE(worker_n, 202);
  EXPECT_GE(*db.Int(LeafCount(kWorker, "worker_c")), worker_n * 97 / 100);
  // Two threads, nothing else (the drain thread is not sampled).
  EXPECT_EQ(*db.Int("SELECT count(DISTINCT globalTid) FROM COMPOSITE_EVENTS"), 2);

  // Row shapes: ids dense from 0, Running, the cpu-clock period (1 ms of CPU) in cpuCycles.
  EXPECT_EQ(*db.Int("SELECT count(*) FROM COMPOSITE_EVENTS"), main_n + worker_n);
  EXPECT_EQ(*db.Int("SELECT max(id) + 1 - count(*) FROM COMPOSITE_EVENTS"), 0);
  EXPECT_EQ(*db.Int("SELECT count(*) FROM COMPOSITE_EVENTS WHERE threadState <> 1 OR cpuCycles <> 1000000 OR cpu "
                    "IS NULL"),
            0);
  EXPECT_EQ(*db.Int("SELECT count(*) FROM COMPOSITE_EVENTS e WHERE NOT EXISTS (SELECT 1 FROM SAMPLING_CALLCHAINS c "
                    "WHERE c.id = e.id AND c.stackDepth = 0)"),
            0);
  EXPECT_EQ(*db.Int("SELECT count(*) FROM SAMPLING_CALLCHAINS WHERE kernelMode <> 0 OR thumbCode <> 0 OR "
                    "specialEntry IS NOT NULL OR unwindMethod IS NOT NULL OR originalIP IS NULL"),
            0);
  EXPECT_EQ(db.Rows("SELECT id, name FROM ENUM_SAMPLING_THREAD_STATE WHERE id IN (0, 1, 8)"),
            (std::vector<std::string>{"0|Unknown", "1|Running", "8|OSRuntime"}));
  EXPECT_EQ(db.Rows("SELECT value FROM META_DATA_CAPTURE WHERE name = 'PROCESS_0:CPU_SAMPLING'"),
            std::vector<std::string>{"process-tree cpu-clock 1000 Hz"});

  // The reports: exact columns, the burners first, the tree main -> burn_a / burn_b.
  RunResult rep = RunProgram({test::CliPath(), "stats", "-r", "cpu_samples_bottomup,cpu_samples_topdown", r.db});
  ASSERT_EQ(rep.exit_code, 0) << rep.err;
  std::vector<std::string> lines;
  std::istringstream in(rep.out);
  for (std::string l; std::getline(in, l);)
    lines.push_back(std::regex_replace(l, std::regex(" +$"), ""));
  auto header_at = [&](const std::string& title) {
    for (size_t i = 0; i < lines.size(); ++i)
      if (lines[i].find(title) != std::string::npos)
        return i + 2;
    return lines.size();
  };
  auto cells = [](const std::string& line) {
    std::vector<std::string> out;
    std::regex sep("  +");
    std::string trimmed = std::regex_replace(line, std::regex("^ +"), "");
    for (std::sregex_token_iterator it(trimmed.begin(), trimmed.end(), sep, -1), end; it != end; ++it)
      out.push_back(*it);
    return out;
  };
  size_t bu = header_at("** CPU Samples Bottom-Up (cpu_samples_bottomup):");
  ASSERT_LT(bu + 4, lines.size()) << rep.out;
  EXPECT_EQ(cells(lines[bu]),
            (std::vector<std::string>{"Self (%)", "Self Samples", "Total (%)", "Total Samples", "Function", "Module"}));
  std::vector<std::string> row1 = cells(lines[bu + 2]), row2 = cells(lines[bu + 3]), row3 = cells(lines[bu + 4]);
  ASSERT_EQ(row1.size(), 6u);
  EXPECT_EQ(row1[1], std::to_string(a));
  EXPECT_EQ(row1[4], "burn_a");
  EXPECT_EQ(row1[5], test::SamplePath("cpu_burn"));
  EXPECT_EQ(row2[4], "burn_b");
  EXPECT_EQ(row2[1], std::to_string(b));
  EXPECT_EQ(row3[4], "worker_c");
  size_t td = header_at("** CPU Samples Top-Down (cpu_samples_topdown):");
  ASSERT_LT(td, lines.size()) << rep.out;
  EXPECT_EQ(cells(lines[td]),
            (std::vector<std::string>{"Total (%)", "Total Samples", "Self Samples", "Function", "Module"}));
  // "main" one level below its caller, the burners one below main, each with its own count. The
  // Function column is the 4th run of dashes under the header (headers are centred, text left-aligned).
  std::vector<size_t> starts;
  const std::string& dashes = lines[td + 1];
  for (size_t i = 0; i < dashes.size(); ++i)
    if (dashes[i] == '-' && (i == 0 || dashes[i - 1] == ' ')) starts.push_back(i);
  ASSERT_EQ(starts.size(), 5u) << dashes;
  size_t fn_at = starts[3], module_at = starts[4];
  bool main_seen = false, a_seen = false, b_seen = false;
  for (size_t i = td + 2; i < lines.size() && !lines[i].empty(); ++i) {
    if (lines[i].size() < module_at) continue;
    std::string fn = std::regex_replace(lines[i].substr(fn_at, module_at - fn_at), std::regex(" +$"), "");
    std::vector<std::string> c = cells(lines[i]);
    if (fn == "  main") main_seen = true;
    if (fn == "    burn_a") a_seen = c.size() == 5 && c[2] == std::to_string(a);
    if (fn == "    burn_b") b_seen = c.size() == 5 && c[2] == std::to_string(b);
  }
  EXPECT_TRUE(main_seen && a_seen && b_seen) << rep.out;
}

// GTRACE_CLOCK=tsc: the samples' CLOCK_MONOTONIC times are converted to ticks in the library and back
// by the reader; they must still land inside the loop.
TEST(SamplingKnown, TickStreamPlacesSamplesInsideTheLoop) {
  if (std::string why = test::PerfEventRefusal(); !why.empty())
    GTEST_SKIP() << why;
  TempDir dir;
  SampledRun r = SampleAndExport(dir, {test::SamplePath("cpu_burn"), "300"}, {{"GTRACE_CLOCK", "tsc"}});
  ASSERT_EQ(r.run.exit_code, 0) << r.run.err;
  if (r.run.err.find("gtrace:") != std::string::npos)
    GTEST_SKIP() << "no usable tick counter here: " << r.run.err;
  Db db(r.db);
  ASSERT_TRUE(db.ok()) << db.error();
  int64_t n = *db.Int("SELECT count(*) FROM COMPOSITE_EVENTS e WHERE " + std::string(kMainThread));
  EXPECT_GE(n, r.cpu_ms * 90 / 100);
  int64_t zero = *db.Int("SELECT systemClockNs FROM TARGET_INFO_SESSION_START_TIME");
  // 100 us of slack for the tick <-> monotonic conversion at both ends.
  EXPECT_EQ(*db.Int(std::string("SELECT count(*) FROM COMPOSITE_EVENTS e JOIN SAMPLING_CALLCHAINS c ON c.id = e.id "
                                "AND c.stackDepth = 0 JOIN StringIds s ON s.id = c.symbol WHERE ") +
                    kMainThread + " AND s.value LIKE 'burn_%' AND e.start + " + std::to_string(zero) + " BETWEEN " +
                    std::to_string(r.loop_start_ns - 100000) + " AND " + std::to_string(r.loop_end_ns + 100000)),
            *db.Int(LeafCount(kMainThread, "burn_a")) + *db.Int(LeafCount(kMainThread, "burn_b")));
}

// Two sampled processes merged into one database (the multi-stream export, db_merge.cc): every
// sample keeps its own id and its own stack, and the thread-state enum is there.
TEST(SamplingMerge, TwoProcessesInOneDatabase) {
  if (std::string why = test::PerfEventRefusal(); !why.empty())
    GTEST_SKIP() << why;
  TempDir dir;
  RunOptions o = test::TracedRun(dir);
  o.preload = true;
  o.env["GTRACE_TRACE"] = "none";
  o.env["GTRACE_SAMPLE"] = "process-tree";
  o.env["CPU_BURN_WAIT_SAMPLED"] = "1";  // the work starts once the thread is sampled (burn_loop.h)
  for (int i = 0; i < 2; ++i) {
    RunResult run = RunProgram({test::SamplePath("cpu_burn"), "200"}, o);
    ASSERT_EQ(run.exit_code, 0) << run.err;
  }
  std::vector<std::string> streams = dir.Find(".gtrace");
  ASSERT_EQ(streams.size(), 2u);
  std::string path = dir.File("merged.sqlite");
  std::vector<std::string> cmd = {test::CliPath(), "export", "-o", path};
  cmd.insert(cmd.end(), streams.begin(), streams.end());
  RunResult ex = RunProgram(cmd);
  ASSERT_EQ(ex.exit_code, 0) << ex.err;
  Db db(path);
  ASSERT_TRUE(db.ok()) << db.error();
  EXPECT_EQ(*db.Int("SELECT count(DISTINCT (globalTid >> 24) & 16777215) FROM COMPOSITE_EVENTS"), 2);
  EXPECT_EQ(*db.Int("SELECT count(*) - count(DISTINCT id) FROM COMPOSITE_EVENTS"), 0);
  EXPECT_GE(*db.Int("SELECT min(n) FROM (SELECT count(*) AS n FROM COMPOSITE_EVENTS GROUP BY globalTid)"), 180);
  // Nearly every sample's leaf is a burner (a rare one lands in clock_gettime or the loader), and
  // no sample has two depth-0 frames (the ids of the two processes did not collide).
  EXPECT_GE(*db.Int("SELECT count(*) FROM COMPOSITE_EVENTS e JOIN SAMPLING_CALLCHAINS c ON c.id = e.id AND "
                    "c.stackDepth = 0 JOIN StringIds s ON s.id = c.symbol WHERE s.value LIKE 'burn_%'"),
            *db.Int("SELECT count(*) FROM COMPOSITE_EVENTS") * 97 / 100);
  EXPECT_EQ(*db.Int("SELECT count(*) FROM SAMPLING_CALLCHAINS WHERE stackDepth = 0"),
            *db.Int("SELECT count(*) FROM COMPOSITE_EVENTS"));
  EXPECT_EQ(*db.Int("SELECT count(*) FROM ENUM_SAMPLING_THREAD_STATE"), 11);
}

// A container's seccomp profile refuses perf_event_open: one line, the run goes on, no samples.
TEST(SamplingRefused, OneLineAndTheRunGoesOn) {
  TempDir dir;
  RunOptions o = test::TracedRun(dir);
  o.preload = false;  // the launcher installs the filter, then execs cpu_burn with the library preloaded
  o.env["DENY_PERF_PRELOAD"] = test::LibraryPath();
  o.env["GTRACE_TRACE"] = "none";
  o.env["GTRACE_SAMPLE"] = "process-tree";
  RunResult run = RunProgram({test::SamplePath("deny_perf_events"), test::SamplePath("cpu_burn"), "100"}, o);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.out.rfind("done ", 0), 0u) << run.out;
  EXPECT_EQ(run.err,
            "gtrace: CPU sampling off: perf_event_open refused (EACCES: Permission denied); check "
            "/proc/sys/kernel/perf_event_paranoid (<= 2 needed) or the container's seccomp profile\n");
  std::vector<std::string> streams = dir.Find(".gtrace");
  ASSERT_EQ(streams.size(), 1u);
  std::string path = dir.File("out.sqlite");
  RunResult ex = RunProgram({test::CliPath(), "export", "-o", path, streams[0]});
  ASSERT_EQ(ex.exit_code, 0) << ex.err;
  Db db(path);
  ASSERT_TRUE(db.ok()) << db.error();
  EXPECT_EQ(db.Int("SELECT count(*) FROM sqlite_master WHERE name = 'COMPOSITE_EVENTS'"), 0);
  EXPECT_EQ(db.Rows("SELECT value FROM META_DATA_CAPTURE WHERE name = 'PROCESS_0:CPU_SAMPLING'"),
            std::vector<std::string>{"process-tree cpu-clock 1000 Hz"});
  // The diagnostic is in the stream too (DIAGNOSTIC_EVENT), for whoever reads only the database.
  EXPECT_EQ(*db.Int("SELECT count(*) FROM DIAGNOSTIC_EVENT WHERE text LIKE "
                    "'%CPU sampling off: perf_event_open refused (EACCES%'"),
            1);
  // The report says what is missing, with a non-zero exit.
  RunResult rep = RunProgram({test::CliPath(), "stats", "-r", "cpu_samples_bottomup", path});
  EXPECT_NE(rep.exit_code, 0);
  EXPECT_NE((rep.out + rep.err).find("was the run sampled (--sample=process-tree)?"), std::string::npos)
      << rep.out << rep.err;
}

}  // namespace
}  // namespace gt
