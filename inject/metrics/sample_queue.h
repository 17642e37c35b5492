// SampleQueue: a bounded single-producer / single-consumer ring of decoded PM samples, from the
// metrics thread (producer, after cuptiProfilerHostEvaluateToGpuValues) to the drain thread
// (consumer, which encodes them into the stream). Fixed capacity allocated once: a full queue drops
// the sample and counts it (the count goes into the stream as GpuMetricsLoss).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>

namespace gt::metrics {

inline constexpr size_t kMaxMetricsPerSet = 32;

struct Sample {
  uint64_t end_ns;  // stream clock
  uint64_t duration_ns;
  uint32_t value_count;
  float values[kMaxMetricsPerSet];
};

class SampleQueue {
 public:
  // `capacity` is rounded up to a power of two.
  explicit SampleQueue(size_t capacity) {
    size_t c = 1;
    while (c < capacity)
      c <<= 1;
    mask_ = c - 1;
    slots_.reset(new Sample[c]);
  }
  SampleQueue(const SampleQueue&) = delete;
  SampleQueue& operator=(const SampleQueue&) = delete;

  // Producer. False (and counted) when full.
  bool Push(const Sample& s) {
    uint64_t head = head_.load(std::memory_order_relaxed);
    if (head - tail_.load(std::memory_order_acquire) > mask_) {
      dropped_.fetch_add(1, std::memory_order_relaxed);
      return false;
    }
    slots_[head & mask_] = s;
    head_.store(head + 1, std::memory_order_release);
    return true;
  }
  // Consumer. Nullptr when empty; the sample stays valid until Pop().
  const Sample* Front() const {
    uint64_t tail = tail_.load(std::memory_order_relaxed);
    if (tail == head_.load(std::memory_order_acquire))
      return nullptr;
    return &slots_[tail & mask_];
  }
  void Pop() { tail_.store(tail_.load(std::memory_order_relaxed) + 1, std::memory_order_release); }

  uint64_t dropped() const { return dropped_.load(std::memory_order_relaxed); }
  size_t capacity() const { return mask_ + 1; }

 private:
  std::unique_ptr<Sample[]> slots_;
  size_t mask_ = 0;
  alignas(64) std::atomic<uint64_t> head_{0};
  alignas(64) std::atomic<uint64_t> tail_{0};
  std::atomic<uint64_t> dropped_{0};
};

}  // namespace gt::metrics
