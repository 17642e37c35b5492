// Field numbers of schema/cuda.proto (and of its Chunk fields in gtrace.proto), for the hand-written
// encoder in inject/cupti/. tests/cuda/cuda_fields_test.cc compares every constant with the
// protoc-generated descriptor and fails when a field has no constant here.
#pragma once

#include <cstdint>

namespace gt::field {

namespace chunk {
inline constexpr uint32_t kCudaApiCalls = 40, kCudaKernels = 41, kCudaMemcpys = 42, kCudaMemsets = 43,
                          kCudaSyncs = 44, kCudaEvents = 45, kCudaGraphTraces = 46, kCudaOverheads = 47,
                          kCudaDevices = 48, kCudaContexts = 49, kCudaStreams = 50, kCudaMemoryEvents = 51,
                          kCudaMemoryPoolEvents = 52, kCudaGraphLaunches = 53, kCudaGraphEvents = 54,
                          kCaptureWindows = 55, kCudaTraceInfo = 56, kCudaRecordLosses = 57,
                          kCudaKernelConfigs = 58, kCudaApiConfigs = 59, kCudaKernelBatches = 60,
                          kCudaApiBatches = 61, kCuptiClockPairs = 62;
}
namespace cuda_kernel_config {
inline constexpr uint32_t kId = 1, kKernel = 2;
}
namespace cuda_api_config {
inline constexpr uint32_t kId = 1, kCall = 2;
}
namespace cuda_kernel_batch {
inline constexpr uint32_t kConfigId = 1, kStartDeltaNs = 2, kDurationNs = 3, kCorrelationIdDelta = 4,
                          kGridIdDelta = 5;
}
namespace cuda_api_batch {
inline constexpr uint32_t kConfigId = 1, kStartDeltaNs = 2, kDurationNs = 3, kCorrelationIdDelta = 4;
}
namespace cuda_api_call {
inline constexpr uint32_t kKind = 1, kStartDeltaNs = 2, kDurationNs = 3, kTid = 4, kCorrelationId = 5, kCbid = 6,
                          kNameId = 7, kReturnValue = 8;
}
namespace cuda_kernel {
inline constexpr uint32_t kStartDeltaNs = 1, kDurationNs = 2, kDeviceId = 3, kContextId = 4, kStreamId = 5,
                          kCorrelationId = 6, kNameId = 7, kGridX = 8, kGridY = 9, kGridZ = 10, kBlockX = 11,
                          kBlockY = 12, kBlockZ = 13, kRegistersPerThread = 14, kStaticSharedMemoryBytes = 15,
                          kDynamicSharedMemoryBytes = 16, kLocalMemoryPerThreadBytes = 17,
                          kLocalMemoryTotalBytes = 18, kGridId = 19, kSharedMemoryExecutedBytes = 20,
                          kLaunchType = 21, kCacheConfigRequested = 22, kCacheConfigExecuted = 23,
                          kSharedMemoryConfig = 24, kSharedMemoryLimitConfig = 25, kGraphNodeId = 26, kGraphId = 27,
                          kClusterX = 28, kClusterY = 29, kClusterZ = 30, kClusterSchedulingPolicy = 31,
                          kMaxPotentialClusterSize = 32, kMaxActiveClusters = 33,
                          kSharedMemoryCarveoutRequestedPercent = 34, kIsDeviceLaunched = 35, kChannelId = 36,
                          kChannelType = 37;
}
namespace cuda_memcpy {
inline constexpr uint32_t kStartDeltaNs = 1, kDurationNs = 2, kDeviceId = 3, kContextId = 4, kStreamId = 5,
                          kCorrelationId = 6, kSizeBytes = 7, kCopyKind = 8, kSrcKind = 9, kDstKind = 10, kFlags = 11,
                          kGraphNodeId = 12, kGraphId = 13, kCopyCount = 14, kRuntimeCorrelationId = 15, kPeer = 16,
                          kSrcDeviceId = 17, kSrcContextId = 18, kDstDeviceId = 19, kDstContextId = 20,
                          kChannelId = 21, kChannelType = 22, kIsDeviceLaunched = 23;
}
namespace cuda_memset {
inline constexpr uint32_t kStartDeltaNs = 1, kDurationNs = 2, kDeviceId = 3, kContextId = 4, kStreamId = 5,
                          kCorrelationId = 6, kValue = 7, kSizeBytes = 8, kMemoryKind = 9, kFlags = 10,
                          kGraphNodeId = 11, kGraphId = 12, kChannelId = 13, kIsDeviceLaunched = 14;
}
namespace cuda_sync {
inline constexpr uint32_t kStartDeltaNs = 1, kDurationNs = 2, kType = 3, kContextId = 4, kStreamId = 5,
                          kCorrelationId = 6, kCudaEventId = 7, kCudaEventSyncId = 8, kReturnValue = 9;
}
namespace cuda_event {
inline constexpr uint32_t kCorrelationId = 1, kContextId = 2, kStreamId = 3, kEventId = 4, kDeviceId = 5,
                          kDeviceTimestampNs = 6, kCudaEventSyncId = 7;
}
namespace cuda_graph_trace {
inline constexpr uint32_t kStartDeltaNs = 1, kDurationNs = 2, kDeviceId = 3, kContextId = 4, kStreamId = 5,
                          kCorrelationId = 6, kGraphId = 7, kEndDeviceId = 8, kEndContextId = 9;
}
namespace cuda_overhead {
inline constexpr uint32_t kStartDeltaNs = 1, kDurationNs = 2, kOverheadKind = 3, kObjectKind = 4, kObjectTid = 5,
                          kObjectDeviceId = 6, kCorrelationId = 7;
}
namespace cuda_device {
inline constexpr uint32_t kDeviceId = 1, kName = 2, kUuid = 3, kGlobalMemoryBytes = 4, kGlobalMemoryBandwidthKbps = 5,
                          kCoreClockKhz = 6, kL2CacheBytes = 7, kMultiprocessors = 8, kComputeMajor = 9,
                          kComputeMinor = 10, kConstantMemoryBytes = 11, kThreadsPerWarp = 12, kMemcpyEngines = 13,
                          kMaxIpc = 14, kMaxWarpsPerMultiprocessor = 15, kMaxBlocksPerMultiprocessor = 16,
                          kMaxSharedMemoryPerMultiprocessorBytes = 17, kMaxRegistersPerMultiprocessor = 18,
                          kMaxRegistersPerBlock = 19, kMaxSharedMemoryPerBlockBytes = 20, kMaxThreadsPerBlock = 21,
                          kMaxBlockDimX = 22, kMaxBlockDimY = 23, kMaxBlockDimZ = 24, kMaxGridDimX = 25,
                          kMaxGridDimY = 26, kMaxGridDimZ = 27, kEccEnabled = 28, kCudaVisible = 29, kMigEnabled = 30,
                          kGpuInstanceId = 31, kComputeInstanceId = 32, kMigUuid = 33, kNumaNode = 34, kNumaId = 35;
}
namespace cuda_context {
inline constexpr uint32_t kContextId = 1, kDeviceId = 2, kComputeApiKind = 3, kNullStreamId = 4,
                          kParentContextId = 5, kGreenContext = 6, kMultiprocessors = 7, kCigMode = 8;
}
namespace cuda_stream {
inline constexpr uint32_t kContextId = 1, kStreamId = 2, kPriority = 3, kFlag = 4, kCorrelationId = 5;
}
namespace cuda_memory_event {
inline constexpr uint32_t kTsDeltaNs = 1, kOperationType = 2, kMemoryKind = 3, kCorrelationId = 4, kAddress = 5,
                          kSizeBytes = 6, kPc = 7, kDeviceId = 8, kContextId = 9, kStreamId = 10, kNameId = 11,
                          kIsAsync = 12, kPoolType = 13, kPoolAddress = 14, kPoolReleaseThresholdBytes = 15,
                          kPoolSizeBytes = 16, kPoolUtilizedBytes = 17, kPoolProcessId = 18, kSourceNameId = 19;
}
namespace cuda_memory_pool_event {
inline constexpr uint32_t kTsDeltaNs = 1, kOperationType = 2, kPoolType = 3, kCorrelationId = 4, kDeviceId = 5,
                          kMinBytesToKeep = 6, kAddress = 7, kSizeBytes = 8, kReleaseThresholdBytes = 9,
                          kUtilizedBytes = 10, kManaged = 11;
}
namespace cuda_graph_launch {
inline constexpr uint32_t kTsDeltaNs = 1, kCorrelationId = 2, kGraphExecId = 3;
}
namespace cuda_graph_event {
inline constexpr uint32_t kKind = 1, kTsDeltaNs = 2, kGraphId = 3, kOriginalGraphId = 4, kGraphExecId = 5;
}
namespace capture_window_event {
inline constexpr uint32_t kOpen = 1, kTsNs = 2, kReason = 3, kWindowIndex = 4, kFinal = 5;
}
namespace cuda_trace_info {
inline constexpr uint32_t kCuptiPath = 1, kCuptiApiVersion = 2, kGraphTraceNodes = 3, kMemoryUsage = 4,
                          kClockCallback = 5, kCuptiClockOffsetNs = 6, kBufferSizeBytes = 7, kBufferCount = 8,
                          kActivityKinds = 9, kCuptiPathSource = 10, kCuptiClockPairs = 11;
}
namespace cupti_clock_pair {
inline constexpr uint32_t kCuptiNs = 1, kStreamClockNs = 2, kUncertaintyNs = 3;
}
namespace cuda_record_loss {
inline constexpr uint32_t kTsNs = 1, kIncompleteRecords = 2, kUnknownKindRecords = 3,
                          kWalkErrorBuffers = 4, kWalkErrorBytes = 5;
}

namespace enums {
inline constexpr uint32_t kCudaApiRuntime = 1, kCudaApiDriver = 2;
inline constexpr uint32_t kGraphCreated = 1, kGraphCloned = 2, kGraphExecCreated = 3;
inline constexpr uint32_t kWindowStart = 1, kWindowDelay = 2, kWindowCudaProfilerApi = 3, kWindowNvtx = 4,
                          kWindowDuration = 5, kWindowApi = 6, kWindowSteps = 7;
}  // namespace enums

}  // namespace gt::field
