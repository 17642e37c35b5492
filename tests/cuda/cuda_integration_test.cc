// CUDA tracing end to end on the CPU: tests/cuda/programs/fake_cuda_app under LD_PRELOAD=libgtrace.so
// drives the fake CUPTI (tests/fakes/, a test double on the real CUPTI headers — it proves gtrace's
// logic, not CUPTI's behaviour); its streams are exported with `gtrace export` and every table gtrace
// fills is checked row by row.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/cuda/cuda_test_util.h"

namespace gt::test {
namespace {

using Rows = std::vector<std::string>;

std::string Pid(Db& db) { return std::to_string(db.Int("SELECT pid FROM PROCESSES").value_or(-1)); }

// GPU rows of `table` whose correlation id has no API call of the same process.
int64_t Orphans(Db& db, const std::string& table) {
  return db.Int("SELECT count(*) FROM " + table +
                " g WHERE NOT EXISTS (SELECT 1 FROM CUPTI_ACTIVITY_KIND_RUNTIME r WHERE r.correlationId = "
                "g.correlationId AND g.globalPid = (r.globalTid & 0xFFFFFFFFFF000000))")
      .value_or(-1);
}

class CudaBasic : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir();
    run_ = new CudaRun(RunTraced(*dir_, {"basic"}, {{"GTRACE_CUDA_MEMORY_USAGE", "1"}}));
  }
  static void TearDownTestSuite() {
    delete run_;
    delete dir_;
  }
  static TempDir* dir_;
  static CudaRun* run_;
};
TempDir* CudaBasic::dir_ = nullptr;
CudaRun* CudaBasic::run_ = nullptr;

TEST_F(CudaBasic, RunsCleanly) {
  EXPECT_EQ(run_->run.exit_code, 0) << run_->run.err;
  EXPECT_EQ(GtraceLines(run_->run.err), std::vector<std::string>{}) << run_->run.err;
  ASSERT_EQ(run_->streams.size(), 1u);
  ASSERT_FALSE(run_->db.empty()) << run_->export_err;
  EXPECT_EQ(run_->log.find("VIOLATION"), std::string::npos) << run_->log;
  // Never the serialising KERNEL kind (3); CONCURRENT_KERNEL (10) instead.
  EXPECT_EQ(run_->log.find(" enable 3\n"), std::string::npos);
  EXPECT_NE(run_->log.find(" enable 10\n"), std::string::npos);
  EXPECT_NE(run_->log.find(" subscribe gtrace\n"), std::string::npos);
}

TEST_F(CudaBasic, Kernels) {
  Db db(run_->db);
  EXPECT_EQ(db.Rows("SELECT k.correlationId, s.value, d.value, m.value, k.end - k.start, k.deviceId, k.contextId, "
                    "k.greenContextId, k.streamId, k.gridX, k.gridY, k.gridZ, k.blockX, k.blockY, k.blockZ, "
                    "k.registersPerThread, k.staticSharedMemory, k.dynamicSharedMemory, k.launchType, k.cacheConfig, "
                    "k.localMemoryTotal, k.sharedMemoryExecuted, k.graphNodeId, k.graphId, k.sharedMemoryLimitConfig, "
                    "k.qmdBulkReleaseDone, k.sharedMemoryRequestedPercentage, k.tensorSizeMinusOneElements "
                    "FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON s.id = k.shortName JOIN StringIds d ON "
                    "d.id = k.demangledName JOIN StringIds m ON m.id = k.mangledName ORDER BY k.correlationId"),
            (Rows{"5|add_one|add_one(const float *, float *, int)|_Z7add_onePKfPfi|1500|0|1|0|13|4|1|1|256|1|1|16|0|0|"
                  "1|1|24772608|8192|NULL|NULL|0|NULL|NULL|[]",
                  "6|vectorized_elementwise_kernel|void at::native::vectorized_elementwise_kernel<(int)4, "
                  "at::native::FillFunctor<float>, std::array<char *, (unsigned long)1>>(int, T2, T3)|"
                  "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEESt5"
                  "arrayIPcLm1EEEEviT0_T1_|2500|0|1|0|14|4|1|1|256|1|1|16|0|0|1|1|24772608|8192|NULL|NULL|0|NULL|NULL|[]",
                  "7|add_one|add_one(const float *, float *, int)|_Z7add_onePKfPfi|1500|0|1|0|14|4|1|1|256|1|1|16|0|0|"
                  "1|1|24772608|8192|NULL|NULL|0|NULL|NULL|[]",
                  "19|matmul_kernel|matmul_kernel|matmul_kernel|4000|0|1|0|14|4|1|1|256|1|1|16|0|0|1|1|24772608|8192|"
                  "NULL|NULL|0|NULL|NULL|[]"}));
  // The kernel still running at exit came with end = 0: dropped, not exported.
  EXPECT_EQ(db.Int("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE correlationId = 20"), 0);
}

