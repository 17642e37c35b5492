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

}  // namespace
}  // namespace gt
