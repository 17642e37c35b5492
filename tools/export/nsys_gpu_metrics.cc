#include "tools/export/nsys_gpu_metrics.h"

#include <utility>

namespace gt::exporter {
namespace {

// Sources (nothing of NVIDIA's metric configuration files is public; these are what exports show):
//  [UG]  NVIDIA Nsight Systems User Guide, "GPU Metrics" > "Available metrics"
//        (https://docs.nvidia.com/nsight-systems/UserGuide/index.html#gpu-metrics): each metric's
//        name and the CUPTI/PerfWorks metric behind it (GPC Clock Frequency =
//        gpc__cycles_elapsed.avg.per_second, GR Active = gr__cycles_active.sum.pct_of_peak_sustained_
//        elapsed, ...), and that the sets are per chip family.
//  [GB]  TARGET_INFO_GPU_METRICS of an nsys 2025.3.2 export, `--gpu-metrics-set=gb20x`, 8 GPUs, all 25
//        ids and names, published with the trace (GitHub, a "full 15-second request: complete GPU
//        hardware metrics" write-up; the same file notes nsys stores the clocks as Hz).
//  [GA]  metricId -> name maps that scripts read from real exports: an RTX 3050 Ti (GA107, 26 ids,
//        every one) and an A100 40GB (GA100: ids 4, 5, 12, 15, 18, 19 — SM Issue, Tensor Active,
//        Compute Warps in Flight, Unallocated Warps in Active SMs, DRAM Read/Write Bandwidth).
//  [H]   Metric names in H100/H200 exports (`--gpu-metrics-set=gh100`) as scripts and reports list
//        them: GPC Clock, GR Active, SMs Active, SM Issue, Tensor Active, Compute Warps in Flight,
//        Unallocated Warps in Active SMs, DRAM Read/Write Bandwidth and the 8 NVLink RX/TX
//        Requests/Responses User/Protocol Data metrics; nsys's own nvlink recipe matches the same 8
//        names with "[Throughput %]". No public GH100 or GB100 id list was found: their ids below
//        are inferred (the GA100 layout, which [GA]'s six A100 ids fit), flagged id_observed=false.
//  [BSC] BSC's nsys2prv 0.5.8 (PyPI; semantics/gpu_metrics_semantic.py) reads metricId and metricName
//        from TARGET_INFO_GPU_METRICS as they are (event type 9400 + metricId, the name as its label).

constexpr std::string_view kGpc = "GPC Clock Frequency [MHz]";
constexpr std::string_view kSys = "SYS Clock Frequency [MHz]";
constexpr std::string_view kGr = "GR Active [Throughput %]";
constexpr std::string_view kSyncCompute = "Sync Compute in Flight [Throughput %]";
constexpr std::string_view kAsyncCompute = "Async Compute in Flight [Throughput %]";
constexpr std::string_view kSms = "SMs Active [Throughput %]";
constexpr std::string_view kIssue = "SM Issue [Throughput %]";
constexpr std::string_view kTensor = "Tensor Active [Throughput %]";
constexpr std::string_view kVtg[3] = {"Vertex/Tess/Geometry Warps in Flight [Throughput %]",
                                      "Vertex/Tess/Geometry Warps in Flight [Avg]",
                                      "Vertex/Tess/Geometry Warps in Flight [Avg Warps per Cycle]"};
constexpr std::string_view kPixel[3] = {"Pixel Warps in Flight [Throughput %]", "Pixel Warps in Flight [Avg]",
                                        "Pixel Warps in Flight [Avg Warps per Cycle]"};
constexpr std::string_view kCompute[3] = {"Compute Warps in Flight [Throughput %]", "Compute Warps in Flight [Avg]",
                                          "Compute Warps in Flight [Avg Warps per Cycle]"};
constexpr std::string_view kUnalloc[3] = {"Unallocated Warps in Active SMs [Throughput %]",
                                          "Unallocated Warps in Active SMs [Avg]",
                                          "Unallocated Warps in Active SMs [Avg Warps per Cycle]"};
constexpr std::string_view kDramRead = "DRAM Read Bandwidth [Throughput %]";
constexpr std::string_view kDramWrite = "DRAM Write Bandwidth [Throughput %]";
constexpr std::string_view kPcieRx = "PCIe RX Throughput [Throughput %]";
constexpr std::string_view kPcieTx = "PCIe TX Throughput [Throughput %]";
constexpr std::string_view kBar1Read = "PCIe Read Requests to BAR1 [Requests]";
constexpr std::string_view kBar1Write = "PCIe Write Requests to BAR1 [Requests]";
constexpr std::string_view kNvlink[8] = {
    "NVLink TX Responses User Data [Throughput %]", "NVLink TX Responses Protocol Data [Throughput %]",
    "NVLink TX Requests User Data [Throughput %]",  "NVLink TX Requests Protocol Data [Throughput %]",
    "NVLink RX Responses User Data [Throughput %]", "NVLink RX Responses Protocol Data [Throughput %]",
    "NVLink RX Requests User Data [Throughput %]",  "NVLink RX Requests Protocol Data [Throughput %]"};

using Names = std::vector<std::string_view>;

std::vector<NsysMetricDef> Number(const Names& names, const std::vector<int64_t>& observed_ids, bool all_observed) {
  std::vector<NsysMetricDef> out;
  for (size_t i = 0; i < names.size(); ++i) {
    bool seen = all_observed;
    for (int64_t id : observed_ids)
      seen = seen || id == static_cast<int64_t>(i);
    out.push_back({static_cast<int64_t>(i), names[i], seen});
  }
  return out;
}

// [GB]: every id observed.
Names Gb20xNames() {
  return {kGpc,
          kSys,
          "Sync Copy Engine Active [Throughput %]",
          "Sync Copy Engine Active [Cycles Active]",
          "Async Copy Engine Active 0 [Throughput %]",
          "Async Copy Engine Active 0 [Cycles Active]",
          kGr,
          kSms,
          kIssue,
          kTensor,
          kVtg[0],
          kVtg[1],
          kVtg[2],
          kPixel[0],
          kPixel[1],
          kPixel[2],
          kCompute[0],
          kCompute[1],
          kCompute[2],
          kDramRead,
          kDramWrite,
          kPcieRx,
          kPcieTx,
          kBar1Read,
          kBar1Write};
}

// [GA] RTX 3050 Ti: every id observed (that script spells id 5 "SM Active"; nsys's user guide and
// every newer export say "SMs Active", used here). Ada (ad10x) and Turing (tu10x): inferred, same layout.
Names Ga10xNames() {
  return {kGpc,        kSys,        kGr,         kSyncCompute, kAsyncCompute, kSms,        kIssue,
          kTensor,     kVtg[0],     kVtg[1],     kVtg[2],      kPixel[0],     kPixel[1],   kPixel[2],
          kCompute[0], kCompute[1], kCompute[2], kUnalloc[0],  kUnalloc[1],   kUnalloc[2], kDramRead,
          kDramWrite,  kPcieRx,     kPcieTx,     kBar1Read,    kBar1Write};
}

// [GA] A100: ids 4, 5, 12, 15, 18, 19 observed; the rest follow the layout they fit (the GA10x order
// without the sync/async compute pair), then NVLink in the order an older A100 export listed it.
// Hopper (gh100) and Blackwell GB100 (gb100): the same layout, inferred [H].
Names Ga100Names() {
  Names n = {kGpc,        kSys,        kGr,       kSms,       kIssue,      kTensor,     kVtg[0],     kVtg[1],
             kVtg[2],     kPixel[0],   kPixel[1], kPixel[2],  kCompute[0], kCompute[1], kCompute[2], kUnalloc[0],
             kUnalloc[1], kUnalloc[2], kDramRead, kDramWrite, kPcieRx,     kPcieTx,     kBar1Read,   kBar1Write};
  for (std::string_view v : kNvlink)
    n.push_back(v);
  return n;
}

bool StartsWith(std::string_view s, std::string_view p) {
  return s.substr(0, p.size()) == p;
}

}  // namespace

std::string_view NsysMetricFamily(std::string_view chip) {
  if (chip == "GA100")
    return "ga100";
  if (chip == "GH100" || chip == "GH200")
    return "gh100";
  if (chip == "GB100" || chip == "GB102" || chip == "GB110")
    return "gb100";
  if (StartsWith(chip, "GB2"))
    return "gb20x";
  if (StartsWith(chip, "GA10"))
    return "ga10x";
  if (StartsWith(chip, "AD10"))
    return "ad10x";
  if (StartsWith(chip, "TU10") || StartsWith(chip, "TU11"))
    return "tu10x";
  return "";
}

const std::vector<NsysMetricDef>& NsysMetricTable(std::string_view family) {
  static const auto* gb20x = new std::vector<NsysMetricDef>(Number(Gb20xNames(), {}, true));
  static const auto* ga10x = new std::vector<NsysMetricDef>(Number(Ga10xNames(), {}, true));
  static const auto* ga10x_inferred = new std::vector<NsysMetricDef>(Number(Ga10xNames(), {}, false));
  static const auto* ga100 = new std::vector<NsysMetricDef>(Number(Ga100Names(), {4, 5, 12, 15, 18, 19}, false));
  static const auto* ga100_inferred = new std::vector<NsysMetricDef>(Number(Ga100Names(), {}, false));
  if (family == "gb20x")
    return *gb20x;
  if (family == "ga10x")
    return *ga10x;
  if (family == "ad10x" || family == "tu10x")
    return *ga10x_inferred;
  if (family == "ga100")
    return *ga100;
  // gh100, gb100 and chips outside every family: the GA100 layout, nothing observed. For an unknown
  // chip this is gtrace's own choice (nsys would not sample it either).
  return *ga100_inferred;
}

std::string_view NsysNameOfCuptiMetric(std::string_view c) {
  // [UG]'s definitions, plus the equivalent counters gtrace's catalog falls back to on chips without
  // nsys's (inject/metrics/metric_catalog.cc: the realtime tensor counter; GB100's sm__warps_active,
  // which counts the same warps when only compute runs).
  static const std::pair<std::string_view, std::string_view> kMap[] = {
      {"gpc__cycles_elapsed.avg.per_second", kGpc},
      {"sys__cycles_elapsed.avg.per_second", kSys},
      {"gr__cycles_active.sum.pct_of_peak_sustained_elapsed", kGr},
      {"gr__dispatch_cycles_active_queue_sync.avg.pct_of_peak_sustained_elapsed", kSyncCompute},
      {"gr__dispatch_cycles_active_queue_async.avg.pct_of_peak_sustained_elapsed", kAsyncCompute},
      {"sm__cycles_active.avg.pct_of_peak_sustained_elapsed", kSms},
      {"smsp__issue_active.avg.pct_of_peak_sustained_elapsed", kIssue},
      {"sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed", kTensor},
      {"sm__pipe_tensor_cycles_active_realtime.avg.pct_of_peak_sustained_elapsed", kTensor},
      {"tpc__warps_active_shader_cs_realtime.avg.pct_of_peak_sustained_elapsed", kCompute[0]},
      {"sm__warps_active.avg.pct_of_peak_sustained_elapsed", kCompute[0]},
      {"dram__read_throughput.avg.pct_of_peak_sustained_elapsed", kDramRead},
      {"dram__write_throughput.avg.pct_of_peak_sustained_elapsed", kDramWrite},
      {"pcie__read_bytes.avg.pct_of_peak_sustained_elapsed", kPcieRx},
      {"pcie__write_bytes.avg.pct_of_peak_sustained_elapsed", kPcieTx},
  };
  for (const auto& [cupti, name] : kMap) {
    if (cupti == c)
      return name;
  }
  return {};
}

namespace {

// gtrace's default metrics that measure something nsys has no metric for (or measure it in another
// unit: nsys's DRAM/PCIe/NVLink metrics are percentages of peak, these are byte rates).
struct GtraceMetric {
  int64_t offset;
  std::string_view name;
  std::string_view cupti[2];
};
constexpr GtraceMetric kGtraceMetrics[] = {
    {0, "gtrace Warp Occupancy of Active SMs [Throughput %]", {"sm__warps_active.avg.pct_of_peak_sustained_active"}},
    {1, "gtrace DRAM Read Bytes [bytes/s]", {"dram__bytes_read.sum.per_second", "dram__bytes_op_read.sum.per_second"}},
    {2,
     "gtrace DRAM Write Bytes [bytes/s]",
     {"dram__bytes_write.sum.per_second", "dram__bytes_op_write.sum.per_second"}},
    {3, "gtrace DRAM Throughput [Throughput %]", {"dram__throughput.avg.pct_of_peak_sustained_elapsed"}},
    {4,
     "gtrace PCIe RX Bytes [bytes/s]",
     {"pcie__read_bytes.sum.per_second", "PCI.TriageCompute.pcie__read_bytes.sum.per_second"}},
    {5,
     "gtrace PCIe TX Bytes [bytes/s]",
     {"pcie__write_bytes.sum.per_second", "PCI.TriageCompute.pcie__write_bytes.sum.per_second"}},
    {6, "gtrace NVLink RX Bytes [bytes/s]", {"nvlrx__bytes.sum.per_second"}},
    {7, "gtrace NVLink TX Bytes [bytes/s]", {"nvltx__bytes.sum.per_second"}},
};

}  // namespace

std::string_view GtraceNameOfCuptiMetric(std::string_view c) {
  for (const GtraceMetric& m : kGtraceMetrics) {
    for (std::string_view cupti : m.cupti) {
      if (!cupti.empty() && cupti == c)
        return m.name;
    }
  }
  return {};
}

ExportedMetric ExportedMetricFor(std::string_view chip, std::string_view cupti_name, std::string_view fallback_name) {
  ExportedMetric out;
  std::string_view nsys = NsysNameOfCuptiMetric(cupti_name);
  if (!nsys.empty()) {
    for (const NsysMetricDef& d : NsysMetricTable(NsysMetricFamily(chip))) {
      if (d.name == nsys) {
        out.metric_id = d.metric_id;
        out.name = std::string(nsys);
        out.nsys = true;
        return out;
      }
    }
    // An nsys metric this family's set does not have (e.g. Sync Compute in Flight on GB20x): nsys's
    // name, an id of gtrace's range so it cannot collide with the family's.
  }
  for (const GtraceMetric& m : kGtraceMetrics) {
    for (std::string_view cupti : m.cupti) {
      if (!cupti.empty() && cupti == cupti_name) {
        out.metric_id = kGtraceMetricIdBase + m.offset;
        out.name = std::string(m.name);
        return out;
      }
    }
  }
  out.name = nsys.empty() ? std::string(fallback_name) : std::string(nsys);
  return out;
}

}  // namespace gt::exporter
