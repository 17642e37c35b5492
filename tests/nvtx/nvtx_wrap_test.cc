// NVTX records around the end of a small ring, in-process (fake NVTX table): the drain thread decodes
// a record where it lies unless it wraps around the end of the ring's storage (then it copies it
// out first; collector/drainer.cc), and POP/END take the bare one-slot record (WriteBareRecord). A
// 256-slot ring (GTRACE_THREAD_BUFFER_KB=16) goes round about 78 times with records of one to four
// slots, so records start at every offset and many straddle the end; the ring is flushed between
// batches of under half a ring, so nothing is dropped. Every message, depth and range id must come
// back exactly, in call order, with no drop.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <map>
#include <string>
#include <vector>

#include "collector/session.h"
#include "inject/nvtx/nvtx_hooks.h"
#include "inject/nvtx/nvtx_record.h"
#include "tests/common/test_util.h"
#include "tests/nvtx/fake_nvtx_table.h"
#include "tests/nvtx/read_nvtx_stream.h"

namespace gt {
namespace {

using test::Core;

struct Expected {
  int kind;
  std::string text;
  uint32_t depth;
  uint64_t range_id;
};

// Slots a record takes in the ring (the layout of nvtx_record.h: 24-byte head, 8-byte id for
// START/END, then the text).
uint32_t SlotsOf(int kind, size_t text_bytes) {
  size_t bytes = sizeof(nvtx::RecordBase) + (nvtx::KindHasId(static_cast<uint8_t>(kind)) ? 8 : 0) + text_bytes;
  return static_cast<uint32_t>((bytes + kSlotBytes - 1) / kSlotBytes);
}

TEST(NvtxWrap, RecordsAcrossTheRingsEndComeBackExactly) {
  test::TempDir dir;
  setenv("GTRACE_OUTPUT", dir.File("wrap").c_str(), 1);
  setenv("GTRACE_TRACE", "nvtx", 1);
  setenv("GTRACE_THREAD_BUFFER_KB", "16", 1);  // 256 slots
  ASSERT_EQ(nvtx::InitializeCore(&test::GetExportTable), 1);
  auto push = Core<int (*)(const char*)>(NVTX_CBID_CORE_RangePushA);
  auto pop = Core<int (*)()>(NVTX_CBID_CORE_RangePop);
  auto start = Core<nvtxRangeId_t (*)(const char*)>(NVTX_CBID_CORE_RangeStartA);
  auto end = Core<void (*)(nvtxRangeId_t)>(NVTX_CBID_CORE_RangeEnd);
  auto mark = Core<void (*)(const char*)>(NVTX_CBID_CORE_MarkA);
  ASSERT_NE(push, nullptr);

  std::vector<Expected> expected;
  uint64_t pos = 0;         // ring position of the next record (this thread's ring starts at 0)
  uint64_t straddling = 0;  // records that wrap around the end of the 256-slot storage
  auto note = [&](int kind, const std::string& text, uint32_t depth, uint64_t id) {
    uint32_t n = SlotsOf(kind, text.size());
    if (pos % 256 + n > 256)
      ++straddling;
    pos += n;
    expected.push_back({kind, text, depth, id});
  };
  // Text lengths that give 1, 2, 3 and 4 slots, around each boundary (40/41, 104/105, 168/169, 200).
  const std::vector<size_t> lengths = {0, 1, 39, 40, 41, 103, 104, 105, 167, 168, 169, 200, 7, 33};
  size_t li = 0;
  for (int batch = 0; batch < 2000; ++batch) {
    // Under 128 slots per batch (half the ring): 3 records of up to 4 slots + 4 of one slot each.
    std::string a(lengths[li++ % lengths.size()], static_cast<char>('a' + batch % 26));
    std::string b(lengths[li++ % lengths.size()], static_cast<char>('A' + batch % 26));
    std::string c(lengths[li++ % lengths.size()], static_cast<char>('0' + batch % 10));
    ASSERT_EQ(push(a.c_str()), 0);
    note(schema::NVTX_EVENT_KIND_PUSH, a, 0, 0);
    ASSERT_EQ(push(b.c_str()), 1);
    note(schema::NVTX_EVENT_KIND_PUSH, b, 1, 0);
    nvtxRangeId_t id = start(c.c_str());
    ASSERT_NE(id, 0u);
    note(schema::NVTX_EVENT_KIND_START, c, 0, id);
    ASSERT_EQ(pop(), 1);
    note(schema::NVTX_EVENT_KIND_POP, "", 1, 0);
    end(id);
    note(schema::NVTX_EVENT_KIND_END, "", 0, id);
    ASSERT_EQ(pop(), 0);
    note(schema::NVTX_EVENT_KIND_POP, "", 0, 0);
    if (batch % 7 == 0) {
      mark(c.c_str());
      note(schema::NVTX_EVENT_KIND_MARK, c, 0, 0);
    }
    RequestFlush(true);
  }
  EndSession("test");
  EXPECT_GT(pos, 256u * 70);  // about 78 laps
  EXPECT_GT(straddling, 25u) << "the sizes must make records wrap around the ring's end";

  std::map<uint64_t, std::string> strings;
  uint64_t dropped = 0;
  size_t i = 0;
  ASSERT_NO_FATAL_FAILURE(test::ReadNvtxStream(dir, &strings, &dropped, [&](const schema::Chunk& chunk) {
    for (const auto& e : chunk.nvtx()) {
      ASSERT_LT(i, expected.size());
      const Expected& x = expected[i];
      EXPECT_EQ(static_cast<int>(e.kind()), x.kind) << "event " << i;
      EXPECT_EQ(e.string_id() != 0 ? strings[e.string_id()] : std::string(), x.text) << "event " << i;
      EXPECT_EQ(e.depth(), x.depth) << "event " << i;
      EXPECT_EQ(e.range_id(), x.range_id) << "event " << i;
      ++i;
    }
  }));
  EXPECT_EQ(dropped, 0u);
  EXPECT_EQ(i, expected.size());
}

}  // namespace
}  // namespace gt
