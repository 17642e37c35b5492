#include "inject/metrics/metric_catalog.h"

#include <cstring>

namespace gt::metrics {
namespace {

// Percentages stay whole percent (nsys's GPU_METRICS convention: 0..100); a rounded sample is off by
// at most 0.5 percentage points. Clocks are exported in MHz, bandwidths in bytes per second (exact
// enough as integers). Which candidate each chip accepts is in docs/gpu-metrics.md (per-chip table,
// checked by tests/metrics/metric_selection_test.cc with the real Profiler Host API).
const std::vector<MetricDef>& PmCatalog() {
  static const std::vector<MetricDef>* catalog = new std::vector<MetricDef>{
      {"gpc_clock", "GPC Clock Frequency", "MHz", 1e-6, {"gpc__cycles_elapsed.avg.per_second"}},
      {"gr_active", "GR Active", "Throughput %", 1.0, {"gr__cycles_active.sum.pct_of_peak_sustained_elapsed"}},
      {"sm_active", "SMs Active", "Throughput %", 1.0, {"sm__cycles_active.avg.pct_of_peak_sustained_elapsed"}},
      {"sm_issue", "SM Issue", "Throughput %", 1.0, {"smsp__issue_active.avg.pct_of_peak_sustained_elapsed"}},
      {"tensor_active",
       "Tensor Active",
       "Throughput %",
       1.0,
       {"sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed",
        "sm__pipe_tensor_cycles_active_realtime.avg.pct_of_peak_sustained_elapsed"}},
      {"warps_in_flight",
       "Compute Warps in Flight",
       "Throughput %",
       1.0,
       {"tpc__warps_active_shader_cs_realtime.avg.pct_of_peak_sustained_elapsed",
        "sm__warps_active.avg.pct_of_peak_sustained_elapsed"}},
      {"warp_occupancy",
       "Warp Occupancy of Active SMs",
       "Throughput %",
       1.0,
       {"sm__warps_active.avg.pct_of_peak_sustained_active"}},
      {"dram_read",
       "DRAM Read Bandwidth",
       "bytes/s",
       1.0,
       {"dram__bytes_read.sum.per_second", "dram__bytes_op_read.sum.per_second"}},
      {"dram_write",
       "DRAM Write Bandwidth",
       "bytes/s",
       1.0,
       {"dram__bytes_write.sum.per_second", "dram__bytes_op_write.sum.per_second"}},
      {"dram_throughput",
       "DRAM Throughput",
       "Throughput %",
       1.0,
       {"dram__throughput.avg.pct_of_peak_sustained_elapsed"}},
      {"pcie_rx",
       "PCIe RX Bandwidth",
       "bytes/s",
       1.0,
       {"pcie__read_bytes.sum.per_second", "PCI.TriageCompute.pcie__read_bytes.sum.per_second"}},
      {"pcie_tx",
       "PCIe TX Bandwidth",
       "bytes/s",
       1.0,
       {"pcie__write_bytes.sum.per_second", "PCI.TriageCompute.pcie__write_bytes.sum.per_second"}},
      {"nvlink_rx", "NVLink RX Bandwidth", "bytes/s", 1.0, {"nvlrx__bytes.sum.per_second"}},
      {"nvlink_tx", "NVLink TX Bandwidth", "bytes/s", 1.0, {"nvltx__bytes.sum.per_second"}},
  };
  return *catalog;
}

// Totals per range: a range's duration, cycles, bytes and instructions, and its utilisations.
// Exported as REAL (no scaling) into gtrace's own table.
const std::vector<MetricDef>& RangeCatalog() {
  static const std::vector<MetricDef>* catalog = new std::vector<MetricDef>{
      {"gpu_time", "GPU Time", "ns", 1.0, {"gpu__time_duration.sum"}},
      {"gpc_cycles", "GPC Cycles", "cycles", 1.0, {"gpc__cycles_elapsed.max"}},
      {"sm_active", "SMs Active", "Throughput %", 1.0, {"sm__cycles_active.avg.pct_of_peak_sustained_elapsed"}},
      {"sm_issue", "SM Issue", "Throughput %", 1.0, {"smsp__issue_active.avg.pct_of_peak_sustained_elapsed"}},
      {"tensor_active",
       "Tensor Active",
       "Throughput %",
       1.0,
       {"sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed"}},
      {"warp_occupancy",
       "Warp Occupancy of Active SMs",
       "Throughput %",
       1.0,
       {"sm__warps_active.avg.pct_of_peak_sustained_active"}},
      {"instructions", "Instructions Executed", "instructions", 1.0, {"sm__inst_executed.sum"}},
      {"dram_read", "DRAM Bytes Read", "bytes", 1.0, {"dram__bytes_read.sum", "dram__bytes_op_read.sum"}},
      {"dram_write", "DRAM Bytes Written", "bytes", 1.0, {"dram__bytes_write.sum", "dram__bytes_op_write.sum"}},
      {"dram_throughput",
       "DRAM Throughput",
       "Throughput %",
       1.0,
       {"dram__throughput.avg.pct_of_peak_sustained_elapsed"}},
      {"l2_bytes", "L2 Bytes", "bytes", 1.0, {"lts__t_bytes.sum"}},
      {"pcie_rx", "PCIe RX Bytes", "bytes", 1.0, {"pcie__read_bytes.sum", "PCI.TriageCompute.pcie__read_bytes.sum"}},
      {"pcie_tx", "PCIe TX Bytes", "bytes", 1.0, {"pcie__write_bytes.sum", "PCI.TriageCompute.pcie__write_bytes.sum"}},
      {"nvlink_rx", "NVLink RX Bytes", "bytes", 1.0, {"nvlrx__bytes.sum"}},
      {"nvlink_tx", "NVLink TX Bytes", "bytes", 1.0, {"nvltx__bytes.sum"}},
  };
  return *catalog;
}

bool InSet(std::string_view set, const char* key) {
  static const char* const kCompute[] = {"gpc_clock",      "gpc_cycles",  "gpu_time",      "gr_active",
                                         "sm_active",      "sm_issue",    "tensor_active", "warps_in_flight",
                                         "warp_occupancy", "instructions"};
  static const char* const kMemory[] = {"gpc_clock", "gpc_cycles", "gpu_time",        "gr_active",
                                        "dram_read", "dram_write", "dram_throughput", "l2_bytes",
                                        "pcie_rx",   "pcie_tx",    "nvlink_rx",       "nvlink_tx"};
  if (set == "default")
    return true;
  if (set == "compute") {
    for (const char* k : kCompute) {
      if (std::strcmp(k, key) == 0)
        return true;
    }
    return false;
  }
  for (const char* k : kMemory) {
    if (std::strcmp(k, key) == 0)
      return true;
  }
  return false;
}

MetricRequest FromDef(const MetricDef& d) {
  MetricRequest r;
  r.key = d.key;
  r.label = d.label;
  r.export_unit = d.export_unit;
  r.export_scale = d.export_scale;
  for (const char* c : d.candidates) {
    if (c != nullptr)
      r.candidates.push_back(c);
  }
  return r;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
    s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t'))
    s.remove_suffix(1);
  return s;
}

}  // namespace

const std::vector<MetricDef>& PmSamplingCatalog() {
  return PmCatalog();
}
const std::vector<MetricDef>& RangeProfilerCatalog() {
  return RangeCatalog();
}

bool ResolveMetricSet(std::string_view set, ProfilerKind kind, std::vector<MetricRequest>* out, std::string* error) {
  out->clear();
  set = Trim(set);
  if (set.substr(0, 8) == "metrics:") {
    std::string_view list = set.substr(8);
    while (!list.empty()) {
      size_t comma = list.find(',');
      std::string_view name = Trim(list.substr(0, comma));
      if (!name.empty()) {
        bool dup = false;
        for (const MetricRequest& r : *out)
          dup = dup || r.key == name;
        if (!dup) {
          MetricRequest r;
          r.key = std::string(name);
          r.label = std::string(name);
          r.export_unit = "";  // filled from CUPTI's dimension unit by the selection
          r.candidates.push_back(std::string(name));
          out->push_back(std::move(r));
        }
      }
      if (comma == std::string_view::npos)
        break;
      list.remove_prefix(comma + 1);
    }
    if (out->empty()) {
      *error = "'" + std::string(set) + "': no metric names after 'metrics:'";
      return false;
    }
    return true;
  }
  bool known = false;
  for (const char* n : kSetNames)
    known = known || set == n;
  if (!known) {
    *error =
        "unknown metric set '" + std::string(set) + "' (known: default, compute, memory, metrics:<name>,<name>...)";
    return false;
  }
  const std::vector<MetricDef>& catalog = kind == ProfilerKind::kPmSampling ? PmCatalog() : RangeCatalog();
  for (const MetricDef& d : catalog) {
    if (InSet(set, d.key))
      out->push_back(FromDef(d));
  }
  return true;
}

std::string ExportName(const std::string& label, const std::string& unit) {
  return unit.empty() ? label : label + " [" + unit + "]";
}

}  // namespace gt::metrics
