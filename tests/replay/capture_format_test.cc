// replay.CaptureFormat: raw capture mode's behaviour around the file (off by default, fail-soft on a
// bad directory) and the reader's handling of foreign, newer and cut files.
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <set>

#include "tests/fakes/capture_reader.h"
#include "tests/replay/replay_util.h"

namespace gt::test {
namespace {

std::string Header(uint32_t version) {
  std::string h(gt::rawcap::kCaptureMagic, 8);
  h.append(reinterpret_cast<const char*>(&version), 4);
  uint32_t header_bytes = gt::rawcap::kCaptureHeaderBytes;
  h.append(reinterpret_cast<const char*>(&header_bytes), 4);
  return h;
}

std::string Frame(uint32_t type, uint64_t seq, const std::string& payload) {
  std::string f;
  uint32_t n = static_cast<uint32_t>(payload.size());
  f.append(reinterpret_cast<const char*>(&type), 4);
  f.append(reinterpret_cast<const char*>(&n), 4);
  f.append(reinterpret_cast<const char*>(&seq), 8);
  return f + payload;
}

TEST(CaptureFormat, OffByDefault) {
  TempDir dir;
  TracedExport r = RunAndExport(dir, {SamplePath("fake_cuda_app"), "basic"}, {}, "plain");
  EXPECT_EQ(r.run.exit_code, 0) << r.run.err;
  EXPECT_EQ(r.run.err.find("raw capture"), std::string::npos) << r.run.err;
  EXPECT_TRUE(dir.Find(".gtcap").empty());
}

TEST(CaptureFormat, UnusableDirectoryIsReportedOnceAndTracingGoesOn) {
  TempDir dir;
  WriteFile(dir.File("not-a-dir"), "x");
  TracedExport r = RunAndExport(dir, {SamplePath("fake_cuda_app"), "basic"},
                                {{"GTRACE_RAW_CAPTURE_DIR", dir.File("not-a-dir/capture")}}, "bad");
  EXPECT_EQ(r.run.exit_code, 0) << r.run.err;
  size_t at = r.run.err.find("gtrace: raw capture off: cannot create GTRACE_RAW_CAPTURE_DIR '" +
                             dir.File("not-a-dir/capture") + "'");
  EXPECT_NE(at, std::string::npos) << r.run.err;
  EXPECT_EQ(r.run.err.find("raw capture", at + 20), std::string::npos) << "reported twice: " << r.run.err;
  ASSERT_FALSE(r.db.empty()) << r.export_err;
  Db db(r.db);
  EXPECT_EQ(db.Int("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL"), 4);
}

// 8 threads racing into the callback log: 2 (stream create) + 8 x 1100 x 2 callbacks; the log keeps
// exactly its 16384 records, all distinct and complete, and counts the rest as dropped.
TEST(CaptureFormat, FullCallbackLogKeepsItsCapacityAndCountsTheRest) {
  TempDir dir;
  TracedExport r = RunAndExport(dir, {SamplePath("fake_cuda_app"), "threads", "8", "1100"},
                                {{"GTRACE_RAW_CAPTURE_DIR", dir.File("cap")}}, "threads");
  EXPECT_EQ(r.run.exit_code, 0) << r.run.err;
  std::vector<std::string> files = TempDir::ListDir(dir.File("cap"));
  ASSERT_EQ(files.size(), 1u);
  fake::CaptureFile c;
  std::string error;
  ASSERT_TRUE(fake::ReadCaptureFile(dir.File("cap/" + files[0]), &c, &error)) << error;
  ASSERT_TRUE(c.has_end);
  EXPECT_EQ(c.end.callbacks, 16384u);
  EXPECT_EQ(c.end.callbacks_dropped, 2u + 8u * 1100u * 2u - 16384u);
  EXPECT_EQ(fake::CountFrames(c, gt::rawcap::kFrameCallback), 16384u);
  std::set<uint64_t> seqs;
  size_t named = 0;
  for (const fake::CaptureFrame& f : c.frames) {
    if (f.type != gt::rawcap::kFrameCallback)
      continue;
    seqs.insert(f.seq);
    gt::rawcap::CallbackRecord rec;
    std::memcpy(&rec, f.payload.data(), sizeof(rec));
    named += std::string(rec.function_name) == "cudaLaunchKernel_v7000" ||
             std::string(rec.function_name) == "cudaStreamCreate_v3020";
  }
  EXPECT_EQ(seqs.size(), 16384u);
  EXPECT_EQ(named, 16384u);
  // Tracing itself lost nothing to the capture.
  ASSERT_FALSE(r.db.empty()) << r.export_err;
  Db db(r.db);
  EXPECT_EQ(db.Int("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME"), 1 + 8 * 1100);
}

// A child forked after CUDA was initialised never writes the parent's capture (nor one of its own:
// CUPTI is inert there); the parent's capture stays complete and has the parent's calls only.
TEST(CaptureFormat, ForkedChildNeverWritesTheParentsCapture) {
  TempDir dir;
  TracedExport r =
      RunAndExport(dir, {SamplePath("fake_cuda_app"), "fork"}, {{"GTRACE_RAW_CAPTURE_DIR", dir.File("cap")}}, "fork");
  EXPECT_EQ(r.run.exit_code, 0) << r.run.err;
  EXPECT_EQ(r.run.err.find("VIOLATION"), std::string::npos) << r.run.err;
  std::vector<std::string> files = TempDir::ListDir(dir.File("cap"));
  ASSERT_EQ(files.size(), 1u);
  fake::CaptureFile c;
  std::string error;
  ASSERT_TRUE(fake::ReadCaptureFile(dir.File("cap/" + files[0]), &c, &error)) << error;
  EXPECT_TRUE(c.has_end);
  EXPECT_FALSE(c.cut);
  EXPECT_EQ(files[0], "capture-" + c.info["pid"] + ".gtcap");
  std::map<std::string, int> names;
  for (const fake::CaptureFrame& f : c.frames) {
    if (f.type != gt::rawcap::kFrameCallback)
      continue;
    gt::rawcap::CallbackRecord rec;
    std::memcpy(&rec, f.payload.data(), sizeof(rec));
    EXPECT_EQ(std::to_string(rec.tid), c.info["pid"]) << "a callback from another thread or process";
    ++names[rec.function_name];
  }
  // Parent: stream create + two launches, enter and exit; the child's cudaMalloc is not there.
  EXPECT_EQ(names, (std::map<std::string, int>{{"cudaStreamCreate_v3020", 2}, {"cudaLaunchKernel_v7000", 4}}));
}

TEST(CaptureFormat, ReaderKeepsCompleteFramesOfACutFile) {
  TempDir dir;
  std::string info = Frame(gt::rawcap::kFrameInfo, 0, "format=gtrace-raw-capture\npid=42\n");
  std::string cb(sizeof(gt::rawcap::CallbackRecord), '\0');
  std::string file = Header(1) + info + Frame(gt::rawcap::kFrameCallback, 1, cb) + Frame(99, 2, "future frame");
  std::string cut = Frame(gt::rawcap::kFrameCallback, 3, cb);
  WriteFile(dir.File("cut.gtcap"), file + cut.substr(0, 40));
  fake::CaptureFile c;
  std::string error;
  ASSERT_TRUE(fake::ReadCaptureFile(dir.File("cut.gtcap"), &c, &error)) << error;
  EXPECT_TRUE(c.cut);
  EXPECT_FALSE(c.has_end);
  ASSERT_EQ(c.frames.size(), 3u);  // info, callback, the unknown type (kept, skipped by users)
  EXPECT_EQ(c.frames[2].type, 99u);
  EXPECT_EQ(c.info["pid"], "42");
  EXPECT_EQ(fake::CountFrames(c, gt::rawcap::kFrameCallback), 1u);
}

TEST(CaptureFormat, ReaderRefusesNewerVersionsAndOtherFiles) {
  TempDir dir;
  WriteFile(dir.File("v2.gtcap"), Header(2));
  WriteFile(dir.File("other.gtcap"), "SQLite format 3\0 and more");
  fake::CaptureFile c;
  std::string error;
  EXPECT_FALSE(fake::ReadCaptureFile(dir.File("v2.gtcap"), &c, &error));
  EXPECT_EQ(error, dir.File("v2.gtcap") + ": capture format version 2, this reader knows 1");
  EXPECT_FALSE(fake::ReadCaptureFile(dir.File("other.gtcap"), &c, &error));
  EXPECT_EQ(error, dir.File("other.gtcap") + ": not a gtrace raw capture (bad magic)");
  // The replay program refuses it too, with exit status 2.
  TracedExport r = ReplayAndExport(dir, dir.File("v2.gtcap"), {}, "refused");
  EXPECT_EQ(r.run.exit_code, 2);
  EXPECT_NE(r.run.err.find("fake-replay: " + dir.File("v2.gtcap") + ": capture format version 2"), std::string::npos)
      << r.run.err;
}

}  // namespace
}  // namespace gt::test
