// RingPool: the bounded memory of all per-thread rings, one mmap'ed arena carved into a fixed
// number of ThreadBuffers at session start. An application thread takes a free buffer on its first
// record (lock-free CAS, no allocation) and gives it back when it exits; the drain thread drains
// every owned or retired buffer and frees retired ones once empty. When every buffer is taken, the
// thread records nothing and the loss is counted (DROP_SOURCE_NO_BUFFER).
//
// Pages of the arena are reserved, not committed: a thread that records little touches little.
//
// Growth (issue 20): GTRACE_BUFFER_MB is a budget, not a carving. Every owned buffer counts its
// initial ring against it; the drain thread may give a thread that keeps crossing its high-water
// mark a larger segment (ThreadRing::Offer) from a separate growth region, while the budget allows
// and up to half of it per ring. Grown segments go back (and their pages to the kernel) when the
// consumer leaves them or the thread exits. A thread that starts while the budget is taken gets no
// buffer (counted as DROP_SOURCE_NO_BUFFER) until grown rings are given back.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "collector/thread_ring.h"

namespace gt {

enum class BufferState : uint32_t { kFree = 0, kOwned = 1, kRetired = 2 };

// One thread's buffer: the ring plus state the owning thread's hooks may keep (depth counters).
struct alignas(64) ThreadBuffer {
  std::atomic<uint32_t> state{0};  // BufferState
  uint32_t tid = 0;                // OS thread id of the owner
  uint64_t serial = 0;             // unique per owner for this process (stream sequence id)
  char name_at_acquire[16] = {};   // comm when the thread took the buffer
  uint64_t dropped_base = 0;       // ring.dropped() when this owner took the buffer
  uint32_t index = 0;              // position in the pool (fixed): modules keep per-thread state by it
  ThreadRing ring;
  // Producer-private: 1 from BeginRecordIn until CommitRecord/AbandonRecord. A signal handler that
  // records on this thread meanwhile drops (counted) instead of writing over the open record.
  uint8_t writing = 0;
  // Producer-private scratch for the owning thread's hooks (collector does not interpret it).
  static constexpr int kScratchWords = 64;
  uint64_t scratch_counter = 0;
  int32_t scratch[kScratchWords] = {};
};

class RingPool {
 public:
  RingPool() = default;
  RingPool(const RingPool&) = delete;
  RingPool& operator=(const RingPool&) = delete;
  ~RingPool();

  // Carves `total_bytes` into rings of `ring_bytes` (rounded to powers of two slots). False when
  // the arena cannot be mapped.
  bool Init(size_t total_bytes, size_t ring_bytes);
  uint32_t count() const { return count_; }
  size_t ring_bytes() const { return ring_bytes_; }
  size_t budget_bytes() const { return budget_bytes_; }
  // Bytes of ring storage in use now: initial rings of owned buffers plus grown segments.
  uint64_t committed_bytes() const { return committed_bytes_.load(std::memory_order_relaxed); }
  // Largest segment one ring may grow to (bytes).
  size_t max_ring_bytes() const { return max_ring_bytes_; }

  // Application thread, slow path: take a free buffer. nullptr when none is free.
  ThreadBuffer* Acquire(uint32_t tid, const char* thread_name);
  // Application thread at exit: the drain thread drains and frees it.
  void Retire(ThreadBuffer* buffer) {
    retired_.fetch_add(1, std::memory_order_relaxed);
    buffer->state.store(static_cast<uint32_t>(BufferState::kRetired), std::memory_order_release);
  }
  // Buffers retired and not yet freed: a new thread that finds none free may wait for them
  // (AcquireWhenNoneFree), since the drain thread frees them within a pass.
  uint32_t retired() const { return retired_.load(std::memory_order_relaxed); }

  // Drain thread.
  ThreadBuffer* at(uint32_t i) { return &headers_[i]; }
  // The buffer is retired and drained (head == tail): back to its initial ring, grown segments
  // freed, then free for the next thread.
  void Free(ThreadBuffer* buffer);
  // A segment of `slots` (power of two) from the growth region, counted against the budget;
  // nullptr when the budget, the per-ring limit or the region does not allow it.
  RingSegment* AllocSegment(uint32_t slots);
  // Drain thread, every cycle: keeps the one shared spare segment filled (budget permitting). A
  // ring that runs full before the drain thread made it an offer of its own moves to it.
  void RefillSpare();
  // A segment the consumer left behind: grown ones go back to the growth region. Their pages stay
  // resident for kKeepFreeBlockNs, so a ring that grows again soon (burst after burst) reuses
  // faulted-in memory; ReleaseIdleBlocks gives them back after that.
  void FreeSegment(RingSegment* segment);
  // Drain thread, every cycle: gives back the pages of blocks free for longer than
  // kKeepFreeBlockNs. (Faulting segments in here, ahead of their producer, was tried: it kept the
  // drain thread from draining during bursts and lost records; the producer faults them in.)
  void ReleaseIdleBlocks(uint64_t now_ns);
  static constexpr uint64_t kKeepFreeBlockNs = 1000000000;
  // Grown segments leave this many initial rings' worth of the budget (at most a quarter of it) to
  // threads that have not started yet.
  static constexpr size_t kGrowthReserveRings = 64;

  // Child after fork: no other thread exists, so every buffer is free again; contents discarded.
  void ResetAfterFork();

 private:
  void InitHeaders();

  void* arena_ = nullptr;
  size_t arena_bytes_ = 0;
  ThreadBuffer* headers_ = nullptr;
  Slot* storage_ = nullptr;
  uint32_t count_ = 0;
  size_t ring_bytes_ = 0;
  std::atomic<uint64_t> next_serial_{1};
  std::atomic<uint32_t> retired_{0};
  // Growth region (drain thread only, except committed_bytes_ which Acquire also moves).
  size_t budget_bytes_ = 0;
  size_t max_ring_bytes_ = 0;
  size_t growth_reserve_bytes_ = 0;
  char* growth_ = nullptr;
  size_t growth_bytes_ = 0;
  size_t growth_used_ = 0;                      // bump pointer
  struct FreeBlock {
    Slot* slots;
    uint64_t freed_ns;  // NowNs() when given back
    bool resident;      // its pages not yet given back to the system
  };
  std::vector<std::vector<FreeBlock>> free_blocks_;  // per log2(slots): blocks given back, newest last
  std::atomic<uint64_t> committed_bytes_{0};
  std::atomic<RingSegment*> spare_{nullptr};
  uint32_t spare_slots_ = 0;
};

}  // namespace gt
