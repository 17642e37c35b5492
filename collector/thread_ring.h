// ThreadRing: a single-producer single-consumer ring of 64-byte slots. The producer is one
// application thread (inside an NVTX hook, CUDA callback or NCCL call); the consumer is the drain
// thread. The producer never blocks, allocates or makes a syscall: when the ring is full the
// record is dropped and counted (house style, hot path rule 5).
//
// A record is one head slot starting with a RecordHeader, followed by `ext_slots` slots of payload
// bytes. Records are contiguous in ring positions but may wrap around the end of the storage; the
// byte helpers below hide the wrap.
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

class ThreadRing {
 public:
  // `slots` is owned by the caller (the ring pool's arena); capacity must be a power of two.
  void Init(Slot* slots, uint32_t capacity_slots) {
    slots_ = slots;
    mask_ = capacity_slots - 1;
    head_.store(0, std::memory_order_relaxed);
    tail_.store(0, std::memory_order_relaxed);
    cached_tail_ = 0;
    dropped_.store(0, std::memory_order_relaxed);
  }
  uint32_t capacity() const { return mask_ + 1; }

  // --- producer (the owning application thread) ---

  // Reserves `n` slots starting at *pos. False when the ring has no room: the caller must count
  // the drop with CountDrop() and write nothing.
  bool Reserve(uint32_t n, uint64_t* pos) {
    uint64_t head = head_.load(std::memory_order_relaxed);
    if (head + n - cached_tail_ > mask_ + 1) {
      cached_tail_ = tail_.load(std::memory_order_acquire);
      if (head + n - cached_tail_ > mask_ + 1) return false;
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
  // Single writer (the producer), so load+store instead of a locked RMW.
  void CountDrop() { dropped_.store(dropped_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed); }

  // --- consumer (the drain thread) ---
  uint64_t ConsumerHead() const { return head_.load(std::memory_order_acquire); }
  uint64_t ConsumerTail() const { return tail_.load(std::memory_order_relaxed); }
  const Slot* ConsumerAt(uint64_t pos) const { return &slots_[pos & mask_]; }
  void CopyOut(uint64_t pos, size_t n_slots, Slot* dst) const {
    for (size_t i = 0; i < n_slots; ++i) dst[i] = slots_[(pos + i) & mask_];
  }
  void Release(uint64_t new_tail) { tail_.store(new_tail, std::memory_order_release); }
  uint64_t dropped() const { return dropped_.load(std::memory_order_relaxed); }

 private:
  Slot* slots_ = nullptr;
  uint32_t mask_ = 0;
  // Producer-side cache line.
  alignas(64) std::atomic<uint64_t> head_{0};
  uint64_t cached_tail_ = 0;
  std::atomic<uint64_t> dropped_{0};
  // Consumer-side cache line.
  alignas(64) std::atomic<uint64_t> tail_{0};
};

}  // namespace gt
