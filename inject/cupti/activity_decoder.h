// ActivityDecoder: turns the records of one completed CUPTI activity buffer into stream messages
// (schema/cuda.proto) in the drain thread's process-level chunk. CUPTI records keep CUPTI's
// numbering; translation to nsys's happens in the exporter.
//
// Threads: the drain thread only (from the CUPTI tracer's emitter). Owned by the tracer.
// Tests feed it hand-built CUpti_Activity* records (tests/cuda/activity_decoder_test.cc).
#pragma once

#include <cstddef>
#include <cstdint>
#include <unordered_set>
#include <vector>

#include "collector/chunk_builder.h"
#include "inject/cupti/compact_encoder.h"
#include "inject/cupti/cupti_api.h"
#include "inject/cupti/graph_window_filter.h"

namespace gt::cupti {

class ActivityDecoder {
 public:
  // `api` provides cuptiActivityGetNextRecord and cuptiGetCallbackName; it must outlive the decoder.
  explicit ActivityDecoder(const CuptiApi* api) : api_(api) {}
  ActivityDecoder(const ActivityDecoder&) = delete;
  ActivityDecoder& operator=(const ActivityDecoder&) = delete;

  // CUPTI timestamps are on the stream clock when gtrace's timestamp callback is registered;
  // otherwise `cupti_minus_stream_ns` is subtracted from each.
  void SetClock(bool callback, int64_t cupti_minus_stream_ns) {
    clock_callback_ = callback;
    clock_offset_ns_ = cupti_minus_stream_ns;
  }
  // Only GRAPH_TRACE records whose launch was inside a capture window (nullptr: all of them).
  void SetGraphTraceFilter(const GraphWindowFilter* filter) { graph_filter_ = filter; }
  // A new stream (session) begins: per-stream state (announced devices and threads) is forgotten.
  void BeginSession(uint64_t session_id);

  // Decodes every record in buffer[0, valid_bytes).
  void DecodeBuffer(const uint8_t* buffer, size_t valid_bytes, ChunkBuilder* chunk);
  // Announces threads first seen in API records and reports records that could not be kept.
  void EmitPending(ChunkBuilder* chunk, uint64_t now_ns);

  // Tests only: write kernels and API calls as full CudaKernel / CudaApiCall messages, the encoding
  // of streams written before issue 16 (readers must keep exporting those identically).
  void SetLegacyEncodingForTesting(bool legacy) { compact_ = !legacy; }

  uint64_t records_decoded() const { return records_decoded_; }
  uint64_t incomplete_records() const { return incomplete_total_; }
  uint64_t unknown_records() const { return unknown_total_; }

 private:
  uint64_t Ts(uint64_t cupti_ns) const {
    return clock_callback_ ? cupti_ns : static_cast<uint64_t>(static_cast<int64_t>(cupti_ns) - clock_offset_ns_);
  }
  // False (and counted) when the record's interval is incomplete.
  bool Interval(uint64_t start, uint64_t end, uint64_t* start_ns, uint64_t* duration_ns);
  const char* CallbackName(bool driver, uint32_t cbid);
  void NoteThread(uint32_t tid);

  void Api(const void* record, bool driver, ChunkBuilder* chunk);
  void Kernel(const void* record, ChunkBuilder* chunk);
  static void KernelConstants(const void* record, uint64_t name_id, ProtoWriter* w);
  void Memcpy(const void* record, ChunkBuilder* chunk);
  void MemcpyPeer(const void* record, ChunkBuilder* chunk);
  void Memset(const void* record, ChunkBuilder* chunk);
  void Sync(const void* record, ChunkBuilder* chunk);
  void Event(const void* record, ChunkBuilder* chunk);
  void GraphTrace(const void* record, ChunkBuilder* chunk);
  void Overhead(const void* record, ChunkBuilder* chunk);
  void Device(const void* record, ChunkBuilder* chunk);
  void Context(const void* record, ChunkBuilder* chunk);
  void Stream(const void* record, ChunkBuilder* chunk);
  void Memory(const void* record, ChunkBuilder* chunk);
  void MemoryPool(const void* record, ChunkBuilder* chunk);

  const CuptiApi* api_;
  bool compact_ = true;
  CompactCudaEncoder compact_encoder_;
  ProtoWriter scratch_;  // one record's constants (the compact form's config key)
  const GraphWindowFilter* graph_filter_ = nullptr;
  bool clock_callback_ = true;
  int64_t clock_offset_ns_ = 0;
  uint64_t session_id_ = 0;
  std::vector<const char*> runtime_names_;  // cbid -> cuptiGetCallbackName (nullptr: not asked yet)
  std::vector<const char*> driver_names_;
  std::unordered_set<uint32_t> devices_sent_;
  std::unordered_set<uint32_t> threads_known_;
  std::vector<uint32_t> threads_new_;
  uint64_t records_decoded_ = 0;
  uint64_t incomplete_pending_ = 0, unknown_pending_ = 0;
  uint64_t incomplete_total_ = 0, unknown_total_ = 0;
  uint64_t walk_error_buffers_pending_ = 0, walk_error_bytes_pending_ = 0;
};

}  // namespace gt::cupti
