// Issue 20, 8 threads on 2 cores: the would-drop slow path (collector/full_ring_wait.h). With
// GTRACE_FULL_RING=drop a full ring drops at once; with wait it sleeps until the drain thread (here
// a test thread playing its part: heartbeat, release, wake) makes room, keeps errno, and never
// waits for a drain thread that gives no sign of life: one bounded wait, then drops without waiting
// until the heartbeat moves again. No session: PokeDrainThread has no pipe and does nothing.
#include <gtest/gtest.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#include "collector/full_ring_wait.h"
#include "collector/ring_pool.h"

namespace gt {
namespace {

// A buffer whose 16-slot ring is full (16 one-slot records committed).
struct FullBuffer {
  std::vector<Slot> storage = std::vector<Slot>(16);
  ThreadBuffer buffer;
  FullBuffer() {
    buffer.ring.Init(storage.data(), 16);
    for (int i = 0; i < 16; ++i) {
      uint64_t pos = 0;
      EXPECT_TRUE(buffer.ring.Reserve(1, &pos));
      buffer.ring.Commit(pos + 1);
    }
    uint64_t pos = 0;
    EXPECT_FALSE(buffer.ring.Reserve(1, &pos));
  }
};

struct PolicyGuard {
  explicit PolicyGuard(FullRingPolicy p) { SetFullRingPolicy(p); }
  ~PolicyGuard() { SetFullRingPolicy(FullRingPolicy::kDrop); }
};

TEST(FullRingWait, DropPolicyCountsTheDropAtOnce) {
  PolicyGuard g(FullRingPolicy::kDrop);
  FullBuffer f;
  FullRingStats before = FullRingCounters();  // after the policy was set (which zeroes them under kWait)
  EXPECT_EQ(ReserveWhenFull(&f.buffer, 1), kNoRoom);
  EXPECT_EQ(f.buffer.ring.dropped(), 1u);
  FullRingStats after = FullRingCounters();
  EXPECT_EQ(after.waits_kept, before.waits_kept);  // no wait at all
  EXPECT_EQ(after.waits_dropped, before.waits_dropped);
}

TEST(FullRingWait, WaitPolicyResumesWhenTheDrainThreadReleasesRoom) {
  PolicyGuard g(FullRingPolicy::kWait);
  FullBuffer f;
  ThreadRing& ring = f.buffer.ring;
  FullRingStats before = FullRingCounters();  // after the policy was set (which zeroes them under kWait)
  std::atomic<bool> stop{false};
  std::atomic<bool> registered{false};
  // The drain thread's part: alive (heartbeat every 100 us; its tid registered, as the drain thread
  // does, so a loaded machine that keeps it off a CPU for 10 ms does not make it look dead) but busy
  // for 20 ms after the producer started waiting before it releases 8 slots of this ring and wakes its producer.
  std::thread drain([&] {
    DrainThreadStarted(static_cast<uint32_t>(::syscall(SYS_gettid)));
    registered.store(true);
    while (!ring.ProducerWaiting()) DrainHeartbeat();  // busy from the moment the producer waits
    auto start = std::chrono::steady_clock::now();
    while (std::chrono::steady_clock::now() - start < std::chrono::milliseconds(20)) {
      DrainHeartbeat();
      std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
    ring.Release(8);
    DrainReleasedRing(ring);
    while (!stop.load()) {
      DrainHeartbeat();
      std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
    DrainThreadStarted(0);
  });
  while (!registered.load()) std::this_thread::yield();
  errno = 1234;
  uint64_t pos = ReserveWhenFull(&f.buffer, 1);
  bool ok = pos != kNoRoom;
  int saved = errno;
  stop.store(true);
  drain.join();
  EXPECT_TRUE(ok);
  EXPECT_EQ(pos, 16u);  // the next position: the record goes where it would have gone
  EXPECT_EQ(saved, 1234);
  EXPECT_EQ(ring.dropped(), 0u);
  FullRingStats after = FullRingCounters();
  EXPECT_EQ(after.waits_kept, before.waits_kept + 1);
  EXPECT_EQ(after.waits_dropped, before.waits_dropped);
  EXPECT_GE(after.wait_ns_total - before.wait_ns_total, 15000000u);  // it did wait for the release
}

TEST(FullRingWait, SilentDrainThreadCostsOneBoundedWaitThenDropsWithoutWaiting) {
  PolicyGuard g(FullRingPolicy::kWait);
  FullBuffer f;
  FullRingStats before = FullRingCounters();  // after the policy was set (which zeroes them under kWait)
  errno = 77;
  auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(ReserveWhenFull(&f.buffer, 1), kNoRoom);  // no heartbeat: gives up after 10 ms
  auto t1 = std::chrono::steady_clock::now();
  EXPECT_EQ(errno, 77);
  // Generous: 10 ms of wait, plus scheduling on a loaded machine; never the 200 ms cap.
  EXPECT_LT(std::chrono::duration_cast<std::chrono::milliseconds>(t1 - t0).count(), 150);
  for (int i = 0; i < 1000; ++i) EXPECT_EQ(ReserveWhenFull(&f.buffer, 1), kNoRoom);
  EXPECT_EQ(f.buffer.ring.dropped(), 1001u);
  FullRingStats mid = FullRingCounters();
  EXPECT_EQ(mid.waits_dropped, before.waits_dropped + 1);  // the 1000 later drops did not wait
  EXPECT_EQ(mid.waits_kept, before.waits_kept);
  // A sign of life: the next full ring waits again (and, with no release, gives up again).
  DrainHeartbeat();
  EXPECT_EQ(ReserveWhenFull(&f.buffer, 1), kNoRoom);
  EXPECT_EQ(FullRingCounters().waits_dropped, before.waits_dropped + 2);
  EXPECT_EQ(f.buffer.ring.dropped(), 1002u);
}

TEST(FullRingWait, EightProducersOnTinyRingsLoseNothingWhileTheDrainThreadRuns) {
  PolicyGuard g(FullRingPolicy::kWait);
  constexpr int kThreads = 8;
  constexpr uint64_t kRecords = 20000;
  std::vector<std::vector<Slot>> storage(kThreads, std::vector<Slot>(16));
  std::vector<ThreadBuffer> buffers(kThreads);
  for (int t = 0; t < kThreads; ++t) buffers[t].ring.Init(storage[t].data(), 16);
  std::atomic<int> done{0};
  std::vector<uint64_t> consumed(kThreads, 0), mismatches(kThreads, 0);
  // The drain thread's part: empties every ring in turn, checking the values arrive in order. It
  // registers its tid as the drain thread does, so a producer that finds it waiting for a CPU (a
  // loaded machine: 9 threads here on 2 cores) waits on instead of taking it for dead.
  std::atomic<bool> registered{false};
  std::thread drain([&] {
    DrainThreadStarted(static_cast<uint32_t>(::syscall(SYS_gettid)));
    registered.store(true);
    while (done.load() < kThreads || [&] {
      for (auto& b : buffers) if (b.ring.ConsumerHead() != b.ring.ConsumerTail()) return true;
      return false;
    }()) {
      DrainHeartbeat();
      for (int t = 0; t < kThreads; ++t) {
        ThreadRing& r = buffers[t].ring;
        uint64_t tail = r.ConsumerTail(), head = r.ConsumerHead();
        for (; tail < head; ++tail) {
          uint64_t v;
          std::memcpy(&v, r.ConsumerAt(tail)->bytes, sizeof(v));
          if (v != consumed[t]) ++mismatches[t];
          ++consumed[t];
        }
        r.Release(tail);
        DrainReleasedRing(r);
      }
      std::this_thread::yield();
    }
    DrainThreadStarted(0);
  });
  while (!registered.load()) std::this_thread::yield();
  std::vector<std::thread> producers;
  for (int t = 0; t < kThreads; ++t) {
    producers.emplace_back([&, t] {
      ThreadRing& r = buffers[t].ring;
      for (uint64_t i = 0; i < kRecords; ++i) {
        uint64_t pos = 0;
        if (!r.Reserve(1, &pos) && (pos = ReserveWhenFull(&buffers[t], 1)) == kNoRoom) continue;
        r.CopyIn(pos, 0, &i, sizeof(i));
        r.Commit(pos + 1);
      }
      done.fetch_add(1);
    });
  }
  for (auto& p : producers) p.join();
  drain.join();
  for (int t = 0; t < kThreads; ++t) {
    EXPECT_EQ(buffers[t].ring.dropped(), 0u) << t;
    EXPECT_EQ(consumed[t], kRecords) << t;
    EXPECT_EQ(mismatches[t], 0u) << t;
  }
}

}  // namespace
}  // namespace gt