TEST_F(CudaBasic, CopiesAndSets) {
  Db db(run_->db);
  EXPECT_EQ(db.Rows("SELECT correlationId, bytes, copyKind, srcKind, dstKind, srcDeviceId, srcContextId, dstDeviceId, "
                    "dstContextId, end - start, streamId, copyCount, greenContextId, deprecatedSrcId, graphNodeId "
                    "FROM CUPTI_ACTIVITY_KIND_MEMCPY ORDER BY correlationId"),
            (Rows{"4|4096|1|0|2|NULL|NULL|NULL|NULL|800|13|1|0|NULL|NULL",
                  "9|8192|2|2|1|NULL|NULL|NULL|NULL|900|13|1|0|NULL|NULL",
                  "10|2048|8|2|2|NULL|NULL|NULL|NULL|300|14|1|0|NULL|NULL",
                  "11|65536|10|2|2|0|1|1|2|1000|13|1|0|NULL|NULL"}));
  EXPECT_EQ(db.Rows("SELECT correlationId, bytes, value, memKind, end - start, streamId, greenContextId "
                    "FROM CUPTI_ACTIVITY_KIND_MEMSET"),
            (Rows{"8|1024|0|2|600|13|0"}));
}

TEST_F(CudaBasic, ApiCalls) {
  Db db(run_->db);
  std::string pid = Pid(db);
  EXPECT_EQ(db.Rows("SELECT r.correlationId, s.value, r.eventClass, r.end - r.start, r.returnValue, "
                    "(r.globalTid & 0xFFFFFF) = " + pid + ", r.callchainId FROM CUPTI_ACTIVITY_KIND_RUNTIME r "
                    "JOIN StringIds s ON s.id = r.nameId ORDER BY r.correlationId"),
            (Rows{"1|cudaStreamCreate_v3020|0|2000|0|1|NULL", "2|cudaStreamCreate_v3020|0|2000|0|1|NULL",
                  "3|cudaMalloc_v3020|0|3000|0|1|NULL", "4|cudaMemcpyAsync_v3020|0|4000|0|1|NULL",
                  "5|cudaLaunchKernel_v7000|0|5000|0|1|NULL", "6|cudaLaunchKernel_v7000|0|5000|0|1|NULL",
                  "7|cudaLaunchKernel_v7000|0|5000|0|1|NULL", "8|cudaMemsetAsync_v3020|0|2000|0|1|NULL",
                  "9|cudaMemcpyAsync_v3020|0|4000|0|1|NULL", "10|cudaMemcpyAsync_v3020|0|4000|0|1|NULL",
                  "11|cudaMemcpyPeerAsync_v4000|0|3000|0|1|NULL", "12|cudaEventRecord_v3020|0|1000|0|1|NULL",
                  "13|cudaStreamSynchronize_v3020|0|3000|0|1|NULL", "14|cudaEventSynchronize_v3020|0|2000|0|1|NULL",
                  "15|cudaFree_v3020|0|2000|0|1|NULL", "16|cudaGraphInstantiate_v12000|0|6000|0|1|NULL",
                  "17|cudaGraphLaunch_v10000|0|2500|0|1|NULL", "18|cuKernelGetName|1|700|0|1|NULL",
                  "19|cudaLaunchKernel_v7000|0|5000|0|0|NULL", "20|cudaLaunchKernel_v7000|0|5000|0|1|NULL"}));
  // Every thread in an event table has a ThreadNames row; the CUDA-only worker is named too.
  EXPECT_EQ(db.Rows("SELECT s.value, t.priority FROM ThreadNames t JOIN StringIds s ON s.id = t.nameId "
                    "ORDER BY t.globalTid"),
            (Rows{"fake_cuda_main|20", "cuda-worker|20"}));
  EXPECT_EQ(db.Int("SELECT count(DISTINCT r.globalTid) FROM CUPTI_ACTIVITY_KIND_RUNTIME r WHERE NOT EXISTS "
                   "(SELECT 1 FROM ThreadNames t WHERE t.globalTid = r.globalTid)"),
            0);
}

