// The NCCL plugin's ring records: what startEvent / stopEvent / recordEventState / finalize write on
// NCCL's threads (fixed-size PODs, one or two 64-byte slots), and the decoder the drain thread runs
// to turn them into NcclEvent messages (schema/nccl.proto). Layouts are private to this module.
//
// RecordHeader: type = kRecordNccl; aux16 = kind (low byte) | event type index << 8; aux32 = comm
// index; ts_ns = host stream clock of the call. String fields are pointers to NCCL's static strings
// (func, datatype, algo, proto, CE sync strategy): the drain thread reads them (bounded) and interns.
#pragma once

#include <cstddef>
#include <cstdint>

#include "collector/session.h"

namespace gt::nccl {

enum RecordKind : uint8_t { kKindStart = 1, kKindStop = 2, kKindState = 3, kKindFinalize = 4 };

enum RecordFlag : uint32_t {
  kRecGraphCaptured = 1u << 0,
  kRecIsSend = 1u << 1,
  kRecSyncComplete = 1u << 2,    // CE_SYNC isComplete
  kRecIntraBatchSync = 1u << 3,  // CE_COLL intraBatchSync / CE_BATCH useIntraSync
  kRecHasGpuTimer = 1u << 4,     // STOP of KERNEL_CH: gpu_timer_ns is set
};

// Common head of every START record (40 bytes).
struct StartPrefix {
  RecordHeader h;
  uint64_t id;
  uint64_t parent_id;
  int32_t rank;
  uint32_t flags;  // RecordFlag
};
static_assert(sizeof(StartPrefix) == 40);

// One-slot starts. `a`..`d` meanings per type (START of):
//   KERNEL_CH     u64 = GPU timer (ns), u32 = channel
//   PROXY_OP      i0 = peer, i1 = n_steps, i2 = chunk size, u32 = originating pid, u64 = channel
//   PROXY_STEP    i0 = step
//   GROUP_API     i0 = group depth
//   KERNEL_LAUNCH u64 = stream
//   NET_PLUGIN    u64 = plugin id
//   CE_SYNC       i0 = n_ranks
//   CE_BATCH      u64 = total bytes, i0 = number of ops
//   GROUP, PROXY_CTRL: nothing more
struct SmallStart {
  StartPrefix p;
  uint64_t u64;
  int32_t i0;
  int32_t i1;
  int32_t i2;
  uint32_t u32;
};
static_assert(sizeof(SmallStart) == 64);

// Two-slot starts (COLL, P2P, COLL_API, P2P_API, CE_COLL).
struct WideStart {
  StartPrefix p;
  uint64_t group_id;   // COLL/P2P: the GROUP event (v5 parentGroup)
  uint64_t seq_number; // COLL/CE_COLL
  uint64_t count;
  uint64_t stream;     // COLL_API/P2P_API/CE_COLL
  const char* func;
  const char* datatype;
  const char* algo;           // COLL
  const char* proto;          // COLL; CE_COLL: sync strategy
  int32_t root;               // COLL/COLL_API/CE_COLL; P2P: peer
  uint32_t batch_size;        // CE_COLL
  uint32_t num_batches;       // CE_COLL
  uint32_t ce_seq_number;     // CE_COLL
  uint8_t n_channels;         // COLL/P2P
  uint8_t n_warps;            // COLL
  uint8_t pad[6];
};
static_assert(sizeof(WideStart) <= 2 * kSlotBytes);

struct StopRecord {
  RecordHeader h;
  uint64_t id;
  uint64_t gpu_timer_ns;  // KERNEL_CH with kRecHasGpuTimer
  uint32_t flags;
  uint32_t reserved;
};
static_assert(sizeof(StopRecord) <= kSlotBytes);

struct StateRecord {
  RecordHeader h;
  uint64_t id;
  uint64_t value;  // PROXY_STEP: trans size; PROXY_CTRL: appended ops
  uint32_t state;
  uint32_t reserved;
};
static_assert(sizeof(StateRecord) <= kSlotBytes);

// Drain thread: one record -> one NcclEvent in `chunk`.
void DecodeRecord(const RecordView& view, ChunkBuilder* chunk);

// Longest NCCL string the decoder reads (func, datatype, algo, proto names are short).
inline constexpr size_t kMaxNcclStringBytes = 64;

}  // namespace gt::nccl
