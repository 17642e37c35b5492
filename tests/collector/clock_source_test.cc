// Choosing the stream clock: GTRACE_CLOCK parsing, the /proc/cpuinfo + clocksource probe (on files
// written here), the forced-tsc fallback with its warning, and what the choice does to StreamNow and
// the calibration pair.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "collector/clock.h"
#include "collector/clock_source.h"
#include "collector/config.h"
#include "tests/common/test_util.h"

namespace gt {
namespace {

std::map<std::string, std::string>* g_env;
const char* FakeGetenv(const char* name) {
  auto it = g_env->find(name);
  return it != g_env->end() ? it->second.c_str() : nullptr;
}
Config Load(std::map<std::string, std::string> env) {
  g_env = &env;
  std::vector<std::string> storage;
  for (auto& [k, v] : env) storage.push_back(k + "=" + v);
  std::vector<char*> list;
  for (auto& s : storage) list.push_back(s.data());
  list.push_back(nullptr);
  return LoadConfig(&FakeGetenv, list.data());
}

TEST(ClockSource, GtraceClockVariable) {
  EXPECT_EQ(Load({}).clock, ClockChoice::kAuto);  // the default since the GPU kit's H200 run
  EXPECT_EQ(Load({{"GTRACE_CLOCK", ""}}).clock, ClockChoice::kAuto);
  EXPECT_EQ(Load({{"GTRACE_CLOCK", "auto"}}).clock, ClockChoice::kAuto);
  EXPECT_EQ(Load({{"GTRACE_CLOCK", "tsc"}}).clock, ClockChoice::kTsc);
  EXPECT_EQ(Load({{"GTRACE_CLOCK", "monotonic"}}).clock, ClockChoice::kMonotonic);
  Config bad = Load({{"GTRACE_CLOCK", "rdtscp"}});
  EXPECT_EQ(bad.clock, ClockChoice::kAuto);
  ASSERT_EQ(bad.warnings.size(), 1u);
  EXPECT_EQ(bad.warnings[0], "GTRACE_CLOCK='rdtscp' is not auto, tsc or monotonic; using auto");
}

#if defined(__x86_64__)
struct Files {
  test::TempDir dir;
  std::string cpuinfo, source;
  Files(const std::string& flags, const std::string& clocksource) {
    cpuinfo = dir.File("cpuinfo");
    source = dir.File("current_clocksource");
    std::ofstream(cpuinfo) << "processor\t: 0\nvendor_id\t: GenuineIntel\nflags\t\t: fpu tsc " << flags
                           << " rdtscp\n\nprocessor\t: 1\nflags\t\t: fpu\n";
    std::ofstream(source) << clocksource << "\n";
  }
  TickCounterSupport Probe() const { return ProbeTickCounter(cpuinfo.c_str(), source.c_str()); }
};

TEST(ClockSource, ProbeNeedsInvariantTscAndTheKernelsTscClocksource) {
  EXPECT_TRUE(Files("constant_tsc nonstop_tsc", "tsc").Probe().usable);
  TickCounterSupport s = Files("constant_tsc", "tsc").Probe();
  EXPECT_FALSE(s.usable);
  EXPECT_EQ(s.reason, "the CPU does not report an invariant TSC (no nonstop_tsc)");
  s = Files("nonstop_tsc constant_tsc_x", "tsc").Probe();  // whole words only
  EXPECT_FALSE(s.usable);
  EXPECT_EQ(s.reason, "the CPU does not report an invariant TSC (no constant_tsc)");
  s = Files("constant_tsc nonstop_tsc", "hpet").Probe();
  EXPECT_FALSE(s.usable);
  EXPECT_EQ(s.reason, "the kernel's clocksource is 'hpet', not tsc");
  s = ProbeTickCounter("/nonexistent/cpuinfo", "/nonexistent/clocksource");
  EXPECT_FALSE(s.usable);
}
#endif

TEST(ClockSource, ForcedTscWithoutACounterFallsBackWithOneWarning) {
  TickCounterSupport none{false, "the kernel's clocksource is 'hpet', not tsc"};
  std::string warning;
  EXPECT_FALSE(SelectStreamClock(ClockChoice::kTsc, none, &warning));
  EXPECT_EQ(warning, "GTRACE_CLOCK=tsc: the kernel's clocksource is 'hpet', not tsc; using CLOCK_MONOTONIC");
  EXPECT_FALSE(StreamClockIsTicks());
  warning.clear();
  EXPECT_FALSE(SelectStreamClock(ClockChoice::kAuto, none, &warning));
  EXPECT_EQ(warning, "");  // auto falls back silently
  TickCounterSupport yes{true, ""};
  EXPECT_FALSE(SelectStreamClock(ClockChoice::kMonotonic, yes, &warning));
  EXPECT_EQ(warning, "");
}

TEST(ClockSource, StreamNowAndThePairFollowTheChoice) {
  if (!kHasTickCounter) GTEST_SKIP() << "no tick counter on this architecture";
  SelectStreamClock(ClockChoice::kMonotonic, {true, ""}, nullptr);
  uint64_t a = NowNs(), s = StreamNow(), b = NowNs();
  EXPECT_LE(a, s);
  EXPECT_LE(s, b);
  ClockPair p = ReadClockPair();
  EXPECT_EQ(p.monotonic_ns, p.stream_ns);
  SelectStreamClock(ClockChoice::kTsc, {true, ""}, nullptr);
  EXPECT_TRUE(StreamClockIsTicks());
  uint64_t t0 = ReadTicks(), t = StreamNow(), t1 = ReadTicks();
  EXPECT_LE(t0, t);
  EXPECT_LE(t, t1);
  p = ReadClockPair();
  EXPECT_GE(p.stream_ns, t1);
  uint64_t m = NowNs();
  EXPECT_LE(p.monotonic_ns, m);
  EXPECT_GT(p.monotonic_ns, m - 1000000000ull);
  SelectStreamClock(ClockChoice::kMonotonic, {true, ""}, nullptr);  // leave the process as found
}

}  // namespace
}  // namespace gt
