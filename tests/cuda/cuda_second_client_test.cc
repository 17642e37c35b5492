// Issue 29: a second CUPTI client in the process (kineto for torch.profiler) owns CUPTI's
// process-wide activity API for a block of steps (fake_cuda_app second-client: the fake CUPTI, a
// TEST DOUBLE, keeps one pair of buffer callbacks, one timestamp callback and one set of kinds for
// the whole process, as cupti_activity.h states).
#include <gtest/gtest.h>

#include "tests/cuda/cuda_test_util.h"

namespace gt::test {
namespace {

using Rows = std::vector<std::string>;

TEST(CudaSecondClient, TorchProfilerBlockLeavesEveryLaterKernelAndBothKeepTheirData) {
  TempDir dir;
  CudaRun r = RunTraced(dir, {"second-client", "50"});
  ASSERT_EQ(r.run.exit_code, 0) << r.run.err;
  EXPECT_EQ(r.run.err.find("VIOLATION"), std::string::npos) << r.run.err;
  // The second client got its block's kernels (and none of gtrace's buffers).
  EXPECT_EQ(r.run.out, "launches 1000\nsecond_client_kernels 150\nkernels_after_second_client 350\n");
  std::vector<std::string> lines = GtraceLines(r.run.err);
  ASSERT_EQ(lines.size(), 1u) << r.run.err;
  EXPECT_EQ(lines[0].rfind("gtrace: a second CUPTI client in this process (torch.profiler/kineto?) owned CUPTI's "
                           "activity API from stream time ", 0),
            0u)
      << lines[0];
  EXPECT_NE(lines[0].find(": 300 GPU/API records (150 kernels) went to it and are missing here, 0 timed on its "
                          "clock were left out; gtrace's CUDA tracing resumed after it"),
            std::string::npos)
      << lines[0];
  ASSERT_FALSE(r.db.empty()) << r.export_err;
  Db db(r.db);
  // Every kernel outside the block, none inside (they went to the second client).
  EXPECT_EQ(db.Rows("SELECT s.value, count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON s.id = "
                    "k.shortName GROUP BY s.value ORDER BY CAST(substr(s.value, 5) AS INTEGER)"),
            (Rows{"step0|50", "step1|50", "step2|50", "step3|50", "step4|50", "step5|50", "step6|50", "step7|50",
                  "step8|50", "step9|50", "step13|50", "step14|50", "step15|50", "step16|50", "step17|50", "step18|50",
                  "step19|50"}));
  EXPECT_EQ(db.Int("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN CUPTI_ACTIVITY_KIND_RUNTIME r ON "
                   "r.correlationId = k.correlationId"),
            850);
  // No time read on the second client's clock (3 ticks per ns): every kernel lies within the run's
  // API calls, which gtrace times itself.
  EXPECT_EQ(db.Int("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE start < (SELECT min(start) FROM "
                   "CUPTI_ACTIVITY_KIND_RUNTIME) OR start > (SELECT max(end) FROM CUPTI_ACTIVITY_KIND_RUNTIME)"),
            0);
  EXPECT_EQ(db.Int("SELECT count(*) FROM DIAGNOSTIC_EVENT WHERE text LIKE '%second CUPTI client%'"), 1);
}

}  // namespace
}  // namespace gt::test
