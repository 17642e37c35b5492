#include "inject/cupti/activity_decoder.h"

#include <cupti_activity.h>

#include <cstring>
#include <string_view>

#include "collector/schema_fields.h"
#include "collector/session.h"
#include "inject/cupti/cuda_fields.h"

namespace gt::cupti {
namespace {

constexpr size_t kMaxChunkBodyBytes = 1u << 20;
constexpr size_t kMaxKnownThreads = 65536;
// Records per compact batch: large enough that a batch's framing (a few bytes) is noise, small enough
// that the columns stay in cache.
constexpr size_t kMaxBatchRecords = 4096;

// Text from a CUPTI-owned C string, bounded (a missing terminator costs at most 64 KiB).
std::string_view CText(const char* p) {
  if (p == nullptr) return {};
  return std::string_view(p, strnlen(p, 65536));
}

}  // namespace

void ActivityDecoder::BeginSession(uint64_t session_id) {
  if (session_id == session_id_) return;
  session_id_ = session_id;
  devices_sent_.clear();
  compact_encoder_.Reset();
  threads_known_.clear();
  threads_new_.clear();
}

bool ActivityDecoder::Interval(uint64_t start, uint64_t end, uint64_t* start_ns, uint64_t* duration_ns) {
  // A forced flush returns work still running with end 0; such a record is never delivered again.
  if (start == 0 || end < start) {
    ++incomplete_pending_;
    ++incomplete_total_;
    return false;
  }
  *start_ns = Ts(start);
  *duration_ns = end - start;
  return true;
}

const char* ActivityDecoder::CallbackName(bool driver, uint32_t cbid) {
  std::vector<const char*>& names = driver ? driver_names_ : runtime_names_;
  if (cbid >= 4096) return nullptr;
  if (names.size() <= cbid) names.resize(cbid + 1, nullptr);
  if (names[cbid] == nullptr) {
    const char* name = nullptr;
    CUpti_CallbackDomain domain = driver ? CUPTI_CB_DOMAIN_DRIVER_API : CUPTI_CB_DOMAIN_RUNTIME_API;
    if (api_->GetCallbackName == nullptr || api_->GetCallbackName(domain, cbid, &name) != CUPTI_SUCCESS ||
        name == nullptr) {
      return nullptr;  // asked again next time: cheap, and rare
    }
    names[cbid] = name;
  }
  return names[cbid];
}

void ActivityDecoder::NoteThread(uint32_t tid) {
  if (tid == 0 || threads_known_.size() >= kMaxKnownThreads) return;
  if (threads_known_.insert(tid).second) threads_new_.push_back(tid);
}

void ActivityDecoder::DecodeBuffer(const uint8_t* buffer, size_t valid_bytes, ChunkBuilder* chunk) {
  if (api_ == nullptr || api_->ActivityGetNextRecord == nullptr || buffer == nullptr || valid_bytes == 0) return;
  CUpti_Activity* record = nullptr;
  // cuptiActivityGetNextRecord takes a non-const buffer but only reads it.
  uint8_t* buf = const_cast<uint8_t*>(buffer);
  CUptiResult walk = CUPTI_SUCCESS;
  while ((walk = api_->ActivityGetNextRecord(buf, valid_bytes, &record)) == CUPTI_SUCCESS && record != nullptr) {
    ++records_decoded_;
    switch (record->kind) {
      case CUPTI_ACTIVITY_KIND_RUNTIME:
        Api(record, false, chunk);
        break;
      case CUPTI_ACTIVITY_KIND_DRIVER:
        Api(record, true, chunk);
        break;
      case CUPTI_ACTIVITY_KIND_KERNEL:
      case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
        Kernel(record, chunk);
        break;
      case CUPTI_ACTIVITY_KIND_MEMCPY:
        Memcpy(record, chunk);
        break;
      case CUPTI_ACTIVITY_KIND_MEMCPY2:
        MemcpyPeer(record, chunk);
        break;
      case CUPTI_ACTIVITY_KIND_MEMSET:
        Memset(record, chunk);
        break;
      case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
        Sync(record, chunk);
        break;
      case CUPTI_ACTIVITY_KIND_CUDA_EVENT:
        Event(record, chunk);
        break;
      case CUPTI_ACTIVITY_KIND_GRAPH_TRACE:
        GraphTrace(record, chunk);
        break;
      case CUPTI_ACTIVITY_KIND_OVERHEAD:
        Overhead(record, chunk);
        break;
      case CUPTI_ACTIVITY_KIND_DEVICE:
        Device(record, chunk);
        break;
      case CUPTI_ACTIVITY_KIND_CONTEXT:
        Context(record, chunk);
        break;
      case CUPTI_ACTIVITY_KIND_STREAM:
        Stream(record, chunk);
        break;
      case CUPTI_ACTIVITY_KIND_MEMORY2:
        Memory(record, chunk);
        break;
      case CUPTI_ACTIVITY_KIND_MEMORY_POOL:
        MemoryPool(record, chunk);
        break;
      default:
        ++unknown_pending_;
        ++unknown_total_;
        break;
    }
    // Compact records wait in the encoder's columns: flush them before a split (their start deltas
    // belong to this chunk's chain) and in batches of at most kMaxBatchRecords.
    if (compact_encoder_.pending_records() >= kMaxBatchRecords ||
        chunk->body().size() + compact_encoder_.pending_bytes() >= kMaxChunkBodyBytes) {
      compact_encoder_.Flush(chunk);
    }
    chunk->SplitIfLarger(kMaxChunkBodyBytes);
  }
  if (walk != CUPTI_ERROR_MAX_LIMIT_REACHED && walk != CUPTI_SUCCESS) {
    // The walk ended on an error: whatever follows in the buffer is lost. Counted (CudaRecordLoss).
    size_t at = record != nullptr ? static_cast<size_t>(reinterpret_cast<uint8_t*>(record) - buf) : 0;
    ++walk_error_buffers_pending_;
    walk_error_bytes_pending_ += at < valid_bytes ? valid_bytes - at : 0;
  }
  compact_encoder_.Flush(chunk);
}

void ActivityDecoder::EmitPending(ChunkBuilder* chunk, uint64_t now_ns) {
  if (incomplete_pending_ != 0 || unknown_pending_ != 0 || walk_error_buffers_pending_ != 0) {
    ProtoWriter& w = chunk->body();
    namespace f = field::cuda_record_loss;
    w.BeginNested(field::chunk::kCudaRecordLosses);
    w.Varint(f::kTsNs, now_ns);
    w.VarintIfNonZero(f::kIncompleteRecords, incomplete_pending_);
    w.VarintIfNonZero(f::kUnknownKindRecords, unknown_pending_);
    w.VarintIfNonZero(f::kWalkErrorBuffers, walk_error_buffers_pending_);
    w.VarintIfNonZero(f::kWalkErrorBytes, walk_error_bytes_pending_);
    w.EndNested();
    incomplete_pending_ = unknown_pending_ = 0;
    walk_error_buffers_pending_ = walk_error_bytes_pending_ = 0;
  }
  for (uint32_t tid : threads_new_) EmitThreadInfo(chunk, tid);
  threads_new_.clear();
}

void ActivityDecoder::Api(const void* p, bool driver, ChunkBuilder* chunk) {
  const auto* r = static_cast<const CUpti_ActivityAPI*>(p);
  uint64_t start = 0, duration = 0;
  if (!Interval(r->start, r->end, &start, &duration)) return;
  uint64_t name_id = chunk->Intern(CText(CallbackName(driver, r->cbid)));
  NoteThread(r->threadId);
  namespace f = field::cuda_api_call;
  // The constants of the call; start, duration and correlation id vary from call to call.
  auto constants = [&](ProtoWriter* w) {
    w->Varint(f::kKind, driver ? field::enums::kCudaApiDriver : field::enums::kCudaApiRuntime);
    w->Varint(f::kTid, r->threadId);
    w->Varint(f::kCbid, r->cbid);
    w->VarintIfNonZero(f::kNameId, name_id);
    w->VarintIfNonZero(f::kReturnValue, r->returnValue);
  };
  if (compact_) {
    scratch_.Clear();
    constants(&scratch_);
    compact_encoder_.AddApi(chunk, scratch_.bytes(), start, duration, r->correlationId);
    return;
  }
  ProtoWriter& w = chunk->body();
  w.BeginNested(field::chunk::kCudaApiCalls);
  w.SInt(f::kStartDeltaNs, chunk->DeltaNs(field::chunk::kCudaApiCalls, start));
  w.Varint(f::kDurationNs, duration);
  w.VarintIfNonZero(f::kCorrelationId, r->correlationId);
  constants(&w);
  w.EndNested();
}

void ActivityDecoder::Kernel(const void* p, ChunkBuilder* chunk) {
  const auto* r = static_cast<const CUpti_ActivityKernel10*>(p);
  uint64_t start = 0, duration = 0;
  if (!Interval(r->start, r->end, &start, &duration)) return;
  uint64_t name_id = chunk->Intern(CText(r->name));
  namespace f = field::cuda_kernel;
  if (compact_) {
    scratch_.Clear();
    KernelConstants(r, name_id, &scratch_);
    compact_encoder_.AddKernel(chunk, scratch_.bytes(), start, duration, r->correlationId, r->gridId);
    return;
  }
  ProtoWriter& w = chunk->body();
  w.BeginNested(field::chunk::kCudaKernels);
  w.SInt(f::kStartDeltaNs, chunk->DeltaNs(field::chunk::kCudaKernels, start));
  w.Varint(f::kDurationNs, duration);
  w.VarintIfNonZero(f::kCorrelationId, r->correlationId);
  if (r->gridId != 0) w.Int(f::kGridId, r->gridId);
  KernelConstants(r, name_id, &w);
  w.EndNested();
}

// Every CudaKernel field but start, duration, correlation id and grid id: what a launch
// configuration repeats (the compact form's config).
void ActivityDecoder::KernelConstants(const void* p, uint64_t name_id, ProtoWriter* w) {
  const auto* r = static_cast<const CUpti_ActivityKernel10*>(p);
  namespace f = field::cuda_kernel;
  w->VarintIfNonZero(f::kDeviceId, r->deviceId);
  w->VarintIfNonZero(f::kContextId, r->contextId);
  w->VarintIfNonZero(f::kStreamId, r->streamId);
  w->VarintIfNonZero(f::kNameId, name_id);
  w->Int(f::kGridX, r->gridX);
  w->Int(f::kGridY, r->gridY);
  w->Int(f::kGridZ, r->gridZ);
  w->Int(f::kBlockX, r->blockX);
  w->Int(f::kBlockY, r->blockY);
  w->Int(f::kBlockZ, r->blockZ);
  w->VarintIfNonZero(f::kRegistersPerThread, r->registersPerThread);
  if (r->staticSharedMemory != 0) w->Int(f::kStaticSharedMemoryBytes, r->staticSharedMemory);
  if (r->dynamicSharedMemory != 0) w->Int(f::kDynamicSharedMemoryBytes, r->dynamicSharedMemory);
  w->VarintIfNonZero(f::kLocalMemoryPerThreadBytes, r->localMemoryPerThread);
  w->VarintIfNonZero(f::kLocalMemoryTotalBytes,
                     r->localMemoryTotal_v2 != 0 ? r->localMemoryTotal_v2 : uint64_t{r->localMemoryTotal});
  w->VarintIfNonZero(f::kSharedMemoryExecutedBytes, r->sharedMemoryExecuted);
  w->VarintIfNonZero(f::kLaunchType, r->launchType);
  w->VarintIfNonZero(f::kCacheConfigRequested, r->cacheConfig.config.requested);
  w->VarintIfNonZero(f::kCacheConfigExecuted, r->cacheConfig.config.executed);
  w->VarintIfNonZero(f::kSharedMemoryConfig, r->sharedMemoryConfig);
  w->VarintIfNonZero(f::kSharedMemoryLimitConfig, static_cast<uint32_t>(r->shmemLimitConfig));
  w->VarintIfNonZero(f::kGraphNodeId, r->graphNodeId);
  w->VarintIfNonZero(f::kGraphId, r->graphId);
  w->VarintIfNonZero(f::kClusterX, r->clusterX);
  w->VarintIfNonZero(f::kClusterY, r->clusterY);
  w->VarintIfNonZero(f::kClusterZ, r->clusterZ);
  w->VarintIfNonZero(f::kClusterSchedulingPolicy, r->clusterSchedulingPolicy);
  w->VarintIfNonZero(f::kMaxPotentialClusterSize, r->maxPotentialClusterSize);
  w->VarintIfNonZero(f::kMaxActiveClusters, r->maxActiveClusters);
  if (r->isSharedMemoryCarveoutRequested) {
    w->Varint(f::kSharedMemoryCarveoutRequestedPercent, r->sharedMemoryCarveoutRequested);
  }
  if (r->isDeviceLaunched) w->Bool(f::kIsDeviceLaunched, true);
  w->VarintIfNonZero(f::kChannelId, r->channelID);
  w->VarintIfNonZero(f::kChannelType, static_cast<uint32_t>(r->channelType));
}

void ActivityDecoder::Memcpy(const void* p, ChunkBuilder* chunk) {
  const auto* r = static_cast<const CUpti_ActivityMemcpy6*>(p);
  uint64_t start = 0, duration = 0;
  if (!Interval(r->start, r->end, &start, &duration)) return;
  namespace f = field::cuda_memcpy;
  ProtoWriter& w = chunk->body();
  w.BeginNested(field::chunk::kCudaMemcpys);
  w.SInt(f::kStartDeltaNs, chunk->DeltaNs(field::chunk::kCudaMemcpys, start));
  w.Varint(f::kDurationNs, duration);
  w.VarintIfNonZero(f::kDeviceId, r->deviceId);
  w.VarintIfNonZero(f::kContextId, r->contextId);
  w.VarintIfNonZero(f::kStreamId, r->streamId);
  w.VarintIfNonZero(f::kCorrelationId, r->correlationId);
  w.VarintIfNonZero(f::kSizeBytes, r->bytes);
  w.VarintIfNonZero(f::kCopyKind, r->copyKind);
  w.VarintIfNonZero(f::kSrcKind, r->srcKind);
  w.VarintIfNonZero(f::kDstKind, r->dstKind);
  w.VarintIfNonZero(f::kFlags, r->flags);
  w.VarintIfNonZero(f::kGraphNodeId, r->graphNodeId);
  w.VarintIfNonZero(f::kGraphId, r->graphId);
  w.VarintIfNonZero(f::kCopyCount, r->copyCount);
  w.VarintIfNonZero(f::kRuntimeCorrelationId, r->runtimeCorrelationId);
  w.VarintIfNonZero(f::kChannelId, r->channelID);
  w.VarintIfNonZero(f::kChannelType, static_cast<uint32_t>(r->channelType));
  if (r->isDeviceLaunched) w.Bool(f::kIsDeviceLaunched, true);
  w.EndNested();
}

void ActivityDecoder::MemcpyPeer(const void* p, ChunkBuilder* chunk) {
  const auto* r = static_cast<const CUpti_ActivityMemcpyPtoP4*>(p);
  uint64_t start = 0, duration = 0;
  if (!Interval(r->start, r->end, &start, &duration)) return;
  namespace f = field::cuda_memcpy;
  ProtoWriter& w = chunk->body();
  w.BeginNested(field::chunk::kCudaMemcpys);
  w.SInt(f::kStartDeltaNs, chunk->DeltaNs(field::chunk::kCudaMemcpys, start));
  w.Varint(f::kDurationNs, duration);
  w.VarintIfNonZero(f::kDeviceId, r->deviceId);
  w.VarintIfNonZero(f::kContextId, r->contextId);
  w.VarintIfNonZero(f::kStreamId, r->streamId);
  w.VarintIfNonZero(f::kCorrelationId, r->correlationId);
  w.VarintIfNonZero(f::kSizeBytes, r->bytes);
  w.VarintIfNonZero(f::kCopyKind, r->copyKind);
  w.VarintIfNonZero(f::kSrcKind, r->srcKind);
  w.VarintIfNonZero(f::kDstKind, r->dstKind);
  w.VarintIfNonZero(f::kFlags, r->flags);
  w.VarintIfNonZero(f::kGraphNodeId, r->graphNodeId);
  w.VarintIfNonZero(f::kGraphId, r->graphId);
  w.Varint(f::kCopyCount, 1);
  w.Bool(f::kPeer, true);
  w.Varint(f::kSrcDeviceId, r->srcDeviceId);
  w.Varint(f::kSrcContextId, r->srcContextId);
  w.Varint(f::kDstDeviceId, r->dstDeviceId);
  w.Varint(f::kDstContextId, r->dstContextId);
  w.VarintIfNonZero(f::kChannelId, r->channelID);
  w.VarintIfNonZero(f::kChannelType, static_cast<uint32_t>(r->channelType));
  w.EndNested();
}

void ActivityDecoder::Memset(const void* p, ChunkBuilder* chunk) {
  const auto* r = static_cast<const CUpti_ActivityMemset4*>(p);
  uint64_t start = 0, duration = 0;
  if (!Interval(r->start, r->end, &start, &duration)) return;
  namespace f = field::cuda_memset;
  ProtoWriter& w = chunk->body();
  w.BeginNested(field::chunk::kCudaMemsets);
  w.SInt(f::kStartDeltaNs, chunk->DeltaNs(field::chunk::kCudaMemsets, start));
  w.Varint(f::kDurationNs, duration);
  w.VarintIfNonZero(f::kDeviceId, r->deviceId);
  w.VarintIfNonZero(f::kContextId, r->contextId);
  w.VarintIfNonZero(f::kStreamId, r->streamId);
  w.VarintIfNonZero(f::kCorrelationId, r->correlationId);
  w.VarintIfNonZero(f::kValue, r->value);
  w.VarintIfNonZero(f::kSizeBytes, r->bytes);
  w.VarintIfNonZero(f::kMemoryKind, r->memoryKind);
  w.VarintIfNonZero(f::kFlags, r->flags);
  w.VarintIfNonZero(f::kGraphNodeId, r->graphNodeId);
  w.VarintIfNonZero(f::kGraphId, r->graphId);
  w.VarintIfNonZero(f::kChannelId, r->channelID);
  if (r->isDeviceLaunched) w.Bool(f::kIsDeviceLaunched, true);
  w.EndNested();
}

void ActivityDecoder::Sync(const void* p, ChunkBuilder* chunk) {
  const auto* r = static_cast<const CUpti_ActivitySynchronization2*>(p);
  uint64_t start = 0, duration = 0;
  if (!Interval(r->start, r->end, &start, &duration)) return;
  namespace f = field::cuda_sync;
  ProtoWriter& w = chunk->body();
  w.BeginNested(field::chunk::kCudaSyncs);
  w.SInt(f::kStartDeltaNs, chunk->DeltaNs(field::chunk::kCudaSyncs, start));
  w.Varint(f::kDurationNs, duration);
  w.Varint(f::kType, static_cast<uint32_t>(r->type));
  w.VarintIfNonZero(f::kContextId, r->contextId);
  w.Varint(f::kStreamId, r->streamId);
  w.VarintIfNonZero(f::kCorrelationId, r->correlationId);
  w.Varint(f::kCudaEventId, r->cudaEventId);
  w.VarintIfNonZero(f::kCudaEventSyncId, r->cudaEventSyncId);
  w.VarintIfNonZero(f::kReturnValue, r->returnValue);
  w.EndNested();
}

void ActivityDecoder::Event(const void* p, ChunkBuilder* chunk) {
  const auto* r = static_cast<const CUpti_ActivityCudaEvent2*>(p);
  namespace f = field::cuda_event;
  ProtoWriter& w = chunk->body();
  w.BeginNested(field::chunk::kCudaEvents);
  w.VarintIfNonZero(f::kCorrelationId, r->correlationId);
  w.VarintIfNonZero(f::kContextId, r->contextId);
  w.VarintIfNonZero(f::kStreamId, r->streamId);
  w.Varint(f::kEventId, r->eventId);
  w.VarintIfNonZero(f::kDeviceId, r->deviceId);
  if (r->deviceTimestamp != 0) w.Varint(f::kDeviceTimestampNs, Ts(r->deviceTimestamp));
  w.VarintIfNonZero(f::kCudaEventSyncId, r->cudaEventSyncId);
  w.EndNested();
}

void ActivityDecoder::GraphTrace(const void* p, ChunkBuilder* chunk) {
  const auto* r = static_cast<const CUpti_ActivityGraphTrace2*>(p);
  if (graph_filter_ != nullptr && !graph_filter_->Keep(r->correlationId)) return;  // launched outside every window
  uint64_t start = 0, duration = 0;
  if (!Interval(r->start, r->end, &start, &duration)) return;
  namespace f = field::cuda_graph_trace;
  ProtoWriter& w = chunk->body();
  w.BeginNested(field::chunk::kCudaGraphTraces);
  w.SInt(f::kStartDeltaNs, chunk->DeltaNs(field::chunk::kCudaGraphTraces, start));
  w.Varint(f::kDurationNs, duration);
  w.VarintIfNonZero(f::kDeviceId, r->deviceId);
  w.VarintIfNonZero(f::kContextId, r->contextId);
  w.VarintIfNonZero(f::kStreamId, r->streamId);
  w.VarintIfNonZero(f::kCorrelationId, r->correlationId);
  w.VarintIfNonZero(f::kGraphId, r->graphId);
  w.VarintIfNonZero(f::kEndDeviceId, r->endDeviceId);
  w.VarintIfNonZero(f::kEndContextId, r->endContextId);
  w.EndNested();
}

void ActivityDecoder::Overhead(const void* p, ChunkBuilder* chunk) {
  const auto* r = static_cast<const CUpti_ActivityOverhead3*>(p);
  uint64_t start = 0, duration = 0;
  if (!Interval(r->start, r->end, &start, &duration)) return;
  bool thread_object = r->objectKind == CUPTI_ACTIVITY_OBJECT_THREAD || r->objectKind == CUPTI_ACTIVITY_OBJECT_PROCESS;
  uint32_t tid = 0;
  if (thread_object) {
    tid = r->objectKind == CUPTI_ACTIVITY_OBJECT_THREAD ? r->objectId.pt.threadId : r->objectId.pt.processId;
    NoteThread(tid);
  }
  namespace f = field::cuda_overhead;
  ProtoWriter& w = chunk->body();
  w.BeginNested(field::chunk::kCudaOverheads);
  w.SInt(f::kStartDeltaNs, chunk->DeltaNs(field::chunk::kCudaOverheads, start));
  w.Varint(f::kDurationNs, duration);
  w.VarintIfNonZero(f::kOverheadKind, static_cast<uint32_t>(r->overheadKind));
  w.VarintIfNonZero(f::kObjectKind, static_cast<uint32_t>(r->objectKind));
  if (thread_object) {
    w.VarintIfNonZero(f::kObjectTid, tid);
  } else {
    w.VarintIfNonZero(f::kObjectDeviceId, r->objectId.dcs.deviceId);
  }
  w.VarintIfNonZero(f::kCorrelationId, r->correlationId);
  w.EndNested();
}

void ActivityDecoder::Device(const void* p, ChunkBuilder* chunk) {
  const auto* r = static_cast<const CUpti_ActivityDevice5*>(p);
  if (!devices_sent_.insert(r->id).second) return;
  namespace f = field::cuda_device;
  ProtoWriter& w = chunk->body();
  w.BeginNested(field::chunk::kCudaDevices);
  w.Varint(f::kDeviceId, r->id);
  w.String(f::kName, CText(r->name));
  w.Bytes(f::kUuid, r->uuid.bytes, sizeof(r->uuid.bytes));
  w.Varint(f::kGlobalMemoryBytes, r->globalMemorySize);
  w.Varint(f::kGlobalMemoryBandwidthKbps, r->globalMemoryBandwidth);
  w.Varint(f::kCoreClockKhz, r->coreClockRate);
  w.Varint(f::kL2CacheBytes, r->l2CacheSize);
  w.Varint(f::kMultiprocessors, r->numMultiprocessors);
  w.Varint(f::kComputeMajor, r->computeCapabilityMajor);
  w.Varint(f::kComputeMinor, r->computeCapabilityMinor);
  w.Varint(f::kConstantMemoryBytes, r->constantMemorySize);
  w.Varint(f::kThreadsPerWarp, r->numThreadsPerWarp);
  w.Varint(f::kMemcpyEngines, r->numMemcpyEngines);
  w.Varint(f::kMaxIpc, r->maxIPC);
  w.Varint(f::kMaxWarpsPerMultiprocessor, r->maxWarpsPerMultiprocessor);
  w.Varint(f::kMaxBlocksPerMultiprocessor, r->maxBlocksPerMultiprocessor);
  w.Varint(f::kMaxSharedMemoryPerMultiprocessorBytes, r->maxSharedMemoryPerMultiprocessor);
  w.Varint(f::kMaxRegistersPerMultiprocessor, r->maxRegistersPerMultiprocessor);
  w.Varint(f::kMaxRegistersPerBlock, r->maxRegistersPerBlock);
  w.Varint(f::kMaxSharedMemoryPerBlockBytes, r->maxSharedMemoryPerBlock);
  w.Varint(f::kMaxThreadsPerBlock, r->maxThreadsPerBlock);
  w.Varint(f::kMaxBlockDimX, r->maxBlockDimX);
  w.Varint(f::kMaxBlockDimY, r->maxBlockDimY);
  w.Varint(f::kMaxBlockDimZ, r->maxBlockDimZ);
  w.Varint(f::kMaxGridDimX, r->maxGridDimX);
  w.Varint(f::kMaxGridDimY, r->maxGridDimY);
  w.Varint(f::kMaxGridDimZ, r->maxGridDimZ);
  if (r->eccEnabled) w.Bool(f::kEccEnabled, true);
  if (r->isCudaVisible) w.Bool(f::kCudaVisible, true);
  if (r->isMigEnabled) {
    w.Bool(f::kMigEnabled, true);
    w.Varint(f::kGpuInstanceId, r->gpuInstanceId);
    w.Varint(f::kComputeInstanceId, r->computeInstanceId);
    w.Bytes(f::kMigUuid, r->migUuid.bytes, sizeof(r->migUuid.bytes));
  }
  if (r->isNumaNode) {
    w.Bool(f::kNumaNode, true);
    w.Varint(f::kNumaId, r->numaId);
  }
  w.EndNested();
}

void ActivityDecoder::Context(const void* p, ChunkBuilder* chunk) {
  const auto* r = static_cast<const CUpti_ActivityContext3*>(p);
  namespace f = field::cuda_context;
  ProtoWriter& w = chunk->body();
  w.BeginNested(field::chunk::kCudaContexts);
  w.Varint(f::kContextId, r->contextId);
  w.Varint(f::kDeviceId, r->deviceId);
  w.VarintIfNonZero(f::kComputeApiKind, r->computeApiKind);
  w.Varint(f::kNullStreamId, r->nullStreamId);
  w.VarintIfNonZero(f::kParentContextId, r->parentContextId);
  if (r->isGreenContext) w.Bool(f::kGreenContext, true);
  w.VarintIfNonZero(f::kMultiprocessors, r->numMultiprocessors);
  w.VarintIfNonZero(f::kCigMode, static_cast<uint32_t>(r->cigMode));
  w.EndNested();
}

void ActivityDecoder::Stream(const void* p, ChunkBuilder* chunk) {
  const auto* r = static_cast<const CUpti_ActivityStream*>(p);
  namespace f = field::cuda_stream;
  ProtoWriter& w = chunk->body();
  w.BeginNested(field::chunk::kCudaStreams);
  w.Varint(f::kContextId, r->contextId);
  w.Varint(f::kStreamId, r->streamId);
  w.VarintIfNonZero(f::kPriority, r->priority);
  w.VarintIfNonZero(f::kFlag, static_cast<uint32_t>(r->flag));
  w.VarintIfNonZero(f::kCorrelationId, r->correlationId);
  w.EndNested();
}

void ActivityDecoder::Memory(const void* p, ChunkBuilder* chunk) {
  const auto* r = static_cast<const CUpti_ActivityMemory4*>(p);
  if (r->timestamp == 0) {
    ++incomplete_pending_;
    ++incomplete_total_;
    return;
  }
  uint64_t name_id = chunk->Intern(CText(r->name));
  uint64_t source_id = chunk->Intern(CText(r->source));
  namespace f = field::cuda_memory_event;
  ProtoWriter& w = chunk->body();
  w.BeginNested(field::chunk::kCudaMemoryEvents);
  w.SInt(f::kTsDeltaNs, chunk->DeltaNs(field::chunk::kCudaMemoryEvents, Ts(r->timestamp)));
  w.Varint(f::kOperationType, static_cast<uint32_t>(r->memoryOperationType));
  w.VarintIfNonZero(f::kMemoryKind, static_cast<uint32_t>(r->memoryKind));
  w.VarintIfNonZero(f::kCorrelationId, r->correlationId);
  w.VarintIfNonZero(f::kAddress, r->address);
  w.VarintIfNonZero(f::kSizeBytes, r->bytes);
  w.VarintIfNonZero(f::kPc, r->PC);
  w.VarintIfNonZero(f::kDeviceId, r->deviceId);
  w.VarintIfNonZero(f::kContextId, r->contextId);
  w.VarintIfNonZero(f::kStreamId, r->streamId);
  w.VarintIfNonZero(f::kNameId, name_id);
  if (r->isAsync) w.Bool(f::kIsAsync, true);
  uint32_t pool_type = static_cast<uint32_t>(r->memoryPoolConfig.memoryPoolType);
  if (pool_type != CUPTI_ACTIVITY_MEMORY_POOL_TYPE_INVALID) {
    w.Varint(f::kPoolType, pool_type);
    w.VarintIfNonZero(f::kPoolAddress, r->memoryPoolConfig.address);
    w.VarintIfNonZero(f::kPoolReleaseThresholdBytes, r->memoryPoolConfig.releaseThreshold);
    if (pool_type == CUPTI_ACTIVITY_MEMORY_POOL_TYPE_IMPORTED) {
      w.VarintIfNonZero(f::kPoolProcessId, static_cast<uint32_t>(r->memoryPoolConfig.pool.processId));
    } else {
      w.VarintIfNonZero(f::kPoolSizeBytes, r->memoryPoolConfig.pool.size);
    }
    w.VarintIfNonZero(f::kPoolUtilizedBytes, r->memoryPoolConfig.utilizedSize);
  }
  w.VarintIfNonZero(f::kSourceNameId, source_id);
  w.EndNested();
}

void ActivityDecoder::MemoryPool(const void* p, ChunkBuilder* chunk) {
  const auto* r = static_cast<const CUpti_ActivityMemoryPool3*>(p);
  if (r->timestamp == 0) {
    ++incomplete_pending_;
    ++incomplete_total_;
    return;
  }
  namespace f = field::cuda_memory_pool_event;
  ProtoWriter& w = chunk->body();
  w.BeginNested(field::chunk::kCudaMemoryPoolEvents);
  w.SInt(f::kTsDeltaNs, chunk->DeltaNs(field::chunk::kCudaMemoryPoolEvents, Ts(r->timestamp)));
  w.Varint(f::kOperationType, static_cast<uint32_t>(r->memoryPoolOperationType));
  w.Varint(f::kPoolType, static_cast<uint32_t>(r->memoryPoolType));
  w.VarintIfNonZero(f::kCorrelationId, r->correlationId);
  w.VarintIfNonZero(f::kDeviceId, r->deviceId);
  w.VarintIfNonZero(f::kMinBytesToKeep, r->minBytesToKeep);
  w.VarintIfNonZero(f::kAddress, r->address);
  w.VarintIfNonZero(f::kSizeBytes, r->size);
  w.VarintIfNonZero(f::kReleaseThresholdBytes, r->releaseThreshold);
  w.VarintIfNonZero(f::kUtilizedBytes, r->utilizedSize);
  if (r->isManagedPool) w.Bool(f::kManaged, true);
  w.EndNested();
}

}  // namespace gt::cupti
