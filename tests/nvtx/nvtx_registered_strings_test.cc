// Registered strings past the old 65,536-entry table (issue 28 item 6): 1 M strings registered
// through nvtxDomainRegisterStringA, then a range named by each of the last ones; every range must
// carry its registered string's exact text after the stream is read back. In-process (fake NVTX
// table), one session.
#include <gtest/gtest.h>
#include <stdlib.h>

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

TEST(NvtxRegisteredStrings, OneMillionRegisteredStringsKeepTheirNames) {
  test::TempDir dir;
  setenv("GTRACE_OUTPUT", dir.File("reg").c_str(), 1);
  setenv("GTRACE_TRACE", "nvtx", 1);
  ASSERT_EQ(nvtx::InitializeCore(&test::GetExportTable), 1);
  auto create = test::Core2<nvtxDomainHandle_t (*)(const char*)>(NVTX_CBID_CORE2_DomainCreateA);
  auto reg = test::Core2<nvtxStringHandle_t (*)(nvtxDomainHandle_t, const char*)>(NVTX_CBID_CORE2_DomainRegisterStringA);
  auto push = test::Core2<int (*)(nvtxDomainHandle_t, const nvtxEventAttributes_t*)>(NVTX_CBID_CORE2_DomainRangePushEx);
  auto pop = test::Core2<int (*)(nvtxDomainHandle_t)>(NVTX_CBID_CORE2_DomainRangePop);
  ASSERT_NE(reg, nullptr);
  nvtxDomainHandle_t domain = create("reg");
  constexpr int kStrings = 1000000;
  constexpr int kRanges = 1000;  // named by the last 1,000 strings
  std::vector<nvtxStringHandle_t> handles(kStrings);
  for (int i = 0; i < kStrings; ++i) {
    std::string text = "s" + std::to_string(i);
    handles[i] = reg(domain, text.c_str());
    ASSERT_NE(handles[i], nullptr) << i;
  }
  for (int i = kStrings - kRanges; i < kStrings; ++i) {
    nvtxEventAttributes_t attr{};
    attr.version = NVTX_VERSION;
    attr.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    attr.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
    attr.message.registered = handles[i];
    ASSERT_EQ(push(domain, &attr), 0);
    ASSERT_EQ(pop(domain), 0);
  }
  EndSession("test");

  std::map<uint64_t, std::string> strings, registered;
  std::vector<std::string> names;
  uint64_t dropped = 0;
  ASSERT_NO_FATAL_FAILURE(test::ReadNvtxStream(dir, &strings, &dropped, [&](const schema::Chunk& chunk) {
    for (const auto& s : chunk.nvtx_strings()) registered[s.id()] = s.text();
    for (const auto& e : chunk.nvtx()) {
      if (e.kind() != schema::NVTX_EVENT_KIND_PUSH) continue;
      if (e.registered_string_id() != 0) {
        names.push_back(registered.count(e.registered_string_id()) ? registered[e.registered_string_id()] : "?");
      } else {
        names.push_back(strings.count(e.string_id()) ? strings[e.string_id()] : "");
      }
    }
  }));
  EXPECT_EQ(dropped, 0u);
  ASSERT_EQ(names.size(), static_cast<size_t>(kRanges));
  for (int i = 0; i < kRanges; ++i) EXPECT_EQ(names[i], "s" + std::to_string(kStrings - kRanges + i)) << i;
}

// Past 2,097,152 registered strings the handle is null (the range has no name): counted and said,
// in one stderr line and in the stream as a diagnostic (issue 28 item 6; it was silent).
TEST(NvtxRegisteredStrings, PastTheLimitTheCountIsInTheStream) {
  test::TempDir dir;
  setenv("GTRACE_OUTPUT", dir.File("over").c_str(), 1);
  setenv("GTRACE_TRACE", "nvtx", 1);
  ASSERT_EQ(nvtx::InitializeCore(&test::GetExportTable), 1);
  auto create = test::Core2<nvtxDomainHandle_t (*)(const char*)>(NVTX_CBID_CORE2_DomainCreateA);
  auto reg = test::Core2<nvtxStringHandle_t (*)(nvtxDomainHandle_t, const char*)>(NVTX_CBID_CORE2_DomainRegisterStringA);
  ASSERT_NE(reg, nullptr);
  nvtxDomainHandle_t domain = create("over");
  // The registry is the process's: an earlier test in this process may have filled part of it.
  uint64_t nulls = 0;
  for (uint64_t i = 0; nulls < 10 && i < 3000000; ++i) {
    std::string text = "o" + std::to_string(i);
    if (reg(domain, text.c_str()) == nullptr) ++nulls;
  }
  ASSERT_EQ(nulls, 10u);
  EndSession("test");
  std::map<uint64_t, std::string> strings;
  uint64_t dropped = 0;
  std::vector<std::string> diags;
  ASSERT_NO_FATAL_FAILURE(test::ReadNvtxStream(dir, &strings, &dropped, [&](const schema::Chunk& chunk) {
    for (const auto& d : chunk.diagnostics()) diags.push_back(d.text());
  }));
  // The first diagnostic may have come while the loop still ran; the last one has the final count.
  std::string last;
  for (const std::string& d : diags) {
    if (d.rfind("NVTX registry full: ", 0) == 0) last = d;
  }
  EXPECT_EQ(last.substr(0, 28), "NVTX registry full: 10 domai") << last;
}

}  // namespace
}  // namespace gt
