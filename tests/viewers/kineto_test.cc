// Kineto-style JSON export: per-rank files parsed by Python's json (kineto_check.py checks the
// structural rules HTA and Chrome rely on and prints a summary compared here line by line).
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <sstream>

#include "tests/common/test_util.h"
#include "tests/viewers/viewer_fixture.h"
#include "tools/viewers/viewer_export.h"

namespace gt::viewers {
namespace {

using testing::Us;

Status Export(const std::string& db, const std::string& out, bool force = false, ViewerResult* result = nullptr) {
  ViewerOptions o;
  o.format = ViewerFormat::kKinetoJson;
  o.database = db;
  o.output = out;
  o.force = force;
  ViewerResult r;
  Status st = ExportViewer(o, &r);
  if (result != nullptr)
    *result = r;
  return st;
}

// kineto_check.py's summary lines; ERROR lines fail the test.
std::vector<std::string> Check(const std::string& target) {
  test::RunResult r = test::RunProgram({"python3", std::string(GT_VIEWERS_TEST_DIR) + "/kineto_check.py", target});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  std::vector<std::string> lines;
  std::istringstream in(r.out);
  for (std::string line; std::getline(in, line);) {
    EXPECT_NE(line.rfind("ERROR", 0), 0u) << line;
    lines.push_back(line);
  }
  return lines;
}

std::vector<std::string> WithPrefix(const std::vector<std::string>& lines, const std::string& prefix) {
  std::vector<std::string> out;
  for (const std::string& l : lines) {
    if (l.rfind(prefix, 0) == 0)
      out.push_back(l);
  }
  return out;
}

std::string Us3(int64_t us) {
  return std::to_string(us) + ".000";
}

TEST(Kineto, OneFilePerRankWithKinetoConventions) {
  test::TempDir dir;
  testing::WriteFixture(dir.File("run.sqlite"));
  ViewerResult result;
  Status st = Export(dir.File("run.sqlite"), dir.File("run.kineto"), false, &result);
  ASSERT_TRUE(st.ok()) << st.message();
  ASSERT_EQ(result.outputs.size(), 5u);
  EXPECT_EQ(result.outputs[0], dir.File("run.kineto/rank_0.json"));
  for (const auto& entry : std::filesystem::directory_iterator(dir.path())) {
    EXPECT_EQ(entry.path().string().find("gtrace-tmp"), std::string::npos) << entry.path();
  }
  std::vector<std::string> lines = Check(dir.File("run.kineto"));

  EXPECT_EQ(WithPrefix(lines, "file "),
            (std::vector<std::string>{
                "file rank_0.json rank=0 world=5 devices=[0]", "file rank_1.json rank=1 world=5 devices=[0]",
                "file rank_2.json rank=2 world=5 devices=[0]", "file rank_3.json rank=3 world=5 devices=[0]",
                "file rank_4.json rank=4 world=5 devices=[]"}));
  EXPECT_EQ(
      WithPrefix(lines, "count rank_2.json "),
      (std::vector<std::string>{
          "count rank_2.json C/gpu_metrics 6", "count rank_2.json M/process_labels 1",
          "count rank_2.json M/process_name 2",  // the process and GPU 0
          "count rank_2.json M/process_sort_index 2",
          "count rank_2.json M/thread_name 6",  // 2 threads + 4 streams
          "count rank_2.json X/cuda_driver 1", "count rank_2.json X/cuda_runtime 10", "count rank_2.json X/cuda_sync 2",
          "count rank_2.json X/gpu_memcpy 1", "count rank_2.json X/gpu_memset 1", "count rank_2.json X/kernel 6",
          "count rank_2.json X/user_annotation 4",  // step, forward, ncclAllReduce, prefetch
          "count rank_2.json f/ac2g 8", "count rank_2.json i/user_annotation 1", "count rank_2.json s/ac2g 7"}));
  EXPECT_EQ(
      WithPrefix(lines, "count rank_4.json "),
      (std::vector<std::string>{"count rank_4.json M/process_labels 1", "count rank_4.json M/process_name 1",
                                "count rank_4.json M/process_sort_index 1", "count rank_4.json M/thread_name 1",
                                "count rank_4.json X/user_annotation 1", "count rank_4.json i/user_annotation 1"}));
  // Names and times (us with ns precision) of rank 1's GPU work: shifted by 100 us.
  auto has = [&](const std::string& line) { return std::find(lines.begin(), lines.end(), line) != lines.end(); };
  EXPECT_TRUE(has("event rank_1.json kernel void compute_kernel<float>(float *, int) " + Us3(3100) + " " + Us3(1000)));
  EXPECT_TRUE(
      has("event rank_1.json kernel ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>) " +
          Us3(5900) + " " + Us3(1000)));
  EXPECT_TRUE(has("event rank_1.json gpu_memcpy Memcpy HtoD (Pageable -> Device) " + Us3(4200) + " " + Us3(100)));
  EXPECT_TRUE(has("event rank_1.json gpu_memset Memset (Device) " + Us3(4400) + " 50.000"));
  EXPECT_TRUE(has("event rank_1.json cuda_sync Stream Sync " + Us3(7200) + " " + Us3(1300)));
  EXPECT_TRUE(has("event rank_1.json cuda_sync Context Sync " + Us3(8700) + " " + Us3(100)));
  EXPECT_TRUE(has("event rank_1.json cuda_runtime cudaLaunchKernel " + Us3(2200) + " " + Us3(200)));
  EXPECT_TRUE(has("event rank_1.json cuda_driver cuLaunchKernel " + Us3(2250) + " " + Us3(100)));
  EXPECT_TRUE(has("event rank_1.json user_annotation forward " + Us3(2100) + " " + Us3(3000)));
  EXPECT_FALSE(has("event rank_1.json user_annotation dangling " + Us3(8100) + " 0.000"));

  // Header facts HTA and Perfetto read.
  std::string rank0 = test::ReadFile(dir.File("run.kineto/rank_0.json"));
  EXPECT_NE(rank0.find("\"distributedInfo\": {\"backend\": \"nccl\", \"rank\": 0, \"world_size\": 5},\n"),
            std::string::npos);
  EXPECT_NE(rank0.find("{\"id\": 0, \"name\": \"NVIDIA H100 80GB HBM3\", \"totalGlobalMem\": 85045460992, "
                       "\"computeMajor\": 9, \"computeMinor\": 0, \"maxThreadsPerBlock\": 1024, "
                       "\"maxThreadsPerMultiprocessor\": 2048, \"regsPerBlock\": 65536, \"regsPerMultiprocessor\": "
                       "65536, \"warpSize\": 32, \"sharedMemPerBlock\": 49152, \"sharedMemPerBlockOptin\": 232448, "
                       "\"sharedMemPerMultiprocessor\": 233472, \"numSms\": 132}"),
            std::string::npos);
  EXPECT_NE(rank0.find("\"baseTimeNanoseconds\": 1700000000000000000,"), std::string::npos);
  // HTA counts any event with a stream as GPU work: the context sync (no stream) says -1.
  EXPECT_NE(rank0.find("\"name\": \"Context Sync\", \"pid\": 0, \"tid\": 0"), std::string::npos);
  EXPECT_NE(rank0.find("\"args\": {\"device\": 0, \"stream\": -1, \"correlation\": 18}"), std::string::npos);
  // One process per rank: flow ids are the correlation ids, as Kineto writes them.
  EXPECT_NE(rank0.find("{\"ph\": \"s\", \"id\": 10, \"pid\": 1000, \"tid\": 1000, \"ts\": 2100.000, \"cat\": \"ac2g\""),
            std::string::npos);
}

TEST(Kineto, SingleFileOnlyForOneRank) {
  test::TempDir dir;
  testing::FixtureOptions one;
  one.ranks = 1;
  one.extra_process = false;
  testing::WriteFixture(dir.File("one.sqlite"), one);
  ASSERT_TRUE(Export(dir.File("one.sqlite"), dir.File("one.json")).ok());
  std::vector<std::string> lines = Check(dir.File("one.json"));
  EXPECT_EQ(WithPrefix(lines, "file "), std::vector<std::string>{"file one.json rank=0 world=1 devices=[0]"});

  testing::WriteFixture(dir.File("two.sqlite"), testing::FixtureOptions{2, false, true, false});
  Status st = Export(dir.File("two.sqlite"), dir.File("two.json"));
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.message(), "the export holds 2 ranks; -o " + dir.File("two.json") +
                              " must name a directory (one JSON file per rank), not a .json file");
  EXPECT_TRUE(dir.Find("two.json").empty());
}

TEST(Kineto, ExistingOutputsAreKeptOrReplacedSafely) {
  test::TempDir dir;
  testing::WriteFixture(dir.File("run.sqlite"), testing::FixtureOptions{2, false, false, false});
  test::WriteFile(dir.File("out.json"), "mine");
  Status st = Export(dir.File("run.sqlite"), dir.File("out.json"));  // 2 ranks: error before writing
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(test::ReadFile(dir.File("out.json")), "mine");

  ASSERT_EQ(::mkdir(dir.File("k").c_str(), 0755), 0);
  test::WriteFile(dir.File("k/rank_7.json"), "{}");
  st = Export(dir.File("run.sqlite"), dir.File("k"));
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.message(), dir.File("k") + " exists; use --force-overwrite to replace it");
  EXPECT_EQ(test::ReadFile(dir.File("k/rank_7.json")), "{}");
  // A directory of *.json files (an earlier export) is replaced as a whole with force.
  ASSERT_TRUE(Export(dir.File("run.sqlite"), dir.File("k"), true).ok());
  std::vector<std::string> lines = Check(dir.File("k"));
  EXPECT_EQ(WithPrefix(lines, "file ").size(), 2u);
  EXPECT_FALSE(test::ReadFile(dir.File("k/rank_0.json")).empty());
  EXPECT_TRUE(test::ReadFile(dir.File("k/rank_7.json")).empty());  // gone with the old directory
  // Anything else in it: refused even with force.
  test::WriteFile(dir.File("k/notes.txt"), "keep me");
  st = Export(dir.File("run.sqlite"), dir.File("k"), true);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.message(), dir.File("k") + " holds files other than *.json; not replacing it (remove it yourself)");
  EXPECT_EQ(test::ReadFile(dir.File("k/notes.txt")), "keep me");
}

