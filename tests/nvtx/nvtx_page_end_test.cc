// The one-slot ASCII record (WriteAsciiRecordIn, inject/nvtx/nvtx_record.cc) reads a short message a
// word at a time, so up to 7 bytes past its terminator, but only when all the words it may read lie
// in the message's page; near the end of a page it falls back to strnlen. This test puts messages
// of every length from 0 to 48 bytes so that their terminator is the last byte before an
// inaccessible page (a word read past it would crash the test), and others at the start of a page
// followed by non-zero garbage after the terminator (which must not leak into the text). Push,
// start and mark; every message must come back exactly, in call order, with no drop.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <map>
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

TEST(NvtxPageEnd, ShortMessagesNextToAnInaccessiblePageComeBackExactly) {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  auto* mem = static_cast<char*>(mmap(nullptr, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  ASSERT_NE(mem, MAP_FAILED);
  ASSERT_EQ(mprotect(mem + page, page, PROT_NONE), 0);  // any read past the first page faults

  test::TempDir dir;
  setenv("GTRACE_OUTPUT", dir.File("page_end").c_str(), 1);
  setenv("GTRACE_TRACE", "nvtx", 1);
  ASSERT_EQ(nvtx::InitializeCore(&test::GetExportTable), 1);
  auto push = Core<int (*)(const char*)>(NVTX_CBID_CORE_RangePushA);
  auto pop = Core<int (*)()>(NVTX_CBID_CORE_RangePop);
  auto start = Core<nvtxRangeId_t (*)(const char*)>(NVTX_CBID_CORE_RangeStartA);
  auto end = Core<void (*)(nvtxRangeId_t)>(NVTX_CBID_CORE_RangeEnd);
  auto mark = Core<void (*)(const char*)>(NVTX_CBID_CORE_MarkA);
  ASSERT_NE(push, nullptr);

  std::vector<std::string> expected;  // kind|text, in call order
  auto note = [&expected](int kind, const std::string& text) { expected.push_back(std::to_string(kind) + "|" + text); };
  for (size_t n = 0; n <= 48; ++n) {
    // Ends on the page's last byte.
    char* at_end = mem + page - n - 1;
    std::memset(at_end, static_cast<int>('a' + n % 26), n);
    at_end[n] = '\0';
    std::string text(at_end, n);
    ASSERT_EQ(push(at_end), 0);
    note(schema::NVTX_EVENT_KIND_PUSH, text);
    ASSERT_EQ(pop(), 0);
    note(schema::NVTX_EVENT_KIND_POP, "");
    nvtxRangeId_t id = start(at_end);
    ASSERT_NE(id, 0u);
    note(schema::NVTX_EVENT_KIND_START, text);
    end(id);
    note(schema::NVTX_EVENT_KIND_END, "");
    mark(at_end);
    note(schema::NVTX_EVENT_KIND_MARK, text);
    // At the page's start, garbage after the terminator.
    std::memset(mem, 'Z', 64);
    std::memset(mem, static_cast<int>('A' + n % 26), n);
    mem[n] = '\0';
    std::string front(mem, n);
    ASSERT_EQ(push(mem), 0);
    note(schema::NVTX_EVENT_KIND_PUSH, front);
    ASSERT_EQ(pop(), 0);
    note(schema::NVTX_EVENT_KIND_POP, "");
    id = start(mem);
    note(schema::NVTX_EVENT_KIND_START, front);
    end(id);
    note(schema::NVTX_EVENT_KIND_END, "");
    mark(mem);
    note(schema::NVTX_EVENT_KIND_MARK, front);
  }
  EndSession("test");
  munmap(mem, 2 * page);

  std::map<uint64_t, std::string> strings;
  std::vector<std::string> got;
  uint64_t dropped = 0;
  ASSERT_NO_FATAL_FAILURE(test::ReadNvtxStream(dir, &strings, &dropped, [&](const schema::Chunk& chunk) {
    for (const auto& e : chunk.nvtx())
      got.push_back(std::to_string(e.kind()) + "|" + (e.string_id() != 0 ? strings[e.string_id()] : ""));
  }));
  EXPECT_EQ(dropped, 0u);
  ASSERT_EQ(got.size(), expected.size());
  ASSERT_EQ(got.size(), 49u * 10u);
  for (size_t i = 0; i < got.size(); ++i) EXPECT_EQ(got[i], expected[i]) << "event " << i;
}

}  // namespace
}  // namespace gt
