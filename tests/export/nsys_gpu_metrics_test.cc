// nsys's GPU-metric names and metricIds per chip family (tools/export/nsys_gpu_metrics.h), exactly.
#include "tools/export/nsys_gpu_metrics.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace gt::exporter {
namespace {

std::vector<std::string> Listing(std::string_view family) {
  std::vector<std::string> out;
  for (const NsysMetricDef& d : NsysMetricTable(family))
    out.push_back(std::to_string(d.metric_id) + (d.id_observed ? " " : " ~") + std::string(d.name));
  return out;
}

// The GA100 layout: ids 4, 5, 12, 15, 18, 19 seen in an A100 export, the rest inferred ("~").
const std::vector<std::string> kGa100Layout = {
    "0 ~GPC Clock Frequency [MHz]",
    "1 ~SYS Clock Frequency [MHz]",
    "2 ~GR Active [Throughput %]",
    "3 ~SMs Active [Throughput %]",
    "4 SM Issue [Throughput %]",
    "5 Tensor Active [Throughput %]",
    "6 ~Vertex/Tess/Geometry Warps in Flight [Throughput %]",
    "7 ~Vertex/Tess/Geometry Warps in Flight [Avg]",
    "8 ~Vertex/Tess/Geometry Warps in Flight [Avg Warps per Cycle]",
    "9 ~Pixel Warps in Flight [Throughput %]",
    "10 ~Pixel Warps in Flight [Avg]",
    "11 ~Pixel Warps in Flight [Avg Warps per Cycle]",
    "12 Compute Warps in Flight [Throughput %]",
    "13 ~Compute Warps in Flight [Avg]",
    "14 ~Compute Warps in Flight [Avg Warps per Cycle]",
    "15 Unallocated Warps in Active SMs [Throughput %]",
    "16 ~Unallocated Warps in Active SMs [Avg]",
    "17 ~Unallocated Warps in Active SMs [Avg Warps per Cycle]",
    "18 DRAM Read Bandwidth [Throughput %]",
    "19 DRAM Write Bandwidth [Throughput %]",
    "20 ~PCIe RX Throughput [Throughput %]",
    "21 ~PCIe TX Throughput [Throughput %]",
    "22 ~PCIe Read Requests to BAR1 [Requests]",
    "23 ~PCIe Write Requests to BAR1 [Requests]",
    "24 ~NVLink TX Responses User Data [Throughput %]",
    "25 ~NVLink TX Responses Protocol Data [Throughput %]",
    "26 ~NVLink TX Requests User Data [Throughput %]",
    "27 ~NVLink TX Requests Protocol Data [Throughput %]",
    "28 ~NVLink RX Responses User Data [Throughput %]",
    "29 ~NVLink RX Responses Protocol Data [Throughput %]",
    "30 ~NVLink RX Requests User Data [Throughput %]",
    "31 ~NVLink RX Requests Protocol Data [Throughput %]",
};

TEST(NsysGpuMetrics, ChipFamilies) {
  EXPECT_EQ(NsysMetricFamily("GH100"), "gh100");
  EXPECT_EQ(NsysMetricFamily("GA100"), "ga100");
  EXPECT_EQ(NsysMetricFamily("GA102"), "ga10x");
  EXPECT_EQ(NsysMetricFamily("GA107"), "ga10x");
  EXPECT_EQ(NsysMetricFamily("AD102"), "ad10x");
  EXPECT_EQ(NsysMetricFamily("TU104"), "tu10x");
  EXPECT_EQ(NsysMetricFamily("GB100"), "gb100");
  EXPECT_EQ(NsysMetricFamily("GB202"), "gb20x");
  EXPECT_EQ(NsysMetricFamily("FAKE100"), "");
}

TEST(NsysGpuMetrics, Ga100Table) {
  EXPECT_EQ(Listing("ga100"), kGa100Layout);
}

TEST(NsysGpuMetrics, Gh100Table) {
  // No public GH100 id list: the GA100 layout, every id inferred; the names are those H100 exports show.
  std::vector<std::string> expected;
  for (std::string line : kGa100Layout) {
    size_t sp = line.find(' ');
    if (line[sp + 1] != '~')
      line.insert(sp + 1, "~");
    expected.push_back(line);
  }
  EXPECT_EQ(Listing("gh100"), expected);
  EXPECT_EQ(Listing("gb100"), expected);
}

TEST(NsysGpuMetrics, Gb20xTableAsAnNsys2025Export) {
  EXPECT_EQ(Listing("gb20x"), (std::vector<std::string>{
                                  "0 GPC Clock Frequency [MHz]",
                                  "1 SYS Clock Frequency [MHz]",
                                  "2 Sync Copy Engine Active [Throughput %]",
                                  "3 Sync Copy Engine Active [Cycles Active]",
                                  "4 Async Copy Engine Active 0 [Throughput %]",
                                  "5 Async Copy Engine Active 0 [Cycles Active]",
                                  "6 GR Active [Throughput %]",
                                  "7 SMs Active [Throughput %]",
                                  "8 SM Issue [Throughput %]",
                                  "9 Tensor Active [Throughput %]",
                                  "10 Vertex/Tess/Geometry Warps in Flight [Throughput %]",
                                  "11 Vertex/Tess/Geometry Warps in Flight [Avg]",
                                  "12 Vertex/Tess/Geometry Warps in Flight [Avg Warps per Cycle]",
                                  "13 Pixel Warps in Flight [Throughput %]",
                                  "14 Pixel Warps in Flight [Avg]",
                                  "15 Pixel Warps in Flight [Avg Warps per Cycle]",
                                  "16 Compute Warps in Flight [Throughput %]",
                                  "17 Compute Warps in Flight [Avg]",
                                  "18 Compute Warps in Flight [Avg Warps per Cycle]",
                                  "19 DRAM Read Bandwidth [Throughput %]",
                                  "20 DRAM Write Bandwidth [Throughput %]",
                                  "21 PCIe RX Throughput [Throughput %]",
                                  "22 PCIe TX Throughput [Throughput %]",
                                  "23 PCIe Read Requests to BAR1 [Requests]",
                                  "24 PCIe Write Requests to BAR1 [Requests]",
                              }));
}

TEST(NsysGpuMetrics, Ga10xTableAsAnRtx3050TiExport) {
  std::vector<std::string> l = Listing("ga10x");
  ASSERT_EQ(l.size(), 26u);
  EXPECT_EQ(l[3], "3 Sync Compute in Flight [Throughput %]");
  EXPECT_EQ(l[5], "5 SMs Active [Throughput %]");
  EXPECT_EQ(l[17], "17 Unallocated Warps in Active SMs [Throughput %]");
  EXPECT_EQ(l[25], "25 PCIe Write Requests to BAR1 [Requests]");
  // Ada and Turing: the same layout, inferred.
  EXPECT_EQ(Listing("ad10x")[5], "5 ~SMs Active [Throughput %]");
  EXPECT_EQ(Listing("tu10x").size(), 26u);
}

std::string Exported(std::string_view chip, std::string_view cupti) {
  ExportedMetric e = ExportedMetricFor(chip, cupti, "fallback [u]");
  return std::to_string(e.metric_id) + "|" + e.name + (e.nsys ? "|nsys" : "");
}

TEST(NsysGpuMetrics, GtraceDefaultSetOnGh100AndGa100) {
  // gtrace's default PM-sampling set (inject/metrics/metric_catalog.cc), in its order.
  const char* kSet[] = {"gpc__cycles_elapsed.avg.per_second",
                        "gr__cycles_active.sum.pct_of_peak_sustained_elapsed",
                        "sm__cycles_active.avg.pct_of_peak_sustained_elapsed",
                        "smsp__issue_active.avg.pct_of_peak_sustained_elapsed",
                        "sm__pipe_tensor_cycles_active_realtime.avg.pct_of_peak_sustained_elapsed",
                        "tpc__warps_active_shader_cs_realtime.avg.pct_of_peak_sustained_elapsed",
                        "sm__warps_active.avg.pct_of_peak_sustained_active",
                        "dram__bytes_read.sum.per_second",
                        "dram__bytes_write.sum.per_second",
                        "dram__throughput.avg.pct_of_peak_sustained_elapsed",
                        "pcie__read_bytes.sum.per_second",
                        "pcie__write_bytes.sum.per_second",
                        "nvlrx__bytes.sum.per_second",
                        "nvltx__bytes.sum.per_second"};
  const std::vector<std::string> expected = {"0|GPC Clock Frequency [MHz]|nsys",
                                             "2|GR Active [Throughput %]|nsys",
                                             "3|SMs Active [Throughput %]|nsys",
                                             "4|SM Issue [Throughput %]|nsys",
                                             "5|Tensor Active [Throughput %]|nsys",
                                             "12|Compute Warps in Flight [Throughput %]|nsys",
                                             "1000|gtrace Warp Occupancy of Active SMs [Throughput %]",
                                             "1001|gtrace DRAM Read Bytes [bytes/s]",
                                             "1002|gtrace DRAM Write Bytes [bytes/s]",
                                             "1003|gtrace DRAM Throughput [Throughput %]",
                                             "1004|gtrace PCIe RX Bytes [bytes/s]",
                                             "1005|gtrace PCIe TX Bytes [bytes/s]",
                                             "1006|gtrace NVLink RX Bytes [bytes/s]",
                                             "1007|gtrace NVLink TX Bytes [bytes/s]"};
  for (const char* chip : {"GH100", "GA100"}) {
    std::vector<std::string> got;
    for (const char* c : kSet)
      got.push_back(Exported(chip, c));
    EXPECT_EQ(got, expected) << chip;
  }
}

TEST(NsysGpuMetrics, PerFamilyIdsAndCustomMetrics) {
  EXPECT_EQ(Exported("GB202", "sm__cycles_active.avg.pct_of_peak_sustained_elapsed"),
            "7|SMs Active [Throughput %]|nsys");
  EXPECT_EQ(Exported("GA102", "sm__cycles_active.avg.pct_of_peak_sustained_elapsed"),
            "5|SMs Active [Throughput %]|nsys");
  // The non-realtime tensor counter and GB100's sm__warps_active are nsys's metrics too.
  EXPECT_EQ(Exported("GA100", "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed"),
            "5|Tensor Active [Throughput %]|nsys");
  EXPECT_EQ(Exported("GB100", "sm__warps_active.avg.pct_of_peak_sustained_elapsed"),
            "12|Compute Warps in Flight [Throughput %]|nsys");
  // A custom list naming nsys's own counter gets nsys's name and id.
  EXPECT_EQ(Exported("GH100", "dram__read_throughput.avg.pct_of_peak_sustained_elapsed"),
            "18|DRAM Read Bandwidth [Throughput %]|nsys");
  EXPECT_EQ(Exported("GB202", "pcie__write_bytes.avg.pct_of_peak_sustained_elapsed"),
            "22|PCIe TX Throughput [Throughput %]|nsys");
  // An nsys metric outside the family's set: nsys's name, an id the caller numbers.
  EXPECT_EQ(Exported("GB202", "gr__dispatch_cycles_active_queue_sync.avg.pct_of_peak_sustained_elapsed"),
            "-1|Sync Compute in Flight [Throughput %]");
  // Anything else keeps the stream's name; the caller numbers it from kCustomMetricIdBase.
  EXPECT_EQ(Exported("GH100", "sm__inst_executed.sum.per_second"), "-1|fallback [u]");
}

TEST(NsysGpuMetrics, GtraceNamesNeverPrefixNsysNames) {
  // Readers match nsys metrics by name or by name prefix ("DRAM Read Bandwidth%"): no gtrace-only name
  // may start with an nsys name's text before its unit, nor the other way round.
  const char* kGtrace[] = {"sm__warps_active.avg.pct_of_peak_sustained_active",
                           "dram__bytes_read.sum.per_second",
                           "dram__bytes_write.sum.per_second",
                           "dram__throughput.avg.pct_of_peak_sustained_elapsed",
                           "pcie__read_bytes.sum.per_second",
                           "pcie__write_bytes.sum.per_second",
                           "nvlrx__bytes.sum.per_second",
                           "nvltx__bytes.sum.per_second"};
  for (const char* c : kGtrace) {
    std::string g(GtraceNameOfCuptiMetric(c));
    ASSERT_FALSE(g.empty()) << c;
    EXPECT_EQ(g.rfind("gtrace ", 0), 0u) << g;
    for (std::string_view family : {"gb20x", "ga10x", "ga100"}) {
      for (const NsysMetricDef& d : NsysMetricTable(family)) {
        std::string base(d.name.substr(0, d.name.find(" [")));
        EXPECT_NE(g.rfind(base, 0), 0u) << g << " / " << d.name;
        EXPECT_NE(std::string(d.name).rfind(g.substr(0, g.find(" [")), 0), 0u) << g << " / " << d.name;
      }
    }
  }
}

}  // namespace
}  // namespace gt::exporter
