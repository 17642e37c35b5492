// The NVTX record path in-process (fake NVTX table, tests/nvtx/fake_nvtx_table.h): messages of every
// length around the one-slot limit, with and without the optional fields that shrink the room for
// text, come back from the stream byte for byte, in call order, with their attributes: a record that
// fits its 64-byte head slot and one that spills into a second slot (nvtx_record.cc). Written for
// issue 16's one-slot record experiment (bench/results/2026-11-26-nvtx-one-slot.md); it pins the
// boundary whatever the record path looks like.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "collector/session.h"
#include "inject/nvtx/nvtx_hooks.h"
#include "tests/common/test_util.h"
#include "tests/nvtx/fake_nvtx_table.h"
#include "tests/nvtx/read_nvtx_stream.h"

namespace gt {
namespace {

using test::Core;

// A message of exactly `n` bytes, different for every n.
std::string Name(size_t n) {
  return std::string(n, static_cast<char>('a' + n % 26));
}

TEST(NvtxRecord, MessagesAroundTheOneSlotLimitComeBackExactly) {
  test::TempDir dir;
  setenv("GTRACE_OUTPUT", dir.File("record").c_str(), 1);
  setenv("GTRACE_TRACE", "nvtx", 1);
  ASSERT_EQ(nvtx::InitializeCore(&test::GetExportTable), 1);
  auto push = Core<int (*)(const char*)>(NVTX_CBID_CORE_RangePushA);
  auto push_ex = Core<int (*)(const nvtxEventAttributes_t*)>(NVTX_CBID_CORE_RangePushEx);
  auto push_w = Core<int (*)(const wchar_t*)>(NVTX_CBID_CORE_RangePushW);
  auto pop = Core<int (*)()>(NVTX_CBID_CORE_RangePop);
  auto mark = Core<void (*)(const char*)>(NVTX_CBID_CORE_MarkA);
  auto start = Core<nvtxRangeId_t (*)(const char*)>(NVTX_CBID_CORE_RangeStartA);
  auto end = Core<void (*)(nvtxRangeId_t)>(NVTX_CBID_CORE_RangeEnd);
  ASSERT_NE(push, nullptr);
  ASSERT_NE(push_ex, nullptr);

  // What the stream must hold, in order: kind|text|category|color|payload|depth|truncated.
  std::vector<std::string> expected;
  auto expect = [&expected](int kind, const std::string& text, uint32_t category = 0, int64_t color = -1,
                            int64_t payload = -1, uint32_t depth = 0, bool truncated = false) {
    std::ostringstream o;
    o << kind << "|" << text << "|" << category << "|" << color << "|" << payload << "|" << depth << "|" << truncated;
    expected.push_back(o.str());
  };
  // Push: 24-byte head, room for 40 bytes of text in the head slot.
  for (size_t n = 0; n <= 70; ++n) {
    ASSERT_EQ(push(Name(n).c_str()), static_cast<int>(n));
    expect(schema::NVTX_EVENT_KIND_PUSH, Name(n), 0, -1, -1, static_cast<uint32_t>(n));
  }
  for (int d = 70; d >= 0; --d) {
    ASSERT_EQ(pop(), d);
    expect(schema::NVTX_EVENT_KIND_POP, "", 0, -1, -1, static_cast<uint32_t>(d));
  }
  // PushEx with category, color and a 64-bit payload: 24 + 4 + 4 + 8 bytes of head, room for 24.
  for (size_t n = 20; n <= 28; ++n) {
    std::string text = Name(n);
    nvtxEventAttributes_t a{};
    a.version = NVTX_VERSION;
    a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    a.category = 5;
    a.colorType = NVTX_COLOR_ARGB;
    a.color = 0xff00ff00u;
    a.payloadType = NVTX_PAYLOAD_TYPE_UNSIGNED_INT64;
    a.payload.ullValue = 1000 + n;
    a.messageType = NVTX_MESSAGE_TYPE_ASCII;
    a.message.ascii = text.c_str();
    ASSERT_EQ(push_ex(&a), 0);
    expect(schema::NVTX_EVENT_KIND_PUSH, text, 5, 0xff00ff00u, static_cast<int64_t>(1000 + n));
    ASSERT_EQ(pop(), 0);
    expect(schema::NVTX_EVENT_KIND_POP, "");
  }
  // Mark: room for 40. Start/end: the range id takes 8 more, room for 32.
  for (size_t n = 38; n <= 42; ++n) {
    mark(Name(n).c_str());
    expect(schema::NVTX_EVENT_KIND_MARK, Name(n));
  }
  for (size_t n = 30; n <= 34; ++n) {
    nvtxRangeId_t id = start(Name(n).c_str());
    ASSERT_NE(id, 0u);
    end(id);
    expect(schema::NVTX_EVENT_KIND_START, Name(n));
    expect(schema::NVTX_EVENT_KIND_END, "");
  }
  // UTF-8 in the one-slot record; a message over the 4096-byte cap and a wide one (general path).
  push("gr\xc3\xbcn");
  expect(schema::NVTX_EVENT_KIND_PUSH, "gr\xc3\xbcn");
  pop();
  expect(schema::NVTX_EVENT_KIND_POP, "");
  std::string huge(5000, 'h');
  push(huge.c_str());
  expect(schema::NVTX_EVENT_KIND_PUSH, std::string(4096, 'h'), 0, -1, -1, 0, true);
  pop();
  expect(schema::NVTX_EVENT_KIND_POP, "");
  push_w(L"wide-\u00fc");
  expect(schema::NVTX_EVENT_KIND_PUSH, "wide-\xc3\xbc");
  pop();
  expect(schema::NVTX_EVENT_KIND_POP, "");
  EndSession("test");

  std::map<uint64_t, std::string> strings;
  std::vector<std::string> got;
  uint64_t dropped = 0, last_ts = 0, out_of_order = 0;
  ASSERT_NO_FATAL_FAILURE(test::ReadNvtxStream(dir, &strings, &dropped, [&](const schema::Chunk& chunk) {
    uint64_t ts = chunk.base_ns();
    for (const auto& e : chunk.nvtx()) {
      ts += static_cast<uint64_t>(e.ts_delta_ns());
      if (ts < last_ts)
        ++out_of_order;
      last_ts = ts;
      std::ostringstream o;
      o << e.kind() << "|" << (e.string_id() != 0 ? strings[e.string_id()] : "") << "|" << e.category() << "|"
        << (e.has_color_argb() ? static_cast<int64_t>(e.color_argb()) : -1) << "|"
        << (e.has_payload_uint64() ? static_cast<int64_t>(e.payload_uint64()) : -1) << "|" << e.depth() << "|"
        << e.message_truncated();
      got.push_back(o.str());
    }
  }));
  EXPECT_EQ(dropped, 0u);
  EXPECT_EQ(out_of_order, 0u);
  ASSERT_EQ(got.size(), expected.size());
  for (size_t i = 0; i < got.size(); ++i)
    EXPECT_EQ(got[i], expected[i]) << "event " << i;
}

}  // namespace
}  // namespace gt
