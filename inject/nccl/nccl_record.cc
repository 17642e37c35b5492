#include "inject/nccl/nccl_record.h"

#include <cstring>
#include <string>

#include "inject/nccl/nccl_abi.h"
#include "inject/nccl/nccl_fields.h"

namespace gt::nccl {
namespace {

namespace f = field::event;

// NCCL's names are ASCII; anything else becomes '?' so the stream's strings stay valid UTF-8.
uint64_t InternCString(ChunkBuilder* chunk, const char* s) {
  if (s == nullptr) return 0;
  size_t n = strnlen(s, kMaxNcclStringBytes);
  std::string text(s, n);
  for (char& c : text) {
    if (static_cast<unsigned char>(c) >= 0x80 || static_cast<unsigned char>(c) < 0x20) c = '?';
  }
  return chunk->Intern(text);
}

void WriteHead(ProtoWriter& w, ChunkBuilder* chunk, uint32_t kind, const RecordHeader& h, uint64_t id) {
  w.Varint(f::kKind, kind);
  w.SInt(f::kTsDeltaNs, chunk->DeltaNs(field::chunk::kNccl, h.ts_ns));
  w.VarintIfNonZero(f::kEventId, id);
  uint32_t type_index = h.aux16 >> 8;
  if (kind != field::kind::kFinalize && type_index < abi::kEventTypeCount) w.Varint(f::kType, 1u << type_index);
  w.VarintIfNonZero(f::kCommIndex, h.aux32);
}

void DecodeSmallStart(const SmallStart& r, ChunkBuilder* chunk) {
  ProtoWriter& w = chunk->body();
  uint32_t bit = 1u << (r.p.h.aux16 >> 8);
  w.BeginNested(field::chunk::kNccl);
  WriteHead(w, chunk, field::kind::kStart, r.p.h, r.p.id);
  w.VarintIfNonZero(f::kParentId, r.p.parent_id);
  w.Int(f::kRank, r.p.rank);
  switch (bit) {
    case abi::kKernelCh:
      w.Varint(f::kChannelId, r.u32);
      w.VarintIfNonZero(f::kGpuTimerNs, r.u64);
      break;
    case abi::kProxyOp:
      w.Int(f::kPeer, r.i0);
      w.Int(f::kNSteps, r.i1);
      w.Int(f::kChunkSizeBytes, r.i2);
      w.Varint(f::kProxyPid, r.u32);
      w.Varint(f::kChannelId, static_cast<uint32_t>(r.u64));
      if (r.p.flags & kRecIsSend) w.Bool(f::kIsSend, true);
      break;
    case abi::kProxyStep:
      w.Int(f::kStep, r.i0);
      break;
    case abi::kGroupApi:
      w.Int(f::kGroupDepth, r.i0);
      if (r.p.flags & kRecGraphCaptured) w.Bool(f::kGraphCaptured, true);
      break;
    case abi::kKernelLaunch:
      w.VarintIfNonZero(f::kStream, r.u64);
      break;
    case abi::kNetPlugin:
      w.Int(f::kNetPluginId, static_cast<int64_t>(r.u64));
      break;
    case abi::kCeSync:
      w.Int(f::kNRanks, r.i0);
      if (r.p.flags & kRecSyncComplete) w.Bool(f::kSyncComplete, true);
      break;
    case abi::kCeBatch:
      w.Varint(f::kTotalBytes, r.u64);
      w.Varint(f::kCount, static_cast<uint64_t>(static_cast<int64_t>(r.i0)));
      if (r.p.flags & kRecIntraBatchSync) w.Bool(f::kIntraBatchSync, true);
      break;
    default:
      break;
  }
  w.EndNested();
}

void DecodeWideStart(const WideStart& r, ChunkBuilder* chunk) {
  uint32_t bit = 1u << (r.p.h.aux16 >> 8);
  // Strings first: their definitions cannot go inside the event message.
  uint64_t func = InternCString(chunk, r.func);
  uint64_t datatype = InternCString(chunk, r.datatype);
  uint64_t algo = bit == abi::kColl ? InternCString(chunk, r.algo) : 0;
  uint64_t proto = bit == abi::kColl ? InternCString(chunk, r.proto) : 0;
  uint64_t sync = bit == abi::kCeColl ? InternCString(chunk, r.proto) : 0;
  ProtoWriter& w = chunk->body();
  w.BeginNested(field::chunk::kNccl);
  WriteHead(w, chunk, field::kind::kStart, r.p.h, r.p.id);
  w.VarintIfNonZero(f::kParentId, r.p.parent_id);
  w.VarintIfNonZero(f::kGroupId, r.group_id);
  w.Int(f::kRank, r.p.rank);
  w.VarintIfNonZero(f::kFuncStringId, func);
  w.VarintIfNonZero(f::kDatatypeStringId, datatype);
  w.VarintIfNonZero(f::kAlgoStringId, algo);
  w.VarintIfNonZero(f::kProtoStringId, proto);
  w.Varint(f::kCount, r.count);
  switch (bit) {
    case abi::kColl:
      w.Varint(f::kSeqNumber, r.seq_number);
      w.Int(f::kRoot, r.root);
      w.Varint(f::kNChannels, r.n_channels);
      w.Varint(f::kNWarps, r.n_warps);
      break;
    case abi::kP2p:
      w.Int(f::kPeer, r.root);
      w.Varint(f::kNChannels, r.n_channels);
      break;
    case abi::kCollApi:
      w.Int(f::kRoot, r.root);
      w.VarintIfNonZero(f::kStream, r.stream);
      if (r.p.flags & kRecGraphCaptured) w.Bool(f::kGraphCaptured, true);
      break;
    case abi::kP2pApi:
      w.VarintIfNonZero(f::kStream, r.stream);
      if (r.p.flags & kRecGraphCaptured) w.Bool(f::kGraphCaptured, true);
      break;
    case abi::kCeColl:
      w.Varint(f::kSeqNumber, r.seq_number);
      w.Int(f::kRoot, r.root);
      w.VarintIfNonZero(f::kStream, r.stream);
      w.VarintIfNonZero(f::kSyncStrategyStringId, sync);
      if (r.p.flags & kRecIntraBatchSync) w.Bool(f::kIntraBatchSync, true);
      w.VarintIfNonZero(f::kBatchSize, r.batch_size);
      w.VarintIfNonZero(f::kNumBatches, r.num_batches);
      w.VarintIfNonZero(f::kCeSeqNumber, r.ce_seq_number);
      break;
    default:
      break;
  }
  w.EndNested();
}

}  // namespace

void DecodeRecord(const RecordView& view, ChunkBuilder* chunk) {
  if (view.size_bytes < sizeof(RecordHeader)) return;
  const RecordHeader& h = *view.header;
  uint8_t kind = static_cast<uint8_t>(h.aux16 & 0xff);
  uint32_t type_index = h.aux16 >> 8;
  if (type_index >= abi::kEventTypeCount && kind != kKindFinalize) return;  // malformed: skip
  ProtoWriter& w = chunk->body();
  switch (kind) {
    case kKindStart: {
      uint32_t bit = 1u << type_index;
      bool wide = (bit & (abi::kColl | abi::kP2p | abi::kCollApi | abi::kP2pApi | abi::kCeColl)) != 0;
      if (wide) {
        if (view.size_bytes < sizeof(WideStart)) return;
        WideStart r;
        std::memcpy(&r, view.bytes, sizeof(r));
        DecodeWideStart(r, chunk);
      } else {
        if (view.size_bytes < sizeof(SmallStart)) return;
        SmallStart r;
        std::memcpy(&r, view.bytes, sizeof(r));
        DecodeSmallStart(r, chunk);
      }
      break;
    }
    case kKindStop: {
      StopRecord r;
      std::memcpy(&r, view.bytes, sizeof(r));
      w.BeginNested(field::chunk::kNccl);
      WriteHead(w, chunk, field::kind::kStop, r.h, r.id);
      if (r.flags & kRecHasGpuTimer) w.Varint(f::kGpuTimerNs, r.gpu_timer_ns);
      w.EndNested();
      break;
    }
    case kKindState: {
      StateRecord r;
      std::memcpy(&r, view.bytes, sizeof(r));
      w.BeginNested(field::chunk::kNccl);
      WriteHead(w, chunk, field::kind::kState, r.h, r.id);
      w.Varint(f::kState, r.state);
      uint32_t bit = 1u << type_index;
      if (bit == abi::kProxyStep) w.VarintIfNonZero(f::kTransSizeBytes, r.value);
      if (bit == abi::kProxyCtrl) w.Int(f::kAppendedProxyOps, static_cast<int32_t>(r.value));
      w.EndNested();
      break;
    }
    case kKindFinalize: {
      w.BeginNested(field::chunk::kNccl);
      WriteHead(w, chunk, field::kind::kFinalize, h, 0);
      w.EndNested();
      break;
    }
    default:
      break;
  }
}

}  // namespace gt::nccl