TEST_F(CudaBasic, SyncEventsGraphsOverheadMemory) {
  Db db(run_->db);
  EXPECT_EQ(db.Rows("SELECT correlationId, syncType, eventId, eventSyncId, deviceId, contextId, streamId, "
                    "greenContextId, deprecatedSyncType, end - start FROM CUPTI_ACTIVITY_KIND_SYNCHRONIZATION "
                    "ORDER BY correlationId"),
            (Rows{"13|3|4294967295|0|0|1|13|NULL|NULL|700", "14|1|1|1|0|1|4294967295|NULL|NULL|400"}));
  EXPECT_EQ(db.Rows("SELECT correlationId, timestamp, eventId, eventSyncId, deviceId, contextId, streamId, "
                    "greenContextId FROM CUPTI_ACTIVITY_KIND_CUDA_EVENT"),
            (Rows{"12|0|1|1|0|1|13|0"}));
  EXPECT_EQ(db.Rows("SELECT correlationId, graphId, graphExecId, end - start, streamId, greenContextId "
                    "FROM CUPTI_ACTIVITY_KIND_GRAPH_TRACE"),
            (Rows{"17|1|2|3000|13|0"}));
  EXPECT_EQ(db.Rows("SELECT g.eventClass, s.value, g.graphId, g.originalGraphId, g.graphExecId, g.start = g.end "
                    "FROM CUDA_GRAPH_EVENTS g JOIN StringIds s ON s.id = g.nameId ORDER BY g.start"),
            (Rows{"95|Graph Creation|1|NULL|NULL|1", "94|GraphExec Creation|1|NULL|2|1"}));
  EXPECT_EQ(db.Rows("SELECT o.eventClass, s.value, o.overheadType, o.correlationId, o.end - o.start, "
                    "(o.globalTid & 0xFFFFFF) = " + Pid(db) + " FROM CUPTI_ACTIVITY_KIND_OVERHEAD o "
                    "JOIN StringIds s ON s.id = o.nameId"),
            (Rows{"103|Lazy Function Loading|7|5|10000|1"}));
  EXPECT_EQ(db.Rows("SELECT memoryOperationType, memKind, address, bytes, correlationId, deviceId, contextId, name "
                    "FROM CUDA_GPU_MEMORY_USAGE_EVENTS ORDER BY start"),
            (Rows{"0|2|139637976727552|1048576|3|0|1|NULL", "1|2|139637976727552|1048576|15|0|1|NULL"}));
}

TEST_F(CudaBasic, TargetInfo) {
  Db db(run_->db);
  std::string pid = Pid(db);
  EXPECT_EQ(db.Rows("SELECT vmId, id, name, uuid, cuDevice, smCount, clockRate, memoryBandwidth, totalMemory, "
                    "l2CacheSize, computeMajor, computeMinor, asyncEngines, maxShmemPerBlock, busLocation "
                    "FROM TARGET_INFO_GPU"),
            (Rows{"281474976710656|0|Fake GPU 0|b15c2a57-42ed-1d24-2c84-067081698640|0|28|1777000000|360048000000|"
                  "12488343552|2359296|8|6|2|49152|NULL"}));
  EXPECT_EQ(db.Rows("SELECT gpuId, cudaId, pid, uuid, numMultiprocessors FROM TARGET_INFO_CUDA_DEVICE"),
            (Rows{"0|0|" + pid + "|NULL|28"}));
  EXPECT_EQ(db.Rows("SELECT nullStreamId, hwId, vmId, processId, deviceId, contextId, parentContextId, isGreenContext, "
                    "numMultiprocessors FROM TARGET_INFO_CUDA_CONTEXT_INFO"),
            (Rows{"7|0|1|" + pid + "|0|1|0|0|0"}));
  EXPECT_EQ(db.Rows("SELECT streamId, hwId, vmId, processId, contextId, priority, flag FROM TARGET_INFO_CUDA_STREAM "
                    "ORDER BY streamId"),
            (Rows{"7|0|1|" + pid + "|1|0|3", "13|0|1|" + pid + "|1|0|2", "14|0|1|" + pid + "|1|4294967291|1"}));
}

