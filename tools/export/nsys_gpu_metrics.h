// Nsight Systems' GPU-metric names and metricIds, per chip family, and the mapping from the CUPTI
// metric gtrace sampled to them (issue 15: tools written for nsys look metrics up by nsys's names,
// e.g. "SMs Active [Throughput %]", and some by nsys's metricId).
//
// What nsys writes (TARGET_INFO_GPU_METRICS): one metric set per chip family (`--gpu-metrics-set`
// tu10x, ga100, ga10x, ad10x, gh100, gb100, gb20x); metricId = the metric's position in that set,
// 0-based, the same on every GPU of the family; metricName = "<name> [<unit>]". The tables and where
// each comes from are in nsys_gpu_metrics.cc and docs/gpu-metrics.md ("nsys's names and ids").
//
// What gtrace writes:
//  - a sampled CUPTI metric that *is* an nsys metric (same counter: nsys's user guide names the CUPTI
//    metric behind each of its metrics) gets nsys's name and its id in the GPU's family;
//  - gtrace's other default metrics (byte rates, occupancy, DRAM throughput) get names that start
//    with "gtrace " — no nsys name is a prefix of them and none of them is a prefix of an nsys name
//    — and ids from kGtraceMetricIdBase on, the same on every chip;
//  - any other CUPTI metric (`--gpu-metrics-set=metrics:...`) keeps "<cupti name> [<unit>]" and the
//    caller numbers it from kCustomMetricIdBase on.
// Pure functions, no state: any thread.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace gt::exporter {

inline constexpr int64_t kGtraceMetricIdBase = 1000;
inline constexpr int64_t kCustomMetricIdBase = 2000;

struct NsysMetricDef {
  int64_t metric_id;
  std::string_view name;  // "<name> [<unit>]" as TARGET_INFO_GPU_METRICS.metricName
  bool id_observed;       // the id was seen in a public export of this family (else inferred)
};

// nsys's set name for a CUPTI chip name ("GH100" -> "gh100", "GA102" -> "ga10x", "GB202" -> "gb20x",
// "AD104" -> "ad10x", "TU102" -> "tu10x"); "" for a chip outside these families.
std::string_view NsysMetricFamily(std::string_view chip);

// The family's metric list in metricId order; the generic list (see the .cc) for "".
const std::vector<NsysMetricDef>& NsysMetricTable(std::string_view family);

// The nsys metric name ("SMs Active [Throughput %]") that a CUPTI metric is, or "" when none.
std::string_view NsysNameOfCuptiMetric(std::string_view cupti_name);

// The gtrace-only name of a metric of gtrace's default sets, or "" when it is not one.
std::string_view GtraceNameOfCuptiMetric(std::string_view cupti_name);

struct ExportedMetric {
  int64_t metric_id = -1;  // -1: a custom metric the caller numbers (kCustomMetricIdBase + n)
  std::string name;
  bool nsys = false;  // nsys's name and id
};

// What GPU_METRICS / TARGET_INFO_GPU_METRICS carry for a metric sampled with `cupti_name` on `chip`;
// `fallback_name` ("<label> [<unit>]" from the stream) names a custom metric.
ExportedMetric ExportedMetricFor(std::string_view chip, std::string_view cupti_name, std::string_view fallback_name);

}  // namespace gt::exporter
