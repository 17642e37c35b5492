// ThreadRing (SPSC) and RingPool: reservation, wrap-around, drops, and a two-thread stress run
// checking that every committed record arrives intact and in order.
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <thread>
#include <vector>

#include "collector/ring_pool.h"
#include "collector/thread_ring.h"

namespace gt {
namespace {

TEST(ThreadRing, ReserveCommitWrapAndDrop) {
  std::vector<Slot> storage(8);
  ThreadRing ring;
  ring.Init(storage.data(), 8);
  uint64_t pos = 0;
  // Three records of 3 slots: the third does not fit (9 > 8) until the consumer releases.
  for (int i = 0; i < 2; ++i) {
    ASSERT_TRUE(ring.Reserve(3, &pos));
    std::string text = "record-" + std::to_string(i) + std::string(150, 'a' + i);
    ring.CopyIn(pos, 0, text.data(), text.size());
    ring.Commit(pos + 3);
  }
  EXPECT_FALSE(ring.Reserve(3, &pos));
  ring.CountDrop();
  EXPECT_EQ(ring.dropped(), 1u);
  EXPECT_EQ(ring.ConsumerHead(), 6u);
  Slot out[3];
  ring.CopyOut(0, 3, out);
  EXPECT_EQ(std::memcmp(out[0].bytes, "record-0", 8), 0);
  ring.Release(3);
  // Now positions 6..8 wrap around the end of the storage (slots 6, 7, 0).
  ASSERT_TRUE(ring.Reserve(3, &pos));
  EXPECT_EQ(pos, 6u);
  std::string text(192, 'z');
  text.replace(120, 5, "split");
  ring.CopyIn(pos, 0, text.data(), text.size());
  ring.Commit(pos + 3);
  ring.CopyOut(6, 3, out);
  EXPECT_EQ(std::string(reinterpret_cast<char*>(out[0].bytes), 64), std::string(64, 'z'));
  EXPECT_EQ(std::memcmp(out[1].bytes + 56, "split", 5), 0);  // 120 = 64 + 56, straddles physical slot 7 -> 0
  EXPECT_EQ(storage[0].bytes[0], 'z');  // the third slot landed at physical index 0
  EXPECT_EQ(ring.ConsumerHead(), 9u);
}

TEST(ThreadRing, ConcurrentProducerConsumerKeepsOrderAndContent) {
  constexpr uint32_t kSlots = 64;
  constexpr uint64_t kRecords = 200000;
  std::vector<Slot> storage(kSlots);
  ThreadRing ring;
  ring.Init(storage.data(), kSlots);
  std::atomic<bool> done{false};
  uint64_t committed = 0;
  std::thread producer([&] {
    for (uint64_t i = 0; i < kRecords; ++i) {
      uint32_t n = 1 + static_cast<uint32_t>(i % 3);
      uint64_t pos;
      while (!ring.Reserve(n, &pos)) std::this_thread::yield();  // test only: wait instead of dropping
      for (uint32_t s = 0; s < n; ++s) {
        uint64_t words[8];
        for (auto& w : words) w = i * 16 + s;
        ring.CopyIn(pos, s * kSlotBytes, words, sizeof(words));
      }
      ring.Commit(pos + n);
      ++committed;
    }
    done = true;
  });
  uint64_t next = 0, tail = 0, bad = 0;
  while (next < kRecords) {
    uint64_t head = ring.ConsumerHead();
    while (tail < head) {
      uint32_t n = 1 + static_cast<uint32_t>(next % 3);
      Slot s[3];
      ring.CopyOut(tail, n, s);
      for (uint32_t k = 0; k < n; ++k) {
        uint64_t words[8];
        std::memcpy(words, s[k].bytes, sizeof(words));
        for (uint64_t w : words) bad += w != next * 16 + k;
      }
      tail += n;
      ++next;
    }
    ring.Release(tail);
  }
  producer.join();
  EXPECT_EQ(committed, kRecords);
  EXPECT_EQ(bad, 0u);
  EXPECT_EQ(ring.dropped(), 0u);
}

TEST(RingPool, AcquireRetireFreeAndExhaustion) {
  RingPool pool;
  // Room for exactly 2 rings of 4 KiB (plus their headers).
  ASSERT_TRUE(pool.Init(2 * (4096 + sizeof(ThreadBuffer)), 4096));
  ASSERT_EQ(pool.count(), 2u);
  EXPECT_EQ(pool.ring_bytes(), 4096u);
  ThreadBuffer* a = pool.Acquire(101, "alpha");
  ThreadBuffer* b = pool.Acquire(102, "beta");
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(pool.Acquire(103, "gamma"), nullptr);  // exhausted
  EXPECT_EQ(a->tid, 101u);
  EXPECT_STREQ(a->name_at_acquire, "alpha");
  EXPECT_NE(a->serial, b->serial);
  EXPECT_EQ(a->ring.capacity(), 4096u / kSlotBytes);
  a->ring.CountDrop();
  pool.Retire(a);
  EXPECT_EQ(a->state.load(), static_cast<uint32_t>(BufferState::kRetired));
  EXPECT_EQ(pool.retired(), 1u);
  EXPECT_EQ(pool.Acquire(104, "delta"), nullptr);  // retired is not free until drained
  pool.Free(a);
  EXPECT_EQ(pool.retired(), 0u);
  ThreadBuffer* c = pool.Acquire(104, "delta");
  ASSERT_EQ(c, a);
  EXPECT_EQ(c->tid, 104u);
  EXPECT_GT(c->serial, b->serial);
  EXPECT_EQ(c->dropped_base, 1u);  // the previous owner's drop is not this owner's
  pool.ResetAfterFork();
  EXPECT_EQ(pool.at(0)->state.load(), static_cast<uint32_t>(BufferState::kFree));
  EXPECT_EQ(pool.at(1)->state.load(), static_cast<uint32_t>(BufferState::kFree));
}

}  // namespace
}  // namespace gt
