// ThreadRing: a single-producer single-consumer ring of 64-byte slots. The producer is one
// application thread (inside an NVTX hook, CUDA callback or NCCL call); the consumer is the drain
// thread. The producer never blocks, allocates or makes a syscall on the record path: when the
// ring is full the record is dropped and counted (house style, hot path rule 5).
//
// A record is one head slot starting with a RecordHeader, followed by `ext_slots` slots of payload
// bytes. Records are contiguous in ring positions but may wrap around the end of the storage; the
// byte helpers below hide the wrap.
//
// Growth (issue 20). Positions (head, tail) only increase. The storage is a chain of segments: the
// ring starts in its initial segment (carved from the pool arena); the drain thread may *offer* a
// larger one (allocated by the drain thread, within GTRACE_BUFFER_MB). The producer takes an offer
// only on its slow paths — when a commit crosses the high-water mark, or when a record does not
// fit — by linking it after its current segment with the position it starts at. Records never span
// two segments. The consumer follows the links: once its tail reaches the next segment's start, the
// old segment is empty for good and the drain thread frees it. So the producer stays lock-free and
// allocation-free; only pointers and positions change hands, through release/acquire pairs.
//
// High-water wake. When a commit leaves the ring more than half full (by the producer's cached,
// possibly stale, view of the tail, re-read only then) and the ring has not poked the drain thread
// since the drain thread last emptied it, the producer pokes it once (the caller does the syscall).
// The drain thread clears the flag after draining the ring. So one syscall per crossing, never one
// per record.
//
// Fresh memory is expensive: on the build VM a first touch costs 2-3 us per 4 KiB page, ~50 ns per
// 64-byte record, more than writing the record. So a ring moves to new storage only when it must:
// at a crossing only to the drain thread's own offer (made when the ring was under pressure, see
// Drainer::MaybeGrow), to the pool's shared spare only when a record does not fit. A ring the
// drain thread keeps up with wraps over the pages it has already touched.
//
// Full ring (issue 20, 8 threads on 2 cores). When a reservation fails, the producer may wait for
// the drain thread (collector/full_ring_wait.h, out of line): it raises `waiting_`, sleeps on
// `release_seq_` and retries. The drain thread, seeing `waiting_`, releases space in small steps
// and bumps `release_seq_` after each release (the wake itself is a futex call made there).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace gt {

inline constexpr size_t kSlotBytes = 64;
struct alignas(kSlotBytes) Slot {
  unsigned char bytes[kSlotBytes];
};

// The first 16 bytes of a record's head slot.
struct RecordHeader {
  uint8_t type;       // RecordType (collector/record_types.h)
  uint8_t ext_slots;  // payload slots after the head slot
  uint16_t aux16;     // meaning owned by the record type
  uint32_t aux32;     // meaning owned by the record type
  uint64_t ts_ns;     // stream clock (collector/clock.h)
};
static_assert(sizeof(RecordHeader) == 16);
inline constexpr size_t kMaxExtSlots = 255;
inline constexpr size_t kMaxRecordBytes = (kMaxExtSlots + 1) * kSlotBytes;

// One contiguous power-of-two block of slots holding positions [start_pos, next->start_pos).
struct RingSegment {
  Slot* slots = nullptr;
  uint32_t mask = 0;
  uint64_t start_pos = 0;                   // written by the producer before it publishes `next`
  std::atomic<RingSegment*> next{nullptr};  // producer: release; consumer: acquire
  bool grown = false;                       // from the pool's growth region (the drain thread frees it)
};

class ThreadRing {
 public:
  // `slots` is owned by the caller (the ring pool's arena); capacity must be a power of two.
  // `spare`: the pool's one shared spare segment (may be null), taken when no offer of this ring's
  // own is waiting — so the first burst of a thread does not wait for the drain thread to run.
  void Init(Slot* slots, uint32_t capacity_slots, std::atomic<RingSegment*>* spare = nullptr, uint32_t spare_slots = 0) {
    spare_ = spare;
    spare_mask_ = spare_slots > 0 ? spare_slots - 1 : 0;
    initial_.slots = slots;
    initial_.mask = capacity_slots - 1;
    initial_.start_pos = 0;
    initial_.next.store(nullptr, std::memory_order_relaxed);
    head_.store(0, std::memory_order_relaxed);
    tail_.store(0, std::memory_order_relaxed);
    dropped_.store(0, std::memory_order_relaxed);
    offer_.store(nullptr, std::memory_order_relaxed);
    poked_.store(0, std::memory_order_relaxed);
    ran_full_.store(0, std::memory_order_relaxed);
    waiting_.store(0, std::memory_order_relaxed);
    UseSegment(&initial_, 0);
    consumer_ = &initial_;
  }
  // Capacity of the segment the producer writes to (slots).
  uint32_t capacity() const { return mask_ + 1; }

