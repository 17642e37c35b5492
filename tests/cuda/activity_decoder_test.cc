// The CUPTI activity decoder on hand-built CUpti_Activity* records (the real CUDA 13.0 structs), as
// libkineto's tests do: every field that reaches the stream, incomplete records, the clock offset,
// device de-duplication and unknown kinds. No CUPTI library: the record iterator and callback names
// are the test's own.
#include <gtest/gtest.h>

#include <cupti.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "collector/chunk_builder.h"
#include "collector/string_interner.h"
#include "gtrace.pb.h"
#include "inject/cupti/activity_decoder.h"
#include "tools/stream/cuda_compact.h"

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
// Index of a record the walk reports as CUPTI_ERROR_INVALID_KIND ("record is either incomplete or
// invalid", cupti_activity.h 7586), as real CUPTI can; SIZE_MAX: none.
size_t g_invalid_at = SIZE_MAX;

CUptiResult CUPTIAPI TestNextRecord(uint8_t* buffer, size_t, CUpti_Activity** record) {
  size_t next = 0;
  if (*record != nullptr) {
    size_t at = static_cast<size_t>(reinterpret_cast<uint8_t*>(*record) - buffer);
    next = static_cast<size_t>(std::upper_bound(g_buffer->offsets.begin(), g_buffer->offsets.end(), at) -
                               g_buffer->offsets.begin());
  }
  if (next >= g_buffer->offsets.size()) return CUPTI_ERROR_MAX_LIMIT_REACHED;
  if (next == g_invalid_at) return CUPTI_ERROR_INVALID_KIND;
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

  // Decodes buffer_ (plus pending losses) and returns the chunks written, with compact CUDA records
  // expanded as the stream reader does (`raw`: as written).
  std::vector<schema::Chunk> Decode(uint64_t now_ns = 5, std::vector<schema::Chunk>* raw = nullptr) {
    chunk_.Begin(0, 0, 0);
    decoder_.DecodeBuffer(buffer_.bytes.data(), buffer_.bytes.size(), &chunk_);
    decoder_.EmitPending(&chunk_, now_ns);
    chunk_.End();
    std::vector<schema::Chunk> chunks = Parse(chunk_.output());
    chunk_.output()->clear();
    if (raw != nullptr) *raw = chunks;
    for (schema::Chunk& c : chunks) {
      std::string error;
      EXPECT_TRUE(expander_.Expand(&c, &error)) << error;
    }
    return chunks;
  }

  static std::vector<schema::Chunk> Parse(const std::string* output) {
    std::vector<schema::Chunk> chunks;
    const std::string& out = *output;
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
  stream::CudaCompactExpander expander_;
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

// Issue 29 item 6: a walk that ends on an error loses the rest of the buffer; that is counted.
TEST_F(DecoderTest, WalkErrorCountsTheBufferAndItsUnreadBytes) {
  CUpti_ActivityDevice5 d;
  std::memset(&d, 0, sizeof(d));
  d.kind = CUPTI_ACTIVITY_KIND_DEVICE;
  d.name = "NVIDIA H100";
  buffer_.Add(d);
  buffer_.Add(d);
  buffer_.Add(d);
  g_invalid_at = 1;
  std::vector<schema::Chunk> chunks = Decode();
  g_invalid_at = SIZE_MAX;
  ASSERT_EQ(chunks[0].cuda_record_losses_size(), 1);
  EXPECT_EQ(chunks[0].cuda_record_losses(0).walk_error_buffers(), 1u);
  EXPECT_EQ(chunks[0].cuda_record_losses(0).walk_error_bytes(), buffer_.bytes.size() - buffer_.offsets[0]);
  EXPECT_EQ(decoder_.records_decoded(), 1u);
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

// --- Compact kernel and API records (issue 16) ---------------------------------------------------

// A training-like buffer: `launches` kernels from 20 launch configurations on 3 streams, each launched
// by a cudaLaunchKernel call on one thread, with another runtime call after every 10th launch;
// increasing times and correlation ids, durations that vary. Real CUpti_ActivityKernel10 / API
// layouts.
void AddTraining(Buffer* b, int launches, int configs = 20) {
  static const char* const kNames[] = {"_Z4gemmv", "_Z7softmaxv", "_Z9layernormv", "_Z4reluv", "_Z6matmulv"};
  uint64_t t = 1'000'000'000;
  uint32_t correlation = 1;
  uint64_t seed = 12345;
  auto jitter = [&](uint64_t range) {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    return (seed >> 33) % range;
  };
  for (int i = 0; i < launches; ++i) {
    int c = (i * 7) % configs;
    CUpti_ActivityAPI a = Api(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, t,
                              t + 2500 + jitter(1500), 4242, correlation);
    b->Add(a);
    CUpti_ActivityKernel10 k;
    std::memset(&k, 0, sizeof(k));
    k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    k.start = t + 8000 + jitter(4000);
    k.end = k.start + 3000 + static_cast<uint64_t>(c) * 900 + jitter(2000);
    k.deviceId = 0;
    k.contextId = 1;
    k.streamId = 13 + static_cast<uint32_t>(c % 3);
    k.correlationId = correlation;
    k.gridId = 1000 + i;
    k.name = kNames[c % 5];
    k.gridX = 64 + c;
    k.gridY = 1;
    k.gridZ = 1;
    k.blockX = 256;
    k.blockY = 1;
    k.blockZ = 1;
    k.registersPerThread = static_cast<uint16_t>(32 + c % 4);
    k.dynamicSharedMemory = 1024 * (c % 2);
    k.localMemoryTotal_v2 = 95813632;
    k.sharedMemoryExecuted = 32768;
    k.channelID = 3;
    k.channelType = CUPTI_CHANNEL_TYPE_COMPUTE;
    b->Add(k);
    ++correlation;
    t += 6000 + jitter(3000);
    if (i % 10 == 9) {
      b->Add(Api(CUPTI_ACTIVITY_KIND_RUNTIME, 9999, t, t + 1200 + jitter(500), 4242, correlation++));
      t += 2000;
    }
  }
}

// Every kernel and API call of `chunks` in order, with start_delta_ns made absolute (chunks split at
// different records in the two encodings, so the deltas themselves differ at the boundaries).
template <typename Msg>
std::vector<std::string> Flatten(const std::vector<schema::Chunk>& chunks,
                                 const google::protobuf::RepeatedPtrField<Msg>& (schema::Chunk::*field)() const) {
  std::vector<std::string> out;
  for (const schema::Chunk& c : chunks) {
    int64_t t = static_cast<int64_t>(c.base_ns());
    for (const Msg& m : (c.*field)()) {
      Msg copy = m;
      t += m.start_delta_ns();
      copy.set_start_delta_ns(t);
      out.push_back(copy.SerializeAsString());
    }
  }
  return out;
}

TEST_F(DecoderTest, CompactRecordsExpandToExactlyTheLegacyMessages) {
  AddTraining(&buffer_, 100000);
  std::vector<schema::Chunk> raw;
  std::vector<schema::Chunk> compact = Decode(5, &raw);

  StringInterner interner;
  ChunkBuilder chunk(&interner);
  ActivityDecoder legacy(&api_);
  legacy.SetLegacyEncodingForTesting(true);
  legacy.BeginSession(1);
  chunk.Begin(0, 0, 0);
  legacy.DecodeBuffer(buffer_.bytes.data(), buffer_.bytes.size(), &chunk);
  chunk.End();
  std::vector<schema::Chunk> old = Parse(chunk.output());

  std::vector<std::string> kernels = Flatten(compact, &schema::Chunk::cuda_kernels);
  std::vector<std::string> calls = Flatten(compact, &schema::Chunk::cuda_api_calls);
  ASSERT_EQ(kernels.size(), 100000u);
  ASSERT_EQ(calls.size(), 110000u);
  EXPECT_TRUE(kernels == Flatten(old, &schema::Chunk::cuda_kernels));
  EXPECT_TRUE(calls == Flatten(old, &schema::Chunk::cuda_api_calls));
  // The same strings with the same ids (the name interning is shared by both forms).
  std::vector<std::string> strings_new, strings_old;
  for (const auto& c : compact) for (const auto& t : c.strings()) strings_new.push_back(t.SerializeAsString());
  for (const auto& c : old) for (const auto& t : c.strings()) strings_old.push_back(t.SerializeAsString());
  EXPECT_EQ(strings_new, strings_old);
  EXPECT_EQ(strings_new.size(), 6u);  // 5 kernel names + cudaLaunchKernel_v7000

  // On disk: no full messages, every record in a batch, each configuration defined once, and more
  // than one chunk (the batches are flushed before each split).
  ASSERT_GE(raw.size(), 2u);
  size_t batch_kernels = 0, batch_calls = 0, kernel_configs = 0, api_configs = 0;
  size_t kernel_bytes = 0, api_bytes = 0;
  for (const schema::Chunk& c : raw) {
    EXPECT_EQ(c.cuda_kernels_size(), 0);
    EXPECT_EQ(c.cuda_api_calls_size(), 0);
    kernel_configs += c.cuda_kernel_configs_size();
    api_configs += c.cuda_api_configs_size();
    for (const auto& b : c.cuda_kernel_batches()) {
      batch_kernels += b.config_id_size();
      kernel_bytes += b.ByteSizeLong() + 4;  // + tag and length
    }
    for (const auto& b : c.cuda_api_batches()) {
      batch_calls += b.config_id_size();
      api_bytes += b.ByteSizeLong() + 4;
    }
  }
  EXPECT_EQ(batch_kernels, 100000u);
  EXPECT_EQ(batch_calls, 110000u);
  EXPECT_EQ(kernel_configs, 20u);
  EXPECT_EQ(api_configs, 2u);
  // The budget: <= 16 bytes per kernel and <= 12 per API call (bench/stream_sizes measures
  // whole files).
  EXPECT_LE(kernel_bytes, 100000u * 16);
  EXPECT_LE(api_bytes, 110000u * 12);
}

TEST_F(DecoderTest, ConfigsOncePerStreamAndAgainInANewStream) {
  AddTraining(&buffer_, 40, 4);
  std::vector<schema::Chunk> raw;
  std::vector<schema::Chunk> first = Decode(5, &raw);
  ASSERT_EQ(raw.size(), 1u);
  ASSERT_EQ(raw[0].cuda_kernel_configs_size(), 4);
  EXPECT_EQ(raw[0].cuda_kernel_configs(0).id(), 1u);
  EXPECT_EQ(raw[0].cuda_kernel_configs(3).id(), 4u);
  EXPECT_EQ(raw[0].cuda_api_configs_size(), 2);
  std::vector<schema::Chunk> second = Decode(5, &raw);
  EXPECT_EQ(raw[0].cuda_kernel_configs_size(), 0);
  EXPECT_EQ(raw[0].cuda_api_configs_size(), 0);
  ASSERT_EQ(second[0].cuda_kernels_size(), 40);
  EXPECT_EQ(Flatten(second, &schema::Chunk::cuda_kernels), Flatten(first, &schema::Chunk::cuda_kernels));
  decoder_.BeginSession(2);  // a new stream (fork child): defined again, ids from 1
  expander_ = stream::CudaCompactExpander();
  Decode(5, &raw);
  ASSERT_EQ(raw[0].cuda_kernel_configs_size(), 4);
  EXPECT_EQ(raw[0].cuda_kernel_configs(0).id(), 1u);
}

TEST_F(DecoderTest, ConfigTableIsBoundedAndStartsOverWithNewIds) {
  const int n = static_cast<int>(CompactCudaEncoder::kMaxConfigs) + 4;  // 16388: prime to 7
  AddTraining(&buffer_, n, n);  // every launch its own configuration (c = 7 i mod n)
  AddTraining(&buffer_, 1, n);  // configuration 0 again, forgotten by now
  std::vector<schema::Chunk> raw;
  std::vector<schema::Chunk> chunks = Decode(5, &raw);
  size_t configs = 0;
  uint64_t last_id = 0;
  for (const auto& c : raw) {
    for (const auto& k : c.cuda_kernel_configs()) {
      ++configs;
      EXPECT_EQ(k.id(), last_id + 1);  // never reused
      last_id = k.id();
    }
  }
  EXPECT_EQ(configs, static_cast<size_t>(n) + 1);
  std::vector<std::string> kernels = Flatten(chunks, &schema::Chunk::cuda_kernels);
  ASSERT_EQ(kernels.size(), static_cast<size_t>(n) + 1);
  schema::CudaKernel first, again;
  ASSERT_TRUE(first.ParseFromString(kernels[0]));
  ASSERT_TRUE(again.ParseFromString(kernels[n]));
  EXPECT_EQ(again.grid_x(), first.grid_x());
  EXPECT_EQ(again.grid_id(), 1000);
}

}  // namespace
}  // namespace gt::cupti