TEST_F(CudaBasic, CorrelationTimeAndDiagnostics) {
  Db db(run_->db);
  for (const char* table : {"CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET",
                            "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION", "CUPTI_ACTIVITY_KIND_CUDA_EVENT",
                            "CUPTI_ACTIVITY_KIND_GRAPH_TRACE"}) {
    EXPECT_EQ(Orphans(db, table), 0) << table;
  }
  // GPU work starts after the call that launched it; everything lies inside the capture.
  EXPECT_EQ(db.Int("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN CUPTI_ACTIVITY_KIND_RUNTIME r ON "
                   "r.correlationId = k.correlationId WHERE k.start < r.start"),
            0);
  int64_t duration = db.Int("SELECT duration FROM ANALYSIS_DETAILS").value_or(-1);
  for (const char* table : {"CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_RUNTIME",
                            "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION", "NVTX_EVENTS"}) {
    EXPECT_EQ(db.Int(std::string("SELECT count(*) FROM ") + table + " WHERE start < 0 OR end > " +
                     std::to_string(duration) + " OR end < start"),
              0)
        << table;
  }
  // The NVTX range "step" holds the 13 calls made inside it (one clock for NVTX and CUPTI).
  EXPECT_EQ(db.Int("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME r, NVTX_EVENTS n WHERE n.text = 'step' AND "
                   "r.start >= n.start AND r.end <= n.end"),
            13);
  EXPECT_EQ(db.Rows("SELECT severity, text FROM DIAGNOSTIC_EVENT ORDER BY timestamp"),
            (Rows{"2|gtrace dropped 3 records (dropped by CUPTI)",
                  "2|gtrace dropped 1 CUPTI records without an end (GPU work still running at the final flush)"}));
  EXPECT_EQ(db.Text("SELECT value FROM META_DATA_CAPTURE WHERE name = 'PROCESS_0:DROPPED_RECORDS'"), "4");
  EXPECT_EQ(db.Text("SELECT value FROM META_DATA_CAPTURE WHERE name = 'PROCESS_0:CUPTI_CLOCK'"),
            "gtrace timestamp callback");
  EXPECT_EQ(db.Text("SELECT value FROM META_DATA_CAPTURE WHERE name = 'PROCESS_0:CUPTI_ACTIVITY_KINDS'"),
            "CONCURRENT_KERNEL,MEMCPY,MEMCPY2,MEMSET,RUNTIME,DRIVER,SYNCHRONIZATION,CUDA_EVENT,OVERHEAD,GRAPH_TRACE,"
            "MEMORY2,MEMORY_POOL");
  // The final flush at exit was forced, once.
  EXPECT_NE(run_->log.find(" disable 10\n"), std::string::npos);
}

TEST(CudaClock, CuptiClockOffsetWhenTheTimestampCallbackIsRefused) {
  TempDir dir;
  // The offset maps CUPTI's ns onto CLOCK_MONOTONIC ns only: this fallback needs a monotonic stream
  // (on a TSC stream gtrace says so in one gtrace: line, inject/cupti/cupti_tracer.cc).
  CudaRun r = RunTraced(dir, {"basic"}, {{"FAKE_CUPTI_NO_TIMESTAMP_CALLBACK", "1"}, {"GTRACE_CLOCK", "monotonic"}});
  ASSERT_EQ(r.run.exit_code, 0) << r.run.err;
  ASSERT_FALSE(r.db.empty()) << r.export_err;
  Db db(r.db);
  auto clock = db.Text("SELECT value FROM META_DATA_CAPTURE WHERE name = 'PROCESS_0:CUPTI_CLOCK'");
  ASSERT_TRUE(clock.has_value());
  EXPECT_EQ(clock->rfind("CUPTI clock, offset ", 0), 0u) << *clock;
  // CUPTI's CLOCK_REALTIME mapped onto the stream clock: the 13 calls made inside "step" still lie
  // inside it (2 us slack for the offset measurement; an unmapped clock would be off by decades),
  // and kernels still follow their launches.
  EXPECT_EQ(db.Int("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME r, NVTX_EVENTS n WHERE n.text = 'step' AND "
                   "r.correlationId BETWEEN 3 AND 15 AND r.start >= n.start - 2000 AND r.end <= n.end + 2000"),
            13);
  EXPECT_EQ(db.Int("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN CUPTI_ACTIVITY_KIND_RUNTIME r ON "
                   "r.correlationId = k.correlationId WHERE k.start < r.start"),
            0);
  EXPECT_EQ(db.Int("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL"), 4);
}

