// replay.FakeCaptureRoundTrip: proves the replay path itself with a capture MADE BY THE FAKE CUPTI
// (a test double, not NVIDIA data). fake_cuda_app's "basic" scenario runs traced with raw capture
// on; the capture is replayed through the fake into libgtrace.so; the replay's export must equal
// the direct export row for row (CUDA tables; times relative to the first API call, thread ids
// without process bits). Also checks what the capture holds.
#include <gtest/gtest.h>

#include <cstring>

#include <cupti.h>

#include "tests/fakes/capture_reader.h"
#include "tests/replay/replay_util.h"

namespace gt::test {
namespace {

using Rows = std::vector<std::string>;

class FakeCaptureRoundTrip : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir();
    std::map<std::string, std::string> env = {{"GTRACE_CUDA_MEMORY_USAGE", "1"}};
    env["GTRACE_RAW_CAPTURE_DIR"] = dir_->File("capture");
    direct_ = new TracedExport(RunAndExport(*dir_, {SamplePath("fake_cuda_app"), "basic"}, env, "direct"));
    captures_ = new std::vector<std::string>();
    for (const std::string& name : TempDir::ListDir(dir_->File("capture"))) {
      captures_->push_back(dir_->File("capture/" + name));
    }
    replay_ = new TracedExport();
    if (captures_->size() == 1) {
      *replay_ = ReplayAndExport(*dir_, captures_->front(), {{"GTRACE_CUDA_MEMORY_USAGE", "1"}}, "replay");
    }
  }
  static void TearDownTestSuite() {
    delete replay_;
    delete captures_;
    delete direct_;
    delete dir_;
  }
  static TempDir* dir_;
  static TracedExport* direct_;
  static TracedExport* replay_;
  static std::vector<std::string>* captures_;
};
TempDir* FakeCaptureRoundTrip::dir_ = nullptr;
TracedExport* FakeCaptureRoundTrip::direct_ = nullptr;
TracedExport* FakeCaptureRoundTrip::replay_ = nullptr;
std::vector<std::string>* FakeCaptureRoundTrip::captures_ = nullptr;

TEST_F(FakeCaptureRoundTrip, CaptureIsWrittenBesideTheStream) {
  EXPECT_EQ(direct_->run.exit_code, 0) << direct_->run.err;
  ASSERT_FALSE(direct_->db.empty()) << direct_->export_err;
  ASSERT_EQ(captures_->size(), 1u);
  EXPECT_NE(captures_->front().find("/capture-"), std::string::npos);
  EXPECT_EQ(captures_->front().substr(captures_->front().size() - 6), ".gtcap");
  // One line says where the capture goes; nothing else is reported.
  EXPECT_NE(direct_->run.err.find("gtrace: raw capture of CUPTI input to " + captures_->front()), std::string::npos)
      << direct_->run.err;
}

TEST_F(FakeCaptureRoundTrip, CaptureHoldsBuffersCallbacksAndStrings) {
  ASSERT_EQ(captures_->size(), 1u);
  fake::CaptureFile c;
  std::string error;
  ASSERT_TRUE(fake::ReadCaptureFile(captures_->front(), &c, &error)) << error;
  EXPECT_EQ(c.version, 1u);
  EXPECT_TRUE(c.has_end);
  EXPECT_FALSE(c.cut);
  EXPECT_EQ(c.info["format"], "gtrace-raw-capture");
  EXPECT_EQ(c.info["cupti_api_version"], std::to_string(CUPTI_API_VERSION));
  EXPECT_EQ(c.info["clock_callback"], "1");
  EXPECT_EQ(c.info["memory_usage"], "1");
  EXPECT_EQ(c.end.callbacks_dropped, 0u);
  EXPECT_EQ(c.end.buffers_dropped, 0u);
  EXPECT_EQ(c.end.buffers, fake::CountFrames(c, gt::rawcap::kFrameActivityBuffer));
  EXPECT_EQ(c.end.callbacks, fake::CountFrames(c, gt::rawcap::kFrameCallback));
  EXPECT_EQ(c.end.buffers, fake::CountFrames(c, gt::rawcap::kFrameRecordIndex));
  EXPECT_EQ(fake::CountFrames(c, gt::rawcap::kFrameDroppedRecords), 1u);
  EXPECT_GE(c.end.buffers, 2u);  // periodic flushes and the forced one at exit
  uint64_t bytes = 0;
  std::set<std::string> strings;
  std::map<std::string, int> sites;  // "name/site" of runtime callbacks
  std::set<uint64_t> seqs;
  for (const fake::CaptureFrame& f : c.frames) {
    if (f.type == gt::rawcap::kFrameActivityBuffer) {
      gt::rawcap::ActivityBufferHeader h;
      std::memcpy(&h, f.payload.data(), sizeof(h));
      EXPECT_EQ(f.payload.size(), sizeof(h) + h.valid_bytes);
      EXPECT_GT(h.size_bytes, h.valid_bytes);
      bytes += h.valid_bytes;
      EXPECT_TRUE(seqs.insert(f.seq).second) << "seq reused: " << f.seq;
    } else if (f.type == gt::rawcap::kFrameString) {
      strings.insert(std::string(f.payload.begin() + 8, f.payload.end()));
    } else if (f.type == gt::rawcap::kFrameCallback) {
      gt::rawcap::CallbackRecord r;
      std::memcpy(&r, f.payload.data(), sizeof(r));
      EXPECT_TRUE(seqs.insert(f.seq).second) << "seq reused: " << f.seq;
      if (r.domain == CUPTI_CB_DOMAIN_RUNTIME_API) {
        ++sites[std::string(r.function_name) + (r.site == CUPTI_API_ENTER ? "/enter" : "/exit")];
      }
    }
  }
  EXPECT_EQ(bytes, c.end.buffer_bytes);
  // Kernel and device names the records point at were saved with the buffers.
  EXPECT_EQ(strings, (std::set<std::string>{"Fake GPU 0", "_Z7add_onePKfPfi", "_Z13still_runningv",
                                            "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEESt5"
                                            "arrayIPcLm1EEEEviT0_T1_",
                                            "matmul_kernel"}));
  // Every runtime API call of the scenario, enter and exit (the fake names callbacks by cbid name).
  EXPECT_EQ(sites["cudaLaunchKernel_v7000/enter"], 5);
  EXPECT_EQ(sites["cudaLaunchKernel_v7000/exit"], 5);
  EXPECT_EQ(sites["cudaMemcpyAsync_v3020/enter"], 3);
  EXPECT_EQ(sites["cudaGraphLaunch_v10000/exit"], 1);
}

