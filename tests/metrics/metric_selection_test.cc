// Per-chip metric selection through the toolkit's REAL libcupti: the Profiler Host API validates
// metrics and counts passes without a driver or GPU, so these tests show exactly which metrics
// gtrace samples on GH100, GA100, GB100, GB202 and AD102 (docs/gpu-metrics.md, per-chip table) and
// which it refuses. They skip when libcupti (or its libnvperf_host) cannot be loaded.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "inject/metrics/metric_catalog.h"
#include "inject/metrics/metric_selection.h"
#include "inject/metrics/profiler_api.h"

namespace gt::metrics {
namespace {

const ProfilerApi* RealApi() {
  static ProfilerApi* api = [] {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
    // libcupti dlopens libnvperf_host with RTLD_DEEPBIND, which the sanitizer runtimes refuse (abort).
    return static_cast<ProfilerApi*>(nullptr);
#endif
    const char* path = GT_CUPTI_LIBRARY;
    if (path[0] == '\0')
      return static_cast<ProfilerApi*>(nullptr);
    void* h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (h == nullptr)
      return static_cast<ProfilerApi*>(nullptr);
    auto* a = new ProfilerApi();
    std::string missing;
    ResolveProfilerApi(h, a, &missing);
    if (!a->host_ok)
      return static_cast<ProfilerApi*>(nullptr);
    // The host API needs libnvperf_host beside libcupti: probe one chip.
    HostObject probe;
    if (probe.Init(a, "GH100", nullptr, ProfilerKind::kPmSampling) != CUPTI_SUCCESS)
      return static_cast<ProfilerApi*>(nullptr);
    return a;
  }();
  return api;
}

#define REQUIRE_CUPTI()               \
  const ProfilerApi* api = RealApi(); \
  if (api == nullptr)                 \
  GTEST_SKIP() << "real libcupti Profiler Host API not loadable here"

Selection Select(const ProfilerApi& api, const std::string& chip, ProfilerKind kind, const std::string& set) {
  std::vector<MetricRequest> req;
  std::string error;
  EXPECT_TRUE(ResolveMetricSet(set, kind, &req, &error)) << error;
  return SelectMetrics(api, chip, nullptr, kind, req);
}

// "key=cupti_name" for every accepted metric, in set order.
std::vector<std::string> Accepted(const Selection& s) {
  std::vector<std::string> out;
  for (const SelectedMetric& m : s.metrics)
    out.push_back(m.request.key + "=" + m.cupti_name);
  return out;
}

// "key=cupti_name" -> reason, for every rejection.
std::map<std::string, std::string> Rejected(const Selection& s) {
  std::map<std::string, std::string> out;
  for (const RejectedMetric& r : s.rejected)
    out[r.key + "=" + r.cupti_name] = r.reason;
  return out;
}

constexpr const char* kInvalid = "CUPTI_ERROR_INVALID_PARAMETER from cuptiProfilerHostConfigAddMetrics";

TEST(MetricSelection, Gh100DefaultSetIsAllFourteenInOnePass) {
  REQUIRE_CUPTI();
  Selection s = Select(*api, "GH100", ProfilerKind::kPmSampling, "default");
  ASSERT_TRUE(s.ok()) << s.error;
  EXPECT_EQ(s.passes, 1u);
  EXPECT_FALSE(s.config_image.empty());
  EXPECT_EQ(Accepted(s), (std::vector<std::string>{
                             "gpc_clock=gpc__cycles_elapsed.avg.per_second",
                             "gr_active=gr__cycles_active.sum.pct_of_peak_sustained_elapsed",
                             "sm_active=sm__cycles_active.avg.pct_of_peak_sustained_elapsed",
                             "sm_issue=smsp__issue_active.avg.pct_of_peak_sustained_elapsed",
                             // The non-realtime tensor counter shares no pass with the occupancy
                             // metric on GH100: the repair step switches to the realtime one.
                             "tensor_active=sm__pipe_tensor_cycles_active_realtime.avg.pct_of_peak_sustained_elapsed",
                             "warps_in_flight=tpc__warps_active_shader_cs_realtime.avg.pct_of_peak_sustained_elapsed",
                             "warp_occupancy=sm__warps_active.avg.pct_of_peak_sustained_active",
                             "dram_read=dram__bytes_read.sum.per_second",
                             "dram_write=dram__bytes_write.sum.per_second",
                             "dram_throughput=dram__throughput.avg.pct_of_peak_sustained_elapsed",
                             "pcie_rx=pcie__read_bytes.sum.per_second",
                             "pcie_tx=pcie__write_bytes.sum.per_second",
                             "nvlink_rx=nvlrx__bytes.sum.per_second",
                             "nvlink_tx=nvltx__bytes.sum.per_second",
                         }));
  // Only the GB202-style DRAM alternatives are refused (the metrics themselves are all there).
  EXPECT_EQ(Rejected(s), (std::map<std::string, std::string>{
                             {"dram_read=dram__bytes_op_read.sum.per_second", kInvalid},
                             {"dram_write=dram__bytes_op_write.sum.per_second", kInvalid},
                         }));
}

TEST(MetricSelection, Ga100KeepsNonRealtimeTensorAndDropsOccupancy) {
  REQUIRE_CUPTI();
  Selection s = Select(*api, "GA100", ProfilerKind::kPmSampling, "default");
  ASSERT_TRUE(s.ok()) << s.error;
  std::vector<std::string> a = Accepted(s);
  EXPECT_EQ(a.size(), 13u);
  EXPECT_EQ(a[4], "tensor_active=sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed");
  EXPECT_EQ(a[5], "warps_in_flight=tpc__warps_active_shader_cs_realtime.avg.pct_of_peak_sustained_elapsed");
  EXPECT_EQ(a[6], "dram_read=dram__bytes_read.sum.per_second");
  EXPECT_EQ(a[9], "pcie_rx=pcie__read_bytes.sum.per_second");
  EXPECT_EQ(a[11], "nvlink_rx=nvlrx__bytes.sum.per_second");
  std::map<std::string, std::string> r = Rejected(s);
  EXPECT_EQ(r.size(), 5u);
  EXPECT_NE(r["warp_occupancy=sm__warps_active.avg.pct_of_peak_sustained_active"].find(
                "does not fit in one pass with the metrics before it (the set would need 2 passes)"),
            std::string::npos);
  EXPECT_EQ(r["pcie_rx=PCI.TriageCompute.pcie__read_bytes.sum.per_second"], kInvalid);
}

TEST(MetricSelection, Gb100UsesTriagePcieCountersAndSmWarps) {
  REQUIRE_CUPTI();
  Selection s = Select(*api, "GB100", ProfilerKind::kPmSampling, "default");
  ASSERT_TRUE(s.ok()) << s.error;
  std::vector<std::string> a = Accepted(s);
  ASSERT_EQ(a.size(), 14u);
  EXPECT_EQ(a[4], "tensor_active=sm__pipe_tensor_cycles_active_realtime.avg.pct_of_peak_sustained_elapsed");
  EXPECT_EQ(a[5], "warps_in_flight=sm__warps_active.avg.pct_of_peak_sustained_elapsed");
  EXPECT_EQ(a[10], "pcie_rx=PCI.TriageCompute.pcie__read_bytes.sum.per_second");
  EXPECT_EQ(a[11], "pcie_tx=PCI.TriageCompute.pcie__write_bytes.sum.per_second");
  EXPECT_EQ(a[12], "nvlink_rx=nvlrx__bytes.sum.per_second");
  std::map<std::string, std::string> r = Rejected(s);
  // GB100 has no tpc__warps_active_shader_cs_realtime and no plain pcie__read/write_bytes.
  EXPECT_EQ(r["warps_in_flight=tpc__warps_active_shader_cs_realtime.avg.pct_of_peak_sustained_elapsed"], kInvalid);
  EXPECT_EQ(r["pcie_rx=pcie__read_bytes.sum.per_second"], kInvalid);
  EXPECT_EQ(r["pcie_tx=pcie__write_bytes.sum.per_second"], kInvalid);
  EXPECT_EQ(r.size(), 5u);
}

TEST(MetricSelection, Gb202HasNoNvlinkAndUsesOpDramCounters) {
  REQUIRE_CUPTI();
  Selection s = Select(*api, "GB202", ProfilerKind::kPmSampling, "default");
  ASSERT_TRUE(s.ok()) << s.error;
  std::vector<std::string> a = Accepted(s);
  ASSERT_EQ(a.size(), 11u);
  EXPECT_EQ(a[6], "dram_read=dram__bytes_op_read.sum.per_second");
  EXPECT_EQ(a[7], "dram_write=dram__bytes_op_write.sum.per_second");
  for (const std::string& m : a)
    EXPECT_EQ(m.find("nvl"), std::string::npos) << m;
  std::map<std::string, std::string> r = Rejected(s);
  EXPECT_EQ(r["dram_read=dram__bytes_read.sum.per_second"], kInvalid);
  EXPECT_EQ(r["nvlink_rx=nvlrx__bytes.sum.per_second"], kInvalid);
  EXPECT_EQ(r["nvlink_tx=nvltx__bytes.sum.per_second"], kInvalid);
  EXPECT_NE(r.count("warp_occupancy=sm__warps_active.avg.pct_of_peak_sustained_active"), 0u);
}

TEST(MetricSelection, Ad102HasNoNvlink) {
  REQUIRE_CUPTI();
  Selection s = Select(*api, "AD102", ProfilerKind::kPmSampling, "default");
  ASSERT_TRUE(s.ok()) << s.error;
  std::vector<std::string> a = Accepted(s);
  ASSERT_EQ(a.size(), 11u);
  EXPECT_EQ(a[6], "dram_read=dram__bytes_read.sum.per_second");
  std::map<std::string, std::string> r = Rejected(s);
  EXPECT_EQ(r["nvlink_rx=nvlrx__bytes.sum.per_second"], kInvalid);
  EXPECT_EQ(r["nvlink_tx=nvltx__bytes.sum.per_second"], kInvalid);
}

TEST(MetricSelection, EverySelectedSetIsOnePassOnAFreshObject) {
  REQUIRE_CUPTI();
  for (const char* chip : {"GH100", "GA100", "GB100", "GB202", "AD102"}) {
    for (const char* set : {"default", "compute", "memory"}) {
      Selection s = Select(*api, chip, ProfilerKind::kPmSampling, set);
      ASSERT_TRUE(s.ok()) << chip << " " << set << ": " << s.error;
      HostObject h;
      ASSERT_EQ(h.Init(api, chip, nullptr, ProfilerKind::kPmSampling), CUPTI_SUCCESS);
      ASSERT_EQ(h.AddMetrics(s.CuptiNames()), CUPTI_SUCCESS) << chip << " " << set;
      std::vector<uint8_t> image;
      size_t passes = 0;
      ASSERT_EQ(h.ConfigImage(&image, &passes), CUPTI_SUCCESS);
      EXPECT_EQ(passes, 1u) << chip << " " << set;
    }
  }
}

TEST(MetricSelection, RealCuptiPoisonsAHostObjectAfterARefusedMetric) {
  // Why every validation uses a fresh host object: after one refused ConfigAddMetrics, a valid
  // metric on the same object fails too.
  REQUIRE_CUPTI();
  HostObject h;
  ASSERT_EQ(h.Init(api, "GH100", nullptr, ProfilerKind::kPmSampling), CUPTI_SUCCESS);
  EXPECT_NE(h.AddMetrics({"pcie__rx_bytes.sum.per_second"}), CUPTI_SUCCESS);
  EXPECT_NE(h.AddMetrics({"sm__cycles_active.avg.pct_of_peak_sustained_elapsed"}), CUPTI_SUCCESS);
  HostObject fresh;
  ASSERT_EQ(fresh.Init(api, "GH100", nullptr, ProfilerKind::kPmSampling), CUPTI_SUCCESS);
  EXPECT_EQ(fresh.AddMetrics({"sm__cycles_active.avg.pct_of_peak_sustained_elapsed"}), CUPTI_SUCCESS);
}

TEST(MetricSelection, CustomListRejectsUnknownAndMultiPassMetrics) {
  REQUIRE_CUPTI();
  // PM sampling: pcie__rx_bytes is not a metric; the hmma tensor metric is range-profiler only.
  Selection pm = Select(*api, "GH100", ProfilerKind::kPmSampling,
                        "metrics:sm__cycles_active.avg.pct_of_peak_sustained_elapsed,pcie__rx_bytes.sum.per_second,"
                        "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active");
  ASSERT_TRUE(pm.ok()) << pm.error;
  EXPECT_EQ(Accepted(pm), (std::vector<std::string>{"sm__cycles_active.avg.pct_of_peak_sustained_elapsed="
                                                    "sm__cycles_active.avg.pct_of_peak_sustained_elapsed"}));
  EXPECT_EQ(pm.metrics[0].request.export_unit, "%");  // CUPTI's dimension unit
  EXPECT_EQ(Rejected(pm).size(), 2u);
  // Range profiler: sm__throughput needs 8 passes on GH100 (single pass only); the hmma metric is fine.
  Selection rp = Select(*api, "GH100", ProfilerKind::kRangeProfiler,
                        "metrics:sm__throughput.avg.pct_of_peak_sustained_elapsed,"
                        "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active");
  ASSERT_TRUE(rp.ok()) << rp.error;
  ASSERT_EQ(rp.metrics.size(), 1u);
  EXPECT_EQ(rp.metrics[0].cupti_name, "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active");
  EXPECT_EQ(Rejected(rp)["sm__throughput.avg.pct_of_peak_sustained_elapsed=sm__throughput.avg.pct_of_peak_sustained_"
                         "elapsed"],
            "needs 8 passes (gtrace collects single-pass metrics only)");
}

TEST(MetricSelection, RangeProfilerDefaultSetPerChip) {
  REQUIRE_CUPTI();
  Selection gh = Select(*api, "GH100", ProfilerKind::kRangeProfiler, "default");
  ASSERT_TRUE(gh.ok()) << gh.error;
  EXPECT_EQ(gh.metrics.size(), 11u);
  // Each PCIe/NVLink byte counter is valid alone, but CUPTI refuses them in a range-profiler set
  // with the SM counters (CUPTI_ERROR_NOT_SUPPORTED): they are left out, with the reason.
  std::map<std::string, std::string> ghr = Rejected(gh);
  EXPECT_NE(ghr["pcie_rx=pcie__read_bytes.sum"].find("CUPTI_ERROR_NOT_SUPPORTED for the set"), std::string::npos);
  EXPECT_NE(ghr["nvlink_tx=nvltx__bytes.sum"].find("does not fit in one pass"), std::string::npos);
  EXPECT_EQ(gh.metrics.back().cupti_name, "lts__t_bytes.sum");
  Selection gb = Select(*api, "GB202", ProfilerKind::kRangeProfiler, "default");
  ASSERT_TRUE(gb.ok()) << gb.error;
  std::map<std::string, std::string> r = Rejected(gb);
  EXPECT_EQ(r["dram_read=dram__bytes_read.sum"], kInvalid);
  EXPECT_EQ(r["nvlink_rx=nvlrx__bytes.sum"], kInvalid);
  bool op_read = false;
  for (const SelectedMetric& m : gb.metrics)
    op_read = op_read || m.cupti_name == "dram__bytes_op_read.sum";
  EXPECT_TRUE(op_read);
}

TEST(MetricSelection, UnknownChipIsAnError) {
  REQUIRE_CUPTI();
  Selection s = Select(*api, "XX999", ProfilerKind::kPmSampling, "default");
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.error.find("cuptiProfilerHostInitialize(XX999) failed"), std::string::npos) << s.error;
}

TEST(MetricCatalog, SetsAndCustomLists) {
  std::vector<MetricRequest> r;
  std::string error;
  ASSERT_TRUE(ResolveMetricSet("default", ProfilerKind::kPmSampling, &r, &error));
  EXPECT_EQ(r.size(), 14u);
  EXPECT_EQ(r[0].key, "gpc_clock");
  EXPECT_EQ(r[0].export_unit, "MHz");
  EXPECT_DOUBLE_EQ(r[0].export_scale, 1e-6);
  ASSERT_TRUE(ResolveMetricSet("compute", ProfilerKind::kPmSampling, &r, &error));
  EXPECT_EQ(r.size(), 7u);
  ASSERT_TRUE(ResolveMetricSet("memory", ProfilerKind::kPmSampling, &r, &error));
  EXPECT_EQ(r.size(), 9u);
  ASSERT_TRUE(ResolveMetricSet("metrics: a , b,a,,c", ProfilerKind::kPmSampling, &r, &error));
  ASSERT_EQ(r.size(), 3u);
  EXPECT_EQ(r[1].key, "b");
  EXPECT_FALSE(ResolveMetricSet("metrics:", ProfilerKind::kPmSampling, &r, &error));
  EXPECT_FALSE(ResolveMetricSet("gh100", ProfilerKind::kPmSampling, &r, &error));
  EXPECT_NE(error.find("unknown metric set 'gh100'"), std::string::npos);
  EXPECT_EQ(ExportName("SMs Active", "Throughput %"), "SMs Active [Throughput %]");
}

}  // namespace
}  // namespace gt::metrics
