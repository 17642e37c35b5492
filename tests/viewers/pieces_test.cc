// The small parts of tools/viewers: time ordering of ends, lanes, bounded name tables, JSON text,
// display names, progress, outputs that appear only when complete.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdio>
#include <filesystem>

#include "tests/common/test_util.h"
#include "tools/viewers/activity_names.h"
#include "tools/viewers/end_queue.h"
#include "tools/viewers/json_text.h"
#include "tools/viewers/lane_allocator.h"
#include "tools/viewers/name_table.h"
#include "tools/viewers/output_file.h"
#include "tools/viewers/progress.h"

namespace gt::viewers {
namespace {

TEST(Pieces, EndQueueOrdersByTimeAndClosesInnerFirst) {
  EndQueue<std::string> q;
  q.Push(30, "outer");
  q.Push(30, "inner");  // same end, scheduled later: nested inside outer
  q.Push(10, "early");
  q.Push(20, "middle");
  std::vector<std::string> out;
  auto take = [&](int64_t t, const std::string& s) { out.push_back(s + "@" + std::to_string(t)); };
  q.PopThrough(15, take);
  EXPECT_EQ(out, std::vector<std::string>{"early@10"});
  q.PopThrough(20, take);  // inclusive
  q.PopAll(take);
  EXPECT_EQ(out, (std::vector<std::string>{"early@10", "middle@20", "inner@30", "outer@30"}));
  EXPECT_EQ(q.size(), 0u);
}

TEST(Pieces, LanesKeepEveryLaneNested) {
  LaneAllocator lanes;
  EXPECT_EQ(lanes.Place(0, 100), 0u);    // outer
  EXPECT_EQ(lanes.Place(10, 50), 0u);    // nested
  EXPECT_EQ(lanes.Place(40, 120), 1u);   // crosses both ends: another lane
  EXPECT_EQ(lanes.Place(60, 90), 0u);    // nested in outer again (10..50 ended)
  EXPECT_EQ(lanes.Place(100, 130), 0u);  // everything on lane 0 ended by 100
  EXPECT_EQ(lanes.Place(110, 140), 2u);  // crosses lane 0's 130 and lane 1's 120
  EXPECT_EQ(lanes.lanes(), 3u);
}

TEST(Pieces, NameTableIsBounded) {
  NameTable t(2);
  bool added = false;
  EXPECT_EQ(t.Lookup("a", &added), 1u);
  EXPECT_TRUE(added);
  EXPECT_EQ(t.Lookup("b", &added), 2u);
  EXPECT_EQ(t.Lookup("a", &added), 1u);
  EXPECT_FALSE(added);
  EXPECT_EQ(t.Lookup("c", &added), 0u);  // full
  EXPECT_FALSE(added);
  EXPECT_TRUE(t.full());
  EXPECT_EQ(t.names(), (std::vector<std::string>{"a", "b"}));
}

TEST(Pieces, JsonText) {
  std::string s;
  AppendJsonString(&s,
                   std::string("a\"b\\c\n\x1f\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80") + "\xc3" + "x" + "\xed\xa0\x80");
  EXPECT_EQ(
      s,
      "\"a\\\"b\\\\c\\n\\u001f\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\xef\xbf\xbdx\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\"");
  s.clear();
  AppendMicros(&s, 1234567);
  s += " ";
  AppendMicros(&s, 5);
  s += " ";
  AppendMicros(&s, 0);
  EXPECT_EQ(s, "1234.567 0.005 0.000");
}

TEST(Pieces, DisplayNames) {
  EXPECT_EQ(ApiDisplayName("cudaLaunchKernel_v7000"), "cudaLaunchKernel");
  EXPECT_EQ(ApiDisplayName("cuLaunchKernel"), "cuLaunchKernel");
  EXPECT_EQ(ApiDisplayName("cudaFoo_vX"), "cudaFoo_vX");
  EXPECT_EQ(ApiDisplayName("_v1"), "_v1");
  EXPECT_EQ(MemcpyName(1, 0, 2), "Memcpy HtoD (Pageable -> Device)");
  EXPECT_EQ(MemcpyName(2, 2, 1), "Memcpy DtoH (Device -> Pinned)");
  EXPECT_EQ(MemcpyName(10, -1, -1), "Memcpy PtoP");
  EXPECT_EQ(MemcpyName(99, 0, 0), "Memcpy Unknown (Pageable -> Pageable)");
  EXPECT_EQ(MemsetName(2), "Memset (Device)");
  EXPECT_EQ(MemsetName(-1), "Memset");
  EXPECT_EQ(SyncName(3), "Stream Sync");
  EXPECT_EQ(SyncName(9), "Unknown Sync");
  EXPECT_TRUE(IsNcclKernel("ncclDevKernel_AllReduce_Sum_f32_RING_LL(x)"));
  EXPECT_TRUE(IsNcclKernel("ncclKernel_AllGather_RING_LL_Sum_int8_t"));
  EXPECT_FALSE(IsNcclKernel("void nccl_like(int)"));
  EXPECT_EQ(CategorizeApi("cudaLaunchKernel"), ApiCategory::kLaunch);
  EXPECT_EQ(CategorizeApi("cudaGraphLaunch"), ApiCategory::kLaunch);
  EXPECT_EQ(CategorizeApi("cudaMemcpyAsync"), ApiCategory::kMemoryTransfer);
  EXPECT_EQ(CategorizeApi("cuMemsetD8Async"), ApiCategory::kMemoryTransfer);
  EXPECT_EQ(CategorizeApi("cudaStreamSynchronize"), ApiCategory::kSynchronization);
  EXPECT_EQ(CategorizeApi("cudaStreamWaitEvent"), ApiCategory::kSynchronization);
  EXPECT_EQ(CategorizeApi("cudaMalloc"), ApiCategory::kAllocation);
  EXPECT_EQ(CategorizeApi("cuMemAlloc"), ApiCategory::kAllocation);
  EXPECT_EQ(CategorizeApi("cudaFreeHost"), ApiCategory::kFree);
  EXPECT_EQ(CategorizeApi("cudaGetDeviceProperties"), ApiCategory::kOther);
}

TEST(Pieces, ProgressDrawsOnlyWhenEnabled) {
  test::TempDir dir;
  FILE* f = std::fopen(dir.File("p").c_str(), "w+");
  ASSERT_NE(f, nullptr);
  {
    Progress off("export x", 5000, false, f);
    for (uint64_t i = 1; i <= 5000; ++i)
      off.Update(i);
    off.Finish();
    Progress on("export x", 5000, true, f);
    for (uint64_t i = 1; i <= 5000; ++i)
      on.Update(i);
    on.Finish();
    EXPECT_TRUE(on.drew());
  }
  std::fclose(f);
  std::string text = test::ReadFile(dir.File("p"));
  EXPECT_EQ(text.rfind("\rgtrace: export x:  20% (1024/5000 events)", 0), 0u) << text;
  EXPECT_NE(text.find("\rgtrace: export x: 100% (5000/5000 events)\n"), std::string::npos);
  EXPECT_EQ(text.back(), '\n');
}

TEST(Pieces, OutputFileAppearsOnlyWhenCommitted) {
  test::TempDir dir;
  {
    std::unique_ptr<OutputFile> f;
    ASSERT_TRUE(OutputFile::Create(dir.File("a.out"), false, &f).ok());
    f->Write("half");
  }  // abandoned: nothing left
  EXPECT_TRUE(std::filesystem::is_empty(dir.path()));
  std::unique_ptr<OutputFile> f;
  ASSERT_TRUE(OutputFile::Create(dir.File("a.out"), false, &f).ok());
  f->Write("whole");
  EXPECT_FALSE(std::filesystem::exists(dir.File("a.out")));
  ASSERT_TRUE(f->Commit().ok());
  EXPECT_EQ(test::ReadFile(dir.File("a.out")), "whole");
  Status st = OutputFile::Create(dir.File("a.out"), false, &f);
  EXPECT_FALSE(st.ok());
  EXPECT_EQ(st.message(), dir.File("a.out") + " exists; use --force-overwrite to replace it");
  st = OutputFile::Create(dir.path(), true, &f);
  EXPECT_EQ(st.message(), dir.path() + " is a directory");
  // A full disk is reported when committing, with the file's name.
  if (std::filesystem::exists("/dev/full")) {
    std::filesystem::create_symlink("/dev/full", dir.File("full.gtrace-tmp-" + std::to_string(getpid())));
    ASSERT_TRUE(OutputFile::Create(dir.File("full"), false, &f).ok());
    f->Write(std::string(1 << 21, 'x'));
    st = f->Commit();
    EXPECT_FALSE(st.ok());
    EXPECT_EQ(st.message().rfind("cannot write " + dir.File("full") + ": ", 0), 0u) << st.message();
  }
}

}  // namespace
}  // namespace gt::viewers