TEST(Kineto, StringsAreValidJson) {
  test::TempDir dir;
  const std::string nasty = std::string("q\"b\\s\n\t\x01 ") + "\xff\xfe" + " \xe2\x82\xac";  // invalid bytes, euro
  {
    testing::FixtureDb db(dir.File("s.sqlite"));
    db.Nvtx(59, Us(1), Us(2), testing::GlobalTid(0, 9, 9), nasty, false, 0);
  }
  ASSERT_TRUE(Export(dir.File("s.sqlite"), dir.File("s.json")).ok());
  std::vector<std::string> lines = Check(dir.File("s.json"));
  // Python decoded it: the line has the text back, invalid bytes as U+FFFD.
  bool found = false;
  for (const std::string& l : lines) {
    found |=
        l.find(std::string("q\"b\\s\n")) != std::string::npos || l.find("user_annotation q\"b\\s") != std::string::npos;
  }
  EXPECT_TRUE(found);
  std::string text = test::ReadFile(dir.File("s.json"));
  EXPECT_NE(text.find(R"("name": "q\"b\\s\n\t\u0001 )"
                      "\xef\xbf\xbd\xef\xbf\xbd"
                      " \xe2\x82\xac\""),
            std::string::npos);
}

TEST(Kineto, ManyRanksTakeSeveralPasses) {
  // More ranks than one pass keeps files open for (kKinetoRanksPerPass = 256): every rank still gets
  // exactly its own events.
  test::TempDir dir;
  const int ranks = 300;
  {
    testing::FixtureDb db(dir.File("many.sqlite"));
    db.Ensure("MPI_RANKS");
    for (int r = 0; r < ranks; ++r) {
      const int64_t pid = 10000 + r;
      db.Runtime(Us(r), Us(r) + 100, testing::GlobalTid(0, pid, pid), 1, "cudaFree_v3020");
      db.Run("INSERT INTO MPI_RANKS (globalTid, rank) VALUES (?, ?)",
             {testing::GlobalTid(0, pid, pid), int64_t{ranks - 1 - r}});
    }
  }
  ViewerResult result;
  ASSERT_TRUE(Export(dir.File("many.sqlite"), dir.File("many"), false, &result).ok());
  ASSERT_EQ(result.outputs.size(), static_cast<size_t>(ranks));
  std::vector<std::string> lines = Check(dir.File("many"));
  EXPECT_EQ(WithPrefix(lines, "event ").size(), static_cast<size_t>(ranks));
  for (int rank : {0, 1, 255, 256, 299}) {
    const std::string file = "rank_" + std::to_string(rank) + ".json";
    const int r = ranks - 1 - rank;  // the process that has this rank
    EXPECT_EQ(WithPrefix(lines, "event " + file + " "),
              std::vector<std::string>{"event " + file + " cuda_runtime cudaFree " + Us3(r) + " 0.100"});
    EXPECT_EQ(WithPrefix(lines, "file " + file + " "),
              std::vector<std::string>{"file " + file + " rank=" + std::to_string(rank) + " world=300 devices=[]"});
  }
}

}  // namespace
}  // namespace gt::viewers
