// Issue 20: the high-water poke (once per crossing, never per record), rings that move to a larger
// segment the drain thread offers (order and content kept across the move, the old segment handed
// back exactly once), the pool's budget for grown segments and the shared spare, and a two-thread
// run where the consumer keeps offering while the producer writes (run under TSan by
// scripts/sanitize.sh as part of collector_test).
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <thread>
#include <vector>

#include "collector/ring_pool.h"
#include "collector/thread_ring.h"

namespace gt {
namespace {

// Writes one 1-slot record whose first word is `value`; false when dropped.
bool Put(ThreadRing& ring, uint64_t value, int* pokes) {
  uint64_t pos;
  if (!ring.Reserve(1, &pos)) {
    ring.CountDrop();
    return false;
  }
  ring.CopyIn(pos, 0, &value, sizeof(value));
  ring.Commit(pos + 1);
  if (ring.MaybeHighWater(pos + 1) && ring.CrossedHighWater(pos + 1)) ++*pokes;
  return true;
}

// Reads every committed record (following segment moves); returns the values in order and counts
// the segments left behind.
std::vector<uint64_t> Drain(ThreadRing& ring, std::vector<RingSegment*>* left) {
  std::vector<uint64_t> out;
  uint64_t tail = ring.ConsumerTail(), head = ring.ConsumerHead();
  while (tail < head) {
    while (RingSegment* old = ring.ConsumerAdvance(tail)) left->push_back(old);
    uint64_t v;
    std::memcpy(&v, ring.ConsumerAt(tail)->bytes, sizeof(v));
    out.push_back(v);
    ++tail;
  }
  ring.Release(tail);
  while (RingSegment* old = ring.ConsumerAdvance(tail)) left->push_back(old);
  ring.ClearPoked();
  return out;
}

TEST(RingGrowth, HighWaterPokesOncePerCrossing) {
  std::vector<Slot> storage(16);
  ThreadRing ring;
  ring.Init(storage.data(), 16);
  int pokes = 0;
  for (uint64_t i = 0; i < 8; ++i) ASSERT_TRUE(Put(ring, i, &pokes));
  EXPECT_EQ(pokes, 0);  // exactly half full: not past the mark
  for (uint64_t i = 8; i < 16; ++i) ASSERT_TRUE(Put(ring, i, &pokes));
  EXPECT_EQ(pokes, 1);  // 8 records past the mark, one poke
  EXPECT_TRUE(ring.poked());
  EXPECT_FALSE(Put(ring, 16, &pokes));  // full, no offer: dropped
  EXPECT_EQ(ring.dropped(), 1u);
  std::vector<RingSegment*> left;
  EXPECT_EQ(Drain(ring, &left).size(), 16u);
  EXPECT_TRUE(left.empty());
  EXPECT_FALSE(ring.poked());
  for (uint64_t i = 0; i < 8; ++i) ASSERT_TRUE(Put(ring, 100 + i, &pokes));
  EXPECT_EQ(pokes, 1);  // half full again, not past the mark
  ASSERT_TRUE(Put(ring, 108, &pokes));
  EXPECT_EQ(pokes, 2);  // the second crossing
}

TEST(RingGrowth, ProducerMovesToOfferedSegmentAndOrderIsKept) {
  std::vector<Slot> initial(8), bigger(32);
  ThreadRing ring;
  ring.Init(initial.data(), 8);
  RingSegment offered;
  offered.slots = bigger.data();
  offered.mask = 31;
  ASSERT_TRUE(ring.Offer(&offered));
  EXPECT_FALSE(ring.Offer(&offered));  // one offer at a time
  int pokes = 0;
  // 5 records cross the mark of 4: the producer moves at position 5; 30 more fit in 32 slots.
  for (uint64_t i = 0; i < 35; ++i) ASSERT_TRUE(Put(ring, i, &pokes)) << i;
  EXPECT_EQ(ring.capacity(), 32u);
  EXPECT_FALSE(ring.HasOffer());
  EXPECT_EQ(offered.start_pos, 5u);
  EXPECT_EQ(ring.ConsumerNewestCapacity(), 32u);
  std::vector<RingSegment*> left;
  std::vector<uint64_t> got = Drain(ring, &left);
  ASSERT_EQ(got.size(), 35u);
  for (uint64_t i = 0; i < 35; ++i) EXPECT_EQ(got[i], i);
  ASSERT_EQ(left.size(), 1u);  // the initial segment, left once
  EXPECT_EQ(left[0]->slots, initial.data());
  EXPECT_EQ(ring.dropped(), 0u);
}

TEST(RingGrowth, FullRingTakesTheOfferInsteadOfDropping) {
  std::vector<Slot> initial(4), bigger(16);
  ThreadRing ring;
  ring.Init(initial.data(), 4);
  int pokes = 0;
  for (uint64_t i = 0; i < 4; ++i) ASSERT_TRUE(Put(ring, i, &pokes));
  EXPECT_FALSE(Put(ring, 4, &pokes));  // full, nothing offered
  RingSegment offered;
  offered.slots = bigger.data();
  offered.mask = 15;
  ASSERT_TRUE(ring.Offer(&offered));
  for (uint64_t i = 5; i < 21; ++i) ASSERT_TRUE(Put(ring, i, &pokes)) << i;
  EXPECT_FALSE(Put(ring, 21, &pokes));
  EXPECT_EQ(ring.dropped(), 2u);
  std::vector<RingSegment*> left;
  std::vector<uint64_t> got = Drain(ring, &left);
  ASSERT_EQ(got.size(), 20u);
  EXPECT_EQ(got[3], 3u);
  EXPECT_EQ(got[4], 5u);  // record 4 was dropped
  EXPECT_EQ(got[19], 20u);
}

TEST(RingGrowth, PoolBudgetSpareAndFree) {
  RingPool pool;
  constexpr size_t kBudget = 1u << 20, kRing = 4096;
  ASSERT_TRUE(pool.Init(kBudget, kRing));
  EXPECT_EQ(pool.max_ring_bytes(), kBudget / 2);
  // The spare (16 rings' worth, at most an eighth of the budget) is taken at Init.
  EXPECT_EQ(pool.committed_bytes(), 16u * kRing);
  ThreadBuffer* a = pool.Acquire(1, "a");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(pool.committed_bytes(), 17u * kRing);
  // The first crossing pokes but stays on the ring's own storage (already faulted in); the first
  // record that does not fit takes the spare (no drain thread needed) and marks the ring as run
  // full, once.
  int pokes = 0;
  uint64_t slots = kRing / kSlotBytes;
  for (uint64_t i = 0; i <= slots / 2; ++i) ASSERT_TRUE(Put(a->ring, i, &pokes));
  EXPECT_EQ(pokes, 1);
  EXPECT_EQ(a->ring.capacity(), slots);
  for (uint64_t i = slots / 2 + 1; i < slots; ++i) ASSERT_TRUE(Put(a->ring, i, &pokes));
  EXPECT_EQ(a->ring.capacity(), slots);
  EXPECT_FALSE(a->ring.TakeRanFull());
  ASSERT_TRUE(Put(a->ring, slots, &pokes));
  EXPECT_EQ(a->ring.capacity(), 16u * slots);
  EXPECT_EQ(a->ring.dropped(), 0u);
  EXPECT_TRUE(a->ring.TakeRanFull());
  EXPECT_FALSE(a->ring.TakeRanFull());
  EXPECT_EQ(pool.committed_bytes(), 17u * kRing);  // the spare was counted already
  pool.RefillSpare();
  EXPECT_EQ(pool.committed_bytes(), 33u * kRing);
  // Grown segments: at most half the budget each, all within the budget together.
  EXPECT_EQ(pool.AllocSegment(static_cast<uint32_t>(kBudget / kSlotBytes)), nullptr);
  RingSegment* big = pool.AllocSegment(static_cast<uint32_t>(kBudget / 2 / kSlotBytes));
  ASSERT_NE(big, nullptr);
  EXPECT_EQ(pool.AllocSegment(static_cast<uint32_t>(kBudget / 2 / kSlotBytes)), nullptr);  // over budget
  EXPECT_EQ(pool.committed_bytes(), 33u * kRing + kBudget / 2);
  // Threads share what is left: exactly as many initial rings as fit.
  uint64_t room = (kBudget - pool.committed_bytes()) / kRing;
  std::vector<ThreadBuffer*> more;
  while (ThreadBuffer* b = pool.Acquire(2, "b")) more.push_back(b);
  EXPECT_EQ(more.size(), room);
  pool.FreeSegment(big);
  EXPECT_EQ(pool.committed_bytes(), (33u + room) * kRing);
  // A retired, drained buffer goes back to its initial ring; its grown segment is given back.
  std::vector<RingSegment*> left;
  Drain(a->ring, &left);
  for (RingSegment* s : left) pool.FreeSegment(s);
  pool.Retire(a);
  pool.Free(a);
  EXPECT_EQ(a->ring.capacity(), slots);
  EXPECT_TRUE(a->ring.on_initial_segment());
  // Left: the second spare (16) and the other threads' rings; a's ring (1) and the spare it grew
  // into (16) are given back.
  EXPECT_EQ(pool.committed_bytes(), (16u + room) * kRing);
}

TEST(RingGrowth, ConcurrentOffersKeepOrderAndContent) {
  RingPool pool;
  ASSERT_TRUE(pool.Init(8u << 20, 4096));
  ThreadBuffer* b = pool.Acquire(1, "p");
  ASSERT_NE(b, nullptr);
  ThreadRing& ring = b->ring;
  constexpr uint64_t kRecords = 300000;
  std::atomic<bool> done{false};
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
      if (ring.MaybeHighWater(pos + n)) ring.CrossedHighWater(pos + n);
    }
    done = true;
  });
  uint64_t next = 0, tail = 0, bad = 0, offers = 0, left = 0;
  while (next < kRecords) {
    // The drain thread's part: offer a larger segment whenever none is waiting.
    uint32_t newest = ring.ConsumerNewestCapacity();
    if (!ring.HasOffer() && newest < (1u << 14)) {
      if (RingSegment* s = pool.AllocSegment(newest * 2)) {
        if (ring.Offer(s)) {
          ++offers;
        } else {
          pool.FreeSegment(s);
        }
      }
    }
    uint64_t head = ring.ConsumerHead();
    while (tail < head) {
      while (RingSegment* old = ring.ConsumerAdvance(tail)) {
        pool.FreeSegment(old);
        ++left;
      }
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
    ring.ClearPoked();
  }
  producer.join();
  EXPECT_TRUE(done.load());
  EXPECT_EQ(bad, 0u);
  EXPECT_EQ(ring.dropped(), 0u);
  EXPECT_GE(offers, 1u);
  EXPECT_LE(left, offers + 2);  // every segment (offers, the initial one, the spare) is left at most once
}

}  // namespace
}  // namespace gt
