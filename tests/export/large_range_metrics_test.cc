// Range-profiler result rows of a long stream, written through the spill database
// (tools/export/range_metrics_spill.h) with one pass's kernels held at a time: every
// GTRACE_RANGE_METRICS row exactly, in read order. Kernel mode maps a pass's ranges to its
// context's kernels in start order; passes are read whole except some met again later (looked up
// again); a pass whose range count differs from its kernels' maps none; NVTX-mode rows keep their thread; results of a
// context without a configuration are skipped.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/common/export_stream.h"
#include "tests/common/synthetic_stream.h"
#include "tests/common/test_util.h"
#include "tools/export/exporter.h"

namespace gt {
namespace {

constexpr uint32_t kPid = 7171;
constexpr uint64_t kMono0 = test::kStreamMono0Ns;
constexpr int kPasses = 1500;
constexpr int kKernelsPerPass = 8;
constexpr uint64_t kPassNs = 100000;

uint64_t PassStart(int p) {
  return kMono0 + 10000 + static_cast<uint64_t>(p) * kPassNs;
}
// Kernel k of pass p: starts in reverse correlation order inside the pass (the mapping sorts by start).
// Ranges of kernel-mode pass p: one per kernel, except every 7th pass (from the 4th) has one more:
// its count differs from the launches', so none of its ranges is mapped (a guess could be wrong).
bool Ambiguous(int p) { return p % 7 == 3; }
int Ranges(int p) { return kKernelsPerPass + (Ambiguous(p) ? 1 : 0); }

uint64_t KernelStart(int p, int k) {
  return PassStart(p) + 1000 + static_cast<uint64_t>(kKernelsPerPass - k) * 5000;
}
uint32_t Correlation(int p, int k) {
  return static_cast<uint32_t>(p * kKernelsPerPass + k + 1);
}
double Value(int p, int i, int m) {
  return p * 1000.0 + i * 10.0 + m + 0.25;
}

void FirstChunk(test::SyntheticStream& s) {
  s.Device(test::DeviceSpec{});
  s.Context(test::ContextSpec{});
  test::RangeConfigSpec kernel_cfg;
  kernel_cfg.metrics = {"sm_active", "dram_read"};
  s.RangeConfig(kernel_cfg);
  test::RangeConfigSpec nvtx_cfg;
  nvtx_cfg.context_id = 2;
  nvtx_cfg.mode = 1;
  nvtx_cfg.metrics = {"tensor"};
  s.RangeConfig(nvtx_cfg);
}

void WriteChunks(test::SyntheticStream& s) {
  // Kernels, in their own chunks.
  for (int p = 0; p < kPasses; ++p) {
    if (p % 100 == 0)
      s.BeginChunk(2, kPid, PassStart(p));
    for (int k = 0; k < kKernelsPerPass; ++k) {
      test::KernelSpec ks;
      ks.start_ns = KernelStart(p, k);
      ks.duration_ns = 2000;
      ks.correlation_id = Correlation(p, k);
      ks.name = "k" + std::to_string(k);
      s.Kernel(ks);
    }
    if (p % 100 == 99)
      s.EndChunk();
  }
  // Results: pass p's rows (indexes 0..Ranges(p)-1); every 50th pass's second half is read after the
  // next pass.
  auto result = [&](int p, int i) {
    test::RangeResultSpec r;
    r.range_name = std::to_string(i);
    r.range_index = static_cast<uint32_t>(i);
    r.pass_id = static_cast<uint64_t>(p);
    r.pass_start_ns = PassStart(p);
    r.pass_end_ns = PassStart(p) + kPassNs - 1;
    r.values = {Value(p, i, 0), Value(p, i, 1)};
    s.RangeResult(r);
  };
  for (int p = 0; p < kPasses; ++p) {
    s.BeginChunk(3, kPid, PassStart(p));
    const bool split = p % 50 == 0 && p + 1 < kPasses;
    for (int i = 0; i < Ranges(p); ++i) {
      if (!split || i < kKernelsPerPass / 2)
        result(p, i);
    }
    if (p % 50 == 1) {
      for (int i = kKernelsPerPass / 2; i < Ranges(p - 1); ++i)
        result(p - 1, i);
    }
    test::RangeResultSpec n;  // NVTX mode, context 2, one metric
    n.context_id = 2;
    n.mode = 1;
    n.range_name = "step";
    n.pass_id = static_cast<uint64_t>(p);
    n.pass_start_ns = PassStart(p);
    n.pass_end_ns = PassStart(p) + 100;
    n.tid = kPid + 1;
    n.values = {Value(p, 0, 7)};
    s.RangeResult(n);
    test::RangeResultSpec orphan = n;  // no configuration for context 9
    orphan.context_id = 9;
    s.RangeResult(orphan);
    s.EndChunk();
  }
}

std::string Num(double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.17g", v);
  return buf;
}

TEST(LargeRangeMetrics, EveryRowExactlyWithItsKernel) {
  test::TempDir dir;
  const std::string stream = dir.File("ranges.gtrace"), output = dir.File("ranges.sqlite");
  test::WriteStream(stream, kPid, FirstChunk, WriteChunks);
  exporter::ExportResult result;
  const Status st = test::ExportStreams({stream}, output, &result);
  ASSERT_TRUE(st.ok()) << st.message();
  test::Db db(output);
  ASSERT_TRUE(db.ok());

  std::vector<std::string> expected;
  auto kernel_row = [&](int p, int i) {
    for (int m = 0; m < 2; ++m) {
      // The kernels start in the reverse order of their correlation ids: index i is the kernel
      // started i-th.
      const std::string corr = Ambiguous(p) ? "NULL" : std::to_string(Correlation(p, kKernelsPerPass - 1 - i));
      expected.push_back("kernel|" + std::to_string(i) + "|" + std::to_string(p) + "|" + corr + "|" +
                         (m == 0 ? "sm_active|c.sm_active|" : "dram_read|c.dram_read|") + Num(Value(p, i, m)));
    }
  };
  for (int p = 0; p < kPasses; ++p) {
    const bool split = p % 50 == 0 && p + 1 < kPasses;
    for (int i = 0; i < Ranges(p); ++i) {
      if (!split || i < kKernelsPerPass / 2)
        kernel_row(p, i);
    }
    if (p % 50 == 1) {
      for (int i = kKernelsPerPass / 2; i < Ranges(p - 1); ++i)
        kernel_row(p - 1, i);
    }
    expected.push_back("nvtx|0|" + std::to_string(p) + "|NULL|tensor|c.tensor|" + Num(Value(p, 0, 7)));
  }
  int ambiguous = 0;
  for (int p = 0; p < kPasses; ++p)
    ambiguous += Ambiguous(p) ? 1 : 0;
  ASSERT_EQ(expected.size(), static_cast<size_t>(kPasses) * (kKernelsPerPass * 2 + 1) + ambiguous * 2);
  EXPECT_EQ(db.Rows("SELECT mode, rangeIndex, passId, correlationId, metricName, cuptiName, printf('%.17g', value) "
                    "FROM GTRACE_RANGE_METRICS ORDER BY rowid"),
            expected);
  // Each kernel row has its kernel's times and name; NVTX rows have their thread, kernel rows none.
  EXPECT_EQ(db.Int("SELECT count(*) FROM GTRACE_RANGE_METRICS r JOIN CUPTI_ACTIVITY_KIND_KERNEL k ON "
                   "k.correlationId = r.correlationId WHERE r.kernelStart = k.start AND r.kernelEnd = k.end AND "
                   "r.kernelName = k.demangledName"),
            (kPasses - ambiguous) * kKernelsPerPass * 2);
  EXPECT_EQ(db.Int("SELECT count(*) FROM GTRACE_RANGE_METRICS WHERE mode = 'nvtx' AND globalTid = " +
                   std::to_string(exporter::PackGlobalTid(0, kPid, kPid + 1))),
            kPasses);
  EXPECT_EQ(db.Int("SELECT count(*) FROM GTRACE_RANGE_METRICS WHERE mode = 'kernel' AND globalTid IS NULL"),
            kPasses * kKernelsPerPass * 2 + ambiguous * 2);
}

}  // namespace
}  // namespace gt
