// GPU-metrics raw capture and replay (docs/capture.md, "GPU metrics"): the PM-sampling and
// range-profiler counter-data images libgtrace.so decodes, saved by GTRACE_RAW_CAPTURE_DIR into
// metrics-<pid>.gtcap and replayed through gtrace's real decoding path (PmSampler::Decode and
// RangeProfiler::Evaluate in libgtrace.so, the stream, `gtrace export`).
//  - replay.FakeMetricsCaptureRoundTrip.*: a capture made by the fake profiler (a TEST DOUBLE: its
//    images are its own format) proves the capture and the replay plumbing end to end: the replay's
//    GPU_METRICS / GTRACE_RANGE_METRICS rows equal the direct run's.
//  - replay.RealMetricsCapture.*: NVIDIA's images recorded on a GPU machine by
//    scripts/gpu-check.d/30-metrics.sh under tests/data/gpu/<kind>/<run>/metrics-*.gtcap, evaluated
//    on this CPU by the toolkit's real libcupti Profiler Host API and replayed into libgtrace.so;
//    skipped with a message until one is committed.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cupti_profiler_host.h>

#include "tests/fakes/metrics_capture_reader.h"
#include "tests/replay/replay_util.h"


// The real libcupti's host API cannot be loaded under ASan/TSan (see tests/metrics/metric_selection_test.cc).
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool kSanitizerBuild = true;
#else
constexpr bool kSanitizerBuild = false;
#endif
namespace gt::test {
namespace {

using Rows = std::vector<std::string>;
namespace rc = gt::rawcap;

std::string Tag(int n) {
  char hex[8];
  snprintf(hex, sizeof(hex), "%06x", static_cast<unsigned>((getpid() * 16 + 8 + n) & 0xffffff));
  return hex;
}

void RemoveLock(const std::string& tag) {
  std::string name = "gtrace-gpu-metrics-b15c2a5742ed1d242c840670" + tag + "40.lock";
  unlink(("/dev/shm/" + name).c_str());
  unlink(("/tmp/" + name).c_str());
}

std::vector<std::string> MetricsCaptures(const std::string& dir) {
  std::vector<std::string> out;
  for (const std::string& f : TempDir::ListDir(dir)) {
    if (f.rfind("metrics-", 0) == 0 && f.size() > 6 && f.substr(f.size() - 6) == ".gtcap")
      out.push_back(dir + "/" + f);
  }
  return out;
}

// Runs fake_metrics_app `scenario` traced with capture on, then replays its metrics capture
// (fake_metrics_app replay) with the recording's options.
struct RoundTrip {
  TracedExport direct, replay;
  fake::MetricsCaptureFile capture;
  std::string capture_path;
  std::vector<std::string> other_captures;  // every .gtcap of the recording
};

RoundTrip RecordAndReplay(const TempDir& dir,
                          const std::string& scenario,
                          const std::map<std::string, std::string>& options) {
  RoundTrip t;
  std::map<std::string, std::string> env = options;
  env["GTRACE_RAW_CAPTURE_DIR"] = dir.File("cap");
  env["GTRACE_RAW_CAPTURE_SCENARIO"] = "fake_metrics_app " + scenario;
  env["FAKE_CUDA_UUID_TAG"] = Tag(0);
  t.direct = RunAndExport(dir, {SamplePath("fake_metrics_app"), scenario}, env, "direct");
  RemoveLock(Tag(0));
  t.other_captures = TempDir::ListDir(dir.File("cap"));
  std::vector<std::string> caps = MetricsCaptures(dir.File("cap"));
  if (caps.size() != 1)
    return t;
  t.capture_path = caps[0];
  std::string error;
  EXPECT_TRUE(fake::ReadMetricsCapture(t.capture_path, &t.capture, &error)) << error;
  std::map<std::string, std::string> replay_env = options;
  replay_env["FAKE_CUPTI_METRICS_REPLAY"] = t.capture_path;
  replay_env["FAKE_CUDA_UUID_TAG"] = Tag(1);
  t.replay = RunAndExport(dir, {SamplePath("fake_metrics_app"), "replay"}, replay_env, "replay");
  RemoveLock(Tag(1));
  return t;
}

std::string Names(const std::vector<std::string>& names) {
  std::string s;
  for (const std::string& n : names)
    s += n + "\n";
  return s;
}

TEST(FakeMetricsCaptureRoundTrip, PmSamplingImagesReplayIntoTheSameGpuMetricsRows) {
  TempDir dir;
  RoundTrip t = RecordAndReplay(dir, "timeline", {{"GTRACE_GPU_METRICS_DEVICES", "all"}});
  ASSERT_EQ(t.direct.run.exit_code, 0) << t.direct.run.err;
  ASSERT_FALSE(t.capture_path.empty()) << "no single metrics-*.gtcap in " << dir.File("cap") << "\n"
                                       << t.direct.run.err;
  EXPECT_NE(t.direct.run.err.find("gtrace: raw capture of GPU metrics input to " + t.capture_path), std::string::npos)
      << t.direct.run.err;
  // The capture: info, one PM set-up exactly as the fake profiler answered, every decoded image.
  const fake::MetricsCaptureFile& c = t.capture;
  EXPECT_TRUE(c.file.has_end);
  EXPECT_FALSE(c.file.cut);
  EXPECT_EQ(c.file.info.at("kind"), "metrics");
  EXPECT_EQ(c.file.info.at("set"), "default");
  EXPECT_EQ(c.file.info.at("scenario"), "fake_metrics_app timeline");
  ASSERT_EQ(c.pm_configs.size(), 1u);
  const fake::PmConfigFrame& cfg = c.pm_configs[0];
  EXPECT_STREQ(cfg.head.chip, "FAKE100");
  EXPECT_EQ(cfg.head.device, 0u);
  EXPECT_EQ(cfg.head.trigger_mode, 1u);  // GPU_TIME_INTERVAL
  EXPECT_EQ(cfg.head.interval_raw, 100000u);
  EXPECT_EQ(cfg.head.interval_ns, 100000u);
  EXPECT_EQ(cfg.head.hw_buffer_bytes, 64ull << 20);
  EXPECT_EQ(cfg.head.max_samples, 1024u);
  EXPECT_EQ(cfg.head.passes, 1u);
  ASSERT_EQ(cfg.names.size(), 14u);
  EXPECT_EQ(cfg.names[0], "gpc__cycles_elapsed.avg.per_second");
  // The fake's config image is "FKCFG\n" + the names; its counter data is 16 + 1024 x (16 + 8 x 14).
  std::string config(cfg.config_image.begin(), cfg.config_image.end());
  EXPECT_EQ(config, "FKCFG\n" + Names(cfg.names));
  EXPECT_EQ(cfg.availability_image, std::vector<uint8_t>(8, 0xff));
  EXPECT_EQ(cfg.head.counter_data_bytes, 16u + 1024u * 128u);
  ASSERT_FALSE(c.pm_data.empty());
  uint64_t samples = 0, overflows = 0;
  for (const fake::PmDataFrame& d : c.pm_data) {
    EXPECT_EQ(d.image.size(), cfg.head.counter_data_bytes);
    EXPECT_EQ(d.head.decode_result, 0u);
    EXPECT_EQ(d.head.metric_count, 14u);
    EXPECT_EQ(d.head.total_samples, 1024u);
    EXPECT_EQ(d.head.completed_samples, d.samples.size());
    EXPECT_EQ(d.head.clock_offset_ns, 0);  // CUPTI stamped with gtrace's clock callback
    overflows += d.head.overflow;
    for (const fake::PmSampleEntry& s : d.samples) {
      EXPECT_EQ(s.info.info_result, 0u);
      EXPECT_EQ(s.info.eval_result, 0u);
      ++samples;
    }
  }
  EXPECT_EQ(samples, 21u);  // the warm-up sample gtrace discards, and 20
  EXPECT_EQ(overflows, 1u);
  // The first recorded sample is the warm-up (SMs active 99 %), then 100 us samples: copy, then gemm.
  const fake::PmSampleEntry& warm = c.pm_data[0].samples[0];
  const fake::PmSampleEntry& first = c.pm_data[0].samples[1];
  EXPECT_EQ(warm.info.end_ns - warm.info.start_ns, 100000u);
  EXPECT_EQ(first.info.start_ns, warm.info.end_ns);
  EXPECT_EQ(first.info.end_ns - first.info.start_ns, 100000u);
  EXPECT_EQ(first.values[2], 20.0);  // sm__cycles_active.avg.pct_of_peak_sustained_elapsed (copy)
  EXPECT_EQ(warm.values[2], 99.0);
  EXPECT_EQ(c.file.end.buffers, c.pm_data.size());
  EXPECT_EQ(c.file.end.buffers_dropped, 0u);
  EXPECT_TRUE(c.range_configs.empty());
  EXPECT_TRUE(c.range_data.empty());

  // The replay: the recorded images through libgtrace.so's decoder into the same rows.
  ASSERT_EQ(t.replay.run.exit_code, 0) << t.replay.run.err;
  ASSERT_FALSE(t.direct.db.empty()) << t.direct.export_err;
  ASSERT_FALSE(t.replay.db.empty()) << t.replay.export_err << t.replay.run.err;
  Db direct(t.direct.db), replay(t.replay.db);
  const std::string rows =
      "SELECT timestamp - (SELECT min(timestamp) FROM GPU_METRICS), metricId, value FROM GPU_METRICS ORDER BY 1, 2";
  Rows d = direct.Rows(rows), r = replay.Rows(rows);
  EXPECT_EQ(d.size(), 280u);  // 20 samples x 14 metrics
  EXPECT_EQ(r, d);
  EXPECT_EQ(replay.Rows("SELECT metricId, metricName FROM TARGET_INFO_GPU_METRICS ORDER BY 1"),
            direct.Rows("SELECT metricId, metricName FROM TARGET_INFO_GPU_METRICS ORDER BY 1"));
  const std::string devices =
      "SELECT cudaId, chipName, setName, samplingIntervalNs, triggerMode, samples, droppedSamples, hwBufferOverflows, "
      "decodeErrors FROM GTRACE_GPU_METRICS_DEVICES";
  EXPECT_EQ(direct.Rows(devices), (Rows{"0|FAKE100|default|100000|time|20|0|1|0"}));
  EXPECT_EQ(replay.Rows(devices), direct.Rows(devices));
  EXPECT_EQ(replay.Int("SELECT max(timestamp) - min(timestamp) FROM GPU_METRICS"), 1900000);
}

TEST(FakeMetricsCaptureRoundTrip, RangeProfilerImagesReplayIntoTheSameRangeRows) {
  TempDir dir;
  RoundTrip t = RecordAndReplay(dir, "nvtx", {{"GTRACE_GPU_METRICS_RANGES", "nvtx:step"}});
  ASSERT_EQ(t.direct.run.exit_code, 0) << t.direct.run.err;
  ASSERT_FALSE(t.capture_path.empty()) << t.direct.run.err;
  const fake::MetricsCaptureFile& c = t.capture;
  EXPECT_TRUE(c.file.has_end);
  EXPECT_EQ(c.file.info.at("ranges"), "nvtx:step");
  EXPECT_TRUE(c.pm_configs.empty());
  ASSERT_EQ(c.range_configs.size(), 1u);
  const fake::RangeConfigFrame& cfg = c.range_configs[0];
  EXPECT_STREQ(cfg.head.chip, "FAKE100");
  EXPECT_EQ(cfg.head.mode, 1u);  // NVTX
  EXPECT_EQ(cfg.head.max_ranges, 1u);
  EXPECT_EQ(cfg.names.size(), 15u);
  EXPECT_EQ(std::string(cfg.config_image.begin(), cfg.config_image.end()), "FKCFG\n" + Names(cfg.names));
  EXPECT_EQ(cfg.head.counter_data_bytes, 16u + 64u + 8u * 15u);  // one range: name + 15 doubles
  // Three profiled "step" ranges (the nested one and "other" are not), one range each.
  ASSERT_EQ(c.range_data.size(), 3u);
  size_t duration = 0;
  for (size_t k = 0; k < cfg.names.size(); ++k) {
    if (cfg.names[k] == "gpu__time_duration.sum")
      duration = k;
  }
  for (size_t i = 0; i < 3; ++i) {
    const fake::RangeDataFrame& d = c.range_data[i];
    EXPECT_EQ(d.head.pass_id, i + 1);
    EXPECT_STREQ(d.head.nvtx_name, "step");
    EXPECT_EQ(d.head.info_result, 0u);
    EXPECT_EQ(d.head.total_ranges, 1u);
    EXPECT_LE(d.head.pass_start_ns, d.head.pass_end_ns);
    ASSERT_EQ(d.ranges.size(), 1u);
    EXPECT_STREQ(d.ranges[0].info.name, "step");
    EXPECT_EQ(d.ranges[0].info.eval_result, 0u);
    EXPECT_EQ(d.ranges[0].values[duration], 1000.0 * static_cast<double>(i + 1));
  }
  ASSERT_EQ(t.replay.run.exit_code, 0) << t.replay.run.err;
  ASSERT_FALSE(t.replay.db.empty()) << t.replay.export_err << t.replay.run.err;
  Db direct(t.direct.db), replay(t.replay.db);
  const std::string rows =
      "SELECT mode, rangeName, rangeIndex, passId, cuptiName, value FROM GTRACE_RANGE_METRICS ORDER BY passId, "
      "cuptiName";
  Rows d = direct.Rows(rows);
  EXPECT_EQ(d.size(), 45u);  // 3 passes x 15 metrics
  EXPECT_EQ(replay.Rows(rows), d);
  EXPECT_EQ(replay.Rows("SELECT passId, value FROM GTRACE_RANGE_METRICS WHERE cuptiName = 'gpu__time_duration.sum' "
                        "ORDER BY passId"),
            (Rows{"1|1000.0", "2|2000.0", "3|3000.0"}));
}

TEST(FakeMetricsCaptureRoundTrip, OffByDefaultAndAnUnusableDirectoryIsOneLine) {
  TempDir dir;
  TracedExport off = RunAndExport(dir, {SamplePath("fake_metrics_app"), "timeline"},
                                  {{"GTRACE_GPU_METRICS_DEVICES", "all"}, {"FAKE_CUDA_UUID_TAG", Tag(2)}}, "off");
  RemoveLock(Tag(2));
  ASSERT_EQ(off.run.exit_code, 0) << off.run.err;
  EXPECT_TRUE(dir.Find(".gtcap").empty());
  WriteFile(dir.File("file"), "x");  // GTRACE_RAW_CAPTURE_DIR under a regular file: cannot be created
  TracedExport bad = RunAndExport(dir, {SamplePath("fake_metrics_app"), "timeline"},
                                  {{"GTRACE_GPU_METRICS_DEVICES", "all"},
                                   {"FAKE_CUDA_UUID_TAG", Tag(3)},
                                   {"GTRACE_RAW_CAPTURE_DIR", dir.File("file/sub")}},
                                  "bad");
  RemoveLock(Tag(3));
  ASSERT_EQ(bad.run.exit_code, 0) << bad.run.err;
  size_t lines = 0;
  for (size_t p = bad.run.err.find("raw capture of GPU metrics off"); p != std::string::npos;
       p = bad.run.err.find("raw capture of GPU metrics off", p + 1)) {
    ++lines;
  }
  EXPECT_EQ(lines, 1u) << bad.run.err;
  ASSERT_FALSE(bad.db.empty()) << bad.export_err;
  Db db(bad.db);
  EXPECT_EQ(db.Int("SELECT count(*) FROM GPU_METRICS"), 280);  // GPU metrics went on
}

// The capture with its PM set-up's counter-availability image removed (availability_bytes 0): the
// real host API crashed (SIGSEGV in libnvperf_host) when given the fake's 8-byte stand-in.
std::string WithoutAvailability(const std::string& path, const std::string& out_path) {
  std::string bytes = ReadFile(path);
  std::string out = bytes.substr(0, rc::kCaptureHeaderBytes);
  size_t pos = rc::kCaptureHeaderBytes;
  while (pos + rc::kFrameHeaderBytes <= bytes.size()) {
    uint32_t type = 0, size = 0;
    std::memcpy(&type, bytes.data() + pos, 4);
    std::memcpy(&size, bytes.data() + pos + 4, 4);
    std::string head = bytes.substr(pos, rc::kFrameHeaderBytes);
    std::string body = bytes.substr(pos + rc::kFrameHeaderBytes, size);
    pos += rc::kFrameHeaderBytes + size;
    if (type == rc::kFrameMetricsPmConfig) {
      rc::MetricsPmConfig h;
      std::memcpy(&h, body.data(), sizeof(h));
      body.resize(body.size() - h.availability_bytes);
      h.availability_bytes = 0;
      std::memcpy(&body[0], &h, sizeof(h));
      uint32_t new_size = static_cast<uint32_t>(body.size());
      std::memcpy(&head[4], &new_size, 4);
    }
    out += head + body;
  }
  WriteFile(out_path, out);
  return out_path;
}

// The replay's real-host mode on a capture the fake made for chip GH100: gtrace's metric selection
// runs in NVIDIA's host API (it picks GH100's own candidates, not the fake's), and NVIDIA's evaluator
// refuses every fake image (counted as decode errors; no sample is misread into a row).
TEST(FakeMetricsCaptureRoundTrip, RealHostApiSelectsForTheChipAndRefusesTheFakesImages) {
  if (std::string(GT_CUPTI_LIBRARY).empty())
    GTEST_SKIP() << "no toolkit libcupti";
  if (kSanitizerBuild)
    GTEST_SKIP() << "libcupti dlopens libnvperf_host with RTLD_DEEPBIND, which the sanitizer runtimes refuse";
  TempDir dir;
  TracedExport direct = RunAndExport(dir, {SamplePath("fake_metrics_app"), "timeline"},
                                     {{"GTRACE_GPU_METRICS_DEVICES", "all"},
                                      {"FAKE_CUPTI_CHIP", "GH100"},
                                      {"FAKE_CUDA_UUID_TAG", Tag(5)},
                                      {"GTRACE_RAW_CAPTURE_DIR", dir.File("cap")}},
                                     "direct");
  RemoveLock(Tag(5));
  ASSERT_EQ(direct.run.exit_code, 0) << direct.run.err;
  std::vector<std::string> caps = MetricsCaptures(dir.File("cap"));
  ASSERT_EQ(caps.size(), 1u);
  std::string capture = WithoutAvailability(caps[0], dir.File("noavail.gtcap"));
  fake::MetricsCaptureFile c;
  std::string error;
  ASSERT_TRUE(fake::ReadMetricsCapture(capture, &c, &error)) << error;
  ASSERT_EQ(c.pm_configs.size(), 1u);
  EXPECT_TRUE(c.pm_configs[0].availability_image.empty());
  EXPECT_STREQ(c.pm_configs[0].head.chip, "GH100");
  TracedExport replay = RunAndExport(dir, {SamplePath("fake_metrics_app"), "replay"},
                                     {{"GTRACE_GPU_METRICS_DEVICES", "all"},
                                      {"FAKE_CUPTI_METRICS_REPLAY", capture},
                                      {"FAKE_CUPTI_REAL_HOST", GT_CUPTI_LIBRARY},
                                      {"FAKE_CUDA_UUID_TAG", Tag(6)}},
                                     "replay");
  RemoveLock(Tag(6));
  ASSERT_EQ(replay.run.exit_code, 0) << replay.run.err;
  ASSERT_FALSE(replay.db.empty()) << replay.export_err;
  Db db(replay.db);
  EXPECT_EQ(db.Rows("SELECT cudaId, chipName, state, samples, decodeErrors FROM GTRACE_GPU_METRICS_DEVICES"),
            (Rows{"0|GH100|stopped|0|21"}));
  EXPECT_EQ(db.Int("SELECT count(*) FROM sqlite_master WHERE name = 'GPU_METRICS'"), 0);
  // GH100's tensor counter as NVIDIA's host API accepts it for PM sampling (the fake took the first).
  EXPECT_EQ(db.Rows("SELECT cuptiName FROM GTRACE_GPU_METRICS_CONFIG WHERE metricKey = 'tensor_active' AND "
                    "accepted = 1"),
            (Rows{"sm__pipe_tensor_cycles_active_realtime.avg.pct_of_peak_sustained_elapsed"}));
  EXPECT_EQ(Db(direct.db).Rows("SELECT cuptiName FROM GTRACE_GPU_METRICS_CONFIG WHERE metricKey = 'tensor_active' "
                               "AND accepted = 1"),
            (Rows{"sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed"}));
  EXPECT_EQ(db.Int("SELECT count(*) FROM GTRACE_GPU_METRICS_CONFIG WHERE accepted = 1"), 14);
}

// --- real captures --------------------------------------------------------------------------------

std::vector<std::string> RealMetricsCaptures() {
  std::vector<std::string> out;
  std::string root = SourceDir() + "/tests/data/gpu";
  for (const std::string& kind : TempDir::ListDir(root)) {
    for (const std::string& run : TempDir::ListDir(root + "/" + kind)) {
      for (const std::string& f : MetricsCaptures(root + "/" + kind + "/" + run))
        out.push_back(f);
    }
  }
  return out;
}

template <typename P>
P Params(size_t size) {
  P p;
  std::memset(&p, 0, sizeof(p));
  p.structSize = size;
  return p;
}

// Evaluates `names` of every entry of `image` with the real host API; false with *why.
struct RealHost {
  void* lib = nullptr;
  CUpti_Profiler_Host_Object* object = nullptr;
  std::string why;
  template <typename F>
  F Fn(const char* name) {
    return reinterpret_cast<F>(dlsym(lib, name));
  }
  bool Init(const char* chip,
            CUpti_ProfilerType type,
            const std::vector<uint8_t>& availability,
            const std::vector<std::string>& names,
            std::vector<const char*>* cnames) {
    auto init = Params<CUpti_Profiler_Host_Initialize_Params>(CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE);
    init.profilerType = type;
    init.pChipName = chip;
    init.pCounterAvailabilityImage = availability.empty() ? nullptr : availability.data();
    CUptiResult r = Fn<decltype(&cuptiProfilerHostInitialize)>("cuptiProfilerHostInitialize")(&init);
    if (r != CUPTI_SUCCESS) {
      why = "cuptiProfilerHostInitialize(" + std::string(chip) + ") = " + std::to_string(r);
      return false;
    }
    object = init.pHostObject;
    for (const std::string& n : names)
      cnames->push_back(n.c_str());
    auto add =
        Params<CUpti_Profiler_Host_ConfigAddMetrics_Params>(CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE);
    add.pHostObject = object;
    add.ppMetricNames = cnames->data();
    add.numMetrics = cnames->size();
    r = Fn<decltype(&cuptiProfilerHostConfigAddMetrics)>("cuptiProfilerHostConfigAddMetrics")(&add);
    if (r != CUPTI_SUCCESS)
      why = "cuptiProfilerHostConfigAddMetrics = " + std::to_string(r);
    return r == CUPTI_SUCCESS;
  }
  CUptiResult Evaluate(const std::vector<uint8_t>& image,
                       size_t index,
                       std::vector<const char*>& names,
                       std::vector<double>* values) {
    values->assign(names.size(), 0.0);
    auto e = Params<CUpti_Profiler_Host_EvaluateToGpuValues_Params>(
        CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE);
    e.pHostObject = object;
    e.pCounterDataImage = image.data();
    e.counterDataImageSize = image.size();
    e.rangeIndex = index;
    e.ppMetricNames = names.data();
    e.numMetrics = names.size();
    e.pMetricValues = values->data();
    return Fn<decltype(&cuptiProfilerHostEvaluateToGpuValues)>("cuptiProfilerHostEvaluateToGpuValues")(&e);
  }
  ~RealHost() {
    if (object != nullptr) {
      auto d = Params<CUpti_Profiler_Host_Deinitialize_Params>(CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE);
      d.pHostObject = object;
      Fn<decltype(&cuptiProfilerHostDeinitialize)>("cuptiProfilerHostDeinitialize")(&d);
    }
  }
};

// GTRACE_RANGE_METRICS as ("<rangeName>|<cuptiName>", value) in pass, range and metric order; the
// values read as doubles (exact, unlike their text).
std::vector<std::pair<std::string, double>> RangeRows(Db& db) {
  std::vector<std::pair<std::string, double>> out;
  sqlite3_stmt* st = nullptr;
  if (sqlite3_prepare_v2(db.handle(),
                         "SELECT rangeName || '|' || cuptiName, value FROM GTRACE_RANGE_METRICS ORDER BY passId, "
                         "rangeIndex, rowid",
                         -1, &st, nullptr) != SQLITE_OK) {
    return out;
  }
  while (sqlite3_step(st) == SQLITE_ROW)
    out.emplace_back(reinterpret_cast<const char*>(sqlite3_column_text(st, 0)), sqlite3_column_double(st, 1));
  sqlite3_finalize(st);
  return out;
}

// What the replay of a real image relies on, checked on this CPU-only machine (no driver, no GPU):
// the toolkit libcupti's Profiler Host API initializes for a real chip, accepts the metrics and runs
// its evaluator, which refuses bytes that are not a counter-data image rather than misreading them.
// (cuptiPmSamplingGetCounterDataInfo, by contrast, crashed on an all-zero buffer when probed: the
// replay answers it from the capture and never calls it.)
TEST(RealMetricsCapture, HostApiEvaluatesWithoutAGpu) {
  if (std::string(GT_CUPTI_LIBRARY).empty())
    GTEST_SKIP() << "no toolkit libcupti";
  if (kSanitizerBuild)
    GTEST_SKIP() << "libcupti dlopens libnvperf_host with RTLD_DEEPBIND, which the sanitizer runtimes refuse";
  void* lib = dlopen(GT_CUPTI_LIBRARY, RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(lib, nullptr) << dlerror();
  for (CUpti_ProfilerType type : {CUPTI_PROFILER_TYPE_PM_SAMPLING, CUPTI_PROFILER_TYPE_RANGE_PROFILER}) {
    RealHost host{lib};
    const std::vector<std::string> metric_names = {"gr__cycles_active.avg", "dram__bytes_read.sum"};
    std::vector<const char*> names;  // points into metric_names
    ASSERT_TRUE(host.Init("GH100", type, {}, metric_names, &names)) << host.why;
    std::vector<double> values;
    EXPECT_EQ(host.Evaluate(std::vector<uint8_t>(4096, 0), 0, names, &values), CUPTI_ERROR_INVALID_PARAMETER);
  }
  dlclose(lib);
}

TEST(RealMetricsCapture, NvidiaImagesEvaluateOnTheCpuAsOnTheGpuAndReplayIntoRows) {
  std::vector<std::string> captures = RealMetricsCaptures();
  if (captures.empty()) {
    GTEST_SKIP() << "no real GPU-metrics capture under tests/data/gpu/<kind>/<run>/metrics-*.gtcap yet: make one "
                    "on a GPU machine with scripts/gpu-check.d/30-metrics.sh (docs/capture.md, \"GPU metrics\") "
                    "and commit its $OUT/capture/<kind>/metrics directory";
  }
  if (std::string(GT_CUPTI_LIBRARY).empty())
    GTEST_SKIP() << "no toolkit libcupti to evaluate NVIDIA's images with";
  if (kSanitizerBuild)
    GTEST_SKIP() << "libcupti dlopens libnvperf_host with RTLD_DEEPBIND, which the sanitizer runtimes refuse";
  for (const std::string& path : captures) {
    SCOPED_TRACE(path);
    fake::MetricsCaptureFile c;
    std::string error;
    ASSERT_TRUE(fake::ReadMetricsCapture(path, &c, &error)) << error;
    EXPECT_TRUE(c.file.has_end);  // (images past the 2 MiB bound are not in it: the replay uses those that are)
    ASSERT_FALSE(c.pm_configs.empty() && c.range_configs.empty()) << "a capture without a set-up";
    void* lib = dlopen(GT_CUPTI_LIBRARY, RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(lib, nullptr) << dlerror();
    // 1. NVIDIA's host API on this CPU gives exactly what gtrace got on the GPU machine.
    uint64_t kept_samples = 0, stale_samples = 0, last_end = 0;
    bool first_sample = true;
    if (!c.pm_configs.empty()) {
      const fake::PmConfigFrame& cfg = c.pm_configs[0];
      RealHost host{lib};
      std::vector<const char*> names;
      ASSERT_TRUE(host.Init(cfg.head.chip, CUPTI_PROFILER_TYPE_PM_SAMPLING, cfg.availability_image, cfg.names, &names))
          << host.why;
      ASSERT_FALSE(c.pm_data.empty()) << "PM sampling set up but no image decoded";
      for (const fake::PmDataFrame& d : c.pm_data) {
        for (size_t i = 0; i < d.samples.size(); ++i) {
          if (d.samples[i].info.info_result != 0)
            continue;  // gtrace did not evaluate it on the GPU machine either
          std::vector<double> values;
          ASSERT_EQ(host.Evaluate(d.image, i, names, &values), static_cast<CUptiResult>(d.samples[i].info.eval_result));
          if (d.samples[i].info.eval_result == 0) {
            EXPECT_EQ(values, d.samples[i].values) << "sample " << i;
          }
          bool ok = d.samples[i].info.info_result == 0 && d.samples[i].info.eval_result == 0 &&
                    d.samples[i].info.end_ns >= d.samples[i].info.start_ns;
          if (ok && !first_sample) {
            // gtrace drops a sample whose end time does not advance (pm_sampler.h, last_end_raw_).
            if (d.samples[i].info.end_ns > last_end) {
              ++kept_samples;
              last_end = d.samples[i].info.end_ns;
            } else {
              ++stale_samples;
            }
          }
          if (d.samples[i].info.info_result == 0 && d.samples[i].info.eval_result == 0)
            first_sample = false;
        }
      }
    }
    uint64_t ranges = 0;
    std::vector<std::pair<std::string, double>> range_rows;  // "<range name>|<cupti name>", value
    if (!c.range_configs.empty()) {
      const fake::RangeConfigFrame& cfg = c.range_configs[0];
      RealHost host{lib};
      std::vector<const char*> names;
      ASSERT_TRUE(host.Init(cfg.head.chip, CUPTI_PROFILER_TYPE_RANGE_PROFILER, {}, cfg.names, &names)) << host.why;
      for (const fake::RangeDataFrame& d : c.range_data) {
        for (size_t i = 0; i < d.ranges.size(); ++i) {
          std::vector<double> values;
          ASSERT_EQ(host.Evaluate(d.image, i, names, &values), static_cast<CUptiResult>(d.ranges[i].info.eval_result));
          if (d.ranges[i].info.eval_result == 0) {
            EXPECT_EQ(values, d.ranges[i].values) << "range " << i;
            ++ranges;
            std::string name = d.ranges[i].info.name[0] != '\0' ? d.ranges[i].info.name : d.head.nvtx_name;
            for (size_t m = 0; m < cfg.names.size(); ++m)
              range_rows.emplace_back(name + "|" + cfg.names[m], d.ranges[i].values[m]);
          }
        }
      }
    }
    // 2. The same images through libgtrace.so (fake target functions, real host API) into rows.
    TempDir dir;
    std::map<std::string, std::string> env = {{"FAKE_CUPTI_METRICS_REPLAY", path},
                                              {"FAKE_CUPTI_REAL_HOST", GT_CUPTI_LIBRARY},
                                              {"FAKE_CUDA_UUID_TAG", Tag(4)}};
    if (!c.pm_configs.empty()) {
      env["GTRACE_GPU_METRICS_DEVICES"] = "0";
      env["GTRACE_GPU_METRICS_SET"] = c.file.info["set"];
    }
    if (!c.range_configs.empty())
      env["GTRACE_GPU_METRICS_RANGES"] = c.file.info["ranges"];
    TracedExport r = RunAndExport(dir, {SamplePath("fake_metrics_app"), "replay"}, env, "replay");
    RemoveLock(Tag(4));
    ASSERT_EQ(r.run.exit_code, 0) << r.run.err;
    ASSERT_FALSE(r.db.empty()) << r.export_err;
    Db db(r.db);
    if (!c.pm_configs.empty()) {
      EXPECT_EQ(db.Int("SELECT count(DISTINCT timestamp) FROM GPU_METRICS"), static_cast<int64_t>(kept_samples));
      EXPECT_EQ(db.Int("SELECT count(*) FROM GPU_METRICS"),
                static_cast<int64_t>(kept_samples * c.pm_configs[0].names.size()));
      EXPECT_EQ(db.Rows("SELECT state, decodeErrors FROM GTRACE_GPU_METRICS_DEVICES"),
                (Rows{"stopped|" + std::to_string(stale_samples)}));
    }
    if (!c.range_configs.empty()) {
      EXPECT_GT(ranges, 0u) << "a range-profiler capture without an evaluated range";
      EXPECT_EQ(db.Int("SELECT count(*) FROM GTRACE_RANGE_METRICS"),
                static_cast<int64_t>(ranges * c.range_configs[0].names.size()));
      // Every row exactly as NVIDIA's evaluator gave it on the GPU machine, in pass and range order.
      EXPECT_EQ(RangeRows(db), range_rows);
      // The metric list gtrace selected on this CPU with the real host API is the recorded one.
      std::vector<std::string> accepted;
      for (const std::string& n : c.range_configs[0].names)
        accepted.push_back(n);
      EXPECT_EQ(db.Rows("SELECT cuptiName FROM GTRACE_GPU_METRICS_CONFIG WHERE profiler = 'range-profiler' AND "
                        "accepted = 1 ORDER BY rowid"),
                accepted);
    }
    dlclose(lib);
  }
}

}  // namespace
}  // namespace gt::test
