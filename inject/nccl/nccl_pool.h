// EventPools: the preallocated, bounded event handles the NCCL plugin gives NCCL. One pool per
// event type, created once per process on the slow path of the first plugin `init` (sized by
// GTRACE_NCCL_POOL_EVENTS, rounded up to a power of two; never freed: NCCL may hold handles until
// it exits). A handle is a pointer to an EventSlot.
//
// Threads: Acquire runs in startEvent and Release in stopEvent, on NCCL's application, host-callback
// and proxy threads concurrently; both are lock-free and allocation-free. A slot is taken with a
// CAS on `busy`, starting at a per-type cursor that moves forward on every acquire (round robin),
// so a freed slot is reused only after the cursor went once around the pool: children that name a
// stopped parent (a kernel channel starts after its collective's "enqueued" stop) still read the
// parent's id as long as fewer than `capacity` events of the parent's type started in between.
// When the kProbe slots after the cursor are all in use, Acquire returns nullptr (NCCL then does
// not track the event) and counts the drop.
#pragma once

#include <atomic>
#include <cstdint>

#include "inject/nccl/nccl_abi.h"

namespace gt::nccl {

enum SlotFlag : uint32_t {
  kSlotForeign = 1u << 0,  // a proxy op of another process (PXN): its context and parent are not ours
};

// Every field is atomic (relaxed): a child may read a parent slot that a later owner is refilling
// (only after the cursor went around the pool; the child then reads the new owner's id).
struct alignas(32) EventSlot {
  std::atomic<uint32_t> busy;      // 1 between startEvent and stopEvent
  std::atomic<uint32_t> meta;      // type index (bits 0-7), SlotFlag (8-15), comm index (16-31)
  std::atomic<uint64_t> id;        // event id of the current owner
  std::atomic<uint64_t> stash;     // KernelCh: GPU stop timer from the KernelChStop state
  uint64_t reserved;

  uint32_t type_index() const { return meta.load(std::memory_order_relaxed) & 0xff; }
  uint32_t flags() const { return (meta.load(std::memory_order_relaxed) >> 8) & 0xff; }
  uint16_t comm_index() const { return static_cast<uint16_t>(meta.load(std::memory_order_relaxed) >> 16); }
};
static_assert(sizeof(EventSlot) == 32);

class EventPools {
 public:
  EventPools() = default;
  EventPools(const EventPools&) = delete;
  EventPools& operator=(const EventPools&) = delete;
  // The process's pools live in raw static storage and are never destroyed (NCCL may hold handles
  // until exit); this frees the pools of a local object (tests).
  ~EventPools() { delete[] slots_; }

  static constexpr uint32_t kProbe = 8;
  static constexpr uint32_t kBigPoolFactor = 4;  // kernel-channel and proxy pools

  // Slow path, once: pools for the types in `tracked_mask`. False when memory cannot be had.
  bool Create(uint32_t tracked_mask, uint32_t pool_events);
  bool created() const { return slots_ != nullptr; }

  // Hot path. nullptr (and a counted drop) when the pool of `type_index` is exhausted or absent.
  EventSlot* Acquire(uint32_t type_index, uint16_t comm_index, uint32_t flags) {
    Pool& p = pools_[type_index];
    if (p.capacity == 0) return nullptr;
    uint64_t i = p.cursor.fetch_add(1, std::memory_order_relaxed);
    uint32_t probes = p.capacity < kProbe ? p.capacity : kProbe;
    for (uint32_t k = 0; k < probes; ++k) {
      EventSlot* s = &p.first[(i + k) & (p.capacity - 1)];
      uint32_t expected = 0;
      if (s->busy.load(std::memory_order_relaxed) == 0 &&
          s->busy.compare_exchange_strong(expected, 1, std::memory_order_acquire, std::memory_order_relaxed)) {
        s->meta.store((type_index & 0xff) | ((flags & 0xff) << 8) | (uint32_t{comm_index} << 16),
                      std::memory_order_relaxed);
        s->stash.store(0, std::memory_order_relaxed);
        s->id.store(((i + 1) << 5) | type_index, std::memory_order_relaxed);
        return s;
      }
    }
    p.dropped.fetch_add(1, std::memory_order_relaxed);
    return nullptr;
  }
  static void Release(EventSlot* s) { s->busy.store(0, std::memory_order_release); }

  // Whether `p` is one of our slots (range and alignment): never dereference a handle or parent
  // object NCCL gives us before this says yes.
  bool Owns(const void* p) const {
    auto a = reinterpret_cast<uintptr_t>(p);
    auto b = reinterpret_cast<uintptr_t>(slots_);
    return slots_ != nullptr && a >= b && a < b + total_ * sizeof(EventSlot) && (a - b) % sizeof(EventSlot) == 0;
  }

  uint32_t capacity(uint32_t type_index) const { return pools_[type_index].capacity; }
  uint64_t dropped(uint32_t type_index) const { return pools_[type_index].dropped.load(std::memory_order_relaxed); }

 private:
  struct alignas(64) Pool {
    std::atomic<uint64_t> cursor{0};
    std::atomic<uint64_t> dropped{0};
    EventSlot* first = nullptr;
    uint32_t capacity = 0;  // power of two, or 0 when the type is not tracked
  };
  Pool pools_[abi::kEventTypeCount];
  EventSlot* slots_ = nullptr;
  uint64_t total_ = 0;
};

}  // namespace gt::nccl
