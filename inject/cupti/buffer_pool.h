// CuptiBufferPool: the bounded, preallocated memory CUPTI writes activity records into. One mmap'ed
// arena (reserved, committed page by page as CUPTI fills it) carved into `count` buffers.
//
// Threads:
//   - Acquire: CUPTI's buffer-request callback, on any application thread (CUDA 13 requests buffers
//     per thread) or CUPTI's worker. Lock-free CAS over the slots; never allocates or blocks. When
//     every buffer is lent or waiting to be decoded it returns nullptr: CUPTI then drops (and
//     counts) the records, and the decline is counted here.
//   - Complete: CUPTI's buffer-completed callback (its worker thread, or the thread calling
//     cuptiActivityFlushAll). Only marks the buffer ready for the drain thread.
//   - NextCompleted / Release: the drain thread, which decodes ready buffers in completion order
//     and gives them back.
// Owned by the CUPTI tracer; lives for the process (a forked child resets it, see ResetAfterFork).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace gt::cupti {

// What the buffer-completed callback said about a buffer besides its bytes; kept for the raw
// capture (inject/rawcap/), which writes it with the buffer on the drain thread.
struct BufferTag {
  uint64_t context = 0;  // CUcontext argument, as an address
  uint64_t seq = 0;      // raw-capture sequence number; 0 when not capturing
  uint32_t stream_id = 0;
  bool foreign_clock = false;  // completed while a second CUPTI client's timestamp callback was in force
};

class CuptiBufferPool {
 public:
  static constexpr uint32_t kMaxBuffers = 1024;

  CuptiBufferPool() = default;
  CuptiBufferPool(const CuptiBufferPool&) = delete;
  CuptiBufferPool& operator=(const CuptiBufferPool&) = delete;
  ~CuptiBufferPool();

  // Reserves `count` buffers of `buffer_bytes` (a multiple of 8). False when the arena cannot be mapped.
  bool Init(size_t buffer_bytes, uint32_t count);
  size_t buffer_bytes() const { return buffer_bytes_; }
  uint32_t count() const { return count_; }

  // Any thread: a free buffer, or nullptr (counted in declined()).
  uint8_t* Acquire();
  // Any thread: CUPTI finished `buffer` with `valid_bytes` of records. False for a pointer that is
  // not one of ours or not lent (ignored).
  bool Complete(uint8_t* buffer, size_t valid_bytes, const BufferTag& tag = {});

  // Drain thread: the oldest completed buffer (nullptr when none), then Release it after decoding.
  // With zero_on_release, Release zeroes what CUPTI wrote before the buffer is lent again (CUPTI was
  // told it gets zeroed buffers: CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER = 1).
  uint8_t* NextCompleted(size_t* valid_bytes, BufferTag* tag = nullptr);
  void Release(uint8_t* buffer);
  void set_zero_on_release(bool on) { zero_on_release_ = on; }  // before the first Acquire
  bool zero_on_release() const { return zero_on_release_; }

  bool Owns(const uint8_t* buffer) const { return IndexOf(buffer) >= 0; }
  uint64_t declined() const { return declined_.load(std::memory_order_relaxed); }
  uint32_t lent() const;  // buffers CUPTI holds now (for tests and diagnostics)

  // Forked child: the parent's CUPTI buffers are meaningless here; every slot becomes free.
  void ResetAfterFork();

 private:
  enum SlotState : uint32_t { kFree = 0, kLent = 1, kCompleted = 2, kDecoding = 3 };
  struct Slot {
    std::atomic<uint32_t> state{kFree};
    uint64_t valid_bytes = 0;
    uint64_t sequence = 0;  // completion order
    BufferTag tag;
  };
  int IndexOf(const uint8_t* buffer) const;

  uint8_t* arena_ = nullptr;
  size_t arena_bytes_ = 0;
  size_t buffer_bytes_ = 0;
  uint32_t count_ = 0;
  bool zero_on_release_ = false;
  Slot slots_[kMaxBuffers];
  std::atomic<uint32_t> next_hint_{0};
  std::atomic<uint64_t> completions_{0};
  std::atomic<uint64_t> declined_{0};
};

}  // namespace gt::cupti
