#include "inject/cupti/cuda_record.h"

#include <cstring>

#include "inject/cupti/cuda_fields.h"

namespace gt::cupti {

void DecodeCudaRecord(const RecordView& view, ChunkBuilder* chunk) {
  if (view.size_bytes < sizeof(CudaRecord)) return;
  CudaRecord r;
  std::memcpy(&r, view.bytes, sizeof(r));
  ProtoWriter& w = chunk->body();
  switch (r.h.aux16) {
    case kCudaRecordGraphLaunch: {
      namespace f = field::cuda_graph_launch;
      w.BeginNested(field::chunk::kCudaGraphLaunches);
      w.SInt(f::kTsDeltaNs, chunk->DeltaNs(field::chunk::kCudaGraphLaunches, r.h.ts_ns));
      w.Varint(f::kCorrelationId, r.a);
      w.Varint(f::kGraphExecId, r.b);
      w.EndNested();
      break;
    }
    case kCudaRecordGraphCreated:
    case kCudaRecordGraphCloned:
    case kCudaRecordGraphExecCreated: {
      namespace f = field::cuda_graph_event;
      uint32_t kind = r.h.aux16 == kCudaRecordGraphCreated  ? field::enums::kGraphCreated
                      : r.h.aux16 == kCudaRecordGraphCloned ? field::enums::kGraphCloned
                                                            : field::enums::kGraphExecCreated;
      w.BeginNested(field::chunk::kCudaGraphEvents);
      w.Varint(f::kKind, kind);
      w.SInt(f::kTsDeltaNs, chunk->DeltaNs(field::chunk::kCudaGraphEvents, r.h.ts_ns));
      w.Varint(f::kGraphId, r.a);
      if (kind == field::enums::kGraphCloned) w.Varint(f::kOriginalGraphId, r.b);
      if (kind == field::enums::kGraphExecCreated) w.Varint(f::kGraphExecId, r.b);
      w.EndNested();
      break;
    }
    default:
      break;
  }
}

}  // namespace gt::cupti
