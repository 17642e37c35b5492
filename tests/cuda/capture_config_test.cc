// Capture-window options (GTRACE_CAPTURE_RANGE, GTRACE_NVTX_CAPTURE, GTRACE_CAPTURE_RANGE_END,
// GTRACE_DELAY, GTRACE_DURATION): parsing, defaults, and the warnings a bad value produces.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "collector/config.h"

namespace gt {
namespace {

std::map<std::string, std::string>* g_env = nullptr;
const char* FakeGetenv(const char* name) {
  auto it = g_env->find(name);
  return it == g_env->end() ? nullptr : it->second.c_str();
}

Config Load(std::map<std::string, std::string> env) {
  g_env = &env;
  Config c = LoadConfig(&FakeGetenv, nullptr);
  g_env = nullptr;
  return c;
}

TEST(CaptureConfig, DefaultsRecordFromTheStart) {
  Config c = Load({});
  EXPECT_EQ(c.capture.range, CaptureRange::kNone);
  EXPECT_EQ(c.capture.end, CaptureRangeEnd::kStop);
  EXPECT_EQ(c.capture.delay_ns, 0u);
  EXPECT_EQ(c.capture.duration_ns, 0u);
  EXPECT_FALSE(c.capture.StartsPaused());
  EXPECT_TRUE(c.warnings.empty());
}

TEST(CaptureConfig, ParsesEveryOption) {
  Config c = Load({{"GTRACE_CAPTURE_RANGE", "nvtx"},
                   {"GTRACE_NVTX_CAPTURE", "train@my\\@dom"},
                   {"GTRACE_CAPTURE_RANGE_END", "repeat:3"},
                   {"GTRACE_DELAY", "1.25"},
                   {"GTRACE_DURATION", "10"}});
  EXPECT_EQ(c.capture.range, CaptureRange::kNvtx);
  EXPECT_EQ(c.capture.nvtx_message, "train");
  EXPECT_EQ(c.capture.nvtx_domain, "my@dom");
  EXPECT_FALSE(c.capture.nvtx_any_domain);
  EXPECT_EQ(c.capture.end, CaptureRangeEnd::kRepeat);
  EXPECT_EQ(c.capture.repeat_count, 3u);
  EXPECT_EQ(c.capture.delay_ns, 1250000000u);
  EXPECT_EQ(c.capture.duration_ns, 10000000000u);
  EXPECT_TRUE(c.capture.StartsPaused());
  EXPECT_TRUE(c.warnings.empty()) << c.warnings[0];
}

TEST(CaptureConfig, NvtxCaptureSyntax) {
  std::string m, d, e;
  bool any = false;
  ASSERT_TRUE(ParseNvtxCapture("step", &m, &d, &any, &e));
  EXPECT_EQ(m, "step");
  EXPECT_EQ(d, "");
  EXPECT_FALSE(any);
  ASSERT_TRUE(ParseNvtxCapture("step@*", &m, &d, &any, &e));
  EXPECT_TRUE(any);
  EXPECT_EQ(d, "");
  ASSERT_TRUE(ParseNvtxCapture("a\\@b", &m, &d, &any, &e));
  EXPECT_EQ(m, "a@b");
  EXPECT_EQ(d, "");
  EXPECT_FALSE(ParseNvtxCapture("@dom", &m, &d, &any, &e));
  EXPECT_FALSE(ParseNvtxCapture("step@", &m, &d, &any, &e));
}

TEST(CaptureConfig, RangeEndAndSeconds) {
  CaptureRangeEnd end;
  uint32_t n = 0;
  std::string e;
  ASSERT_TRUE(ParseCaptureRangeEnd("none", &end, &n, &e));
  EXPECT_EQ(end, CaptureRangeEnd::kNone);
  ASSERT_TRUE(ParseCaptureRangeEnd("repeat", &end, &n, &e));
  EXPECT_EQ(end, CaptureRangeEnd::kRepeat);
  EXPECT_EQ(n, 0u);
  ASSERT_TRUE(ParseCaptureRangeEnd("stop-shutdown", &end, &n, &e));
  EXPECT_EQ(end, CaptureRangeEnd::kStop);
  EXPECT_FALSE(ParseCaptureRangeEnd("repeat:0", &end, &n, &e));
  EXPECT_FALSE(ParseCaptureRangeEnd("again", &end, &n, &e));
  uint64_t ns = 0;
  ASSERT_TRUE(ParseSecondsNs("0.000000001", &ns, &e));
  EXPECT_EQ(ns, 1u);
  ASSERT_TRUE(ParseSecondsNs(".5", &ns, &e));
  EXPECT_EQ(ns, 500000000u);
  EXPECT_FALSE(ParseSecondsNs("1.0000000001", &ns, &e));
  EXPECT_FALSE(ParseSecondsNs("-1", &ns, &e));
  EXPECT_FALSE(ParseSecondsNs("1s", &ns, &e));
  EXPECT_FALSE(ParseSecondsNs(".", &ns, &e));
}

TEST(CaptureConfig, BadValuesWarnAndKeepDefaults) {
  Config c = Load({{"GTRACE_CAPTURE_RANGE", "cudaprofilerapi"}, {"GTRACE_DELAY", "soon"}});
  EXPECT_EQ(c.capture.range, CaptureRange::kNone);
  EXPECT_EQ(c.capture.delay_ns, 0u);
  ASSERT_EQ(c.warnings.size(), 2u);
  EXPECT_NE(c.warnings[0].find("unknown capture range 'cudaprofilerapi'"), std::string::npos) << c.warnings[0];
  EXPECT_NE(c.warnings[1].find("GTRACE_DELAY"), std::string::npos);
  // nvtx capture without a range name, or without NVTX traced, records the whole run.
  c = Load({{"GTRACE_CAPTURE_RANGE", "nvtx"}});
  EXPECT_EQ(c.capture.range, CaptureRange::kNone);
  ASSERT_EQ(c.warnings.size(), 1u);
  c = Load({{"GTRACE_CAPTURE_RANGE", "nvtx"}, {"GTRACE_NVTX_CAPTURE", "x"}, {"GTRACE_TRACE", "cuda"}});
  EXPECT_EQ(c.capture.range, CaptureRange::kNone);
  c = Load({{"GTRACE_CAPTURE_RANGE", "cudaProfilerApi"}, {"GTRACE_TRACE", "nvtx"}});
  EXPECT_EQ(c.capture.range, CaptureRange::kNone);
  c = Load({{"GTRACE_CAPTURE_RANGE", "cudaProfilerApi"}});
  EXPECT_EQ(c.capture.range, CaptureRange::kCudaProfilerApi);
  EXPECT_TRUE(c.capture.StartsPaused());
}

// --capture-range=steps:A-B (gtrace.step(), the Python API): both ends included, A <= B.
TEST(CaptureConfig, StepRange) {
  Config c = Load({{"GTRACE_CAPTURE_RANGE", "steps:3-7"}});
  EXPECT_EQ(c.capture.range, CaptureRange::kSteps);
  EXPECT_EQ(c.capture.step_first, 3u);
  EXPECT_EQ(c.capture.step_last, 7u);
  EXPECT_TRUE(c.capture.StartsPaused());
  EXPECT_TRUE(c.warnings.empty());
  c = Load({{"GTRACE_CAPTURE_RANGE", "steps:0-0"}, {"GTRACE_TRACE", "cuda"}});  // needs no source
  EXPECT_EQ(c.capture.range, CaptureRange::kSteps);
  EXPECT_EQ(c.capture.step_first, 0u);
  EXPECT_EQ(c.capture.step_last, 0u);
  EXPECT_TRUE(c.warnings.empty());
  CaptureRange r = CaptureRange::kNone;
  uint64_t a = 0, b = 0;
  std::string e;
  for (const char* bad : {"steps:", "steps:4", "steps:5-4", "steps:-3", "steps:1-", "steps:a-b", "steps:1-2-3"}) {
    EXPECT_FALSE(ParseCaptureRange(bad, &r, &e, &a, &b)) << bad;
    EXPECT_EQ(e, "'" + std::string(bad) + "': expected steps:A-B with step numbers A <= B");
  }
  EXPECT_FALSE(ParseCaptureRange("steps:1-2", &r, &e));  // a caller that cannot take step numbers
  c = Load({{"GTRACE_CAPTURE_RANGE", "steps:9-2"}});
  EXPECT_EQ(c.capture.range, CaptureRange::kNone);
  ASSERT_EQ(c.warnings.size(), 1u);
  EXPECT_EQ(c.warnings[0],
            "GTRACE_CAPTURE_RANGE: 'steps:9-2': expected steps:A-B with step numbers A <= B; capturing the whole run");
}

}  // namespace
}  // namespace gt