TEST_F(FakeCaptureRoundTrip, ReplayDeliversEverything) {
  ASSERT_EQ(captures_->size(), 1u);
  EXPECT_EQ(replay_->run.exit_code, 0) << replay_->run.err;
  auto counts = ReplayCounts(replay_->run.out);
  fake::CaptureFile c;
  std::string error;
  ASSERT_TRUE(fake::ReadCaptureFile(captures_->front(), &c, &error)) << error;
  EXPECT_EQ(counts["buffers_delivered"], c.end.buffers);
  EXPECT_EQ(counts["buffers_declined"], 0u);
  EXPECT_EQ(counts["walk_mismatches"], 0u);
  EXPECT_EQ(counts["strings_missing"], 0u);
  EXPECT_GT(counts["records"], 40u);
  EXPECT_EQ(counts["drops_replayed"], 3u);  // fake_DropRecords(3) in the scenario, via CUPTI's count
  // In the replay gtrace enables the same callbacks as any run (no capture): graph creation,
  // instantiation and launch, profiler and lifetime ones; the rest is skipped.
  EXPECT_EQ(counts["callbacks_fired"], 4u) << replay_->run.out;
  EXPECT_EQ(counts["callbacks_fired"] + counts["callbacks_skipped"], c.end.callbacks);
}

TEST_F(FakeCaptureRoundTrip, ExportEqualsDirectExport) {
  ASSERT_FALSE(direct_->db.empty()) << direct_->export_err;
  ASSERT_FALSE(replay_->db.empty()) << replay_->export_err << replay_->run.err;
  Db a(direct_->db), b(replay_->db);
  auto rows_a = CudaRowsForComparison(a);
  auto rows_b = CudaRowsForComparison(b);
  for (const auto& [table, rows] : rows_a) {
    for (const std::string& r : rows)
      ASSERT_EQ(r.rfind("SQL ERROR", 0), std::string::npos) << table << ": " << r;
    EXPECT_EQ(rows, rows_b[table]) << table;
  }
  // Not vacuous: the scenario's rows are there.
  EXPECT_EQ(rows_b["KERNEL"].size(), 4u);
  EXPECT_EQ(rows_b["MEMCPY"].size(), 4u);
  EXPECT_EQ(rows_b["MEMSET"].size(), 1u);
  EXPECT_EQ(rows_b["SYNCHRONIZATION"].size(), 2u);
  EXPECT_EQ(rows_b["GRAPH_TRACE"].size(), 1u);
  EXPECT_EQ(rows_b["GRAPH_EVENTS"].size(), 2u);
  EXPECT_EQ(rows_b["GPU"].size(), 1u);
  EXPECT_EQ(b.Int("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_GRAPH_TRACE WHERE graphExecId = 2"), 1);
  // CUPTI's dropped-record count travels too.
  const std::string drops = "SELECT group_concat(text, ';') FROM DIAGNOSTIC_EVENT WHERE text LIKE '%dropped by CUPTI%'";
  EXPECT_EQ(a.Text(drops), b.Text(drops));
  EXPECT_EQ(b.Text(drops), "gtrace dropped 3 records (dropped by CUPTI)");
}

}  // namespace
}  // namespace gt::test
