#include "collector/ring_pool.h"

#include <sys/mman.h>

#include <cstring>
#include <new>

namespace gt {
namespace {

size_t RoundDownPow2(size_t v) {
  size_t p = 1;
  while (p * 2 <= v) p *= 2;
  return p;
}

}  // namespace

RingPool::~RingPool() {
  if (arena_ != nullptr) munmap(arena_, arena_bytes_);
}

bool RingPool::Init(size_t total_bytes, size_t ring_bytes) {
  ring_bytes_ = RoundDownPow2(ring_bytes < 4 * kSlotBytes ? 4 * kSlotBytes : ring_bytes);
  if (ring_bytes_ > (size_t{1} << 31)) ring_bytes_ = size_t{1} << 31;
  size_t per_thread = ring_bytes_ + sizeof(ThreadBuffer);
  size_t n = total_bytes / per_thread;
  if (n == 0) n = 1;
  if (n > 4096) n = 4096;
  arena_bytes_ = n * per_thread + 4096;
  void* p = mmap(nullptr, arena_bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) {
    arena_ = nullptr;
    return false;
  }
  arena_ = p;
  count_ = static_cast<uint32_t>(n);
  // Rings first (page aligned), headers after them.
  storage_ = static_cast<Slot*>(arena_);
  headers_ = reinterpret_cast<ThreadBuffer*>(static_cast<char*>(arena_) + n * ring_bytes_);
  uint32_t slots_per_ring = static_cast<uint32_t>(ring_bytes_ / kSlotBytes);
  for (uint32_t i = 0; i < count_; ++i) {
    ThreadBuffer* b = new (&headers_[i]) ThreadBuffer();
    b->index = i;
    b->ring.Init(storage_ + static_cast<size_t>(i) * slots_per_ring, slots_per_ring);
  }
  return true;
}

ThreadBuffer* RingPool::Acquire(uint32_t tid, const char* thread_name) {
  for (uint32_t i = 0; i < count_; ++i) {
    ThreadBuffer* b = &headers_[i];
    uint32_t expected = static_cast<uint32_t>(BufferState::kFree);
    if (b->state.load(std::memory_order_relaxed) != expected) continue;
    if (!b->state.compare_exchange_strong(expected, static_cast<uint32_t>(BufferState::kOwned),
                                          std::memory_order_acquire, std::memory_order_relaxed)) {
      continue;
    }
    // The drain thread frees a buffer only after consuming everything, so head == tail here;
    // keep the positions (the consumer's view stays consistent) and reset only the owner data.
    b->tid = tid;
    b->serial = next_serial_.fetch_add(1, std::memory_order_relaxed);
    std::memset(b->name_at_acquire, 0, sizeof(b->name_at_acquire));
    if (thread_name != nullptr) std::strncpy(b->name_at_acquire, thread_name, sizeof(b->name_at_acquire) - 1);
    b->dropped_base = b->ring.dropped();
    b->scratch_counter = 0;
    std::memset(b->scratch, 0, sizeof(b->scratch));
    // Publish the owner fields before the drain thread can see the buffer as owned with data.
    b->state.store(static_cast<uint32_t>(BufferState::kOwned), std::memory_order_release);
    return b;
  }
  return nullptr;
}

void RingPool::ResetAfterFork() {
  uint32_t slots_per_ring = static_cast<uint32_t>(ring_bytes_ / kSlotBytes);
  for (uint32_t i = 0; i < count_; ++i) {
    ThreadBuffer* b = new (&headers_[i]) ThreadBuffer();
    b->index = i;
    b->ring.Init(storage_ + static_cast<size_t>(i) * slots_per_ring, slots_per_ring);
  }
  next_serial_.store(1, std::memory_order_relaxed);
}

}  // namespace gt
