// The metrics gtrace knows how to ask CUPTI for, and the named sets built from them.
//
// A catalog entry is one logical metric ("SMs Active") with the CUPTI metric names that measure it,
// in preference order: chips name some counters differently (GB202's GDDR7 has no
// dram__bytes_read, GB100's PCIe counters live under PCI.TriageCompute.*), so the selection
// (metric_selection.h) takes, per chip, the first candidate the Profiler Host API accepts. The
// entry also fixes how the exporter turns CUPTI's double into the INTEGER nsys's GPU_METRICS holds:
// `round(value * export_scale)`, in `export_unit` (named in the metric's GPU_METRICS name).
//
// Sets: "default" (everything below), "compute", "memory", or "metrics:<cupti>,<cupti>,..." (a
// custom list, exported with CUPTI's own unit, scale 1). Each set has a PM-sampling list (rates
// and percentages over each sample) and a range-profiler list (totals per range).
//
// Pure data; any thread.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace gt::metrics {

inline constexpr int kMaxCandidates = 3;

struct MetricDef {
  const char* key;                         // stable catalog key, e.g. "sm_active"
  const char* label;                       // GPU_METRICS name without the unit, e.g. "SMs Active"
  const char* export_unit;                 // "Throughput %", "MHz", "bytes/s", "bytes", "ns", ...
  double export_scale;                     // exported integer = round(value * export_scale)
  const char* candidates[kMaxCandidates];  // CUPTI metric names, preferred first (nullptr ends)
};

// A metric as a set lists it (a catalog entry, or a custom CUPTI name).
struct MetricRequest {
  std::string key;
  std::string label;
  std::string export_unit;
  double export_scale = 1.0;
  std::vector<std::string> candidates;
};

enum class ProfilerKind { kPmSampling, kRangeProfiler };

// The PM-sampling catalog, in set order (GPC clock first: the attribution of every other metric
// leans on knowing the clock).
const std::vector<MetricDef>& PmSamplingCatalog();
// The range-profiler catalog (totals per range).
const std::vector<MetricDef>& RangeProfilerCatalog();

// Names of the built-in sets.
inline constexpr const char* kSetNames[] = {"default", "compute", "memory"};

// Resolves `set` ("default", "compute", "memory", "metrics:a,b,c") for `kind`. False with `error`
// for an unknown name or an empty custom list.
bool ResolveMetricSet(std::string_view set, ProfilerKind kind, std::vector<MetricRequest>* out, std::string* error);

// "Tensor Active [Throughput %]": the name a metric gets in TARGET_INFO_GPU_METRICS.
std::string ExportName(const std::string& label, const std::string& unit);

}  // namespace gt::metrics