  // --- producer (the owning application thread) ---

  // Reserves `n` slots starting at *pos. False when the ring has no room (a waiting offer is taken
  // first): the caller must count the drop with CountDrop() and write nothing.
  bool Reserve(uint32_t n, uint64_t* pos) {
    uint64_t head = head_.load(std::memory_order_relaxed);
    if (head + n - cached_tail_ > mask_ + 1) {
      RefreshTail();
      if (head + n - cached_tail_ > mask_ + 1) {
        ran_full_.store(1, std::memory_order_relaxed);  // the drain thread grows this ring
        if (!TakeOffer(head) || n > mask_ + 1) return false;
      }
    }
    *pos = head;
    return true;
  }
  Slot* At(uint64_t pos) { return &slots_[pos & mask_]; }
  // Copies bytes into the reserved record starting `offset` bytes after the head slot's start.
  void CopyIn(uint64_t pos, size_t offset, const void* src, size_t len) {
    const auto* from = static_cast<const unsigned char*>(src);
    while (len > 0) {
      uint64_t slot = pos + offset / kSlotBytes;
      size_t in_slot = offset % kSlotBytes;
      // Bytes until the end of the physical storage.
      size_t phys = static_cast<size_t>(slot & mask_);
      size_t room = (static_cast<size_t>(mask_) + 1 - phys) * kSlotBytes - in_slot;
      size_t n = len < room ? len : room;
      std::memcpy(slots_[phys].bytes + in_slot, from, n);
      from += n;
      offset += n;
      len -= n;
    }
  }
  // Publishes every record reserved up to `pos_end` (release: the consumer sees complete bytes).
  void Commit(uint64_t pos_end) { head_.store(pos_end, std::memory_order_release); }
  // Cheap test after a commit (producer-private fields and one relaxed load): true when the ring
  // may have crossed its high-water mark and has not poked yet. Then call CrossedHighWater.
  bool MaybeHighWater(uint64_t pos_end) const {
    return pos_end - cached_tail_ > high_water_ && poked_.load(std::memory_order_relaxed) == 0;
  }
  // Slow path of the above: re-reads the tail; when the ring really is past the mark, takes a
  // waiting offer and marks the ring poked. True: the caller wakes the drain thread (once).
  // Only the drain thread's own offer for this ring is taken here (it made one because the ring
  // was under pressure); the pool's shared spare waits until a record does not fit (Reserve), so
  // a ring the drain thread keeps up with stays on its own, already faulted-in, storage.
  bool CrossedHighWater(uint64_t pos_end) {
    RefreshTail();
    if (pos_end - cached_tail_ <= high_water_) return false;
    TakeOffer(pos_end, /*spare_too=*/false);
    poked_.store(1, std::memory_order_relaxed);
    return true;
  }
  // Single writer (the producer), so load+store instead of a locked RMW.
  void CountDrop() { dropped_.store(dropped_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed); }

  // --- consumer (the drain thread) ---
  uint64_t ConsumerHead() const { return head_.load(std::memory_order_acquire); }
  uint64_t ConsumerTail() const { return tail_.load(std::memory_order_relaxed); }
  // Moves the consumer to the segment that holds `pos` (the next unread position) when the
  // producer has moved on. Returns the segment left behind (fully consumed: the caller frees it if
  // it is grown), or nullptr. Call in a loop before reading at `pos`.
  RingSegment* ConsumerAdvance(uint64_t pos) {
    RingSegment* next = consumer_->next.load(std::memory_order_acquire);
    if (next == nullptr || pos < next->start_pos) return nullptr;
    RingSegment* old = consumer_;
    consumer_ = next;
    return old;
  }
  const Slot* ConsumerAt(uint64_t pos) const { return &consumer_->slots[pos & consumer_->mask]; }
  // True when `n_slots` slots from `pos` lie in order in the consumer's segment (no wrap).
  bool ConsumerContiguous(uint64_t pos, size_t n_slots) const {
    return (pos & consumer_->mask) + n_slots <= static_cast<uint64_t>(consumer_->mask) + 1;
  }
  void CopyOut(uint64_t pos, size_t n_slots, Slot* dst) const {
    for (size_t i = 0; i < n_slots; ++i) dst[i] = consumer_->slots[(pos + i) & consumer_->mask];
  }
  void Release(uint64_t new_tail) { tail_.store(new_tail, std::memory_order_release); }
  uint64_t dropped() const { return dropped_.load(std::memory_order_relaxed); }
  // The newest segment the producer may be writing to (capacity in slots), as far as the consumer
  // can see the chain.
  uint32_t ConsumerNewestCapacity() const {
    const RingSegment* s = consumer_;
    while (const RingSegment* n = s->next.load(std::memory_order_acquire)) s = n;
    return s->mask + 1;
  }
  bool poked() const { return poked_.load(std::memory_order_relaxed) != 0; }
  // True when a record found the ring full since the last call (then it took the spare or an
  // offer, or dropped).
  bool TakeRanFull() { return ran_full_.exchange(0, std::memory_order_relaxed) != 0; }
  // After draining: the producer may poke again on its next crossing.
  void ClearPoked() { poked_.store(0, std::memory_order_relaxed); }
  // A larger segment for the producer to move to; false when one is already waiting.
  bool Offer(RingSegment* segment) {
    RingSegment* expected = nullptr;
    return offer_.compare_exchange_strong(expected, segment, std::memory_order_release, std::memory_order_relaxed);
  }
  bool HasOffer() const { return offer_.load(std::memory_order_relaxed) != nullptr; }
  // Drain thread, only while no producer owns the ring (free or retired and drained, head ==
  // tail): takes back a waiting offer, returns the consumer's segment when it is a grown one (the
  // caller frees both), and puts the ring back on its initial segment at position `pos`.
  void ResetToInitial(uint64_t pos, RingSegment** grown_current, RingSegment** offer) {
    *offer = offer_.exchange(nullptr, std::memory_order_acquire);
    *grown_current = consumer_ != &initial_ ? consumer_ : nullptr;
    initial_.start_pos = pos;
    initial_.next.store(nullptr, std::memory_order_relaxed);
    UseSegment(&initial_, pos);
    consumer_ = &initial_;
    poked_.store(0, std::memory_order_relaxed);
    ran_full_.store(0, std::memory_order_relaxed);
  }
  bool on_initial_segment() const { return consumer_ == &initial_; }

