// CUPTI on the stream clock: fake_cuda_app's "nvtx" scenario (kernels launched inside NVTX
// push/pop ranges) under GTRACE_CLOCK=tsc and =monotonic. gtrace gives CUPTI its timestamp callback
// (the stream clock: TSC ticks or CLOCK_MONOTONIC ns); the fake CUPTI maps its GPU spans onto that
// callback as CUPTI does (tests/fakes/fake_state.h, Span). After export every kernel must lie inside
// the ranges it was launched in, with its duration in ns, and the stream must say which clock it has.
// (A test double: it proves gtrace's plumbing, not CUPTI's interpolation on a real GPU.)
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "collector/clock_source.h"
#include "tests/cuda/cuda_test_util.h"

namespace gt::test {
namespace {

using Rows = std::vector<std::string>;

class CudaStreamClock : public ::testing::TestWithParam<std::string> {};

TEST_P(CudaStreamClock, KernelsLandInsideTheirNvtxRanges) {
  const std::string clock = GetParam();
  if (clock == "tsc" && !ProbeTickCounter().usable) {
    GTEST_SKIP() << "no usable TSC here: " << ProbeTickCounter().reason;
  }
  TempDir dir;
  CudaRun r = RunTraced(dir, {"nvtx"}, {{"GTRACE_CLOCK", clock}});
  ASSERT_EQ(r.run.exit_code, 0) << r.run.err;
  EXPECT_TRUE(GtraceLines(r.run.err).empty()) << r.run.err;
  ASSERT_EQ(r.streams.size(), 1u);
  ASSERT_FALSE(r.db.empty()) << r.export_err;
  RunResult info = RunProgram({CliPath(), "info", "--json", r.streams[0]});
  ASSERT_EQ(info.exit_code, 0) << info.err;
  EXPECT_NE(info.out.find("\"clock\":\"" + clock + "\""), std::string::npos) << info.out;

  Db db(r.db);
  // Each kernel with the ranges that contain it (same process; kernels on the GPU, ranges on the
  // launching thread), innermost last.
  EXPECT_EQ(db.Rows("SELECT s.value, group_concat(n.text, '>') FROM CUPTI_ACTIVITY_KIND_KERNEL k "
                    "JOIN StringIds s ON s.id = k.shortName "
                    "LEFT JOIN (SELECT * FROM NVTX_EVENTS WHERE eventType = 59 ORDER BY start) n "
                    "ON n.start <= k.start AND k.end <= n.end GROUP BY k.correlationId ORDER BY k.start"),
            (Rows{"warmup|warmup", "k1|train", "k2|train>inner", "k3|train", "k4|train"}));
  // Kernel durations: 1000 ns on the fake GPU, back in ns after the tick conversion (±2 ns of
  // rounding through ticks); each kernel starts after its launch call did (one timeline). Not "ends
  // before the call returns": the fake leaves 3 us between entering the call and the kernel's end,
  // which ASan's slower callbacks exceed.
  EXPECT_EQ(db.Int("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE end - start BETWEEN 998 AND 1002"), 5);
  EXPECT_EQ(db.Int("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN CUPTI_ACTIVITY_KIND_RUNTIME a "
                   "ON a.correlationId = k.correlationId WHERE a.start <= k.start"),
            5);
}

INSTANTIATE_TEST_SUITE_P(Clocks, CudaStreamClock, ::testing::Values("tsc", "monotonic"),
                         [](const ::testing::TestParamInfo<std::string>& p) { return p.param; });

}  // namespace
}  // namespace gt::test