// Issue 31: nsys 2025.5's capture row for the graph mode, name and value as its export has them
// (shared/reference/flameox-nsys-2025.5.2.sqlite, when present), beside gtrace's own row.
TEST(CudaGraphs, GraphModeRowAsNsysWritesIt) {
  TempDir dir;
  CudaRun r = RunTraced(dir, {"basic"}, {});
  ASSERT_EQ(r.run.exit_code, 0) << r.run.err;
  ASSERT_FALSE(r.db.empty()) << r.export_err;
  Db db(r.db);
  const char* q = "SELECT value FROM META_DATA_CAPTURE WHERE name = 'PROCESS_0:CUDA_GRAPH_TRACE_OPTIONS:MODE'";
  EXPECT_EQ(db.Text(q), "Graph");
  EXPECT_EQ(db.Int("SELECT count(*) FROM META_DATA_CAPTURE WHERE name LIKE '%CUDA_GRAPH_TRACE_OPTIONS:MODE'"), 1);
  EXPECT_EQ(db.Text("SELECT value FROM META_DATA_CAPTURE WHERE name = 'PROCESS_0:CUDA_GRAPH_TRACE'"), "graph");
  if (std::string ref = ReferenceDir(); !ref.empty()) {
    Db nsys(ref + "/flameox-nsys-2025.5.2.sqlite");
    EXPECT_EQ(nsys.Text(q), "Graph");  // the --cuda-graph-trace=graph capture of that file
  }
}

TEST(CudaGraphs, NodeModeRecordsNoGraphLaunchRows) {
  TempDir dir;
  CudaRun r = RunTraced(dir, {"basic"}, {{"GTRACE_CUDA_GRAPH_TRACE", "node"}});
  ASSERT_EQ(r.run.exit_code, 0) << r.run.err;
  ASSERT_FALSE(r.db.empty()) << r.export_err;
  Db db(r.db);
  EXPECT_EQ(db.Int("SELECT count(*) FROM sqlite_master WHERE name = 'CUPTI_ACTIVITY_KIND_GRAPH_TRACE'"), 0);
  EXPECT_EQ(db.Text("SELECT value FROM META_DATA_CAPTURE WHERE name = 'PROCESS_0:CUDA_GRAPH_TRACE'"), "node");
  EXPECT_EQ(db.Text("SELECT value FROM META_DATA_CAPTURE WHERE name = 'PROCESS_0:CUDA_GRAPH_TRACE_OPTIONS:MODE'"),
            "Node");
  EXPECT_EQ(r.log.find(" enable 51\n"), std::string::npos);  // GRAPH_TRACE kind never enabled
  // Memory records need --cuda-memory-usage: the table is absent here.
  EXPECT_EQ(db.Int("SELECT count(*) FROM sqlite_master WHERE name = 'CUDA_GPU_MEMORY_USAGE_EVENTS'"), 0);
}

TEST(CudaMultiProcess, ProcessesOfOneHostShareTheirGpuRow) {
  TempDir dir;
  CudaRun a = RunTraced(dir, {"exit", "0"}, {}, "a");
  CudaRun b = RunTraced(dir, {"exit", "0"}, {}, "b");
  ASSERT_EQ(a.streams.size(), 1u);
  ASSERT_EQ(b.streams.size(), 1u);
  RunResult e = test::RunProgram({CliPath(), "export", "-o", dir.File("both.sqlite"), a.streams[0], b.streams[0]});
  ASSERT_EQ(e.exit_code, 0) << e.err;
  Db db(dir.File("both.sqlite"));
  EXPECT_EQ(db.Int("SELECT count(*) FROM TARGET_INFO_GPU"), 1);
  EXPECT_EQ(db.Int("SELECT count(*) FROM TARGET_INFO_CUDA_DEVICE WHERE gpuId = 0"), 2);
  EXPECT_EQ(db.Int("SELECT count(DISTINCT processId) FROM TARGET_INFO_CUDA_CONTEXT_INFO"), 2);
  EXPECT_EQ(db.Int("SELECT count(DISTINCT globalPid) FROM CUPTI_ACTIVITY_KIND_KERNEL"), 2);
  EXPECT_EQ(Orphans(db, "CUPTI_ACTIVITY_KIND_KERNEL"), 0);
}

}  // namespace
}  // namespace gt::test
