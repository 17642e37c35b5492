// The CUPTI activity decoder on hand-built CUpti_Activity* records (the real CUDA 13.0 structs), as
// libkineto's tests do: every field that reaches the stream, incomplete records, the clock offset,
// device de-duplication and unknown kinds. No CUPTI library: the record iterator and callback names
// are the test's own.
#include <gtest/gtest.h>

#include <cupti.h>

#include <cstring>
#include <string>
#include <vector>

#include "collector/chunk_builder.h"
#include "collector/string_interner.h"
#include "gtrace.pb.h"
#include "inject/cupti/activity_decoder.h"

namespace gt::cupti {
namespace {

// Records laid out back to back, 8-byte aligned, as CUPTI does; the iterator knows their sizes.
struct Buffer {
  std::vector<uint8_t> bytes;
  std::vector<size_t> offsets;
  template <typename T>
  void Add(const T& record) {
    size_t at = bytes.size();
    offsets.push_back(at);
    bytes.resize(at + ((sizeof(T) + 7) & ~size_t{7}), 0);
    std::memcpy(bytes.data() + at, &record, sizeof(T));
  }
};
Buffer* g_buffer = nullptr;

CUptiResult CUPTIAPI TestNextRecord(uint8_t* buffer, size_t, CUpti_Activity** record) {
  size_t next = 0;
  if (*record != nullptr) {
    size_t at = static_cast<size_t>(reinterpret_cast<uint8_t*>(*record) - buffer);
    while (next < g_buffer->offsets.size() && g_buffer->offsets[next] <= at) ++next;
  }
  if (next >= g_buffer->offsets.size()) return CUPTI_ERROR_MAX_LIMIT_REACHED;
  *record = reinterpret_cast<CUpti_Activity*>(buffer + g_buffer->offsets[next]);
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI TestCallbackName(CUpti_CallbackDomain domain, uint32_t cbid, const char** name) {
  if (domain == CUPTI_CB_DOMAIN_RUNTIME_API && cbid == CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000) {
    *name = "cudaLaunchKernel_v7000";
    return CUPTI_SUCCESS;
  }
  if (domain == CUPTI_CB_DOMAIN_DRIVER_API && cbid == CUPTI_DRIVER_TRACE_CBID_cuKernelGetName) {
    *name = "cuKernelGetName";
    return CUPTI_SUCCESS;
  }
  return CUPTI_ERROR_INVALID_PARAMETER;
}

class DecoderTest : public ::testing::Test {
 protected:
  DecoderTest() : chunk_(&interner_), decoder_(&api_) {
    api_.ActivityGetNextRecord = &TestNextRecord;
    api_.GetCallbackName = &TestCallbackName;
    g_buffer = &buffer_;
    decoder_.BeginSession(1);
  }

  // Decodes buffer_ (plus pending losses) and returns the chunks written.
  std::vector<schema::Chunk> Decode(uint64_t now_ns = 5) {
    chunk_.Begin(0, 0, 0);
    decoder_.DecodeBuffer(buffer_.bytes.data(), buffer_.bytes.size(), &chunk_);
    decoder_.EmitPending(&chunk_, now_ns);
    chunk_.End();
    std::vector<schema::Chunk> chunks;
    const std::string& out = *chunk_.output();
    size_t pos = 0;
    while (pos < out.size()) {
      ++pos;  // tag of StreamFile.chunk
      uint64_t len = 0;
      for (int shift = 0;; shift += 7) {
        uint8_t b = static_cast<uint8_t>(out[pos++]);
        len |= uint64_t{b & 0x7fu} << shift;
        if (!(b & 0x80)) break;
      }
      schema::Chunk c;
      EXPECT_TRUE(c.ParseFromString(out.substr(pos, len)));
      chunks.push_back(c);
      pos += len;
    }
    chunk_.output()->clear();
    return chunks;
  }

  std::string Text(const std::vector<schema::Chunk>& chunks, uint64_t id) {
    for (const auto& c : chunks) {
      for (const auto& s : c.strings()) {
        if (s.id() == id) return s.text();
      }
    }
    return "<missing>";
  }

  CuptiApi api_;
  Buffer buffer_;
  StringInterner interner_;
  ChunkBuilder chunk_;
  ActivityDecoder decoder_;
};

CUpti_ActivityAPI Api(CUpti_ActivityKind kind, uint32_t cbid, uint64_t start, uint64_t end, uint32_t tid, uint32_t corr) {
  CUpti_ActivityAPI r;
  std::memset(&r, 0, sizeof(r));
  r.kind = kind;
  r.cbid = cbid;
  r.start = start;
  r.end = end;
  r.threadId = tid;
  r.correlationId = corr;
  return r;
}

TEST_F(DecoderTest, ApiCallsKeepNamesCorrelationThreadAndResult) {
  CUpti_ActivityAPI a = Api(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, 1000, 1500,
                            0,  // thread 0: not announced
                            7);
  a.returnValue = 2;
  buffer_.Add(a);
  buffer_.Add(Api(CUPTI_ACTIVITY_KIND_DRIVER, CUPTI_DRIVER_TRACE_CBID_cuKernelGetName, 1600, 1700, 0, 8));
  buffer_.Add(Api(CUPTI_ACTIVITY_KIND_RUNTIME, 9999, 1800, 1900, 0, 9));  // unnamed cbid
  std::vector<schema::Chunk> chunks = Decode();
  ASSERT_EQ(chunks.size(), 1u);
  ASSERT_EQ(chunks[0].cuda_api_calls_size(), 3);
  const schema::CudaApiCall& r = chunks[0].cuda_api_calls(0);
  EXPECT_EQ(r.kind(), schema::CUDA_API_KIND_RUNTIME);
  EXPECT_EQ(r.start_delta_ns(), 1000);
  EXPECT_EQ(r.duration_ns(), 500u);
  EXPECT_EQ(r.correlation_id(), 7u);
  EXPECT_EQ(r.return_value(), 2u);
  EXPECT_EQ(r.cbid(), static_cast<uint32_t>(CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000));
  EXPECT_EQ(Text(chunks, r.name_id()), "cudaLaunchKernel_v7000");
  const schema::CudaApiCall& d = chunks[0].cuda_api_calls(1);
  EXPECT_EQ(d.kind(), schema::CUDA_API_KIND_DRIVER);
  EXPECT_EQ(d.start_delta_ns(), 600);  // delta from the previous API call
  EXPECT_EQ(Text(chunks, d.name_id()), "cuKernelGetName");
  EXPECT_EQ(chunks[0].cuda_api_calls(2).name_id(), 0u);
  EXPECT_EQ(chunks[0].cuda_api_calls(2).cbid(), 9999u);
  EXPECT_EQ(decoder_.records_decoded(), 3u);
}

TEST_F(DecoderTest, KernelFields) {
  CUpti_ActivityKernel10 k;
  std::memset(&k, 0, sizeof(k));
  k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
  k.cacheConfig.config.requested = 2;
  k.cacheConfig.config.executed = 1;
  k.registersPerThread = 40;
  k.start = 10000;
  k.end = 12500;
  k.deviceId = 1;
  k.contextId = 3;
  k.streamId = 14;
  k.gridX = 80;
  k.gridY = 2;
  k.gridZ = 1;
  k.blockX = 128;
  k.blockY = 1;
  k.blockZ = 1;
  k.staticSharedMemory = 1024;
  k.dynamicSharedMemory = 2048;
  k.localMemoryPerThread = 16;
  k.localMemoryTotal = 1;
  k.localMemoryTotal_v2 = 95813632;
  k.correlationId = 42;
  k.gridId = 17;
  k.name = "_Z7add_onePKfPfi";
  k.launchType = 1;
  k.isSharedMemoryCarveoutRequested = 1;
  k.sharedMemoryCarveoutRequested = 50;
  k.sharedMemoryExecuted = 32768;
  k.graphNodeId = 77;
  k.graphId = 5;
  k.shmemLimitConfig = CUPTI_FUNC_SHMEM_LIMIT_OPTIN;
  k.clusterX = 2;
  k.clusterY = 1;
  k.clusterZ = 1;
  buffer_.Add(k);
  std::vector<schema::Chunk> chunks = Decode();
  ASSERT_EQ(chunks[0].cuda_kernels_size(), 1);
  const schema::CudaKernel& r = chunks[0].cuda_kernels(0);
  EXPECT_EQ(r.start_delta_ns(), 10000);
  EXPECT_EQ(r.duration_ns(), 2500u);
  EXPECT_EQ(r.device_id(), 1u);
  EXPECT_EQ(r.context_id(), 3u);
  EXPECT_EQ(r.stream_id(), 14u);
  EXPECT_EQ(r.correlation_id(), 42u);
  EXPECT_EQ(Text(chunks, r.name_id()), "_Z7add_onePKfPfi");
  EXPECT_EQ(r.grid_x(), 80);
  EXPECT_EQ(r.grid_y(), 2);
  EXPECT_EQ(r.block_x(), 128);
  EXPECT_EQ(r.registers_per_thread(), 40u);
  EXPECT_EQ(r.static_shared_memory_bytes(), 1024);
  EXPECT_EQ(r.dynamic_shared_memory_bytes(), 2048);
  EXPECT_EQ(r.local_memory_per_thread_bytes(), 16u);
  EXPECT_EQ(r.local_memory_total_bytes(), 95813632u);  // the 64-bit field wins
  EXPECT_EQ(r.grid_id(), 17);
  EXPECT_EQ(r.shared_memory_executed_bytes(), 32768u);
  EXPECT_EQ(r.launch_type(), 1u);
  EXPECT_EQ(r.cache_config_requested(), 2u);
  EXPECT_EQ(r.cache_config_executed(), 1u);
  EXPECT_EQ(r.shared_memory_limit_config(), 1u);
  EXPECT_EQ(r.graph_node_id(), 77u);
  EXPECT_EQ(r.graph_id(), 5u);
  EXPECT_EQ(r.cluster_x(), 2u);
  ASSERT_TRUE(r.has_shared_memory_carveout_requested_percent());
  EXPECT_EQ(r.shared_memory_carveout_requested_percent(), 50u);
}

TEST_F(DecoderTest, CopiesSetsSyncsEventsGraphsAndOverhead) {
  CUpti_ActivityMemcpy6 m;
  std::memset(&m, 0, sizeof(m));
  m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
  m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_DTOH;
  m.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  m.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_PINNED;
  m.bytes = 4;
  m.start = 100;
  m.end = 132;
  m.streamId = 7;
  m.correlationId = 171;
  m.copyCount = 1;
  buffer_.Add(m);
  CUpti_ActivityMemcpyPtoP4 p;
  std::memset(&p, 0, sizeof(p));
  p.kind = CUPTI_ACTIVITY_KIND_MEMCPY2;
  p.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_PTOP;
  p.bytes = 1 << 20;
  p.start = 200;
  p.end = 300;
  p.srcDeviceId = 0;
  p.dstDeviceId = 1;
  p.srcContextId = 1;
  p.dstContextId = 2;
  p.correlationId = 172;
  buffer_.Add(p);
  CUpti_ActivityMemset4 s;
  std::memset(&s, 0, sizeof(s));
  s.kind = CUPTI_ACTIVITY_KIND_MEMSET;
  s.value = 0xab;
  s.bytes = 64;
  s.start = 400;
  s.end = 410;
  s.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  buffer_.Add(s);
  CUpti_ActivitySynchronization2 y;
  std::memset(&y, 0, sizeof(y));
  y.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
  y.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE;
  y.start = 500;
  y.end = 900;
  y.contextId = 1;
  y.streamId = 0xFFFFFFFFu;
  y.cudaEventId = 0xFFFFFFFFu;
  y.correlationId = 173;
  buffer_.Add(y);
  CUpti_ActivityCudaEvent2 e;
  std::memset(&e, 0, sizeof(e));
  e.kind = CUPTI_ACTIVITY_KIND_CUDA_EVENT;
  e.correlationId = 174;
  e.eventId = 2;
  e.cudaEventSyncId = 2;
  buffer_.Add(e);
  CUpti_ActivityGraphTrace2 g;
  std::memset(&g, 0, sizeof(g));
  g.kind = CUPTI_ACTIVITY_KIND_GRAPH_TRACE;
  g.correlationId = 175;
  g.start = 1000;
  g.end = 1700;
  g.graphId = 1;
  buffer_.Add(g);
  CUpti_ActivityOverhead3 o;
  std::memset(&o, 0, sizeof(o));
  o.kind = CUPTI_ACTIVITY_KIND_OVERHEAD;
  o.overheadKind = CUPTI_ACTIVITY_OVERHEAD_RUNTIME_TRIGGERED_MODULE_LOADING;
  o.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
  o.objectId.pt.threadId = 0;  // 0: not announced
  o.start = 2000;
  o.end = 2100;
  o.correlationId = 176;
  buffer_.Add(o);
  std::vector<schema::Chunk> chunks = Decode();
  const schema::Chunk& c = chunks[0];
  ASSERT_EQ(c.cuda_memcpys_size(), 2);
  EXPECT_EQ(c.cuda_memcpys(0).copy_kind(), 2u);
  EXPECT_EQ(c.cuda_memcpys(0).src_kind(), 3u);
  EXPECT_EQ(c.cuda_memcpys(0).dst_kind(), 2u);
  EXPECT_EQ(c.cuda_memcpys(0).duration_ns(), 32u);
  EXPECT_FALSE(c.cuda_memcpys(0).peer());
  EXPECT_TRUE(c.cuda_memcpys(1).peer());
  EXPECT_EQ(c.cuda_memcpys(1).copy_kind(), 10u);
  EXPECT_EQ(c.cuda_memcpys(1).dst_device_id(), 1u);
  EXPECT_EQ(c.cuda_memcpys(1).dst_context_id(), 2u);
  ASSERT_EQ(c.cuda_memsets_size(), 1);
  EXPECT_EQ(c.cuda_memsets(0).value(), 0xabu);
  EXPECT_EQ(c.cuda_memsets(0).memory_kind(), 3u);
  ASSERT_EQ(c.cuda_syncs_size(), 1);
  EXPECT_EQ(c.cuda_syncs(0).type(), 4u);
  EXPECT_EQ(c.cuda_syncs(0).stream_id(), 0xFFFFFFFFu);
  EXPECT_EQ(c.cuda_syncs(0).cuda_event_id(), 0xFFFFFFFFu);
  EXPECT_EQ(c.cuda_syncs(0).duration_ns(), 400u);
  ASSERT_EQ(c.cuda_events_size(), 1);
  EXPECT_EQ(c.cuda_events(0).event_id(), 2u);
  EXPECT_EQ(c.cuda_events(0).device_timestamp_ns(), 0u);
  ASSERT_EQ(c.cuda_graph_traces_size(), 1);
  EXPECT_EQ(c.cuda_graph_traces(0).correlation_id(), 175u);
  EXPECT_EQ(c.cuda_graph_traces(0).duration_ns(), 700u);
  ASSERT_EQ(c.cuda_overheads_size(), 1);
  EXPECT_EQ(c.cuda_overheads(0).overhead_kind(), 4u << 16);
  EXPECT_EQ(c.cuda_overheads(0).object_kind(), 2u);
}

TEST_F(DecoderTest, IncompleteRecordsAreDroppedAndReported) {
  CUpti_ActivityKernel10 k;
  std::memset(&k, 0, sizeof(k));
  k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
  k.start = 100;
  k.end = 0;  // still running at a forced flush
  k.name = "k";
  buffer_.Add(k);
  buffer_.Add(Api(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, 500, 400, 0, 1));
  std::vector<schema::Chunk> chunks = Decode(/*now_ns=*/99);
  ASSERT_EQ(chunks.size(), 1u);
  EXPECT_EQ(chunks[0].cuda_kernels_size(), 0);
  EXPECT_EQ(chunks[0].cuda_api_calls_size(), 0);
  ASSERT_EQ(chunks[0].cuda_record_losses_size(), 1);
  EXPECT_EQ(chunks[0].cuda_record_losses(0).incomplete_records(), 2u);
  EXPECT_EQ(chunks[0].cuda_record_losses(0).ts_ns(), 99u);
  EXPECT_EQ(decoder_.incomplete_records(), 2u);
  // Reported once: the next pass has nothing to say.
  buffer_ = Buffer();
  EXPECT_TRUE(Decode().empty());
}

TEST_F(DecoderTest, CuptiClockOffsetIsSubtractedWithoutTheTimestampCallback) {
  decoder_.SetClock(false, 1000000);
  buffer_.Add(Api(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, 5000000, 5000300, 0, 1));
  std::vector<schema::Chunk> chunks = Decode();
  ASSERT_EQ(chunks[0].cuda_api_calls_size(), 1);
  EXPECT_EQ(chunks[0].cuda_api_calls(0).start_delta_ns(), 4000000);
  EXPECT_EQ(chunks[0].cuda_api_calls(0).duration_ns(), 300u);
}

TEST_F(DecoderTest, DevicesOncePerSessionAndUnknownKindsCounted) {
  CUpti_ActivityDevice5 d;
  std::memset(&d, 0, sizeof(d));
  d.kind = CUPTI_ACTIVITY_KIND_DEVICE;
  d.id = 0;
  d.name = "NVIDIA H100";
  d.numMultiprocessors = 132;
  d.coreClockRate = 1980000;
  d.uuid.bytes[0] = 0x11;
  buffer_.Add(d);
  buffer_.Add(d);
  CUpti_ActivityExternalCorrelation x;
  std::memset(&x, 0, sizeof(x));
  x.kind = CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION;
  buffer_.Add(x);
  std::vector<schema::Chunk> chunks = Decode();
  ASSERT_EQ(chunks[0].cuda_devices_size(), 1);
  EXPECT_EQ(chunks[0].cuda_devices(0).name(), "NVIDIA H100");
  EXPECT_EQ(chunks[0].cuda_devices(0).multiprocessors(), 132u);
  EXPECT_EQ(chunks[0].cuda_devices(0).uuid().size(), 16u);
  ASSERT_EQ(chunks[0].cuda_record_losses_size(), 1);
  EXPECT_EQ(chunks[0].cuda_record_losses(0).unknown_kind_records(), 1u);
  // A new session (a new stream) announces the device again.
  decoder_.BeginSession(2);
  buffer_ = Buffer();
  buffer_.Add(d);
  chunks = Decode();
  EXPECT_EQ(chunks[0].cuda_devices_size(), 1);
}

}  // namespace
}  // namespace gt::cupti
