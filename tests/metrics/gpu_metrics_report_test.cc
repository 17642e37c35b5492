// gpu_metrics_sum on hand-built nsys-schema databases (no gtrace table needed: the report also works
// on nsys's own exports): exact time-weighted averages of device-wide samples over kernels and NVTX
// ranges, partial overlaps, metrics missing from some samples, and the GPU fallbacks of NVTX ranges.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/stats/nsys_test_db.h"
#include "tools/nsys/nsys_schema.h"
#include "tools/stats/stats.h"

#include <sstream>

namespace gt::stats::testing {
namespace {

constexpr int64_t kType0 = (int64_t{1} << 48) | (int64_t{1} << 32) | 0;  // GPU 0, host 0

void CreateNsys(TestDb& db, const char* table) {
  db.Exec(std::string(nsys::FindTable(table)->create_sql));
}

void BuildDb(TestDb& db) {
  db.Create({"NVTX_EVENTS", "CUPTI_ACTIVITY_KIND_KERNEL"});
  CreateNsys(db, "GPU_METRICS");
  CreateNsys(db, "TARGET_INFO_GPU_METRICS");
  CreateNsys(db, "TARGET_INFO_CUDA_DEVICE");
  db.Exec("INSERT INTO TARGET_INFO_GPU_METRICS VALUES (" + std::to_string(kType0) +
          ", 1, 'GPU 0', 0, 'SMs Active [Throughput %]'), (" + std::to_string(kType0) +
          ", 1, 'GPU 0', 1, 'DRAM Read Bandwidth [bytes/s]')");
  // Ten samples at 1000..10000 ns (each covers the 1000 ns before it); SMs Active 10, 20, ... 100;
  // DRAM read only from the fifth sample on.
  for (int i = 1; i <= 10; ++i) {
    std::string ts = std::to_string(i * 1000);
    db.Exec("INSERT INTO GPU_METRICS VALUES (" + ts + ", " + ts + ", " + std::to_string(kType0) + ", 0, " +
            std::to_string(10 * i) + ")");
    if (i >= 5) {
      db.Exec("INSERT INTO GPU_METRICS VALUES (" + ts + ", " + ts + ", " + std::to_string(kType0) + ", 1, 1000000000)");
    }
  }
  db.Exec(
      "INSERT INTO TARGET_INFO_CUDA_DEVICE (gpuId, cudaId, pid, uuid, numMultiprocessors) VALUES "
      "(0, 0, 100, 'u0', 8), (1, 1, 100, 'u1', 8)");
  KernelRow k;
  k.global_pid = GlobalPid(100);
  k.demangled_name = k.short_name = "k1";
  k.start = 1500, k.end = 3500, k.correlation_id = 1;
  db.AddKernel(k);
  k.start = 9000, k.end = 9500, k.correlation_id = 2;
  db.AddKernel(k);
  k.demangled_name = k.short_name = "k2";  // on GPU 1: never sampled
  k.device_id = 1, k.start = 2000, k.end = 3000, k.correlation_id = 3;
  db.AddKernel(k);
  NvtxRow step;
  step.start = 0, step.end = 4000, step.text = "step", step.global_tid = GlobalTid(100, 100);
  db.AddNvtx(step);
  NvtxRow idle;  // a process with no CUDA device row: every sampled GPU of its host
  idle.start = 4500, idle.end = 6000, idle.text = "idle", idle.global_tid = GlobalTid(200, 201);
  db.AddNvtx(idle);
}

TEST(GpuMetricsSum, TimeWeightedAveragesPerRangeAndKernel) {
  TestDb db("gpu_metrics_sum.sqlite");
  BuildDb(db);
  std::vector<std::vector<std::string>> rows = ParseCsv(RunOk(db.path(), "gpu_metrics_sum"));
  ASSERT_EQ(rows.size(), 6u) << RunOk(db.path(), "gpu_metrics_sum");
  EXPECT_EQ(rows[0], (std::vector<std::string>{"Kind", "Name", "Metric", "Instances", "Time (ns)", "Samples", "Avg",
                                               "Min", "Max"}));
  // :idle covers 500 ns of the 50 % sample and all of the 60 % sample: (50*500 + 60*1000) / 1500.
  EXPECT_EQ(rows[1], (std::vector<std::string>{"NVTX", ":idle", "SMs Active [Throughput %]", "1", "1500", "2", "56.67",
                                               "50", "60"}));
  EXPECT_EQ(rows[2], (std::vector<std::string>{"NVTX", ":idle", "DRAM Read Bandwidth [bytes/s]", "1", "1500", "2",
                                               "1000000000.00", "1000000000", "1000000000"}));
  // :step [0, 4000] on its process's GPU 0: the first four samples, 1000 ns each (no DRAM value there).
  EXPECT_EQ(rows[3], (std::vector<std::string>{"NVTX", ":step", "SMs Active [Throughput %]", "1", "4000", "4", "25.00",
                                               "10", "40"}));
  // k1 twice: [1500, 3500] -> 20 x 500 + 30 x 1000 + 40 x 500; [9000, 9500] -> 100 x 500.
  EXPECT_EQ(rows[4], (std::vector<std::string>{"Kernel", "k1", "SMs Active [Throughput %]", "2", "2500", "4", "44.00",
                                               "20", "100"}));
  // DRAM read exists only from the fifth sample: only k1's second instance has a value for it.
  EXPECT_EQ(rows[5], (std::vector<std::string>{"Kernel", "k1", "DRAM Read Bandwidth [bytes/s]", "1", "500", "1",
                                               "1000000000.00", "1000000000", "1000000000"}));
}

// nsys numbers metrics per chip family: "SMs Active [Throughput %]" is metricId 3 on a GH100 and 7 on a
// GB202, and id 3 on the GB202 is another metric. The report groups by name, per GPU's own ids.
TEST(GpuMetricsSum, MetricIdsArePerGpuFamily) {
  TestDb db("gpu_metrics_families.sqlite");
  db.Create({"NVTX_EVENTS", "CUPTI_ACTIVITY_KIND_KERNEL"});
  CreateNsys(db, "GPU_METRICS");
  CreateNsys(db, "TARGET_INFO_GPU_METRICS");
  CreateNsys(db, "TARGET_INFO_CUDA_DEVICE");
  const std::string t0 = std::to_string(kType0), t1 = std::to_string(kType0 | 1);
  db.Exec("INSERT INTO TARGET_INFO_GPU_METRICS VALUES (" + t0 + ", 1, 'GPU 0', 3, 'SMs Active [Throughput %]'), (" +
          t1 + ", 1, 'GPU 1', 7, 'SMs Active [Throughput %]'), (" + t1 +
          ", 1, 'GPU 1', 3, 'Sync Copy Engine Active [Cycles Active]')");
  for (int i = 1; i <= 4; ++i) {
    std::string ts = std::to_string(i * 1000);
    db.Exec("INSERT INTO GPU_METRICS VALUES (" + ts + ", " + ts + ", " + t0 + ", 3, 10)");
    db.Exec("INSERT INTO GPU_METRICS VALUES (" + ts + ", " + ts + ", " + t1 + ", 7, 30)");
    db.Exec("INSERT INTO GPU_METRICS VALUES (" + ts + ", " + ts + ", " + t1 + ", 3, 5000)");
  }
  db.Exec(
      "INSERT INTO TARGET_INFO_CUDA_DEVICE (gpuId, cudaId, pid, uuid, numMultiprocessors) VALUES "
      "(0, 0, 100, 'u0', 8), (1, 1, 100, 'u1', 8)");
  KernelRow k;
  k.global_pid = GlobalPid(100);
  k.demangled_name = k.short_name = "k";
  k.start = 1000, k.end = 3000, k.correlation_id = 1;  // GPU 0: 2000 ns at 10 %
  db.AddKernel(k);
  k.device_id = 1, k.start = 1000, k.end = 2000, k.correlation_id = 2;  // GPU 1: 1000 ns at 30 %
  db.AddKernel(k);
  std::vector<std::vector<std::string>> rows = ParseCsv(RunOk(db.path(), "gpu_metrics_sum"));
  ASSERT_EQ(rows.size(), 3u) << RunOk(db.path(), "gpu_metrics_sum");
  // (10 x 2000 + 30 x 1000) / 3000; names in the order of their smallest metricId, then by name.
  EXPECT_EQ(rows[1], (std::vector<std::string>{"Kernel", "k", "SMs Active [Throughput %]", "2", "3000", "3", "16.67",
                                               "10", "30"}));
  EXPECT_EQ(rows[2], (std::vector<std::string>{"Kernel", "k", "Sync Copy Engine Active [Cycles Active]", "1", "1000",
                                               "1", "5000.00", "5000", "5000"}));
}

TEST(GpuMetricsSum, NeedsGpuMetrics) {
  TestDb db("no_metrics.sqlite");
  std::ostringstream out;
  gt::Status st = RunReport(db.path(), "gpu_metrics_sum", ReportOptions{}, out);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("no GPU_METRICS table"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("--gpu-metrics-devices"), std::string::npos);
}

}  // namespace
}  // namespace gt::stats::testing
