// CuptiBufferPool: bounded, lock-free lending of CUPTI activity buffers and their hand-over to the
// drain thread in completion order.
#include <gtest/gtest.h>

#include <unistd.h>

#include <atomic>
#include <cstring>
#include <thread>
#include <vector>

#include "inject/cupti/buffer_pool.h"

namespace gt::cupti {
namespace {

TEST(CuptiBufferPool, LendsEveryBufferOnceThenDeclinesAndCounts) {
  CuptiBufferPool pool;
  ASSERT_TRUE(pool.Init(4096, 3));
  uint8_t* a = pool.Acquire();
  uint8_t* b = pool.Acquire();
  uint8_t* c = pool.Acquire();
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  ASSERT_NE(c, nullptr);
  EXPECT_NE(a, b);
  EXPECT_NE(b, c);
  EXPECT_NE(a, c);
  EXPECT_EQ(pool.lent(), 3u);
  EXPECT_EQ(pool.Acquire(), nullptr);
  EXPECT_EQ(pool.Acquire(), nullptr);
  EXPECT_EQ(pool.declined(), 2u);
  // Completed buffers are not lent again until the drain thread releases them.
  EXPECT_TRUE(pool.Complete(b, 100));
  EXPECT_EQ(pool.Acquire(), nullptr);
  size_t valid = 0;
  EXPECT_EQ(pool.NextCompleted(&valid), b);
  EXPECT_EQ(valid, 100u);
  pool.Release(b);
  EXPECT_EQ(pool.Acquire(), b);
}

TEST(CuptiBufferPool, CompletedBuffersComeBackInCompletionOrder) {
  CuptiBufferPool pool;
  ASSERT_TRUE(pool.Init(1024, 4));
  uint8_t* bufs[4];
  for (auto& p : bufs) p = pool.Acquire();
  EXPECT_TRUE(pool.Complete(bufs[2], 10));
  EXPECT_TRUE(pool.Complete(bufs[0], 20));
  EXPECT_TRUE(pool.Complete(bufs[3], 30));
  size_t valid = 0;
  EXPECT_EQ(pool.NextCompleted(&valid), bufs[2]);
  EXPECT_EQ(valid, 10u);
  EXPECT_EQ(pool.NextCompleted(&valid), bufs[0]);
  EXPECT_EQ(pool.NextCompleted(&valid), bufs[3]);
  EXPECT_EQ(valid, 30u);
  EXPECT_EQ(pool.NextCompleted(&valid), nullptr);
}

TEST(CuptiBufferPool, IgnoresForeignAndEmptyBuffers) {
  CuptiBufferPool pool;
  ASSERT_TRUE(pool.Init(1024, 2));
  uint8_t other[64];
  EXPECT_FALSE(pool.Complete(other, 8));
  uint8_t* a = pool.Acquire();
  EXPECT_FALSE(pool.Complete(a + 8, 8));    // not a buffer start
  EXPECT_TRUE(pool.Complete(a, 0));          // empty: straight back to the pool
  size_t valid = 0;
  EXPECT_EQ(pool.NextCompleted(&valid), nullptr);
  EXPECT_EQ(pool.lent(), 0u);
  EXPECT_FALSE(pool.Complete(a, 8));         // not lent any more
  EXPECT_FALSE(pool.Init(1024, 2));          // once
  CuptiBufferPool bad;
  EXPECT_FALSE(bad.Init(1001, 2));           // records need 8-byte alignment
  EXPECT_FALSE(bad.Init(1024, CuptiBufferPool::kMaxBuffers + 1));
}

// Issue 29: with CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER = 1 the client promises zeroed buffers;
// the pool keeps it on the drain thread: a released buffer is all zero again, bytes past valid_bytes too.
TEST(CuptiBufferPool, ZeroOnReleaseHandsOutZeroedBuffers) {
  CuptiBufferPool pool;
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  ASSERT_TRUE(pool.Init(4 * page, 1));
  pool.set_zero_on_release(true);
  uint8_t* a = pool.Acquire();
  ASSERT_NE(a, nullptr);
  for (size_t i = 0; i < 4 * page; ++i) EXPECT_EQ(a[i], 0) << i;  // fresh pages
  std::memset(a, 0xab, 100);
  a[2 * page + 5] = 0xcd;  // past valid_bytes: CUPTI may write there
  a[4 * page - 1] = 0xef;
  ASSERT_TRUE(pool.Complete(a, 100));
  size_t valid = 0;
  ASSERT_EQ(pool.NextCompleted(&valid), a);
  EXPECT_EQ(valid, 100u);
  pool.Release(a);
  uint8_t* b = pool.Acquire();
  ASSERT_EQ(b, a);
  size_t nonzero = 0;
  for (size_t i = 0; i < 4 * page; ++i) nonzero += b[i] != 0;
  EXPECT_EQ(nonzero, 0u);
}

// Many producer threads (CUPTI's per-thread buffer requests) against one consumer (the drain
// thread): every buffer is decoded exactly once, nothing is lost, and no buffer is lent twice.
TEST(CuptiBufferPool, ConcurrentProducersAndOneConsumer) {
  CuptiBufferPool pool;
  ASSERT_TRUE(pool.Init(256, 8));
  constexpr int kThreads = 6, kRounds = 3000;
  std::atomic<uint64_t> produced{0}, consumed{0};
  std::atomic<bool> done{false};
  std::thread consumer([&] {
    size_t valid = 0;
    while (!done.load() || consumed.load() < produced.load()) {
      if (uint8_t* b = pool.NextCompleted(&valid)) {
        EXPECT_EQ(valid, static_cast<size_t>(b[0]) + 1);
        consumed.fetch_add(1);
        pool.Release(b);
      }
    }
  });
  std::vector<std::thread> producers;
  for (int t = 0; t < kThreads; ++t) {
    producers.emplace_back([&, t] {
      for (int i = 0; i < kRounds; ++i) {
        uint8_t* b = pool.Acquire();
        if (b == nullptr) continue;
        b[0] = static_cast<uint8_t>((t + i) % 200);
        produced.fetch_add(1);
        ASSERT_TRUE(pool.Complete(b, b[0] + 1u));
      }
    });
  }
  for (auto& p : producers) p.join();
  done.store(true);
  consumer.join();
  EXPECT_EQ(consumed.load(), produced.load());
  EXPECT_EQ(produced.load() + pool.declined(), uint64_t{kThreads} * kRounds);
  EXPECT_EQ(pool.lent(), 0u);
}

}  // namespace
}  // namespace gt::cupti
