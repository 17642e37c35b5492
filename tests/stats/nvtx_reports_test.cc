// nvtx_sum and nvtx_gpu_proj_sum on small hand-built databases: every column of every row.
#include <gtest/gtest.h>

#include "tests/stats/nsys_test_db.h"

namespace gt::stats::testing {
namespace {

constexpr int64_t kPid = 100;
constexpr int64_t kThread = GlobalTid(kPid, 100);

const char kNvtxSumHeader[] =
    "Time (%),Total Time (ns),Instances,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Style,Range\n";

TEST(NvtxSum, SummarisesRangesByNameOrderedByTotalTime) {
  TestDb db("nvtx_basic");
  db.Create({"NVTX_EVENTS"});
  db.AddNvtx({.start = 0, .end = 10, .text = "A", .global_tid = kThread});
  db.AddNvtx({.start = 100, .end = 120, .text = "A", .global_tid = kThread});
  db.AddNvtx({.start = 200, .end = 230, .text = "A", .global_tid = kThread});
  db.AddNvtx({.start = 300, .end = 400, .text = "B", .global_tid = kThread});
  db.AddNvtx({.start = 500, .event_type = 34, .text = "a mark, not a range", .global_tid = kThread});
  EXPECT_EQ(RunOk(db.path(), "nvtx_sum"), std::string(kNvtxSumHeader) +
                                              "62.5,100,1,100.0,100.0,100,100,0.0,PushPop,:B\n"
                                              "37.5,60,3,20.0,20.0,10,30,10.0,PushPop,:A\n");
}

TEST(NvtxSum, EvenInstanceCountMedianAndRounding) {
  TestDb db("nvtx_even");
  db.Create({"NVTX_EVENTS"});
  int64_t start = 0;
  for (int64_t duration : {10, 20, 30, 41}) {
    db.AddNvtx({.start = start, .end = start + duration, .text = "step", .global_tid = kThread});
    start += 1000;
  }
  EXPECT_EQ(RunOk(db.path(), "nvtx_sum"),
            std::string(kNvtxSumHeader) + "100.0,101,4,25.3,25.0,10,41,13.3,PushPop,:step\n");
}

TEST(NvtxSum, PrefixesDomainNamesPerProcessAndReadsRegisteredStrings) {
  TestDb db("nvtx_domains");
  db.Create({"NVTX_EVENTS"});
  const int64_t other_process = GlobalTid(200, 201);
  // Domain id 1 is "NCCL" in process 100 but "Other" in process 200: ids are per process.
  db.AddNvtx({.start = 1, .event_type = 75, .text = "NCCL", .global_tid = kThread, .domain_id = 1});
  db.AddNvtx({.start = 2, .event_type = 75, .registered_text = "Other", .global_tid = other_process, .domain_id = 1});
  db.AddNvtx({.start = 10, .end = 50, .registered_text = "ncclAllReduce", .global_tid = kThread, .domain_id = 1});
  db.AddNvtx({.start = 60, .end = 80, .text = "x", .global_tid = other_process, .domain_id = 1});
  db.AddNvtx({.start = 90, .end = 100, .text = "plain", .global_tid = kThread, .domain_id = 0});
  // A domain that was never announced prints with an empty prefix, like the default domain.
  db.AddNvtx({.start = 110, .end = 115, .text = "orphan", .global_tid = kThread, .domain_id = 7});
  EXPECT_EQ(RunOk(db.path(), "nvtx_sum"), std::string(kNvtxSumHeader) +
                                              "53.3,40,1,40.0,40.0,40,40,0.0,PushPop,NCCL:ncclAllReduce\n"
                                              "26.7,20,1,20.0,20.0,20,20,0.0,PushPop,Other:x\n"
                                              "13.3,10,1,10.0,10.0,10,10,0.0,PushPop,:plain\n"
                                              "6.7,5,1,5.0,5.0,5,5,0.0,PushPop,:orphan\n");
}

TEST(NvtxSum, SeparatesStartEndFromPushPopAndClosesOpenRangesAtLastTimestamp) {
  TestDb db("nvtx_startend");
  db.Create({"NVTX_EVENTS"});
  db.AddNvtx({.start = 0, .end = 40, .text = "io", .global_tid = kThread});
  db.AddNvtx({.start = 10,
              .end = 70,
              .event_type = 60,
              .text = "io",
              .global_tid = kThread,
              .end_global_tid = GlobalTid(kPid, 101)});
  // Never ended: runs to the last NVTX timestamp (the mark at 1000).
  db.AddNvtx({.start = 900, .event_type = 60, .text = "open", .global_tid = kThread});
  db.AddNvtx({.start = 1000, .event_type = 34, .text = "last", .global_tid = kThread});
  EXPECT_EQ(RunOk(db.path(), "nvtx_sum"), std::string(kNvtxSumHeader) +
                                              "50.0,100,1,100.0,100.0,100,100,0.0,StartEnd,:open\n"
                                              "30.0,60,1,60.0,60.0,60,60,0.0,StartEnd,:io\n"
                                              "20.0,40,1,40.0,40.0,40,40,0.0,PushPop,:io\n");
}

TEST(NvtxSum, TableFormatMatchesNsysLayout) {
  TestDb db("nvtx_table");
  db.Create({"NVTX_EVENTS"});
  db.AddNvtx({.start = 0, .end = 10, .text = "A", .global_tid = kThread});
  db.AddNvtx({.start = 100, .end = 120, .text = "A", .global_tid = kThread});
  db.AddNvtx({.start = 200, .end = 230, .text = "A", .global_tid = kThread});
  EXPECT_EQ(
      RunOk(db.path(), "nvtx_sum", "table"),
      " ** NVTX Range Summary (nvtx_sum):\n"
      "\n"
      " Time (%)  Total Time (ns)  Instances  Avg (ns)  Med (ns)  Min (ns)  Max (ns)  StdDev (ns)   Style   Range\n"
      " --------  ---------------  ---------  --------  --------  --------  --------  -----------  -------  -----\n"
      "    100.0               60          3      20.0      20.0        10        30         10.0  PushPop  :A   \n"
      "\n");
}

// nvtx_gpu_proj_sum. Process 100, thread 100:
//   outer  [1000, 2000] push/pop, level 0, two children
//   inner  [1100, 1500] and [1700, 1800], level 1
//   se     [1000, 1165] start/end, ended on the same thread
//   cross  [1000, 2000] start/end, ended on another thread: not projected
//   idle   [3000, 3100] no GPU work: not listed
// API calls on thread 100 (correlation id -> GPU work of process 100):
//   1 [1150, 1160] -> kernel [1200, 1300] and memset [1300, 1350]
//   2 [1600, 1610] -> kernel [2500, 2600] (runs past the range's end: still projected)
//   3 [1990, 2010] -> kernel [2700, 2800] (the call crosses outer's end: not contained)
//   4 [1710, 1720] -> memcpy [1900, 1950]
// Thread 101 of process 100 calls 5 [1250, 1260] -> kernel [1250, 1260]: another thread, not counted.
// Process 200 reuses correlation id 2 for its own kernel [5000, 9000], launched in its range "q"
// [4000, 4100]: joined by (globalPid, correlationId), it must not leak into process 100's ranges.
TEST(NvtxGpuProjSum, ProjectsRangesOntoGpuWorkTheyLaunched) {
  TestDb db("nvtx_proj");
  db.Create({"NVTX_EVENTS", "CUPTI_ACTIVITY_KIND_RUNTIME", "CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY",
             "CUPTI_ACTIVITY_KIND_MEMSET"});
  const int64_t other_thread = GlobalTid(kPid, 101);
  const int64_t q_thread = GlobalTid(200, 200);
  db.AddNvtx({.start = 1000, .end = 2000, .text = "outer", .global_tid = kThread});
  db.AddNvtx({.start = 1100, .end = 1500, .text = "inner", .global_tid = kThread});
  db.AddNvtx({.start = 1700, .end = 1800, .text = "inner", .global_tid = kThread});
  db.AddNvtx(
      {.start = 1000, .end = 1165, .event_type = 60, .text = "se", .global_tid = kThread, .end_global_tid = kThread});
  db.AddNvtx({.start = 1000,
              .end = 2000,
              .event_type = 60,
              .text = "cross",
              .global_tid = kThread,
              .end_global_tid = other_thread});
  db.AddNvtx({.start = 3000, .end = 3100, .text = "idle", .global_tid = kThread});
  db.AddNvtx({.start = 4000, .end = 4100, .text = "q", .global_tid = q_thread});
  db.AddRuntime(1150, 1160, kThread, 1, "cudaLaunchKernel_v7000");
  db.AddRuntime(1600, 1610, kThread, 2, "cudaLaunchKernel_v7000");
  db.AddRuntime(1990, 2010, kThread, 3, "cudaLaunchKernel_v7000");
  db.AddRuntime(1710, 1720, kThread, 4, "cudaMemcpyAsync_v3020");
  db.AddRuntime(1250, 1260, other_thread, 5, "cudaLaunchKernel_v7000");
  db.AddRuntime(4010, 4020, q_thread, 2, "cudaLaunchKernel_v7000");
  const int64_t p = GlobalPid(kPid);
  db.AddKernel({.start = 1200, .end = 1300, .correlation_id = 1, .global_pid = p, .demangled_name = "k1"});
  db.AddMemset({.start = 1300, .end = 1350, .correlation_id = 1, .global_pid = p, .bytes = 8});
  db.AddKernel({.start = 2500, .end = 2600, .correlation_id = 2, .global_pid = p, .demangled_name = "k2"});
  db.AddKernel({.start = 2700, .end = 2800, .correlation_id = 3, .global_pid = p, .demangled_name = "k3"});
  db.AddMemcpy({.start = 1900, .end = 1950, .correlation_id = 4, .global_pid = p, .bytes = 8});
  db.AddKernel({.start = 1250, .end = 1260, .correlation_id = 5, .global_pid = p, .demangled_name = "k5"});
  db.AddKernel({.start = 5000, .end = 9000, .correlation_id = 2, .global_pid = GlobalPid(200), .demangled_name = "kq"});
  EXPECT_EQ(RunOk(db.path(), "nvtx_gpu_proj_sum"),
            "Range,Style,Total Proj Time (ns),Total Range Time (ns),Range Instances,Proj Avg (ns),"
            "Proj Med (ns),Proj Min (ns),Proj Max (ns),Proj StdDev (ns),Total GPU Ops,Avg GPU Ops,"
            "Avg Range Lvl,Avg Num Child\n"
            ":q,PushPop,4000,100,1,4000.0,4000.0,4000,4000,0.0,1,1.0,0.0,0.0\n"
            ":outer,PushPop,1400,1000,1,1400.0,1400.0,1400,1400,0.0,4,4.0,0.0,2.0\n"
            ":inner,PushPop,200,500,2,100.0,100.0,50,150,70.7,3,1.5,1.0,0.0\n"
            ":se,StartEnd,150,165,1,150.0,150.0,150,150,0.0,2,2.0,0.0,0.0\n");
}

TEST(NvtxGpuProjSum, MissingMemsetTableCountsAsNoMemsets) {
  TestDb db("nvtx_proj_nomemset");
  db.Create({"NVTX_EVENTS", "CUPTI_ACTIVITY_KIND_RUNTIME", "CUPTI_ACTIVITY_KIND_KERNEL"});
  db.AddNvtx({.start = 0, .end = 100, .registered_text = "step", .global_tid = kThread});
  db.AddRuntime(10, 20, kThread, 7, "cudaLaunchKernel_v7000");
  db.AddKernel({.start = 30, .end = 230, .correlation_id = 7, .global_pid = GlobalPid(kPid), .demangled_name = "k"});
  const auto rows = ParseCsv(RunOk(db.path(), "nvtx_gpu_proj_sum"));
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[1], (std::vector<std::string>{":step", "PushPop", "200", "100", "1", "200.0", "200.0", "200", "200",
                                               "0.0", "1", "1.0", "0.0", "0.0"}));
}

}  // namespace
}  // namespace gt::stats::testing
