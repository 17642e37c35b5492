#include "inject/cupti/buffer_pool.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstring>

namespace gt::cupti {

CuptiBufferPool::~CuptiBufferPool() {
  if (arena_ != nullptr) ::munmap(arena_, arena_bytes_);
}

bool CuptiBufferPool::Init(size_t buffer_bytes, uint32_t count) {
  if (arena_ != nullptr || buffer_bytes == 0 || buffer_bytes % 8 != 0 || count == 0 || count > kMaxBuffers) {
    return false;
  }
  size_t total = buffer_bytes * count;
  void* p = ::mmap(nullptr, total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) return false;
  arena_ = static_cast<uint8_t*>(p);
  arena_bytes_ = total;
  buffer_bytes_ = buffer_bytes;
  count_ = count;
  return true;
}

int CuptiBufferPool::IndexOf(const uint8_t* buffer) const {
  if (arena_ == nullptr || buffer < arena_ || buffer >= arena_ + arena_bytes_) return -1;
  size_t offset = static_cast<size_t>(buffer - arena_);
  if (offset % buffer_bytes_ != 0) return -1;
  return static_cast<int>(offset / buffer_bytes_);
}

uint8_t* CuptiBufferPool::Acquire() {
  if (count_ == 0) return nullptr;
  // Start the scan where the last one left off, so threads do not all contend on slot 0.
  uint32_t start = next_hint_.fetch_add(1, std::memory_order_relaxed);
  for (uint32_t k = 0; k < count_; ++k) {
    uint32_t i = (start + k) % count_;
    uint32_t expected = kFree;
    if (slots_[i].state.compare_exchange_strong(expected, kLent, std::memory_order_acquire,
                                                std::memory_order_relaxed)) {
      return arena_ + static_cast<size_t>(i) * buffer_bytes_;
    }
  }
  declined_.fetch_add(1, std::memory_order_relaxed);
  return nullptr;
}

bool CuptiBufferPool::Complete(uint8_t* buffer, size_t valid_bytes, const BufferTag& tag) {
  int i = IndexOf(buffer);
  if (i < 0) return false;
  Slot& s = slots_[i];
  if (s.state.load(std::memory_order_relaxed) != kLent) return false;
  if (valid_bytes == 0) {
    s.state.store(kFree, std::memory_order_release);
    return true;
  }
  s.valid_bytes = valid_bytes > buffer_bytes_ ? buffer_bytes_ : valid_bytes;
  s.sequence = completions_.fetch_add(1, std::memory_order_relaxed);
  s.tag = tag;
  s.state.store(kCompleted, std::memory_order_release);  // publishes valid_bytes, sequence and tag
  return true;
}

uint8_t* CuptiBufferPool::NextCompleted(size_t* valid_bytes, BufferTag* tag) {
  int best = -1;
  uint64_t best_seq = 0;
  for (uint32_t i = 0; i < count_; ++i) {
    if (slots_[i].state.load(std::memory_order_acquire) != kCompleted) continue;
    if (best < 0 || slots_[i].sequence < best_seq) {
      best = static_cast<int>(i);
      best_seq = slots_[i].sequence;
    }
  }
  if (best < 0) return nullptr;
  slots_[best].state.store(kDecoding, std::memory_order_relaxed);
  *valid_bytes = slots_[best].valid_bytes;
  if (tag != nullptr) *tag = slots_[best].tag;
  return arena_ + static_cast<size_t>(best) * buffer_bytes_;
}

void CuptiBufferPool::Release(uint8_t* buffer) {
  int i = IndexOf(buffer);
  if (i < 0) return;
  if (zero_on_release_) {
    // The whole buffer comes back zeroed (CUPTI may have written past valid_bytes): the pages CUPTI
    // filled are cleared here (they stay committed for the next lender), the rest are given back to
    // the kernel, which reads them as zero and costs nothing if they were never touched.
    size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
    size_t used = (slots_[i].valid_bytes + page - 1) / page * page;
    if (used > buffer_bytes_ || buffer_bytes_ % page != 0) used = buffer_bytes_;
    std::memset(buffer, 0, used);
    if (used < buffer_bytes_ && ::madvise(buffer + used, buffer_bytes_ - used, MADV_DONTNEED) != 0) {
      std::memset(buffer + used, 0, buffer_bytes_ - used);
    }
  }
  slots_[i].state.store(kFree, std::memory_order_release);
}

uint32_t CuptiBufferPool::lent() const {
  uint32_t n = 0;
  for (uint32_t i = 0; i < count_; ++i) n += slots_[i].state.load(std::memory_order_relaxed) == kLent;
  return n;
}

void CuptiBufferPool::ResetAfterFork() {
  for (uint32_t i = 0; i < count_; ++i) slots_[i].state.store(kFree, std::memory_order_relaxed);
}

}  // namespace gt::cupti
