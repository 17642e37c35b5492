// The injected library never hurts its host: no CUPTI, a CUPTI that cannot subscribe (no driver,
// another subscriber, wrong version) -> one `gtrace:` line naming the cause, NVTX still recorded,
// the exit code unchanged. Fork: CUPTI is inert in the child (the fake fails the child on any CUPTI
// call there). Drops: CUPTI's own count and our declined buffers reach the stream. A process that
// never initializes CUDA never loads CUPTI.
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <string>
#include <vector>

#include "tests/cuda/cuda_test_util.h"

namespace gt::test {
namespace {

using Rows = std::vector<std::string>;

struct FailCase {
  const char* name;
  std::map<std::string, std::string> env;
  std::string line;  // the one gtrace: line expected
};

void ExpectFailSoft(const FailCase& c) {
  SCOPED_TRACE(c.name);
  TempDir dir;
  CudaRun r = RunTraced(dir, {"exit", "7"}, c.env);
  EXPECT_EQ(r.run.exit_code, 7) << r.run.err;
  EXPECT_EQ(GtraceLines(r.run.err), (std::vector<std::string>{c.line})) << r.run.err;
  ASSERT_FALSE(r.db.empty()) << r.export_err;
  Db db(r.db);
  // NVTX keeps working; CUDA was not traced, so no CUDA table exists.
  EXPECT_EQ(db.Rows("SELECT text FROM NVTX_EVENTS"), (Rows{"alive"}));
  EXPECT_EQ(db.Int("SELECT count(*) FROM sqlite_master WHERE name LIKE 'CUPTI_ACTIVITY_KIND_%' OR name LIKE "
                   "'TARGET_INFO_CUDA%' OR name = 'TARGET_INFO_GPU'"),
            0);
  // The same text is in the stream, as a diagnostic.
  EXPECT_EQ(db.Int("SELECT count(*) FROM DIAGNOSTIC_EVENT WHERE text = 'cupti: ' || " +
                   std::string("'") + c.line.substr(8) + "'"),
            1);
}

TEST(CudaFailSoft, NoCupti) {
  ExpectFailSoft({"no cupti",
                  {{"GTRACE_CUPTI_PATH", "/nonexistent/libcupti.so.13"}},
                  "gtrace: CUDA tracing off: GTRACE_CUPTI_PATH=/nonexistent/libcupti.so.13 is not a file; NVTX and "
                  "the rest keep working"});
}

TEST(CudaFailSoft, SubscribeFailsWithoutADriver) {
  ExpectFailSoft({"no driver",
                  {{"FAKE_CUPTI_SUBSCRIBE_RESULT", "999"}},
                  "gtrace: CUDA tracing off: cuptiSubscribe failed with CUPTI_ERROR_UNKNOWN (no usable NVIDIA "
                  "driver?); NVTX and the rest keep working"});
}

TEST(CudaFailSoft, AnotherSubscriberHoldsCupti) {
  ExpectFailSoft({"held",
                  {{"FAKE_CUPTI_SUBSCRIBE_RESULT", "39"}, {"FAKE_CUPTI_HOLDER", "CUPTI for torch.profiler"}},
                  "gtrace: CUDA tracing off: another CUPTI client already holds the subscription (CUPTI for "
                  "torch.profiler); NVTX and the rest keep working"});
}

TEST(CudaFailSoft, CuptiOfAnotherCudaMajor) {
  ExpectFailSoft({"old",
                  {{"FAKE_CUPTI_VERSION", "28"}},
                  "gtrace: CUDA tracing off: " + FakeCuptiPath() +
                      " has CUPTI API version 28; gtrace decodes the records of CUDA 13 (API 130000-139999): use the "
                      "libcupti of a CUDA 13 runtime (GTRACE_CUPTI_PATH); NVTX and the rest keep working"});
}

// The real libcupti of the toolkit, on this driverless machine: cuptiSubscribe returns 999.
TEST(CudaFailSoft, RealCuptiWithoutADriver) {
  std::string real = GT_CUPTI_LIBRARY;
  struct stat st;
  if (real.empty() || stat(real.c_str(), &st) != 0) GTEST_SKIP() << "no libcupti in the toolkit";
  if (stat("/proc/driver/nvidia/version", &st) == 0) GTEST_SKIP() << "an NVIDIA driver is present";
  ExpectFailSoft({"real cupti",
                  {{"GTRACE_CUPTI_PATH", real}},
                  "gtrace: CUDA tracing off: cuptiSubscribe failed with CUPTI_ERROR_UNKNOWN (no usable NVIDIA "
                  "driver?); NVTX and the rest keep working"});
}

TEST(CudaFork, CuptiIsInertInTheChild) {
  TempDir dir;
  CudaRun r = RunTraced(dir, {"fork"});
  ASSERT_EQ(r.run.exit_code, 0) << r.run.out << r.run.err;
  EXPECT_NE(r.run.out.find(" status 0\n"), std::string::npos) << r.run.out;
  EXPECT_EQ(r.run.err.find("VIOLATION"), std::string::npos) << r.run.err;
  EXPECT_EQ(r.log.find("VIOLATION"), std::string::npos) << r.log;
  ASSERT_EQ(r.streams.size(), 2u);
  ASSERT_FALSE(r.db.empty()) << r.export_err;
  Db db(r.db);
  EXPECT_EQ(KernelNames(db), "parent_before,parent_after");
  EXPECT_EQ(db.Int("SELECT count(DISTINCT globalPid) FROM CUPTI_ACTIVITY_KIND_KERNEL"), 1);
  // The child's stream: its NVTX range, no CUDA (its CUDA call went nowhere).
  size_t at = r.run.out.find("child pid ");
  ASSERT_NE(at, std::string::npos);
  std::string child = r.run.out.substr(at + 10, r.run.out.find(' ', at + 10) - at - 10);
  EXPECT_EQ(db.Rows("SELECT p.pid, n.text FROM NVTX_EVENTS n JOIN PROCESSES p ON p.globalPid = "
                    "(n.globalTid & 0xFFFFFFFFFF000000)"),
            (Rows{child + "|child-range"}));
  EXPECT_EQ(db.Int("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME r JOIN StringIds s ON s.id = r.nameId "
                   "WHERE s.value = 'cudaMalloc_v3020'"),
            0);
  EXPECT_EQ(db.Int("SELECT count(*) FROM META_DATA_CAPTURE WHERE name LIKE '%:CUPTI_PATH'"), 1);
}

TEST(CudaDrops, DeclinedBuffersAndCuptiDropsAreCounted) {
  TempDir dir;
  // 1 MiB = 16 buffers of 64 KiB; no periodic flush, so every thread keeps its buffer: the main
  // thread and 15 of the 20 workers get one, 5 workers x 5 calls are dropped.
  CudaRun r = RunTraced(dir, {"threads", "20", "5"}, {{"GTRACE_CUDA_BUFFER_MB", "1"}, {"GTRACE_FLUSH_MS", "60000"}});
  ASSERT_EQ(r.run.exit_code, 0) << r.run.err;
  EXPECT_EQ(r.run.out, "declined records: 25\nbuffers zeroed on app threads: 0\n");
  EXPECT_EQ(GtraceLines(r.run.err),
            (std::vector<std::string>{"gtrace: CUPTI buffer pool exhausted: all 16 buffers of 64 KiB in use; CUPTI drops "
                                      "records until buffers come back (raise GTRACE_CUDA_BUFFER_MB)"}));
  ASSERT_FALSE(r.db.empty()) << r.export_err;
  Db db(r.db);
  EXPECT_EQ(db.Int("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME"), 76);
  // CUPTI's count of the records it dropped (one report: the only flush is the final one) ...
  EXPECT_EQ(db.Rows("SELECT severity, text FROM DIAGNOSTIC_EVENT WHERE text LIKE 'gtrace dropped%'"),
            (Rows{"2|gtrace dropped 25 records (dropped by CUPTI)"}));
  // ... and ours of the requests declined, in as many reports as drain cycles saw them.
  EXPECT_EQ(db.Int("SELECT sum(CAST(substr(text, 8) AS INTEGER)) FROM DIAGNOSTIC_EVENT WHERE text LIKE "
                   "'cupti: % CUPTI buffer requests declined (pool exhausted)%'"),
            25);
  EXPECT_EQ(db.Text("SELECT value FROM META_DATA_CAPTURE WHERE name = 'PROCESS_0:DROPPED_RECORDS'"), "25");
  EXPECT_EQ(db.Text("SELECT value FROM META_DATA_CAPTURE WHERE name = 'PROCESS_0:CUPTI_BUFFERS'"), "16 x 65536 B");
}

// Issue 29: CUPTI 13 lends one buffer per record-producing thread (PER_THREAD_ACTIVITY_BUFFER defaults
// to 1) and keeps it until it is full or flushed. 32 CUDA threads within one flush interval at default
// settings: every thread gets a buffer, no record is lost, and no buffer is zeroed on an application
// thread (gtrace sets ZEROED_OUT_ACTIVITY_BUFFER and zeroes returned buffers on its drain thread).
TEST(CudaDrops, ThirtyTwoCudaThreadsLoseNothingAtDefaultSettings) {
  TempDir dir;
  CudaRun r = RunTraced(dir, {"threads", "32", "50"}, {{"GTRACE_FLUSH_MS", "60000"}});
  ASSERT_EQ(r.run.exit_code, 0) << r.run.err;
  EXPECT_EQ(r.run.out, "declined records: 0\nbuffers zeroed on app threads: 0\n");
  EXPECT_EQ(r.run.err.find("VIOLATION"), std::string::npos) << r.run.err;
  EXPECT_EQ(GtraceLines(r.run.err), std::vector<std::string>{});
  ASSERT_FALSE(r.db.empty()) << r.export_err;
  Db db(r.db);
  EXPECT_EQ(db.Int("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME"), 32 * 50 + 1);
  EXPECT_EQ(db.Int("SELECT count(DISTINCT globalTid) FROM CUPTI_ACTIVITY_KIND_RUNTIME"), 33);
  // No diagnostic at all (the table exists only when there is one), so no drop or decline report.
  EXPECT_EQ(db.Int("SELECT count(*) FROM sqlite_master WHERE name = 'DIAGNOSTIC_EVENT'"), 0);
  EXPECT_EQ(db.Text("SELECT value FROM META_DATA_CAPTURE WHERE name = 'PROCESS_0:CUPTI_BUFFERS'"), "256 x 262144 B");
}

TEST(CudaLoad, ProcessWithoutCudaNeverLoadsCupti) {
  TempDir dir;
  RunOptions o = TracedRun(dir, "nvtx-only");
  o.env["GTRACE_CUPTI_PATH"] = FakeCuptiPath();
  RunResult r = test::RunProgram({SamplePath("nvtx_only_app")}, o);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "cupti mapped: 0\n");
  EXPECT_EQ(GtraceLines(r.err), std::vector<std::string>{});
  ASSERT_EQ(dir.Find(".gtrace").size(), 1u);
}

}  // namespace
}  // namespace gt::test
