// NcclRegistry: the NCCL plugin's process-wide state that outlives single calls: the communicators
// (one per plugin `init`), the event pools, and the emitter that announces both in the stream.
//
// Threads: RegisterComm runs in plugin `init` (slow path, any NCCL thread, serialized by a mutex);
// CommIndexValid and Pools() on every hot-path call (lock-free reads of published data);
// EmitNcclRegistry on the drain thread.
#pragma once

#include <cstddef>
#include <cstdint>

#include "inject/nccl/nccl_pool.h"

namespace gt {
class ChunkBuilder;
}

namespace gt::nccl {

inline constexpr uint32_t kMaxComms = 4096;  // plugin contexts per process (indices 1..kMaxComms)
inline constexpr size_t kMaxCommNameBytes = 255;

struct CommInfo {
  uint32_t index = 0;
  uint64_t hash = 0;
  char name[kMaxCommNameBytes + 1] = {};
  bool name_truncated = false;
  int32_t n_nodes = 0;
  int32_t n_ranks = 0;
  int32_t rank = 0;
  uint32_t plugin_version = 0;
  uint64_t init_ts_ns = 0;
  uint32_t init_tid = 0;
  uint32_t activation_mask = 0;
};

// Copies `info` (the caller fills everything but `index`, with a NUL-terminated, already bounded
// name) and publishes it. Returns the new index (> 0), or 0 when kMaxComms communicators exist.
uint32_t RegisterComm(const CommInfo& info);
// Hot path: whether `index` names a published communicator.
bool CommIndexValid(uint32_t index);
uint32_t CommCount();

// The process's event pools. Pools() gives the (not yet created) object to the first init, which
// creates them and then publishes them (release); the emitter only reads published pools.
EventPools& Pools();
void PublishPools(EventPools* pools);

// Drain thread: communicators published since the last call, pool sizes (once per session) and
// pool-exhaustion drops (NcclPoolStats, and a DropReport with source NCCL_POOL).
void EmitNcclRegistry(ChunkBuilder* chunk, uint64_t session_id);

}  // namespace gt::nccl
