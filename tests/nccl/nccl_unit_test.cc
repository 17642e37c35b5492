// Unit tests of the NCCL plugin's pieces that need no process-wide session: the event-mask and pool
// variables, the bounded event pools (exhaustion, reuse distance, ownership checks, threads), and
// the export-side helpers (datatype sizes, nccl-tests factors).
#include <gtest/gtest.h>

#include <atomic>
#include <set>
#include <thread>
#include <vector>

#include "inject/nccl/nccl_abi.h"
#include "inject/nccl/nccl_config.h"
#include "inject/nccl/nccl_pool.h"
#include "tools/export/nccl_model.h"

namespace {

using namespace gt::nccl;

TEST(NcclConfig, ParsesNamesWithImplications) {
  uint32_t m = 0;
  std::string err;
  ASSERT_TRUE(ParseNcclTrace("coll", &m, &err));
  EXPECT_EQ(m, gt::nccl::abi::kColl);
  ASSERT_TRUE(ParseNcclTrace("kernel", &m, &err));
  EXPECT_EQ(m, gt::nccl::abi::kKernelCh | gt::nccl::abi::kColl | gt::nccl::abi::kP2p);
  ASSERT_TRUE(ParseNcclTrace(" api , group", &m, &err));
  EXPECT_EQ(m, gt::nccl::abi::kGroupApi | gt::nccl::abi::kCollApi | gt::nccl::abi::kP2pApi | gt::nccl::abi::kKernelLaunch | gt::nccl::abi::kGroup);
  ASSERT_TRUE(ParseNcclTrace("proxy-step", &m, &err));
  EXPECT_EQ(m, gt::nccl::abi::kProxyStep | gt::nccl::abi::kProxyOp | gt::nccl::abi::kColl | gt::nccl::abi::kP2p);
  ASSERT_TRUE(ParseNcclTrace("default", &m, &err));
  EXPECT_EQ(m, DefaultTraceMask());
  EXPECT_EQ(DefaultTraceMask(), 0x7f47u);  // Group|Coll|P2p|KernelCh|GroupApi|CollApi|P2pApi|KernelLaunch|Ce*
  ASSERT_TRUE(ParseNcclTrace("all", &m, &err));
  EXPECT_EQ(m, 0x7fffu);
  ASSERT_TRUE(ParseNcclTrace("none", &m, &err));
  EXPECT_EQ(m, 0u);
  ASSERT_TRUE(ParseNcclTrace("0x42", &m, &err));
  EXPECT_EQ(m, 0x42u);
  ASSERT_TRUE(ParseNcclTrace("70", &m, &err));
  EXPECT_EQ(m, 70u);
}

TEST(NcclConfig, RejectsBadValuesAndKeepsTheMask) {
  uint32_t m = 123;
  std::string err;
  EXPECT_FALSE(ParseNcclTrace("coll,bogus", &m, &err));
  EXPECT_NE(err.find("unknown NCCL event 'bogus'"), std::string::npos) << err;
  EXPECT_FALSE(ParseNcclTrace("none,coll", &m, &err));
  EXPECT_FALSE(ParseNcclTrace("coll,,p2p", &m, &err));
  EXPECT_FALSE(ParseNcclTrace("0x8000", &m, &err));
  EXPECT_EQ(m, 123u);
  uint32_t n = 7;
  EXPECT_TRUE(ParsePoolEvents("64", &n, &err));
  EXPECT_EQ(n, 64u);
  EXPECT_FALSE(ParsePoolEvents("0", &n, &err));
  EXPECT_FALSE(ParsePoolEvents("lots", &n, &err));
  EXPECT_FALSE(ParsePoolEvents("99999999", &n, &err));
  EXPECT_EQ(n, 64u);
  EXPECT_STREQ(EventTypeName(gt::nccl::abi::kKernelCh), "KernelCh");
  EXPECT_STREQ(EventTypeName(3), "?");
}

constexpr uint32_t kCollIndex = 1;  // bit index of gt::nccl::abi::kColl

TEST(NcclPool, ExhaustsCountsDropsAndReleases) {
  EventPools pools;
  ASSERT_TRUE(pools.Create(gt::nccl::abi::kColl, 3));  // rounded up to 4
  EXPECT_EQ(pools.capacity(kCollIndex), 4u);
  EXPECT_EQ(pools.capacity(0), 0u);  // Group not tracked
  EXPECT_EQ(pools.Acquire(0, 1, 0), nullptr);
  EXPECT_EQ(pools.dropped(0), 0u);  // an untracked type is not a drop
  std::vector<EventSlot*> held;
  std::set<uint64_t> ids;
  for (int i = 0; i < 4; ++i) {
    EventSlot* s = pools.Acquire(kCollIndex, 7, 0);
    ASSERT_NE(s, nullptr);
    EXPECT_TRUE(pools.Owns(s));
    EXPECT_EQ(s->comm_index(), 7);
    EXPECT_EQ(s->type_index(), kCollIndex);
    ids.insert(s->id.load());
    held.push_back(s);
  }
  EXPECT_EQ(ids.size(), 4u);
  EXPECT_EQ(pools.Acquire(kCollIndex, 7, 0), nullptr);
  EXPECT_EQ(pools.Acquire(kCollIndex, 7, 0), nullptr);
  EXPECT_EQ(pools.dropped(kCollIndex), 2u);
  EventPools::Release(held[2]);
  EventSlot* again = pools.Acquire(kCollIndex, 8, 0);
  EXPECT_EQ(again, held[2]);
  EXPECT_EQ(ids.count(again->id.load()), 0u) << "an id is never given twice";
  EXPECT_EQ(again->id.load() & 31, kCollIndex) << "ids carry their type";
}

TEST(NcclPool, FreedSlotsAreReusedOnlyAfterTheCursorWentAround) {
  EventPools pools;
  ASSERT_TRUE(pools.Create(gt::nccl::abi::kColl, 8));
  EventSlot* first = pools.Acquire(kCollIndex, 1, 0);
  uint64_t first_id = first->id.load();
  EventPools::Release(first);  // a stopped parent whose children may still come
  for (int i = 0; i < 7; ++i) {
    EventSlot* s = pools.Acquire(kCollIndex, 1, 0);
    ASSERT_NE(s, first) << "reused after " << i << " acquires";
    EventPools::Release(s);
  }
  EXPECT_EQ(first->id.load(), first_id) << "the parent's id is still readable";
  EXPECT_EQ(pools.Acquire(kCollIndex, 1, 0), first);  // the 9th acquire wraps around
}

TEST(NcclPool, OwnsRejectsForeignAndMisalignedPointers) {
  EventPools pools;
  ASSERT_TRUE(pools.Create(gt::nccl::abi::kColl | gt::nccl::abi::kKernelCh, 4));
  EventSlot* s = pools.Acquire(kCollIndex, 1, 0);
  ASSERT_NE(s, nullptr);
  EXPECT_TRUE(pools.Owns(s));
  EXPECT_FALSE(pools.Owns(reinterpret_cast<char*>(s) + 8));
  EXPECT_FALSE(pools.Owns(nullptr));
  EXPECT_FALSE(pools.Owns(reinterpret_cast<void*>(0x20)));
  int local = 0;
  EXPECT_FALSE(pools.Owns(&local));
  EventPools empty;
  EXPECT_FALSE(empty.Owns(s));
  EXPECT_EQ(pools.capacity(6), 16u);  // kernel-channel pools are 4x
}

TEST(NcclPool, ConcurrentAcquireReleaseNeverSharesASlot) {
  EventPools pools;
  ASSERT_TRUE(pools.Create(gt::nccl::abi::kColl, 64));
  std::atomic<int> in_use_conflicts{0};
  std::atomic<uint64_t> got{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 20000; ++i) {
        EventSlot* s = pools.Acquire(kCollIndex, 1, 0);
        if (s == nullptr) continue;
        got.fetch_add(1);
        // The owner marks the slot; any other owner at the same time would see the mark.
        if (s->stash.exchange(1) != 0) in_use_conflicts.fetch_add(1);
        s->stash.store(0);
        EventPools::Release(s);
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(in_use_conflicts.load(), 0);
  EXPECT_GT(got.load(), 0u);
  EXPECT_EQ(got.load() + pools.dropped(kCollIndex), 80000u);
}

TEST(NcclModel, DatatypeSizesAndNcclTestsFactors) {
  using gt::exporter::NcclTestsFactors;
  using gt::exporter::NcclTypeSizeBytes;
  EXPECT_EQ(NcclTypeSizeBytes("ncclFloat32"), 4u);
  EXPECT_EQ(NcclTypeSizeBytes("ncclBfloat16"), 2u);
  EXPECT_EQ(NcclTypeSizeBytes("ncclFloat64"), 8u);
  EXPECT_EQ(NcclTypeSizeBytes("ncclInt8"), 1u);
  EXPECT_EQ(NcclTypeSizeBytes("ncclFloat8e4m3"), 1u);
  EXPECT_EQ(NcclTypeSizeBytes("Unknown"), 0u);  // NCCL 2.28 names ncclUint8 "Unknown"
  uint64_t mult = 0;
  int64_t num = 0, den = 0;
  ASSERT_TRUE(NcclTestsFactors("AllReduce", 8, &mult, &num, &den));
  EXPECT_EQ(mult, 1u);
  EXPECT_EQ(num, 14);
  EXPECT_EQ(den, 8);
  ASSERT_TRUE(NcclTestsFactors("AllGather", 8, &mult, &num, &den));
  EXPECT_EQ(mult, 8u);
  EXPECT_EQ(num, 7);
  ASSERT_TRUE(NcclTestsFactors("ReduceScatter", 4, &mult, &num, &den));
  EXPECT_EQ(mult, 4u);
  ASSERT_TRUE(NcclTestsFactors("AlltoAll", 4, &mult, &num, &den));
  EXPECT_EQ(mult, 4u);
  EXPECT_EQ(num, 3);
  ASSERT_TRUE(NcclTestsFactors("Broadcast", 4, &mult, &num, &den));
  EXPECT_EQ(num, den);
  ASSERT_TRUE(NcclTestsFactors("Send", 4, &mult, &num, &den));
  EXPECT_EQ(num, den);
  EXPECT_FALSE(NcclTestsFactors("Invalid", 4, &mult, &num, &den));
  EXPECT_FALSE(NcclTestsFactors("AllReduce", 0, &mult, &num, &den));
}

}  // namespace
