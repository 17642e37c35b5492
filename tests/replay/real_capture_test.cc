// replay.RealCapture: real NVIDIA data, recorded once on a GPU machine by
// scripts/gpu-check.d/15-capture.sh (docs/capture.md), replayed here on CPU through gtrace's real
// decoding path (the fake CUPTI only delivers the recorded callbacks and buffers) and exported; the
// rows must match the counts the scenario (samples/cuda/capture_scenario.cu) wrote into the
// manifest, and the cross-checks must hold. Captures live in
// tests/data/gpu/<gpu>-cuda<version>/<run>/{manifest.json, capture-<pid>.gtcap}; without any, every
// test here is skipped with a message saying how to make one.
#include <dirent.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <regex>

#include "tests/fakes/capture_reader.h"
#include "tests/replay/replay_util.h"

namespace gt::test {
namespace {

struct RealCapture {
  std::string dir;       // .../tests/data/gpu/<gpu>-cuda<version>/<run>
  std::string manifest;  // its manifest.json text
  std::string capture;   // the .gtcap of the scenario process
};

bool IsDir(const std::string& p) {
  struct stat st;
  return stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

std::vector<RealCapture> FindCaptures() {
  std::vector<RealCapture> out;
  std::string root = SourceDir() + "/tests/data/gpu";
  if (!IsDir(root))
    return out;
  for (const std::string& kind : TempDir::ListDir(root)) {
    if (!IsDir(root + "/" + kind))
      continue;
    for (const std::string& run : TempDir::ListDir(root + "/" + kind)) {
      std::string d = root + "/" + kind + "/" + run;
      std::string manifest = ReadFile(d + "/manifest.json");
      if (manifest.empty())
        continue;
      for (const std::string& f : TempDir::ListDir(d)) {
        if (f.size() > 6 && f.substr(f.size() - 6) == ".gtcap" && f.rfind("nccl-", 0) != 0 &&
            f.rfind("metrics-", 0) != 0)  // NCCL: nccl_round_trip_test; GPU metrics: metrics_replay_test
          out.push_back({d, manifest, d + "/" + f});
      }
    }
  }
  return out;
}

// The flat integer object "name": {...} of the manifest (written by 15-capture.sh with python's json).
std::map<std::string, int64_t> IntObject(const std::string& json, const std::string& name) {
  std::map<std::string, int64_t> out;
  size_t at = json.find("\"" + name + "\"");
  if (at == std::string::npos)
    return out;
  size_t open = json.find('{', at), close = json.find('}', open);
  if (open == std::string::npos || close == std::string::npos)
    return out;
  std::string body = json.substr(open + 1, close - open - 1);
  std::regex pair("\"([A-Za-z0-9_]+)\"\\s*:\\s*(-?[0-9]+)");
  for (std::sregex_iterator it(body.begin(), body.end(), pair), end; it != end; ++it) {
    out[(*it)[1]] = std::stoll((*it)[2]);
  }
  return out;
}

constexpr const char* kNoCapture =
    "no real GPU capture under tests/data/gpu/<gpu>-cuda<version>/<run>/ yet: make one on a GPU machine with "
    "scripts/gpu-check.d/15-capture.sh and commit its directory (docs/capture.md)";

TEST(RealCapture, ReplaysThroughTheRealDecoderWithExactRows) {
  std::vector<RealCapture> captures = FindCaptures();
  if (captures.empty())
    GTEST_SKIP() << kNoCapture;
  for (const RealCapture& rc : captures) {
    SCOPED_TRACE(rc.capture);
    fake::CaptureFile c;
    std::string error;
    ASSERT_TRUE(fake::ReadCaptureFile(rc.capture, &c, &error)) << error;
    EXPECT_TRUE(c.has_end) << "capture not finished (process died before its final flush?)";
    EXPECT_EQ(c.end.callbacks_dropped, 0u);
    EXPECT_EQ(c.end.buffers_dropped, 0u);
    // The replay keeps CUPTI's timestamps; they are on gtrace's clock only when CUPTI accepted the
    // timestamp callback (the offset fallback is not replayed).
    EXPECT_EQ(c.info["clock_callback"], "1");
    // Replay with the options the recording run had.
    std::map<std::string, std::string> env;
    if (!c.info["capture_range"].empty())
      env["GTRACE_CAPTURE_RANGE"] = c.info["capture_range"];
    if (c.info["graph_trace"] == "node")
      env["GTRACE_CUDA_GRAPH_TRACE"] = "node";
    if (c.info["memory_usage"] == "1")
      env["GTRACE_CUDA_MEMORY_USAGE"] = "1";
    TempDir dir;
    TracedExport r = ReplayAndExport(dir, rc.capture, env, "real");
    ASSERT_EQ(r.run.exit_code, 0) << r.run.err;
    auto counts = ReplayCounts(r.run.out);
    // The fake's record walk agrees with real CUPTI's on real bytes; every name pointer was saved.
    EXPECT_EQ(counts["walk_mismatches"], 0u) << r.run.err;
    EXPECT_EQ(counts["strings_missing"], 0u);
    EXPECT_EQ(counts["buffers_declined"], 0u);
    EXPECT_EQ(counts["buffers_delivered"], c.end.buffers);
    ASSERT_FALSE(r.db.empty()) << r.export_err;
    Db db(r.db);

    std::map<std::string, int64_t> expected = IntObject(rc.manifest, "expected");
    ASSERT_FALSE(expected.empty()) << "manifest.json has no \"expected\" counts";
    std::map<std::string, std::string> sql = {
        {"kernels", "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL"},
        {"kernel_streams", "SELECT count(DISTINCT streamId) FROM CUPTI_ACTIVITY_KIND_KERNEL"},
        {"memcpy_htod", "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_MEMCPY WHERE copyKind = 1"},
        {"memcpy_dtoh", "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_MEMCPY WHERE copyKind = 2"},
        {"memcpy_dtod", "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_MEMCPY WHERE copyKind = 8"},
        {"memcpy_htoh", "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_MEMCPY WHERE copyKind = 9"},
        {"memset", "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_MEMSET"},
        {"cuda_event", "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_CUDA_EVENT"},
        {"sync_event", "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_SYNCHRONIZATION WHERE syncType = 1"},
        {"sync_wait_event", "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_SYNCHRONIZATION WHERE syncType = 2"},
        {"sync_stream", "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_SYNCHRONIZATION WHERE syncType = 3"},
        {"sync_context", "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_SYNCHRONIZATION WHERE syncType = 4"},
        {"graph_launches", "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_GRAPH_TRACE"},
        {"launch_calls",
         "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME r JOIN StringIds s ON s.id = r.nameId "
         "WHERE s.value LIKE 'cudaLaunchKernel%'"},
        {"graph_launch_calls",
         "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME r JOIN StringIds s ON "
         "s.id = r.nameId WHERE s.value LIKE 'cudaGraphLaunch%'"},
        {"gpus", "SELECT count(*) FROM TARGET_INFO_GPU"},
    };
    // A table the export left out is 0 rows: like nsys, gtrace writes no empty activity tables
    // (a window without graph launches has no CUPTI_ACTIVITY_KIND_GRAPH_TRACE).
    auto has_table = [&db](const std::string& query) {
      size_t from = query.find(" FROM ") + 6;
      std::string table = query.substr(from, query.find(' ', from) - from);
      return db.Int("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = '" + table + "'").value_or(0) > 0;
    };
    for (const auto& [key, want] : expected) {
      auto q = sql.find(key);
      if (q == sql.end()) {
        ADD_FAILURE() << "manifest count '" << key << "' has no query here";
        continue;
      }
      EXPECT_EQ(has_table(q->second) ? db.Int(q->second) : std::optional<int64_t>(0), want) << key;
    }
    // At most (HtoH between pinned buffers and peer copies are not always GPU copies).
    for (const auto& [key, most] : IntObject(rc.manifest, "at_most")) {
      auto q = sql.find(key);
      if (q != sql.end()) {
        EXPECT_LE(db.Int(q->second).value_or(-1), most) << key;
      }
    }
    // Cross-checks: GPU work joins its API call by correlation id, starts after it, lasts > 0.
    for (const char* table : {"CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET",
                              "CUPTI_ACTIVITY_KIND_GRAPH_TRACE"}) {
      std::string t = table;
      if (!has_table("SELECT 1 FROM " + t + " ")) continue;
      EXPECT_EQ(db.Int("SELECT count(*) FROM " + t +
                       " g WHERE NOT EXISTS (SELECT 1 FROM CUPTI_ACTIVITY_KIND_RUNTIME r "
                       "WHERE r.correlationId = g.correlationId)"),
                0)
          << t << ": rows without their API call";
      EXPECT_EQ(db.Int("SELECT count(*) FROM " + t +
                       " g JOIN CUPTI_ACTIVITY_KIND_RUNTIME r ON "
                       "r.correlationId = g.correlationId WHERE g.start < r.start"),
                0)
          << t << ": GPU before API";
      EXPECT_EQ(db.Int("SELECT count(*) FROM " + t + " WHERE end <= start"), 0) << t << ": durations";
    }
    EXPECT_EQ(db.Int("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE end <= start"), 0);
  }
}

}  // namespace
}  // namespace gt::test
