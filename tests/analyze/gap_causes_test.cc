// GPU-idle attribution (issue 18, `gtrace analyze`, report gpu_gap_causes): tests/analyze/programs/
// gap_app on the fake CUPTI (a test double) under LD_PRELOAD=libgtrace.so with -t cuda,osrt and OS
// runtime backtraces. The planted gap between kernels "before" and "after" must be attributed to
// main (the thread that launched "after"): its planted read (~20 ms) first, then its planted nanosleep
// (5 ms), with the durations of their OSRT_API rows exactly and the time inside the gap computed
// from the KERNEL rows; the writer thread's clock_nanosleep (same time, other thread) must not be
// named. CPU samples inserted into a copy of the database (COMPOSITE_EVENTS / SAMPLING_CALLCHAINS
// with the nsys documentation's columns; gtrace's own sampler is another branch's work) give the
// thread's top frames in the gap. The CLI prints the table and honours --gap-cause-min-us.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <algorithm>

#include <string>
#include <vector>

#include "tests/common/test_util.h"
#include "tests/common/traced_export.h"
#include "tools/analyze/analysis.h"

namespace gt {
namespace {

using test::Db;
using test::RunOptions;
using test::RunProgram;
using test::RunResult;
using test::TempDir;

constexpr int64_t kMs = 1000000;
// The fake's own timing: the launch API spins 5 us, kernels start 1 us after "now"; the scheduler of
// a loaded 2-core machine adds more (a full suite beside a sanitizer build stretched the 20 ms read to
// 49 ms once). Bounds on the planted durations only; what the analysis reports is compared exactly.
constexpr int64_t kSlackNs = 200 * kMs;

struct Traced {
  std::string db;
  int64_t main_tid = 0, writer_tid = 0;
  int64_t before_end = 0, after_start = 0;
  int64_t read_start = 0, read_end = 0, nap_start = 0, nap_end = 0;
};

Traced TraceGapApp(const TempDir& dir) {
  Traced t;
  RunOptions o = test::TracedRun(dir);
  o.env["GTRACE_TRACE"] = "cuda,osrt";
  o.env["GTRACE_CUPTI_PATH"] = test::BinaryDir() + "/lib/libgt_fake_cupti.so";
  // CLOCK_MONOTONIC: the fake CUPTI's GPU work has exact durations that
  // tests assert to the ns, and on a TSC stream start and end are converted to ns one by one, so a
  // duration can come back 1 ns short (3999 for 4000). The TSC path is tested by CudaStreamClock.*.
  o.env["GTRACE_CLOCK"] = "monotonic";
  o.env["GTRACE_OSRT_THRESHOLD"] = "1000000";
  o.env["GTRACE_OSRT_BACKTRACE_THRESHOLD"] = "1000000";
  o.unset_env.push_back("DEBUGINFOD_URLS");
  RunResult run = RunProgram({test::SamplePath("gap_app")}, o);
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.out, "done\n");
  t.db = dir.File("gap.sqlite");
  RunResult ex = test::CliExport(dir.Find(".gtrace"), t.db);
  EXPECT_EQ(ex.exit_code, 0) << ex.err;
  Db db(t.db);
  EXPECT_TRUE(db.ok()) << db.error();
  auto kernel = [&](const char* name, const char* col) {
    return db.Int(std::string("SELECT k.") + col + " FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON s.id = "
                  "k.shortName WHERE s.value = '" + name + "'").value_or(-1);
  };
  t.before_end = kernel("before", "\"end\"");
  t.after_start = kernel("after", "start");
  auto call = [&](const char* name, const char* what) {
    return db.Int(std::string("SELECT ") + what + " FROM OSRT_API o JOIN StringIds s ON s.id = o.nameId WHERE s.value = '" +
                  name + "' ORDER BY o.\"end\" - o.start DESC LIMIT 1").value_or(-1);
  };
  t.main_tid = call("read", "o.globalTid");
  t.writer_tid = call("clock_nanosleep", "o.globalTid");
  t.read_start = call("read", "o.start");
  t.read_end = call("read", "o.\"end\"");
  t.nap_start = call("nanosleep", "o.start");
  t.nap_end = call("nanosleep", "o.\"end\"");
  return t;
}

int64_t Overlap(int64_t a0, int64_t a1, int64_t b0, int64_t b1) {
  return std::min(a1, b1) - std::max(a0, b0);
}

analyze::Analysis Analyze(const std::string& db, int64_t cause_min_ns = 1000000) {
  analyze::AnalyzeOptions o;
  o.databases = {db};
  o.gap_cause_min_ns = cause_min_ns;
  analyze::Analysis a;
  Status st = analyze::RunAnalysis(o, &a);
  EXPECT_TRUE(st.ok()) << st.message();
  return a;
}

TEST(GapCauses, PlantedBlockingCallsNamedWithTheirDurations) {
  TempDir dir;
  Traced t = TraceGapApp(dir);
  ASSERT_GT(t.before_end, 0);
  ASSERT_GT(t.after_start, t.before_end);
  ASSERT_NE(t.main_tid, t.writer_tid);
  // The planted calls as the program made them.
  EXPECT_GE(t.read_end - t.read_start, 19 * kMs);
  EXPECT_LE(t.read_end - t.read_start, 20 * kMs + kSlackNs);
  EXPECT_GE(t.nap_end - t.nap_start, 5 * kMs);
  EXPECT_LE(t.nap_end - t.nap_start, 5 * kMs + kSlackNs);

  analyze::Analysis a = Analyze(t.db);
  ASSERT_EQ(a.gap_causes.size(), 1u);  // the one planted gap of at least 1 ms
  const analyze::GapCauses& g = a.gap_causes[0];
  EXPECT_EQ(g.start_ns, t.before_end);
  EXPECT_EQ(g.duration_ns, t.after_start - t.before_end);
  EXPECT_GE(g.duration_ns, 25 * kMs);
  EXPECT_LE(g.duration_ns, 25 * kMs + kSlackNs);
  EXPECT_EQ(g.launch_tid, t.main_tid);
  EXPECT_EQ(g.launch_api.rfind("cudaLaunchKernel", 0), 0u) << g.launch_api;
  EXPECT_EQ(g.gpu_work, "kernel after");
  ASSERT_EQ(g.causes.size(), 2u);  // read and nanosleep of main; not the writer's clock_nanosleep
  // Longest time in the gap first (the 20 ms read, unless the scheduler stretched the 5 ms nap more).
  EXPECT_GE(g.causes[0].in_gap_ns, g.causes[1].in_gap_ns);
  const analyze::GapCause* read_p = nullptr;
  const analyze::GapCause* nap_p = nullptr;
  for (const analyze::GapCause& c : g.causes) {
    EXPECT_EQ(c.source, analyze::GapCause::Source::kOsCall);
    (c.name == "read" ? read_p : nap_p) = &c;
  }
  ASSERT_NE(read_p, nullptr);
  ASSERT_NE(nap_p, nullptr);
  const analyze::GapCause& read = *read_p;
  EXPECT_EQ(read.start_ns, t.read_start);
  EXPECT_EQ(read.duration_ns, t.read_end - t.read_start);
  EXPECT_EQ(read.in_gap_ns, Overlap(t.read_start, t.read_end, g.start_ns, g.start_ns + g.duration_ns));
  EXPECT_EQ(read.in_gap_ns, read.duration_ns);  // the read lies wholly inside the gap
  EXPECT_EQ(read.caller.rfind("PlantedRead() at ", 0), 0u) << read.caller;
  const analyze::GapCause& nap = *nap_p;
  EXPECT_EQ(nap.name, "nanosleep");
  EXPECT_EQ(nap.duration_ns, t.nap_end - t.nap_start);
  EXPECT_EQ(nap.in_gap_ns, Overlap(t.nap_start, t.nap_end, g.start_ns, g.start_ns + g.duration_ns));
  EXPECT_LE(nap.in_gap_ns, nap.duration_ns);  // it began while "before" still ran (200 us)
  EXPECT_EQ(nap.caller.rfind("PlantedNap() at ", 0), 0u) << nap.caller;
  EXPECT_EQ(g.samples_in_gap, 0);

  // Above the gap's length: nothing attributed; 0: attribution off.
  EXPECT_TRUE(Analyze(t.db, g.duration_ns + 1).gap_causes.empty());
  EXPECT_EQ(Analyze(t.db, g.duration_ns).gap_causes.size(), 1u);
  EXPECT_TRUE(Analyze(t.db, 0).gap_causes.empty());
}

TEST(GapCauses, SampledFramesOfTheLaunchingThread) {
  TempDir dir;
  Traced t = TraceGapApp(dir);
  ASSERT_GT(t.after_start, t.before_end);
  std::string copy = dir.File("sampled.sqlite");
  test::WriteFile(copy, test::ReadFile(t.db));
  {
    Db db(copy, false);
    ASSERT_TRUE(db.ok()) << db.error();
    std::string sql =
        "CREATE TABLE COMPOSITE_EVENTS (id INTEGER NOT NULL PRIMARY KEY, start INTEGER NOT NULL, cpu INTEGER NOT NULL, "
        "threadState INTEGER NOT NULL, globalTid INTEGER NOT NULL, cpuCycles INTEGER NOT NULL);"
        "CREATE TABLE SAMPLING_CALLCHAINS (id INTEGER NOT NULL, symbol INTEGER NOT NULL, module INTEGER NOT NULL, "
        "kernelMode INTEGER, thumbCode INTEGER, unresolved INTEGER, specialEntry INTEGER, originalIP INTEGER, "
        "unwindMethod INTEGER, stackDepth INTEGER NOT NULL, PRIMARY KEY (id, stackDepth));"
        "INSERT INTO StringIds (id, value) VALUES (100001, 'spin_in_loader'), (100002, 'decode_batch'), "
        "(100003, 'writer_frame'), (100004, 'outside_gap'), (100005, 'app'), (100006, 'caller_frame');";
    int id = 1;
    auto sample = [&](int64_t ts, int64_t tid, int symbol) {
      sql += "INSERT INTO COMPOSITE_EVENTS VALUES (" + std::to_string(id) + ", " + std::to_string(ts) + ", 0, 1, " +
             std::to_string(tid) + ", 0);";
      sql += "INSERT INTO SAMPLING_CALLCHAINS VALUES (" + std::to_string(id) + ", " + std::to_string(symbol) +
             ", 100005, 0, 0, 0, NULL, 4096, NULL, 0);";
      sql += "INSERT INTO SAMPLING_CALLCHAINS VALUES (" + std::to_string(id) + ", 100006, 100005, 0, 0, 0, NULL, 8192, "
             "NULL, 1);";
      ++id;
    };
    int64_t g0 = t.before_end, step = (t.after_start - t.before_end) / 12;
    for (int i = 0; i < 7; ++i)
      sample(g0 + (i + 1) * step, t.main_tid, 100001);
    for (int i = 7; i < 10; ++i)
      sample(g0 + (i + 1) * step, t.main_tid, 100002);
    for (int i = 0; i < 5; ++i)
      sample(g0 + (i + 1) * step, t.writer_tid, 100003);  // another thread
    for (int i = 0; i < 4; ++i)
      sample(g0 - 1000 - i, t.main_tid, 100004);  // before the gap
    sample(t.after_start, t.main_tid, 100004);    // the gap's end is outside it
    char* err = nullptr;
    ASSERT_EQ(sqlite3_exec(db.handle(), sql.c_str(), nullptr, nullptr, &err), SQLITE_OK) << (err ? err : "");
  }
  analyze::Analysis a = Analyze(copy);
  ASSERT_EQ(a.gap_causes.size(), 1u);
  const analyze::GapCauses& g = a.gap_causes[0];
  EXPECT_EQ(g.samples_in_gap, 10);
  std::vector<std::string> got;
  for (const analyze::GapCause& c : g.causes) {
    got.push_back((c.source == analyze::GapCause::Source::kSample ? "sample " : "osrt ") + c.name +
                  (c.source == analyze::GapCause::Source::kSample ? " " + std::to_string(c.samples) : ""));
  }
  ASSERT_EQ(got.size(), 4u);
  std::sort(got.begin(), got.begin() + 2);  // the two OS calls' order is checked in the test above
  EXPECT_EQ(got, (std::vector<std::string>{"osrt nanosleep", "osrt read", "sample spin_in_loader 7",
                                           "sample decode_batch 3"}));

  // The CLI: the table in CSV and JSON.
  RunResult csv = RunProgram({test::CliPath(), "analyze", "-r", "gpu_gap_causes", "--format", "csv", copy});
  ASSERT_EQ(csv.exit_code, 0) << csv.err;
  EXPECT_EQ(csv.out.rfind("Rank,Gap Start (ns),Gap (ns),TID,Launch,GPU Work,Source,Name,Start (ns),Duration (ns),"
                          "In Gap (ns),In Gap (%),Samples,Caller\n",
                          0),
            0u)
      << csv.out;
  EXPECT_NE(csv.out.find(",read," + std::to_string(t.read_start) + "," + std::to_string(t.read_end - t.read_start) +
                         ","),
            std::string::npos)
      << csv.out;
  EXPECT_NE(csv.out.find(",sample,spin_in_loader,,,,70.00,7,"), std::string::npos) << csv.out;
  RunResult json = RunProgram({test::CliPath(), "analyze", "-r", "summary,gpu_gap_causes", "--format", "json", copy});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  EXPECT_NE(json.out.find("\"gpu_gap_causes\": "), std::string::npos) << json.out;
  int64_t above_us = (t.after_start - t.before_end) / 1000 + 1;
  RunResult none = RunProgram({test::CliPath(), "analyze", "-r", "gpu_gap_causes", "--format", "csv",
                               "--gap-cause-min-us=" + std::to_string(above_us), copy});
  ASSERT_EQ(none.exit_code, 0) << none.err;
  EXPECT_EQ(none.out.find("read"), std::string::npos) << none.out;
}

}  // namespace
}  // namespace gt
