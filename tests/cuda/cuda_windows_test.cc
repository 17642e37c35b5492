// Capture windows with the fake CUPTI: cudaProfilerStart/Stop (stop, repeat[:N], none), NVTX capture
// ranges (default domain, a named domain, any domain), --delay and --duration. Outside a window the
// CUPTI activity kinds and the window's callbacks are off (asserted through the fake's state).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/cuda/cuda_test_util.h"

namespace gt::test {
namespace {

using Rows = std::vector<std::string>;

std::string NvtxNames(Db& db) {
  return db.Text("SELECT group_concat(text, ',') FROM (SELECT text FROM NVTX_EVENTS WHERE eventType = 59 ORDER BY start)")
      .value_or("");
}

Rows Windows(Db& db) { return db.Rows("SELECT text FROM DIAGNOSTIC_EVENT WHERE text LIKE 'capture window%' ORDER BY timestamp"); }

TEST(CudaProfilerWindow, StopRecordsOnlyTheFirstWindowAndSwitchesCuptiOff) {
  TempDir dir;
  CudaRun r = RunTraced(dir, {"profiler", "3"}, {{"GTRACE_CAPTURE_RANGE", "cudaProfilerApi"}});
  ASSERT_EQ(r.run.exit_code, 0) << r.run.err;
  EXPECT_EQ(r.run.out,
            "kernel kind after: 0\nruntime kind after: 0\ngraph callback after: 0\nprofiler callback after: 0\n");
  ASSERT_FALSE(r.db.empty()) << r.export_err;
  Db db(r.db);
  EXPECT_EQ(KernelNames(db), "window1");
  EXPECT_EQ(NvtxNames(db), "window1");
  EXPECT_EQ(db.Int("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME r JOIN StringIds s ON s.id = r.nameId WHERE "
                   "s.value = 'cudaLaunchKernel_v7000'"),
            1);
  EXPECT_EQ(Windows(db), (Rows{"capture window 1 opened (cudaProfilerStart/Stop)",
                               "capture window 1 closed (cudaProfilerStart/Stop); capture finished"}));
  // Devices, contexts and streams are described even though the first stream came before the window.
  EXPECT_EQ(db.Int("SELECT count(*) FROM TARGET_INFO_CUDA_STREAM"), 2);
  EXPECT_EQ(db.Int("SELECT count(*) FROM TARGET_INFO_GPU"), 1);
}

TEST(CudaProfilerWindow, RepeatRecordsEveryWindowUpToN) {
  TempDir dir;
  CudaRun r = RunTraced(dir, {"profiler", "3"},
                        {{"GTRACE_CAPTURE_RANGE", "cudaProfilerApi"}, {"GTRACE_CAPTURE_RANGE_END", "repeat:2"}});
  ASSERT_EQ(r.run.exit_code, 0) << r.run.err;
  EXPECT_EQ(r.run.out,
            "kernel kind after: 0\nruntime kind after: 0\ngraph callback after: 0\nprofiler callback after: 0\n");
  Db db(r.db);
  EXPECT_EQ(KernelNames(db), "window1,window2");
  EXPECT_EQ(NvtxNames(db), "window1,window2");
  EXPECT_EQ(Windows(db), (Rows{"capture window 1 opened (cudaProfilerStart/Stop)",
                               "capture window 1 closed (cudaProfilerStart/Stop)",
                               "capture window 2 opened (cudaProfilerStart/Stop)",
                               "capture window 2 closed (cudaProfilerStart/Stop); capture finished"}));
  CudaRun all = RunTraced(dir, {"profiler", "3"},
                          {{"GTRACE_CAPTURE_RANGE", "cudaProfilerApi"}, {"GTRACE_CAPTURE_RANGE_END", "repeat"}}, "all");
  Db db_all(all.db);
  EXPECT_EQ(KernelNames(db_all), "window1,window2,window3");
  EXPECT_EQ(all.run.out,
            "kernel kind after: 0\nruntime kind after: 0\ngraph callback after: 0\nprofiler callback after: 1\n");
}

TEST(CudaProfilerWindow, EndNoneKeepsRecordingAfterTheFirstStop) {
  TempDir dir;
  CudaRun r = RunTraced(dir, {"profiler", "2"},
                        {{"GTRACE_CAPTURE_RANGE", "cudaProfilerApi"}, {"GTRACE_CAPTURE_RANGE_END", "none"}});
  ASSERT_EQ(r.run.exit_code, 0) << r.run.err;
  Db db(r.db);
  EXPECT_EQ(KernelNames(db), "window1,gap1,window2,gap2");
  EXPECT_EQ(r.run.out.substr(0, 21), "kernel kind after: 1\n");
}

// A graph instantiated before the first window (the real CUPTI crashed the application when
// GRAPH_TRACE was switched on after that; found on an H200 on 2026-11-26): GRAPH_TRACE stays on for
// the whole run and only the launches inside a window keep their rows.
TEST(CudaProfilerWindow, GraphsInstantiatedBeforeTheWindowKeepOnlyTheWindowsLaunches) {
  TempDir dir;
  CudaRun r = RunTraced(dir, {"graphwindow"},
                        {{"GTRACE_CAPTURE_RANGE", "cudaProfilerApi"}, {"GTRACE_CAPTURE_RANGE_END", "repeat"}});
  ASSERT_EQ(r.run.exit_code, 0) << r.run.err;
  EXPECT_EQ(r.run.out, "graph trace kind after: 1\n");
  EXPECT_EQ(r.log.find("VIOLATION"), std::string::npos) << r.log;
  EXPECT_EQ(r.run.err.find("VIOLATION"), std::string::npos) << r.run.err;
  ASSERT_FALSE(r.db.empty()) << r.export_err;
  Db db(r.db);
  EXPECT_EQ(db.Int("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_GRAPH_TRACE"), 3);
  EXPECT_EQ(db.Int("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME r JOIN StringIds s ON s.id = r.nameId WHERE "
                   "s.value LIKE 'cudaGraphLaunch%'"),
            3);
  EXPECT_EQ(db.Int("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_GRAPH_TRACE g WHERE NOT EXISTS (SELECT 1 FROM "
                   "CUPTI_ACTIVITY_KIND_RUNTIME r WHERE r.correlationId = g.correlationId)"),
            0);
  EXPECT_EQ(db.Int("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_GRAPH_TRACE WHERE graphExecId = 8"), 3);
  // Without windows the kind follows the (single, whole-run) window as before: all 6 launches.
  CudaRun all = RunTraced(dir, {"graphwindow"}, {}, "all");
  ASSERT_EQ(all.run.exit_code, 0) << all.run.err;
  Db db_all(all.db);
  EXPECT_EQ(db_all.Int("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_GRAPH_TRACE"), 6);
  EXPECT_EQ(all.log.find("VIOLATION"), std::string::npos) << all.log;
}

TEST(CudaNvtxWindow, FirstMatchingRangeOnly) {
  TempDir dir;
  CudaRun r = RunTraced(dir, {"nvtx"}, {{"GTRACE_CAPTURE_RANGE", "nvtx"}, {"GTRACE_NVTX_CAPTURE", "train"}});
  ASSERT_EQ(r.run.exit_code, 0) << r.run.err;
  EXPECT_EQ(r.run.out, "kernel kind after: 0\n");
  Db db(r.db);
  EXPECT_EQ(KernelNames(db), "k1,k2");
  EXPECT_EQ(NvtxNames(db), "train,inner");
  EXPECT_EQ(Windows(db), (Rows{"capture window 1 opened (NVTX capture range)",
                               "capture window 1 closed (NVTX capture range); capture finished"}));
}

TEST(CudaNvtxWindow, RepeatDomainsAndAnyDomain) {
  TempDir dir;
  CudaRun repeat = RunTraced(dir, {"nvtx"},
                             {{"GTRACE_CAPTURE_RANGE", "nvtx"}, {"GTRACE_NVTX_CAPTURE", "train"},
                              {"GTRACE_CAPTURE_RANGE_END", "repeat"}},
                             "repeat");
  Db db_repeat(repeat.db);
  EXPECT_EQ(KernelNames(db_repeat), "k1,k2,k3");  // the range in domain "dom" is another range
  CudaRun dom = RunTraced(dir, {"nvtx"}, {{"GTRACE_CAPTURE_RANGE", "nvtx"}, {"GTRACE_NVTX_CAPTURE", "train@dom"}}, "dom");
  Db db_dom(dom.db);
  EXPECT_EQ(KernelNames(db_dom), "k4");
  EXPECT_EQ(db_dom.Rows("SELECT d.text, r.text FROM NVTX_EVENTS r JOIN NVTX_EVENTS d ON d.eventType = 75 AND "
                        "d.domainId = r.domainId WHERE r.eventType = 59"),
            (Rows{"dom|train"}));
  CudaRun any = RunTraced(dir, {"nvtx"},
                          {{"GTRACE_CAPTURE_RANGE", "nvtx"}, {"GTRACE_NVTX_CAPTURE", "train@*"},
                           {"GTRACE_CAPTURE_RANGE_END", "repeat:3"}},
                          "any");
  Db db_any(any.db);
  EXPECT_EQ(KernelNames(db_any), "k1,k2,k3,k4");
  EXPECT_EQ(Windows(db_any).size(), 6u);
}

// Time-based windows: the program launches "early" at once, "late" after 1.5 s and "later" after
// 3 s; the boundaries below sit 0.75 s from each launch.
TEST(CudaTimedWindow, DelayDurationAndBoth) {
  TempDir dir;
  CudaRun delay = RunTraced(dir, {"timed"}, {{"GTRACE_DELAY", "0.75"}}, "delay");
  ASSERT_EQ(delay.run.exit_code, 0) << delay.run.err;
  Db db_delay(delay.db);
  EXPECT_EQ(KernelNames(db_delay), "late,later");
  EXPECT_EQ(Windows(db_delay), (Rows{"capture window 1 opened (--delay elapsed)"}));
  CudaRun both = RunTraced(dir, {"timed"}, {{"GTRACE_DELAY", "0.75"}, {"GTRACE_DURATION", "1.5"}}, "both");
  Db db_both(both.db);
  EXPECT_EQ(KernelNames(db_both), "late");
  EXPECT_EQ(both.run.out, "kernel kind after: 0\n");
  EXPECT_EQ(Windows(db_both), (Rows{"capture window 1 opened (--delay elapsed)",
                                    "capture window 1 closed (--duration elapsed); capture finished"}));
  CudaRun duration = RunTraced(dir, {"timed"}, {{"GTRACE_DURATION", "0.75"}}, "duration");
  Db db_duration(duration.db);
  EXPECT_EQ(KernelNames(db_duration), "early");
}

TEST(CudaCli, ProfileFlagsBecomeTheVariables) {
  TempDir dir;
  RunOptions o;
  o.env["GTRACE_CUPTI_PATH"] = FakeCuptiPath();
  o.unset_env = {"LD_PRELOAD", "NVTX_INJECTION64_PATH", "CUDA_INJECTION64_PATH"};
  RunResult r = test::RunProgram({CliPath(), "profile", "-t", "cuda,nvtx", "--capture-range=cudaProfilerApi",
                     "--capture-range-end=repeat:2", "--cuda-graph-trace", "node", "--export", "sqlite", "-o",
                     dir.File("cli"), "--", FakeAppPath(), "profiler", "3"},
                    o);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  Db db(dir.File("cli.sqlite"));
  ASSERT_TRUE(db.ok());
  EXPECT_EQ(KernelNames(db), "window1,window2");
  EXPECT_EQ(db.Text("SELECT value FROM META_DATA_CAPTURE WHERE name = 'PROCESS_0:CUDA_GRAPH_TRACE'"), "node");
  RunResult bad = test::RunProgram({CliPath(), "profile", "--capture-range=nvtx", "--", "true"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("--nvtx-capture"), std::string::npos) << bad.err;
  RunResult bad_delay = test::RunProgram({CliPath(), "profile", "--delay=soon", "--", "true"});
  EXPECT_EQ(bad_delay.exit_code, 2);
}

}  // namespace
}  // namespace gt::test
