// Where a thread's records go (issue 16, collector/thread_ring.h, Drainer::MaybeGrow): a ring the
// drain thread keeps up with stays on its own storage, which it has already faulted in, however
// often it crosses its half-full mark; moving to fresh memory costs the application thread a page
// fault per 4 KiB (2-3 us on the build VM, ~50 ns per record). A ring that runs full takes the
// pool's spare, and from then on the drain thread keeps a bigger segment waiting for it. In-process
// (fake NVTX table), 16 KiB ring = 256 slots; every record and drop count is checked after export.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <map>
#include <string>

#include "collector/session.h"
#include "inject/nvtx/nvtx_hooks.h"
#include "tests/common/test_util.h"
#include "tests/nvtx/fake_nvtx_table.h"
#include "tests/nvtx/read_nvtx_stream.h"

namespace gt {
namespace {

using test::Core;

TEST(NvtxRingStorage, CrossingsDrainedInTimeStayOnTheOwnRingAndARingThatRanFullGrows) {
  test::TempDir dir;
  setenv("GTRACE_OUTPUT", dir.File("storage").c_str(), 1);
  setenv("GTRACE_TRACE", "nvtx", 1);
  setenv("GTRACE_THREAD_BUFFER_KB", "16", 1);  // 256 slots, one record each below
  setenv("GTRACE_BUFFER_MB", "64", 1);
  ASSERT_EQ(nvtx::InitializeCore(&test::GetExportTable), 1);
  auto push = Core<int (*)(const char*)>(NVTX_CBID_CORE_RangePushA);
  auto pop = Core<int (*)()>(NVTX_CBID_CORE_RangePop);
  ASSERT_NE(push, nullptr);
  uint64_t pairs = 0;
  // 200 rounds of 120 pairs (240 slots: past the 128-slot mark, so each round pokes the drain
  // thread; under the 256 of the ring), each drained before the next: 200 pokes, never full.
  ASSERT_EQ(push("warm"), 0);  // takes the thread's buffer
  ASSERT_EQ(pop(), 0);
  ++pairs;
  RequestFlush(true);
  ThreadBuffer* b = CurrentThreadBuffer();
  ASSERT_NE(b, nullptr);
  ASSERT_EQ(b->ring.capacity(), 256u);
  for (int round = 0; round < 200; ++round) {
    for (int i = 0; i < 120; ++i) {
      ASSERT_EQ(push("step"), 0);
      ASSERT_EQ(pop(), 0);
      ++pairs;
    }
    RequestFlush(true);
  }
  EXPECT_EQ(b->ring.capacity(), 256u) << "a ring drained in time must keep its own storage";
  // 1,500 pairs (3,000 slots) at once: the ring runs full and moves to the pool's spare (16 rings'
  // worth, 4,096 slots) without waiting for the drain thread: nothing is lost.
  for (int i = 0; i < 1500; ++i) {
    ASSERT_EQ(push("burst"), 0);
    ASSERT_EQ(pop(), 0);
    ++pairs;
  }
  // At least the spare; more when the drain thread (woken by the crossing) already had the 4x
  // offer waiting that a ring which ran full always gets, and the producer crossed again.
  EXPECT_GE(b->ring.capacity(), 16u * 256u);
  EndSession("test");

  std::map<uint64_t, std::string> strings;
  uint64_t records = 0, dropped = 0;
  ASSERT_NO_FATAL_FAILURE(test::ReadNvtxStream(dir, &strings, &dropped, [&](const schema::Chunk& chunk) {
    records += static_cast<uint64_t>(chunk.nvtx_size());
  }));
  EXPECT_EQ(dropped, 0u);
  EXPECT_EQ(records, 2 * pairs);
}

}  // namespace
}  // namespace gt
