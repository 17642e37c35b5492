// Every field-number constant of inject/cupti/cuda_fields.h equals the protoc descriptor's, and
// every field of the CUDA messages (and every Chunk field in 40-79) has a constant: a field added to
// cuda.proto without an encoder update fails here.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>

#include "gtrace.pb.h"
#include "inject/cupti/cuda_fields.h"

namespace gt {
namespace {

std::map<std::string, std::set<std::string>>& Checked() {
  static std::map<std::string, std::set<std::string>> checked;
  return checked;
}

void ExpectField(const google::protobuf::Descriptor* d, const std::string& name, uint32_t number) {
  const google::protobuf::FieldDescriptor* f = d->FindFieldByName(name);
  ASSERT_NE(f, nullptr) << d->name() << "." << name << " is not in the schema";
  EXPECT_EQ(static_cast<uint32_t>(f->number()), number) << d->name() << "." << name;
  Checked()[d->name()].insert(name);
}

#define EXPECT_FIELD(Message, name, constant) ExpectField(schema::Message::descriptor(), name, constant)

TEST(CudaFields, ChunkFieldsMatchDescriptor) {
  namespace c = field::chunk;
  EXPECT_FIELD(Chunk, "cuda_api_calls", c::kCudaApiCalls);
  EXPECT_FIELD(Chunk, "cuda_kernels", c::kCudaKernels);
  EXPECT_FIELD(Chunk, "cuda_memcpys", c::kCudaMemcpys);
  EXPECT_FIELD(Chunk, "cuda_memsets", c::kCudaMemsets);
  EXPECT_FIELD(Chunk, "cuda_syncs", c::kCudaSyncs);
  EXPECT_FIELD(Chunk, "cuda_events", c::kCudaEvents);
  EXPECT_FIELD(Chunk, "cuda_graph_traces", c::kCudaGraphTraces);
  EXPECT_FIELD(Chunk, "cuda_overheads", c::kCudaOverheads);
  EXPECT_FIELD(Chunk, "cuda_devices", c::kCudaDevices);
  EXPECT_FIELD(Chunk, "cuda_contexts", c::kCudaContexts);
  EXPECT_FIELD(Chunk, "cuda_streams", c::kCudaStreams);
  EXPECT_FIELD(Chunk, "cuda_memory_events", c::kCudaMemoryEvents);
  EXPECT_FIELD(Chunk, "cuda_memory_pool_events", c::kCudaMemoryPoolEvents);
  EXPECT_FIELD(Chunk, "cuda_graph_launches", c::kCudaGraphLaunches);
  EXPECT_FIELD(Chunk, "cuda_graph_events", c::kCudaGraphEvents);
  EXPECT_FIELD(Chunk, "capture_windows", c::kCaptureWindows);
  EXPECT_FIELD(Chunk, "cuda_trace_info", c::kCudaTraceInfo);
  EXPECT_FIELD(Chunk, "cuda_record_losses", c::kCudaRecordLosses);
  EXPECT_FIELD(Chunk, "cuda_kernel_configs", c::kCudaKernelConfigs);
  EXPECT_FIELD(Chunk, "cuda_api_configs", c::kCudaApiConfigs);
  EXPECT_FIELD(Chunk, "cuda_kernel_batches", c::kCudaKernelBatches);
  EXPECT_FIELD(Chunk, "cuda_api_batches", c::kCudaApiBatches);
  EXPECT_FIELD(Chunk, "cupti_clock_pairs", c::kCuptiClockPairs);
  const google::protobuf::Descriptor* chunk = schema::Chunk::descriptor();
  for (int i = 0; i < chunk->field_count(); ++i) {
    const google::protobuf::FieldDescriptor* f = chunk->field(i);
    if (f->number() < 40 || f->number() > 79) continue;
    EXPECT_TRUE(Checked()["Chunk"].count(f->name())) << "Chunk." << f->name() << " (CUDA range) has no constant";
  }
}

TEST(CudaFields, MessageFieldsMatchDescriptor) {
  {
    namespace f = field::cuda_api_call;
    EXPECT_FIELD(CudaApiCall, "kind", f::kKind);
    EXPECT_FIELD(CudaApiCall, "start_delta_ns", f::kStartDeltaNs);
    EXPECT_FIELD(CudaApiCall, "duration_ns", f::kDurationNs);
    EXPECT_FIELD(CudaApiCall, "tid", f::kTid);
    EXPECT_FIELD(CudaApiCall, "correlation_id", f::kCorrelationId);
    EXPECT_FIELD(CudaApiCall, "cbid", f::kCbid);
    EXPECT_FIELD(CudaApiCall, "name_id", f::kNameId);
    EXPECT_FIELD(CudaApiCall, "return_value", f::kReturnValue);
  }
  {
    namespace f = field::cuda_kernel;
    EXPECT_FIELD(CudaKernel, "start_delta_ns", f::kStartDeltaNs);
    EXPECT_FIELD(CudaKernel, "duration_ns", f::kDurationNs);
    EXPECT_FIELD(CudaKernel, "device_id", f::kDeviceId);
    EXPECT_FIELD(CudaKernel, "context_id", f::kContextId);
    EXPECT_FIELD(CudaKernel, "stream_id", f::kStreamId);
    EXPECT_FIELD(CudaKernel, "correlation_id", f::kCorrelationId);
    EXPECT_FIELD(CudaKernel, "name_id", f::kNameId);
    EXPECT_FIELD(CudaKernel, "grid_x", f::kGridX);
    EXPECT_FIELD(CudaKernel, "grid_y", f::kGridY);
    EXPECT_FIELD(CudaKernel, "grid_z", f::kGridZ);
    EXPECT_FIELD(CudaKernel, "block_x", f::kBlockX);
    EXPECT_FIELD(CudaKernel, "block_y", f::kBlockY);
    EXPECT_FIELD(CudaKernel, "block_z", f::kBlockZ);
    EXPECT_FIELD(CudaKernel, "registers_per_thread", f::kRegistersPerThread);
    EXPECT_FIELD(CudaKernel, "static_shared_memory_bytes", f::kStaticSharedMemoryBytes);
    EXPECT_FIELD(CudaKernel, "dynamic_shared_memory_bytes", f::kDynamicSharedMemoryBytes);
    EXPECT_FIELD(CudaKernel, "local_memory_per_thread_bytes", f::kLocalMemoryPerThreadBytes);
    EXPECT_FIELD(CudaKernel, "local_memory_total_bytes", f::kLocalMemoryTotalBytes);
    EXPECT_FIELD(CudaKernel, "grid_id", f::kGridId);
    EXPECT_FIELD(CudaKernel, "shared_memory_executed_bytes", f::kSharedMemoryExecutedBytes);
    EXPECT_FIELD(CudaKernel, "launch_type", f::kLaunchType);
    EXPECT_FIELD(CudaKernel, "cache_config_requested", f::kCacheConfigRequested);
    EXPECT_FIELD(CudaKernel, "cache_config_executed", f::kCacheConfigExecuted);
    EXPECT_FIELD(CudaKernel, "shared_memory_config", f::kSharedMemoryConfig);
    EXPECT_FIELD(CudaKernel, "shared_memory_limit_config", f::kSharedMemoryLimitConfig);
    EXPECT_FIELD(CudaKernel, "graph_node_id", f::kGraphNodeId);
    EXPECT_FIELD(CudaKernel, "graph_id", f::kGraphId);
    EXPECT_FIELD(CudaKernel, "cluster_x", f::kClusterX);
    EXPECT_FIELD(CudaKernel, "cluster_y", f::kClusterY);
    EXPECT_FIELD(CudaKernel, "cluster_z", f::kClusterZ);
    EXPECT_FIELD(CudaKernel, "cluster_scheduling_policy", f::kClusterSchedulingPolicy);
    EXPECT_FIELD(CudaKernel, "max_potential_cluster_size", f::kMaxPotentialClusterSize);
    EXPECT_FIELD(CudaKernel, "max_active_clusters", f::kMaxActiveClusters);
    EXPECT_FIELD(CudaKernel, "shared_memory_carveout_requested_percent", f::kSharedMemoryCarveoutRequestedPercent);
    EXPECT_FIELD(CudaKernel, "is_device_launched", f::kIsDeviceLaunched);
    EXPECT_FIELD(CudaKernel, "channel_id", f::kChannelId);
    EXPECT_FIELD(CudaKernel, "channel_type", f::kChannelType);
  }
  {
    namespace f = field::cuda_memcpy;
    EXPECT_FIELD(CudaMemcpy, "start_delta_ns", f::kStartDeltaNs);
    EXPECT_FIELD(CudaMemcpy, "duration_ns", f::kDurationNs);
    EXPECT_FIELD(CudaMemcpy, "device_id", f::kDeviceId);
    EXPECT_FIELD(CudaMemcpy, "context_id", f::kContextId);
    EXPECT_FIELD(CudaMemcpy, "stream_id", f::kStreamId);
    EXPECT_FIELD(CudaMemcpy, "correlation_id", f::kCorrelationId);
    EXPECT_FIELD(CudaMemcpy, "size_bytes", f::kSizeBytes);
    EXPECT_FIELD(CudaMemcpy, "copy_kind", f::kCopyKind);
    EXPECT_FIELD(CudaMemcpy, "src_kind", f::kSrcKind);
    EXPECT_FIELD(CudaMemcpy, "dst_kind", f::kDstKind);
    EXPECT_FIELD(CudaMemcpy, "flags", f::kFlags);
    EXPECT_FIELD(CudaMemcpy, "graph_node_id", f::kGraphNodeId);
    EXPECT_FIELD(CudaMemcpy, "graph_id", f::kGraphId);
    EXPECT_FIELD(CudaMemcpy, "copy_count", f::kCopyCount);
    EXPECT_FIELD(CudaMemcpy, "runtime_correlation_id", f::kRuntimeCorrelationId);
    EXPECT_FIELD(CudaMemcpy, "peer", f::kPeer);
    EXPECT_FIELD(CudaMemcpy, "src_device_id", f::kSrcDeviceId);
    EXPECT_FIELD(CudaMemcpy, "src_context_id", f::kSrcContextId);
    EXPECT_FIELD(CudaMemcpy, "dst_device_id", f::kDstDeviceId);
    EXPECT_FIELD(CudaMemcpy, "dst_context_id", f::kDstContextId);
    EXPECT_FIELD(CudaMemcpy, "channel_id", f::kChannelId);
    EXPECT_FIELD(CudaMemcpy, "channel_type", f::kChannelType);
    EXPECT_FIELD(CudaMemcpy, "is_device_launched", f::kIsDeviceLaunched);
  }
  {
    namespace f = field::cuda_memset;
    EXPECT_FIELD(CudaMemset, "start_delta_ns", f::kStartDeltaNs);
    EXPECT_FIELD(CudaMemset, "duration_ns", f::kDurationNs);
    EXPECT_FIELD(CudaMemset, "device_id", f::kDeviceId);
    EXPECT_FIELD(CudaMemset, "context_id", f::kContextId);
    EXPECT_FIELD(CudaMemset, "stream_id", f::kStreamId);
    EXPECT_FIELD(CudaMemset, "correlation_id", f::kCorrelationId);
    EXPECT_FIELD(CudaMemset, "value", f::kValue);
    EXPECT_FIELD(CudaMemset, "size_bytes", f::kSizeBytes);
    EXPECT_FIELD(CudaMemset, "memory_kind", f::kMemoryKind);
    EXPECT_FIELD(CudaMemset, "flags", f::kFlags);
    EXPECT_FIELD(CudaMemset, "graph_node_id", f::kGraphNodeId);
    EXPECT_FIELD(CudaMemset, "graph_id", f::kGraphId);
    EXPECT_FIELD(CudaMemset, "channel_id", f::kChannelId);
    EXPECT_FIELD(CudaMemset, "is_device_launched", f::kIsDeviceLaunched);
  }
  {
    namespace f = field::cuda_sync;
    EXPECT_FIELD(CudaSynchronization, "start_delta_ns", f::kStartDeltaNs);
    EXPECT_FIELD(CudaSynchronization, "duration_ns", f::kDurationNs);
    EXPECT_FIELD(CudaSynchronization, "type", f::kType);
    EXPECT_FIELD(CudaSynchronization, "context_id", f::kContextId);
    EXPECT_FIELD(CudaSynchronization, "stream_id", f::kStreamId);
    EXPECT_FIELD(CudaSynchronization, "correlation_id", f::kCorrelationId);
    EXPECT_FIELD(CudaSynchronization, "cuda_event_id", f::kCudaEventId);
    EXPECT_FIELD(CudaSynchronization, "cuda_event_sync_id", f::kCudaEventSyncId);
    EXPECT_FIELD(CudaSynchronization, "return_value", f::kReturnValue);
  }
  {
    namespace f = field::cuda_event;
    EXPECT_FIELD(CudaEventRecord, "correlation_id", f::kCorrelationId);
    EXPECT_FIELD(CudaEventRecord, "context_id", f::kContextId);
    EXPECT_FIELD(CudaEventRecord, "stream_id", f::kStreamId);
    EXPECT_FIELD(CudaEventRecord, "event_id", f::kEventId);
    EXPECT_FIELD(CudaEventRecord, "device_id", f::kDeviceId);
    EXPECT_FIELD(CudaEventRecord, "device_timestamp_ns", f::kDeviceTimestampNs);
    EXPECT_FIELD(CudaEventRecord, "cuda_event_sync_id", f::kCudaEventSyncId);
  }
  {
    namespace f = field::cuda_graph_trace;
    EXPECT_FIELD(CudaGraphTrace, "start_delta_ns", f::kStartDeltaNs);
    EXPECT_FIELD(CudaGraphTrace, "duration_ns", f::kDurationNs);
    EXPECT_FIELD(CudaGraphTrace, "device_id", f::kDeviceId);
    EXPECT_FIELD(CudaGraphTrace, "context_id", f::kContextId);
    EXPECT_FIELD(CudaGraphTrace, "stream_id", f::kStreamId);
    EXPECT_FIELD(CudaGraphTrace, "correlation_id", f::kCorrelationId);
    EXPECT_FIELD(CudaGraphTrace, "graph_id", f::kGraphId);
    EXPECT_FIELD(CudaGraphTrace, "end_device_id", f::kEndDeviceId);
    EXPECT_FIELD(CudaGraphTrace, "end_context_id", f::kEndContextId);
  }
  {
    namespace f = field::cuda_overhead;
    EXPECT_FIELD(CudaOverhead, "start_delta_ns", f::kStartDeltaNs);
    EXPECT_FIELD(CudaOverhead, "duration_ns", f::kDurationNs);
    EXPECT_FIELD(CudaOverhead, "overhead_kind", f::kOverheadKind);
    EXPECT_FIELD(CudaOverhead, "object_kind", f::kObjectKind);
    EXPECT_FIELD(CudaOverhead, "object_tid", f::kObjectTid);
    EXPECT_FIELD(CudaOverhead, "object_device_id", f::kObjectDeviceId);
    EXPECT_FIELD(CudaOverhead, "correlation_id", f::kCorrelationId);
  }
  {
    namespace f = field::cuda_device;
    EXPECT_FIELD(CudaDevice, "device_id", f::kDeviceId);
    EXPECT_FIELD(CudaDevice, "name", f::kName);
    EXPECT_FIELD(CudaDevice, "uuid", f::kUuid);
    EXPECT_FIELD(CudaDevice, "global_memory_bytes", f::kGlobalMemoryBytes);
    EXPECT_FIELD(CudaDevice, "global_memory_bandwidth_kbps", f::kGlobalMemoryBandwidthKbps);
    EXPECT_FIELD(CudaDevice, "core_clock_khz", f::kCoreClockKhz);
    EXPECT_FIELD(CudaDevice, "l2_cache_bytes", f::kL2CacheBytes);
    EXPECT_FIELD(CudaDevice, "multiprocessors", f::kMultiprocessors);
    EXPECT_FIELD(CudaDevice, "compute_major", f::kComputeMajor);
    EXPECT_FIELD(CudaDevice, "compute_minor", f::kComputeMinor);
    EXPECT_FIELD(CudaDevice, "constant_memory_bytes", f::kConstantMemoryBytes);
    EXPECT_FIELD(CudaDevice, "threads_per_warp", f::kThreadsPerWarp);
    EXPECT_FIELD(CudaDevice, "memcpy_engines", f::kMemcpyEngines);
    EXPECT_FIELD(CudaDevice, "max_ipc", f::kMaxIpc);
    EXPECT_FIELD(CudaDevice, "max_warps_per_multiprocessor", f::kMaxWarpsPerMultiprocessor);
    EXPECT_FIELD(CudaDevice, "max_blocks_per_multiprocessor", f::kMaxBlocksPerMultiprocessor);
    EXPECT_FIELD(CudaDevice, "max_shared_memory_per_multiprocessor_bytes", f::kMaxSharedMemoryPerMultiprocessorBytes);
    EXPECT_FIELD(CudaDevice, "max_registers_per_multiprocessor", f::kMaxRegistersPerMultiprocessor);
    EXPECT_FIELD(CudaDevice, "max_registers_per_block", f::kMaxRegistersPerBlock);
    EXPECT_FIELD(CudaDevice, "max_shared_memory_per_block_bytes", f::kMaxSharedMemoryPerBlockBytes);
    EXPECT_FIELD(CudaDevice, "max_threads_per_block", f::kMaxThreadsPerBlock);
    EXPECT_FIELD(CudaDevice, "max_block_dim_x", f::kMaxBlockDimX);
    EXPECT_FIELD(CudaDevice, "max_block_dim_y", f::kMaxBlockDimY);
    EXPECT_FIELD(CudaDevice, "max_block_dim_z", f::kMaxBlockDimZ);
    EXPECT_FIELD(CudaDevice, "max_grid_dim_x", f::kMaxGridDimX);
    EXPECT_FIELD(CudaDevice, "max_grid_dim_y", f::kMaxGridDimY);
    EXPECT_FIELD(CudaDevice, "max_grid_dim_z", f::kMaxGridDimZ);
    EXPECT_FIELD(CudaDevice, "ecc_enabled", f::kEccEnabled);
    EXPECT_FIELD(CudaDevice, "cuda_visible", f::kCudaVisible);
    EXPECT_FIELD(CudaDevice, "mig_enabled", f::kMigEnabled);
    EXPECT_FIELD(CudaDevice, "gpu_instance_id", f::kGpuInstanceId);
    EXPECT_FIELD(CudaDevice, "compute_instance_id", f::kComputeInstanceId);
    EXPECT_FIELD(CudaDevice, "mig_uuid", f::kMigUuid);
    EXPECT_FIELD(CudaDevice, "numa_node", f::kNumaNode);
    EXPECT_FIELD(CudaDevice, "numa_id", f::kNumaId);
  }
  {
    namespace f = field::cuda_context;
    EXPECT_FIELD(CudaContext, "context_id", f::kContextId);
    EXPECT_FIELD(CudaContext, "device_id", f::kDeviceId);
    EXPECT_FIELD(CudaContext, "compute_api_kind", f::kComputeApiKind);
    EXPECT_FIELD(CudaContext, "null_stream_id", f::kNullStreamId);
    EXPECT_FIELD(CudaContext, "parent_context_id", f::kParentContextId);
    EXPECT_FIELD(CudaContext, "green_context", f::kGreenContext);
    EXPECT_FIELD(CudaContext, "multiprocessors", f::kMultiprocessors);
    EXPECT_FIELD(CudaContext, "cig_mode", f::kCigMode);
  }
  {
    namespace f = field::cuda_stream;
    EXPECT_FIELD(CudaStream, "context_id", f::kContextId);
    EXPECT_FIELD(CudaStream, "stream_id", f::kStreamId);
    EXPECT_FIELD(CudaStream, "priority", f::kPriority);
    EXPECT_FIELD(CudaStream, "flag", f::kFlag);
    EXPECT_FIELD(CudaStream, "correlation_id", f::kCorrelationId);
  }
  {
    namespace f = field::cuda_memory_event;
    EXPECT_FIELD(CudaMemoryEvent, "ts_delta_ns", f::kTsDeltaNs);
    EXPECT_FIELD(CudaMemoryEvent, "operation_type", f::kOperationType);
    EXPECT_FIELD(CudaMemoryEvent, "memory_kind", f::kMemoryKind);
    EXPECT_FIELD(CudaMemoryEvent, "correlation_id", f::kCorrelationId);
    EXPECT_FIELD(CudaMemoryEvent, "address", f::kAddress);
    EXPECT_FIELD(CudaMemoryEvent, "size_bytes", f::kSizeBytes);
    EXPECT_FIELD(CudaMemoryEvent, "pc", f::kPc);
    EXPECT_FIELD(CudaMemoryEvent, "device_id", f::kDeviceId);
    EXPECT_FIELD(CudaMemoryEvent, "context_id", f::kContextId);
    EXPECT_FIELD(CudaMemoryEvent, "stream_id", f::kStreamId);
    EXPECT_FIELD(CudaMemoryEvent, "name_id", f::kNameId);
    EXPECT_FIELD(CudaMemoryEvent, "is_async", f::kIsAsync);
    EXPECT_FIELD(CudaMemoryEvent, "pool_type", f::kPoolType);
    EXPECT_FIELD(CudaMemoryEvent, "pool_address", f::kPoolAddress);
    EXPECT_FIELD(CudaMemoryEvent, "pool_release_threshold_bytes", f::kPoolReleaseThresholdBytes);
    EXPECT_FIELD(CudaMemoryEvent, "pool_size_bytes", f::kPoolSizeBytes);
    EXPECT_FIELD(CudaMemoryEvent, "pool_utilized_bytes", f::kPoolUtilizedBytes);
    EXPECT_FIELD(CudaMemoryEvent, "pool_process_id", f::kPoolProcessId);
    EXPECT_FIELD(CudaMemoryEvent, "source_name_id", f::kSourceNameId);
  }
  {
    namespace f = field::cuda_memory_pool_event;
    EXPECT_FIELD(CudaMemoryPoolEvent, "ts_delta_ns", f::kTsDeltaNs);
    EXPECT_FIELD(CudaMemoryPoolEvent, "operation_type", f::kOperationType);
    EXPECT_FIELD(CudaMemoryPoolEvent, "pool_type", f::kPoolType);
    EXPECT_FIELD(CudaMemoryPoolEvent, "correlation_id", f::kCorrelationId);
    EXPECT_FIELD(CudaMemoryPoolEvent, "device_id", f::kDeviceId);
    EXPECT_FIELD(CudaMemoryPoolEvent, "min_bytes_to_keep", f::kMinBytesToKeep);
    EXPECT_FIELD(CudaMemoryPoolEvent, "address", f::kAddress);
    EXPECT_FIELD(CudaMemoryPoolEvent, "size_bytes", f::kSizeBytes);
    EXPECT_FIELD(CudaMemoryPoolEvent, "release_threshold_bytes", f::kReleaseThresholdBytes);
    EXPECT_FIELD(CudaMemoryPoolEvent, "utilized_bytes", f::kUtilizedBytes);
    EXPECT_FIELD(CudaMemoryPoolEvent, "managed", f::kManaged);
  }
  {
    namespace f = field::cuda_graph_launch;
    EXPECT_FIELD(CudaGraphLaunch, "ts_delta_ns", f::kTsDeltaNs);
    EXPECT_FIELD(CudaGraphLaunch, "correlation_id", f::kCorrelationId);
    EXPECT_FIELD(CudaGraphLaunch, "graph_exec_id", f::kGraphExecId);
  }
  {
    namespace f = field::cuda_graph_event;
    EXPECT_FIELD(CudaGraphEvent, "kind", f::kKind);
    EXPECT_FIELD(CudaGraphEvent, "ts_delta_ns", f::kTsDeltaNs);
    EXPECT_FIELD(CudaGraphEvent, "graph_id", f::kGraphId);
    EXPECT_FIELD(CudaGraphEvent, "original_graph_id", f::kOriginalGraphId);
    EXPECT_FIELD(CudaGraphEvent, "graph_exec_id", f::kGraphExecId);
  }
  {
    namespace f = field::capture_window_event;
    EXPECT_FIELD(CaptureWindowEvent, "open", f::kOpen);
    EXPECT_FIELD(CaptureWindowEvent, "ts_ns", f::kTsNs);
    EXPECT_FIELD(CaptureWindowEvent, "reason", f::kReason);
    EXPECT_FIELD(CaptureWindowEvent, "window_index", f::kWindowIndex);
    EXPECT_FIELD(CaptureWindowEvent, "final", f::kFinal);
  }
  {
    namespace f = field::cuda_trace_info;
    EXPECT_FIELD(CudaTraceInfo, "cupti_path", f::kCuptiPath);
    EXPECT_FIELD(CudaTraceInfo, "cupti_api_version", f::kCuptiApiVersion);
    EXPECT_FIELD(CudaTraceInfo, "graph_trace_nodes", f::kGraphTraceNodes);
    EXPECT_FIELD(CudaTraceInfo, "memory_usage", f::kMemoryUsage);
    EXPECT_FIELD(CudaTraceInfo, "clock_callback", f::kClockCallback);
    EXPECT_FIELD(CudaTraceInfo, "cupti_clock_offset_ns", f::kCuptiClockOffsetNs);
    EXPECT_FIELD(CudaTraceInfo, "buffer_size_bytes", f::kBufferSizeBytes);
    EXPECT_FIELD(CudaTraceInfo, "buffer_count", f::kBufferCount);
    EXPECT_FIELD(CudaTraceInfo, "activity_kinds", f::kActivityKinds);
    EXPECT_FIELD(CudaTraceInfo, "cupti_path_source", f::kCuptiPathSource);
    EXPECT_FIELD(CudaTraceInfo, "cupti_clock_pairs", f::kCuptiClockPairs);
  }
  {
    namespace f = field::cupti_clock_pair;
    EXPECT_FIELD(CuptiClockPair, "cupti_ns", f::kCuptiNs);
    EXPECT_FIELD(CuptiClockPair, "stream_clock_ns", f::kStreamClockNs);
    EXPECT_FIELD(CuptiClockPair, "uncertainty_ns", f::kUncertaintyNs);
  }
  {
    namespace f = field::cuda_record_loss;
    EXPECT_FIELD(CudaRecordLoss, "ts_ns", f::kTsNs);
    EXPECT_FIELD(CudaRecordLoss, "incomplete_records", f::kIncompleteRecords);
    EXPECT_FIELD(CudaRecordLoss, "unknown_kind_records", f::kUnknownKindRecords);
    EXPECT_FIELD(CudaRecordLoss, "walk_error_buffers", f::kWalkErrorBuffers);
    EXPECT_FIELD(CudaRecordLoss, "walk_error_bytes", f::kWalkErrorBytes);
  }
  {
    EXPECT_FIELD(CudaKernelConfig, "id", field::cuda_kernel_config::kId);
    EXPECT_FIELD(CudaKernelConfig, "kernel", field::cuda_kernel_config::kKernel);
    EXPECT_FIELD(CudaApiConfig, "id", field::cuda_api_config::kId);
    EXPECT_FIELD(CudaApiConfig, "call", field::cuda_api_config::kCall);
    namespace k = field::cuda_kernel_batch;
    EXPECT_FIELD(CudaKernelBatch, "config_id", k::kConfigId);
    EXPECT_FIELD(CudaKernelBatch, "start_delta_ns", k::kStartDeltaNs);
    EXPECT_FIELD(CudaKernelBatch, "duration_ns", k::kDurationNs);
    EXPECT_FIELD(CudaKernelBatch, "correlation_id_delta", k::kCorrelationIdDelta);
    EXPECT_FIELD(CudaKernelBatch, "grid_id_delta", k::kGridIdDelta);
    namespace a = field::cuda_api_batch;
    EXPECT_FIELD(CudaApiBatch, "config_id", a::kConfigId);
    EXPECT_FIELD(CudaApiBatch, "start_delta_ns", a::kStartDeltaNs);
    EXPECT_FIELD(CudaApiBatch, "duration_ns", a::kDurationNs);
    EXPECT_FIELD(CudaApiBatch, "correlation_id_delta", a::kCorrelationIdDelta);
  }
  for (const auto& [message, names] : Checked()) {
    if (message == "Chunk") continue;
    const google::protobuf::Descriptor* d =
        google::protobuf::DescriptorPool::generated_pool()->FindMessageTypeByName("gt.schema." + message);
    ASSERT_NE(d, nullptr);
    for (int i = 0; i < d->field_count(); ++i) {
      EXPECT_TRUE(names.count(d->field(i)->name())) << message << "." << d->field(i)->name() << " has no constant";
    }
  }
  // Every message cuda.proto defines is covered above.
  const google::protobuf::FileDescriptor* file = schema::CudaKernel::descriptor()->file();
  for (int i = 0; i < file->message_type_count(); ++i) {
    EXPECT_TRUE(Checked().count(file->message_type(i)->name())) << file->message_type(i)->name() << " is not checked";
  }
}

TEST(CudaFields, EnumValuesMatchDescriptor) {
  namespace e = field::enums;
  EXPECT_EQ(e::kCudaApiRuntime, static_cast<uint32_t>(schema::CUDA_API_KIND_RUNTIME));
  EXPECT_EQ(e::kCudaApiDriver, static_cast<uint32_t>(schema::CUDA_API_KIND_DRIVER));
  EXPECT_EQ(e::kGraphCreated, static_cast<uint32_t>(schema::CUDA_GRAPH_EVENT_KIND_GRAPH_CREATED));
  EXPECT_EQ(e::kGraphCloned, static_cast<uint32_t>(schema::CUDA_GRAPH_EVENT_KIND_GRAPH_CLONED));
  EXPECT_EQ(e::kGraphExecCreated, static_cast<uint32_t>(schema::CUDA_GRAPH_EVENT_KIND_EXEC_CREATED));
  EXPECT_EQ(e::kWindowStart, static_cast<uint32_t>(schema::CAPTURE_WINDOW_REASON_START));
  EXPECT_EQ(e::kWindowDelay, static_cast<uint32_t>(schema::CAPTURE_WINDOW_REASON_DELAY));
  EXPECT_EQ(e::kWindowCudaProfilerApi, static_cast<uint32_t>(schema::CAPTURE_WINDOW_REASON_CUDA_PROFILER_API));
  EXPECT_EQ(e::kWindowNvtx, static_cast<uint32_t>(schema::CAPTURE_WINDOW_REASON_NVTX));
  EXPECT_EQ(e::kWindowDuration, static_cast<uint32_t>(schema::CAPTURE_WINDOW_REASON_DURATION));
  EXPECT_EQ(e::kWindowApi, static_cast<uint32_t>(schema::CAPTURE_WINDOW_REASON_API));
  EXPECT_EQ(e::kWindowSteps, static_cast<uint32_t>(schema::CAPTURE_WINDOW_REASON_STEPS));
}

}  // namespace
}  // namespace gt
