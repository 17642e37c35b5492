#include "inject/nccl/nccl_registry.h"

#include <pthread.h>

#include <atomic>
#include <new>

#include "collector/chunk_builder.h"
#include "collector/clock.h"
#include "collector/schema_fields.h"
#include "inject/nccl/nccl_fields.h"

namespace gt::nccl {
namespace {

// Static storage, zero-initialized: no constructor runs at load time.
std::atomic<CommInfo*> g_comms[kMaxComms + 1];
std::atomic<uint32_t> g_comm_count{0};
pthread_mutex_t g_register_mutex = PTHREAD_MUTEX_INITIALIZER;
alignas(EventPools) unsigned char g_pools_storage[sizeof(EventPools)];
std::atomic<EventPools*> g_pools{nullptr};
std::atomic<EventPools*> g_published_pools{nullptr};
pthread_once_t g_pools_once = PTHREAD_ONCE_INIT;

// Drain-thread state.
uint64_t g_emitted_session = 0;
uint32_t g_comms_emitted = 0;
bool g_pool_sizes_emitted = false;
uint64_t g_drops_reported[abi::kEventTypeCount] = {};

void MakePools() { g_pools.store(new (g_pools_storage) EventPools(), std::memory_order_release); }

}  // namespace

uint32_t RegisterComm(const CommInfo& info) {
  pthread_mutex_lock(&g_register_mutex);
  uint32_t n = g_comm_count.load(std::memory_order_relaxed);
  uint32_t index = 0;
  if (n < kMaxComms) {
    auto* copy = new (std::nothrow) CommInfo(info);
    if (copy != nullptr) {
      index = n + 1;
      copy->index = index;
      g_comms[index].store(copy, std::memory_order_release);
      g_comm_count.store(index, std::memory_order_release);
    }
  }
  pthread_mutex_unlock(&g_register_mutex);
  return index;
}

bool CommIndexValid(uint32_t index) {
  return index != 0 && index <= g_comm_count.load(std::memory_order_acquire);
}

uint32_t CommCount() { return g_comm_count.load(std::memory_order_acquire); }

void PublishPools(EventPools* pools) { g_published_pools.store(pools, std::memory_order_release); }

EventPools& Pools() {
  pthread_once(&g_pools_once, MakePools);
  return *g_pools.load(std::memory_order_acquire);
}

void EmitNcclRegistry(ChunkBuilder* chunk, uint64_t session_id) {
  if (session_id != g_emitted_session) {
    g_emitted_session = session_id;
    g_comms_emitted = 0;
    g_pool_sizes_emitted = false;
  }
  ProtoWriter& w = chunk->body();
  uint32_t n = g_comm_count.load(std::memory_order_acquire);
  for (; g_comms_emitted < n; ++g_comms_emitted) {
    const CommInfo* c = g_comms[g_comms_emitted + 1].load(std::memory_order_acquire);
    if (c == nullptr) break;
    namespace f = field::comm;
    w.BeginNested(field::chunk::kNcclComms);
    w.Varint(f::kCommIndex, c->index);
    w.Varint(f::kCommHash, c->hash);
    w.StringIfNonEmpty(f::kName, c->name);
    w.Int(f::kNNodes, c->n_nodes);
    w.Int(f::kNRanks, c->n_ranks);
    w.Int(f::kRank, c->rank);
    w.Varint(f::kPluginVersion, c->plugin_version);
    w.Varint(f::kInitTsNs, c->init_ts_ns);
    w.Varint(f::kInitTid, c->init_tid);
    w.Varint(f::kActivationMask, c->activation_mask);
    if (c->name_truncated) w.Bool(f::kNameTruncated, true);
    w.EndNested();
  }
  EventPools* pools = g_published_pools.load(std::memory_order_acquire);
  if (pools == nullptr || !pools->created()) return;
  uint64_t now = StreamNow();  // written to the stream only
  uint64_t new_drops = 0;
  for (uint32_t t = 0; t < abi::kEventTypeCount; ++t) {
    uint32_t capacity = pools->capacity(t);
    if (capacity == 0) continue;
    uint64_t dropped = pools->dropped(t);
    uint64_t delta = dropped - g_drops_reported[t];
    if (delta == 0 && g_pool_sizes_emitted) continue;
    namespace f = field::pool_stats;
    w.BeginNested(field::chunk::kNcclPools);
    w.Varint(f::kType, 1u << t);
    w.Varint(f::kCapacityEvents, capacity);
    w.VarintIfNonZero(f::kDroppedEvents, delta);
    w.Varint(f::kTsNs, now);
    w.EndNested();
    g_drops_reported[t] = dropped;
    new_drops += delta;
  }
  g_pool_sizes_emitted = true;
  if (new_drops > 0) {
    w.BeginNested(gt::field::chunk::kDrops);
    w.Varint(gt::field::drop_report::kSource, gt::field::enums::kDropNcclPool);
    w.Varint(gt::field::drop_report::kDroppedRecords, new_drops);
    w.Varint(gt::field::drop_report::kTsNs, now);
    w.EndNested();
  }
}

}  // namespace gt::nccl
