// Tables only when nsys writes them (issue 15). nsys exports lazily: a table exists only when it has
// rows, except a fixed set every export has (shared/reference: every table of both real exports
// has rows; tools/export/lazy_tables.h). These tests list the exact tables of gtrace exports of an
// NVTX-only process and of a CUDA run without copies (through the fake CUPTI), and check that the
// device tables come with every GPU row, also when recording starts inside a capture window.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "tests/cuda/cuda_test_util.h"

namespace gt::test {
namespace {

using Rows = std::vector<std::string>;

// Tables every export has (24 ENUM_* tables counted, not listed), gtrace's own tables that have
// rows in every export (the clock placement of each process, the process tree), and
// PROFILER_OVERHEAD, which every recorded stream fills (gtrace's own stream writes).
const Rows kAlways = {"ANALYSIS_DETAILS",
                      "GTRACE_CLOCK_ALIGNMENT",
                      "GTRACE_PROCESS_TREE",
                      "GTRACE_RANKS",
                      "META_DATA_CAPTURE",
                      "META_DATA_EXPORT",
                      "PROCESSES",
                      "PROFILER_OVERHEAD",
                      "StringIds",
                      "TARGET_INFO_SESSION_START_TIME",
                      "TARGET_INFO_SYSTEM_ENV",
                      "ThreadNames"};

Rows Tables(Db& db) {
  return db.Rows("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'ENUM_%' ORDER BY name");
}

Rows With(Rows extra) {
  extra.insert(extra.end(), kAlways.begin(), kAlways.end());
  std::sort(extra.begin(), extra.end());
  return extra;
}

TEST(NsysTables, NvtxOnlyProcess) {
  TempDir dir;
  RunOptions o = TracedRun(dir, "nvtx-only");
  o.env["GTRACE_CUPTI_PATH"] = FakeCuptiPath();
  RunResult r = test::RunProgram({SamplePath("nvtx_only_app")}, o);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::string> streams = dir.Find(".gtrace");
  ASSERT_EQ(streams.size(), 1u);
  std::string out = dir.File("nvtx.sqlite");
  RunResult e = test::RunProgram({CliPath(), "export", "-o", out, streams[0]});
  ASSERT_EQ(e.exit_code, 0) << e.err;
  Db db(out);
  EXPECT_EQ(Tables(db), With({"NVTX_EVENTS"}));
  EXPECT_EQ(db.Int("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name LIKE 'ENUM_%'"), 24);
  EXPECT_EQ(db.Int("SELECT count(*) FROM NVTX_EVENTS"), 2);
}

TEST(NsysTables, CudaRunWithoutCopies) {
  TempDir dir;
  CudaRun r = RunTraced(dir, {"nvtx"});
  ASSERT_EQ(r.run.exit_code, 0) << r.run.err;
  ASSERT_FALSE(r.db.empty()) << r.export_err;
  Db db(r.db);
  // No MEMCPY, MEMSET, SYNCHRONIZATION, CUDA_EVENT, GRAPH_TRACE tables: the run made none.
  EXPECT_EQ(Tables(db), With({"CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_RUNTIME", "GTRACE_DEVICES",
                              "NVTX_EVENTS", "TARGET_INFO_CUDA_CONTEXT_INFO", "TARGET_INFO_CUDA_DEVICE",
                              "TARGET_INFO_CUDA_STREAM", "TARGET_INFO_GPU"}));
  EXPECT_EQ(db.Int("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL"), 5);
  // gtrace's own reports still run on it (the memory reports say there is nothing to report).
  for (const char* report : {"cuda_gpu_kern_sum", "cuda_gpu_trace", "cuda_api_sum", "nvtx_sum"}) {
    RunResult s = test::RunProgram({CliPath(), "stats", "--report", report, "--format", "csv", r.db});
    EXPECT_EQ(s.exit_code, 0) << report << ": " << s.err;
  }
}

// Point 2: the device, context and stream rows come with the GPU rows also when recording starts
// inside a cudaProfilerStart/Stop window (CUPTI's DEVICE/CONTEXT/STREAM kinds are on from the start).
TEST(NsysTables, DeviceRowsWithEveryGpuRowInsideACaptureWindow) {
  TempDir dir;
  CudaRun r = RunTraced(dir, {"profiler", "2"}, {{"GTRACE_CAPTURE_RANGE", "cudaProfilerApi"}});
  ASSERT_EQ(r.run.exit_code, 0) << r.run.err;
  ASSERT_FALSE(r.db.empty()) << r.export_err;
  Db db(r.db);
  EXPECT_EQ(KernelNames(db), "window1");
  // Every (deviceId) of a kernel has its GPU, and every (pid, contextId) its context and device rows.
  EXPECT_EQ(db.Int("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL k WHERE NOT EXISTS (SELECT 1 FROM "
                   "TARGET_INFO_GPU g WHERE g.id = k.deviceId)"),
            0);
  EXPECT_EQ(db.Int("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL k WHERE NOT EXISTS (SELECT 1 FROM "
                   "TARGET_INFO_CUDA_CONTEXT_INFO c WHERE c.contextId = k.contextId AND c.deviceId = k.deviceId "
                   "AND c.processId = (k.globalPid >> 24) & 16777215)"),
            0);
  EXPECT_EQ(db.Rows("SELECT g.name, d.cudaId, g.smCount FROM TARGET_INFO_CUDA_DEVICE d JOIN TARGET_INFO_GPU g ON "
                    "g.id = d.gpuId"),
            (Rows{"Fake GPU 0|0|28"}));
}

}  // namespace
}  // namespace gt::test
