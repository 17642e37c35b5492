#include "collector/ring_pool.h"

#include <sys/mman.h>

#include <cstring>
#include <new>

#include "collector/clock.h"

namespace gt {
namespace {

size_t RoundDownPow2(size_t v) {
  size_t p = 1;
  while (p * 2 <= v) p *= 2;
  return p;
}

int Log2(uint64_t v) {
  int n = 0;
  while (v > 1) {
    v >>= 1;
    ++n;
  }
  return n;
}

}  // namespace

RingPool::~RingPool() {
  if (arena_ != nullptr) munmap(arena_, arena_bytes_);
  if (growth_ != nullptr) munmap(growth_, growth_bytes_);
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
  // The growth region: address space only (MAP_NORESERVE, untouched until used). Twice the budget,
  // so blocks given back in one size and wanted in another rarely exhaust it; when they do, a ring
  // simply does not grow.
  budget_bytes_ = total_bytes < ring_bytes_ ? ring_bytes_ : total_bytes;
  max_ring_bytes_ = RoundDownPow2(budget_bytes_ / 2);
  growth_reserve_bytes_ = ring_bytes_ * kGrowthReserveRings < budget_bytes_ / 4 ? ring_bytes_ * kGrowthReserveRings : budget_bytes_ / 4;
  if (max_ring_bytes_ > (size_t{1} << 31)) max_ring_bytes_ = size_t{1} << 31;
  free_blocks_.assign(64, {});
  growth_used_ = 0;
  if (max_ring_bytes_ > ring_bytes_) {
    growth_bytes_ = 2 * budget_bytes_;
    void* g = mmap(nullptr, growth_bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    growth_ = g == MAP_FAILED ? nullptr : static_cast<char*>(g);  // no region: rings do not grow
    if (growth_ == nullptr) growth_bytes_ = 0;
  }
  committed_bytes_.store(0, std::memory_order_relaxed);
  // The spare: 16 initial rings' worth (an eighth of the budget at most), so a burst that starts
  // while the drain thread waits for a CPU has ~16x more room before it drops (measured on a loaded
  // 2-core machine: the first offer can come 30+ ms late; bench/results/2026-11-25-nvtx-burst.md).
  size_t spare_bytes = RoundDownPow2(ring_bytes_ * 16 < budget_bytes_ / 8 ? ring_bytes_ * 16 : budget_bytes_ / 8);
  spare_slots_ = growth_ != nullptr && spare_bytes > ring_bytes_ ? static_cast<uint32_t>(spare_bytes / kSlotBytes) : 0;
  spare_.store(nullptr, std::memory_order_relaxed);
  InitHeaders();
  RefillSpare();  // now, on the thread that starts the session: the first burst may come at once
  return true;
}

void RingPool::InitHeaders() {
  uint32_t slots_per_ring = static_cast<uint32_t>(ring_bytes_ / kSlotBytes);
  for (uint32_t i = 0; i < count_; ++i) {
    ThreadBuffer* b = new (&headers_[i]) ThreadBuffer();
    b->index = i;
    b->ring.Init(storage_ + static_cast<size_t>(i) * slots_per_ring, slots_per_ring, &spare_, spare_slots_);
  }
}

void RingPool::RefillSpare() {
  if (spare_slots_ == 0 || spare_.load(std::memory_order_acquire) != nullptr) return;
  if (RingSegment* s = AllocSegment(spare_slots_)) spare_.store(s, std::memory_order_release);
}

ThreadBuffer* RingPool::Acquire(uint32_t tid, const char* thread_name) {
  // The thread's initial ring counts against the budget (grown rings of other threads may hold it).
  uint64_t committed = committed_bytes_.load(std::memory_order_relaxed);
  do {
    if (committed + ring_bytes_ > budget_bytes_) return nullptr;
  } while (!committed_bytes_.compare_exchange_weak(committed, committed + ring_bytes_, std::memory_order_relaxed));
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
  committed_bytes_.fetch_sub(ring_bytes_, std::memory_order_relaxed);
  return nullptr;
}

void RingPool::Free(ThreadBuffer* buffer) {
  RingSegment* grown = nullptr;
  RingSegment* offer = nullptr;
  ThreadRing& ring = buffer->ring;
  uint64_t pos = ring.ConsumerTail();
  while (RingSegment* old = ring.ConsumerAdvance(pos)) FreeSegment(old);
  ring.ResetToInitial(pos, &grown, &offer);
  if (grown != nullptr) FreeSegment(grown);
  if (offer != nullptr) FreeSegment(offer);
  // The initial ring's pages go back too: what is resident stays within what is counted (one
  // syscall per thread exit, on the drain thread).
  ::madvise(storage_ + static_cast<size_t>(buffer->index) * (ring_bytes_ / kSlotBytes), ring_bytes_, MADV_DONTNEED);
  committed_bytes_.fetch_sub(ring_bytes_, std::memory_order_relaxed);
  bool was_retired = buffer->state.load(std::memory_order_relaxed) == static_cast<uint32_t>(BufferState::kRetired);
  buffer->state.store(static_cast<uint32_t>(BufferState::kFree), std::memory_order_release);
  if (was_retired) retired_.fetch_sub(1, std::memory_order_relaxed);
}

RingSegment* RingPool::AllocSegment(uint32_t slots) {
  size_t bytes = static_cast<size_t>(slots) * kSlotBytes;
  if (growth_ == nullptr || bytes > max_ring_bytes_ || (bytes & (bytes - 1)) != 0) return nullptr;
  // Growth leaves room for the initial rings of threads yet to start: without it the first threads
  // of 64 that start together grew into the whole budget within milliseconds and the later ones
  // found none (58 % of their records lost as "no free thread buffer").
  uint64_t committed = committed_bytes_.load(std::memory_order_relaxed);
  do {
    if (committed + bytes + growth_reserve_bytes_ > budget_bytes_) return nullptr;
  } while (!committed_bytes_.compare_exchange_weak(committed, committed + bytes, std::memory_order_relaxed));
  std::vector<FreeBlock>& list = free_blocks_[static_cast<size_t>(Log2(slots))];
  Slot* block = nullptr;
  if (!list.empty()) {
    block = list.back().slots;  // the newest: most likely still resident
    list.pop_back();
  } else if (growth_used_ + bytes <= growth_bytes_) {
    // Blocks are aligned to their size inside the region (every block is a power of two and the
    // bump pointer only moves by such blocks after rounding up).
    size_t at = (growth_used_ + bytes - 1) & ~(bytes - 1);
    if (at + bytes <= growth_bytes_) {
      block = reinterpret_cast<Slot*>(growth_ + at);
      growth_used_ = at + bytes;
    }
  }
  if (block == nullptr) {
    committed_bytes_.fetch_sub(bytes, std::memory_order_relaxed);
    return nullptr;
  }
  auto* s = new (std::nothrow) RingSegment();
  if (s == nullptr) {
    list.push_back({block, NowNs(), true});
    committed_bytes_.fetch_sub(bytes, std::memory_order_relaxed);
    return nullptr;
  }
  s->slots = block;
  s->mask = slots - 1;
  s->grown = true;
  return s;
}

void RingPool::FreeSegment(RingSegment* segment) {
  if (segment == nullptr || !segment->grown) return;  // initial segments belong to their buffer
  size_t bytes = (static_cast<size_t>(segment->mask) + 1) * kSlotBytes;
  // Pages stay resident for a while (ReleaseIdleBlocks): the next segment of this size reuses them
  // without a fault per page.
  free_blocks_[static_cast<size_t>(Log2(segment->mask + 1))].push_back({segment->slots, NowNs(), true});
  committed_bytes_.fetch_sub(bytes, std::memory_order_relaxed);
  delete segment;
}

void RingPool::ReleaseIdleBlocks(uint64_t now_ns) {
  for (std::vector<FreeBlock>& list : free_blocks_) {
    for (FreeBlock& b : list) {
      if (!b.resident || now_ns - b.freed_ns < kKeepFreeBlockNs) continue;
      size_t bytes = (size_t{1} << (&list - free_blocks_.data())) * kSlotBytes;
      ::madvise(b.slots, bytes, MADV_DONTNEED);  // the memory goes back to the system now
      b.resident = false;
    }
  }
}

void RingPool::ResetAfterFork() {
  spare_.store(nullptr, std::memory_order_relaxed);  // forgotten with the other grown segments
  InitHeaders();
  next_serial_.store(1, std::memory_order_relaxed);
  retired_.store(0, std::memory_order_relaxed);
  // The parent's drain thread may have been inside these lists at fork: leak them, start empty.
  // Grown segments the parent's rings held are forgotten (their pages are released here).
  new (&free_blocks_) std::vector<std::vector<FreeBlock>>();
  free_blocks_.assign(64, {});
  if (growth_ != nullptr) ::madvise(growth_, growth_bytes_, MADV_DONTNEED);
  growth_used_ = 0;
  committed_bytes_.store(0, std::memory_order_relaxed);
}

}  // namespace gt
