// GPU metrics export (schema/metrics.proto -> SQLite):
//  - GPU_METRICS and TARGET_INFO_GPU_METRICS as the nsys 3.25.0 schema documents them (DDL in
//    tools/nsys), one GPU_METRICS row per PM sample and metric;
//  - GTRACE_GPU_METRICS_DEVICES (what each process did with each device it considered),
//    GTRACE_GPU_METRICS_CONFIG (every metric of every set: accepted or rejected, with CUPTI's reason)
//    and GTRACE_RANGE_METRICS (range-profiler results, one row per range and metric) — gtrace's own.
//
// Ids and scaling (docs/gpu-metrics.md):
//  - typeId = <hw id:8><vm id:8 = 1><source id:16 = kGpuMetricsSourceId><type id:32 = gpuId>, so
//    typeId & 0xFF is the GPU's TARGET_INFO_GPU.id as nsys documents; gpuIds are the CUDA module's
//    (one per host and UUID), and a GPU only GPU metrics saw gets the next free id and a
//    TARGET_INFO_GPU row of its own. Samples are written with a provisional typeId while streams are
//    read and renumbered in Finish (GPU ids are known only once every stream was read).
//  - metricId / metricName: nsys's, per chip family, for a metric that is one of nsys's (e.g. "SMs
//    Active [Throughput %]", id 3 on GH100); gtrace's other metrics are named "gtrace ..." with ids
//    from 1000, custom CUPTI metrics "<cupti name> [<unit>]" from 2000 (tools/export/nsys_gpu_metrics.h).
//  - value: round(CUPTI value * scale): percentages as whole percent (0..100), GPC clock in MHz,
//    bandwidths in bytes per second; timestamp = the sample's end (session ns); rawTimestamp = the
//    same instant on CUPTI's clock (stream ns + the sampler's clock offset).
// Single-threaded (the exporter's thread).
#pragma once

#include <cstdint>
#include <memory>

#include "tools/export/export_context.h"

namespace gt::exporter {

inline constexpr int64_t kGpuMetricsSourceId = 1;

inline int64_t GpuMetricsTypeId(uint32_t hw_id, int64_t gpu_id) {
  return (static_cast<int64_t>(hw_id & 0xff) << 56) | kVmIdLocal | (kGpuMetricsSourceId << 32) | (gpu_id & 0xffffffff);
}

std::unique_ptr<ExportModule> MakeGpuMetricsExport();

}  // namespace gt::exporter