  // --- full-ring wait (collector/full_ring_wait.cc; never on the record path) ---
  // Producer: raised while it sleeps waiting for room; the futex word it sleeps on.
  std::atomic<uint32_t>* waiting_word() { return &waiting_; }
  std::atomic<uint32_t>* release_seq_word() { return &release_seq_; }
  // Drain thread: a producer is (or is about to be) waiting for this ring.
  bool ProducerWaiting() const { return waiting_.load(std::memory_order_seq_cst) != 0; }

 private:
  void UseSegment(RingSegment* s, uint64_t from_pos) {
    producer_ = s;
    slots_ = s->slots;
    mask_ = s->mask;
    high_water_ = (static_cast<uint64_t>(s->mask) + 1) / 2;
    cached_tail_ = from_pos;
  }
  // Producer: the consumer's tail, but never below the current segment's start (positions before
  // it live in older segments and take no room here).
  void RefreshTail() {
    uint64_t t = tail_.load(std::memory_order_acquire);
    cached_tail_ = t > producer_->start_pos ? t : producer_->start_pos;
  }
  // Producer: moves to the drain thread's offer, if any (else, with `spare_too`, to the pool's
  // spare), at position `head` (between records).
  bool TakeOffer(uint64_t head, bool spare_too = true) {
    RingSegment* s = offer_.load(std::memory_order_acquire);
    if (s != nullptr) {
      offer_.store(nullptr, std::memory_order_relaxed);
    } else if (spare_too && spare_ != nullptr && spare_mask_ > mask_ && spare_->load(std::memory_order_relaxed) != nullptr) {
      // Every spare has spare_mask_ + 1 slots, so the size test needs no look at the segment (which
      // another producer may take meanwhile).
      s = spare_->exchange(nullptr, std::memory_order_acquire);
    }
    if (s == nullptr) return false;
    s->start_pos = head;
    s->next.store(nullptr, std::memory_order_relaxed);
    producer_->next.store(s, std::memory_order_release);
    UseSegment(s, head);
    return true;
  }

  // Producer-side cache line(s): written by the producer only (poked_ also cleared by the drain
  // thread once per drain of this ring).
  alignas(64) std::atomic<uint64_t> head_{0};
  uint64_t cached_tail_ = 0;
  Slot* slots_ = nullptr;
  uint32_t mask_ = 0;
  uint64_t high_water_ = 0;
  RingSegment* producer_ = nullptr;
  std::atomic<RingSegment*>* spare_ = nullptr;
  uint32_t spare_mask_ = 0;
  std::atomic<uint64_t> dropped_{0};
  std::atomic<uint32_t> poked_{0};
  std::atomic<uint32_t> ran_full_{0};  // producer sets (slow path), drain thread clears
  std::atomic<uint32_t> waiting_{0};  // producer sets/clears around a full-ring wait
  // Consumer-side cache line.
  alignas(64) std::atomic<uint64_t> tail_{0};
  RingSegment* consumer_ = nullptr;
  std::atomic<RingSegment*> offer_{nullptr};  // drain thread stores, producer takes
  std::atomic<uint32_t> release_seq_{0};       // drain thread bumps after a release a producer waits for
  RingSegment initial_;
};

}  // namespace gt
