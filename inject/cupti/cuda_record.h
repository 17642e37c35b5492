// The CUDA callback-side ring record (RecordType kRecordCudaApi): what a CUPTI API or resource
// callback writes on the application thread (graph launches and graph creation, the facts CUPTI's
// activity records lack), and its decoder, which the drain thread runs.
// Layout is private to this module: one 64-byte slot, no extension.
#pragma once

#include <cstdint>

#include "collector/session.h"

namespace gt::cupti {

enum CudaRecordKind : uint16_t {
  kCudaRecordGraphLaunch = 1,       // a = correlation id, b = graph exec id
  kCudaRecordGraphCreated = 2,      // a = graph id
  kCudaRecordGraphCloned = 3,       // a = graph id, b = original graph id
  kCudaRecordGraphExecCreated = 4,  // a = graph id, b = graph exec id
};

// Head slot only. RecordHeader.aux16 = CudaRecordKind.
struct CudaRecord {
  RecordHeader h;
  uint32_t a;
  uint32_t b;
};
static_assert(sizeof(CudaRecord) <= kSlotBytes);

// Hot path (inside CUPTI callbacks): one clock read and one slot in this thread's ring. The caller
// has checked IsEnabled(kSourceCuda). False when dropped (counted by the ring).
inline bool WriteCudaRecord(CudaRecordKind kind, uint32_t a, uint32_t b) {
  RecordSpan span;
  if (!BeginRecord(sizeof(CudaRecord), &span)) return false;
  CudaRecord r;
  r.h.type = kRecordCudaApi;
  r.h.ext_slots = 0;
  r.h.aux16 = kind;
  r.h.aux32 = 0;
  r.h.ts_ns = StreamNow();
  r.a = a;
  r.b = b;
  RecordCopy(span, 0, &r, sizeof(r));
  CommitRecord(span);
  return true;
}

// Drain thread: CudaGraphLaunch / CudaGraphEvent messages in the thread's chunk.
void DecodeCudaRecord(const RecordView& view, ChunkBuilder* chunk);

}  // namespace gt::cupti
