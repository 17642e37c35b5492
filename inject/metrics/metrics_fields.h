// Field numbers of schema/metrics.proto (and of its Chunk fields in gtrace.proto), for the
// hand-written encoder in inject/metrics/. tests/metrics/metrics_fields_test.cc compares every
// constant with the protoc-generated descriptor and fails when a field has no constant here.
#pragma once

#include <cstdint>

namespace gt::field {

namespace chunk {
inline constexpr uint32_t kGpuMetricsConfig = 100, kGpuMetricsDevices = 101, kGpuMetricsSamples = 102,
                          kGpuMetricsLosses = 103, kRangeMetricsConfigs = 104, kRangeMetricsResults = 105;
}
namespace gpu_metrics_config {
inline constexpr uint32_t kDevices = 1, kSamplingIntervalNs = 2, kSetName = 3, kRanges = 4, kLocalRank = 5,
                          kLocalWorldSize = 6, kVisibleDevices = 7, kOwnedDeviceIds = 8, kOwnerRule = 9,
                          kFrequencyHz = 10, kCuptiPath = 11;
}
namespace gpu_metric {
inline constexpr uint32_t kIndex = 1, kKey = 2, kCuptiName = 3, kLabel = 4, kExportUnit = 5, kExportScale = 6;
}
namespace gpu_metric_rejection {
inline constexpr uint32_t kKey = 1, kCuptiName = 2, kReason = 3;
}
namespace gpu_metrics_device {
inline constexpr uint32_t kDeviceId = 1, kUuid = 2, kName = 3, kChipName = 4, kPciBusId = 5, kState = 6, kReason = 7,
                          kSetName = 8, kMetrics = 9, kRejected = 10, kSamplingIntervalNs = 11, kTriggerMode = 12,
                          kSamplingIntervalRaw = 13, kHardwareBufferBytes = 14, kMaxSamples = 15, kClockOffsetNs = 16,
                          kTsNs = 17, kPasses = 18, kSamplerTid = 19;
}
namespace gpu_metrics_sample {
inline constexpr uint32_t kDeviceId = 1, kEndDeltaNs = 2, kDurationNs = 3, kValues = 4;
}
namespace gpu_metrics_loss {
inline constexpr uint32_t kDeviceId = 1, kTsNs = 2, kDroppedSamples = 3, kHwBufferOverflows = 4, kDecodeErrors = 5;
}
namespace range_metrics_config {
inline constexpr uint32_t kDeviceId = 1, kContextId = 2, kMode = 3, kNvtxMessage = 4, kNvtxDomain = 5, kChipName = 6,
                          kMetrics = 7, kRejected = 8, kReason = 9, kMaxRangesPerPass = 10;
}
namespace range_metrics_result {
inline constexpr uint32_t kDeviceId = 1, kContextId = 2, kMode = 3, kRangeName = 4, kRangeIndex = 5, kPassId = 6,
                          kPassStartNs = 7, kPassEndNs = 8, kTid = 9, kValues = 10, kRangesDropped = 11;
}

namespace enums {
// GpuMetricsState
inline constexpr uint32_t kGpuMetricsSampling = 1, kGpuMetricsNotOwned = 2, kGpuMetricsUnavailable = 3,
                          kGpuMetricsFailed = 4, kGpuMetricsStopped = 5;
// RangeMetricsMode
inline constexpr uint32_t kRangeModeNvtx = 1, kRangeModeKernel = 2;
}  // namespace enums

}  // namespace gt::field
