// CUPTI on the stream clock: fake_cuda_app's "nvtx" scenario (kernels launched inside NVTX
// push/pop ranges) under GTRACE_CLOCK=tsc and =monotonic. gtrace gives CUPTI its timestamp callback
// (the stream clock: TSC ticks or CLOCK_MONOTONIC ns); the fake CUPTI maps its GPU spans onto that
// callback as CUPTI does (tests/fakes/fake_state.h, Span). After export every kernel must lie inside
// the ranges it was launched in, with its duration in ns, and the stream must say which clock it has.
// (A test double: it proves gtrace's plumbing, not CUPTI's interpolation on a real GPU.)
// CuptiClockPairs.*: the same on a TSC stream whose CUPTI refuses the callback (its own clock,
// converted through measured pairs), and the accepted path writing no pairs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "collector/clock_source.h"
#include "gtrace.pb.h"
#include "tests/cuda/cuda_test_util.h"
#include "tools/stream/stream_reader.h"

namespace gt::test {
namespace {

using Rows = std::vector<std::string>;

class CudaStreamClock : public ::testing::TestWithParam<std::string> {};

TEST_P(CudaStreamClock, KernelsLandInsideTheirNvtxRanges) {
  const std::string clock = GetParam();
  if (clock == "tsc" && !ProbeTickCounter().usable) {
    GTEST_SKIP() << "no usable TSC here: " << ProbeTickCounter().reason;
  }
  TempDir dir;
  CudaRun r = RunTraced(dir, {"nvtx"}, {{"GTRACE_CLOCK", clock}});
  ASSERT_EQ(r.run.exit_code, 0) << r.run.err;
  EXPECT_TRUE(GtraceLines(r.run.err).empty()) << r.run.err;
  ASSERT_EQ(r.streams.size(), 1u);
  ASSERT_FALSE(r.db.empty()) << r.export_err;
  RunResult info = RunProgram({CliPath(), "info", "--json", r.streams[0]});
  ASSERT_EQ(info.exit_code, 0) << info.err;
  EXPECT_NE(info.out.find("\"clock\":\"" + clock + "\""), std::string::npos) << info.out;

  Db db(r.db);
  // Each kernel with the ranges that contain it (same process; kernels on the GPU, ranges on the
  // launching thread), innermost last.
  EXPECT_EQ(db.Rows("SELECT s.value, group_concat(n.text, '>') FROM CUPTI_ACTIVITY_KIND_KERNEL k "
                    "JOIN StringIds s ON s.id = k.shortName "
                    "LEFT JOIN (SELECT * FROM NVTX_EVENTS WHERE eventType = 59 ORDER BY start) n "
                    "ON n.start <= k.start AND k.end <= n.end GROUP BY k.correlationId ORDER BY k.start"),
            (Rows{"warmup|warmup", "k1|train", "k2|train>inner", "k3|train", "k4|train"}));
  // Kernel durations: 1000 ns on the fake GPU, back in ns after the tick conversion (±2 ns of
  // rounding through ticks); each kernel starts after its launch call did (one timeline). Not "ends
  // before the call returns": the fake leaves 3 us between entering the call and the kernel's end,
  // which ASan's slower callbacks exceed.
  EXPECT_EQ(db.Int("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE end - start BETWEEN 998 AND 1002"), 5);
  EXPECT_EQ(db.Int("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN CUPTI_ACTIVITY_KIND_RUNTIME a "
                   "ON a.correlationId = k.correlationId WHERE a.start <= k.start"),
            5);
}

INSTANTIATE_TEST_SUITE_P(Clocks, CudaStreamClock, ::testing::Values("tsc", "monotonic"),
                         [](const ::testing::TestParamInfo<std::string>& p) { return p.param; });

// CUPTI refusing gtrace's timestamp callback on a TSC stream (older drivers; the fake is told to
// refuse). CUPTI then stamps its records with its own clock, here FAKE_CUPTI_OWN_CLOCK's
// CLOCK_MONOTONIC * (1 + 250e-6) - 123.456789012 s: neither the TSC nor CLOCK_MONOTONIC, and 250 ppm
// fast, so one offset measured at start would misplace the third kernel (1.4 s later) by 350 us.
// gtrace records measured (cuptiGetTimestamp, ticks) pairs (CuptiClockPair) and the reader converts
// CUPTI's times through them. The fake's clock is an exact function of CLOCK_MONOTONIC, so each
// kernel's exported start is known to the ns: it must be within kCuptiPairErrorNs of it.
constexpr int64_t kOwnClockOffsetNs = -123456789012;
constexpr int64_t kOwnClockPpm = 250;
// The conversion's error bound (docs/architecture.md, "Clocks"): half the bracket of the CUPTI pair
// (two rdtsc around cuptiGetTimestamp, tightest of 7) plus the tick conversion's own error (the
// stream's calibration brackets); both are tens of ns on an idle machine, and the bound leaves room
// for a loaded one.
constexpr int64_t kCuptiPairErrorNs = 1000;

// CLOCK_MONOTONIC ns of a reading of the fake's own clock (the inverse of fake_cupti.cc's Now()).
int64_t OwnClockToMonotonicNs(uint64_t cupti_ns) {
  __int128 c = static_cast<__int128>(cupti_ns) - kOwnClockOffsetNs;
  return static_cast<int64_t>(c * 1000000 / (1000000 + kOwnClockPpm));
}

// "kernel <name> cupti_start=<S>" lines of the "ranged" scenario.
std::map<std::string, uint64_t> PrintedStarts(const std::string& out) {
  std::map<std::string, uint64_t> starts;
  std::istringstream in(out);
  std::string line;
  while (std::getline(in, line)) {
    char name[32] = {};
    unsigned long long start = 0;
    if (std::sscanf(line.c_str(), "kernel %31s cupti_start=%llu", name, &start) == 2) starts[name] = start;
  }
  return starts;
}

// CuptiClockPairs in a stream file (read with the reader, so the pairs' tick readings are in ns).
size_t CuptiPairsIn(const std::string& stream) {
  stream::StreamReader reader;
  if (!reader.Open(stream).ok()) return 0;
  size_t n = 0;
  schema::Chunk c;
  bool has = true;
  while (reader.Next(&c, &has).ok() && has) n += static_cast<size_t>(c.cupti_clock_pairs_size());
  return n;
}

const std::string kOwnClock = std::to_string(kOwnClockOffsetNs) + ":" + std::to_string(kOwnClockPpm);

TEST(CuptiClockPairs, RefusedCallbackOnATscStreamPutsKernelsInsideTheirRanges) {
  if (!ProbeTickCounter().usable) GTEST_SKIP() << "no usable TSC here: " << ProbeTickCounter().reason;
  TempDir dir;
  CudaRun r = RunTraced(dir, {"ranged"},
                        {{"GTRACE_CLOCK", "tsc"}, {"FAKE_CUPTI_NO_TIMESTAMP_CALLBACK", "1"},
                         {"FAKE_CUPTI_OWN_CLOCK", kOwnClock}});
  ASSERT_EQ(r.run.exit_code, 0) << r.run.err;
  // Nothing to ask of the user any more (it used to say "use GTRACE_CLOCK=monotonic").
  EXPECT_TRUE(GtraceLines(r.run.err).empty()) << r.run.err;
  ASSERT_EQ(r.streams.size(), 1u);
  ASSERT_FALSE(r.db.empty()) << r.export_err;
  // The set-up pair, one from the first drain (a new stream's), at least one periodic pair in the
  // 2.1 s run, and the final one.
  EXPECT_GE(CuptiPairsIn(r.streams[0]), 4u);
  Db db(r.db);
  EXPECT_EQ(db.Text("SELECT value FROM META_DATA_CAPTURE WHERE name = 'PROCESS_0:CUPTI_CLOCK'"),
            "CUPTI clock, converted through measured clock pairs");

  // Exported times count from the session start: the stream's start pair, in CLOCK_MONOTONIC ns.
  stream::StreamReader reader;
  ASSERT_TRUE(reader.Open(r.streams[0]).ok());
  const int64_t origin_ns = static_cast<int64_t>(reader.header().start_clock().stream_clock_ns());
  std::map<std::string, uint64_t> printed = PrintedStarts(r.run.out);
  ASSERT_EQ(printed.size(), 3u) << r.run.out;
  std::vector<std::string> rows = db.Rows(
      "SELECT s.value, k.start, k.end FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON s.id = k.shortName "
      "ORDER BY k.start");
  ASSERT_EQ(rows.size(), 3u);
  int64_t worst = 0;
  for (const std::string& row : rows) {
    char name[32] = {};
    long long start = 0, end = 0;
    ASSERT_EQ(std::sscanf(row.c_str(), "%31[^|]|%lld|%lld", name, &start, &end), 3) << row;
    ASSERT_TRUE(printed.count(name)) << row;
    int64_t expected = OwnClockToMonotonicNs(printed[name]) - origin_ns;
    int64_t error = start - expected;
    worst = std::max(worst, error < 0 ? -error : error);
    EXPECT_LE(error < 0 ? -error : error, kCuptiPairErrorNs)
        << name << ": exported " << start << ", expected " << expected;
    // 2000 ns on the GPU, 2000.5 in CUPTI's faster units: back in ns (+-2 for the roundings).
    EXPECT_NEAR(end - start, 2000, 2) << name;
  }
  std::printf("largest kernel start error against the fake's exact clock: %lld ns\n", static_cast<long long>(worst));
  // Each kernel inside its own "step" range, and after its launch call began (CUPTI's API records
  // are on CUPTI's clock too; not "before the call returns": the fake's callbacks under load can take
  // longer than the call's 5 us).
  EXPECT_EQ(db.Int("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN NVTX_EVENTS n ON n.text = 'step' "
                   "AND n.start <= k.start AND k.end <= n.end"),
            3);
  EXPECT_EQ(db.Int("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN CUPTI_ACTIVITY_KIND_RUNTIME a "
                   "ON a.correlationId = k.correlationId WHERE a.start <= k.start"),
            3);
}

// The ordinary path: CUPTI takes gtrace's callback, its times are ticks, no pairs are written (the
// fake's own clock is never used).
TEST(CuptiClockPairs, AcceptedCallbackWritesNoPairs) {
  if (!ProbeTickCounter().usable) GTEST_SKIP() << "no usable TSC here: " << ProbeTickCounter().reason;
  TempDir dir;
  CudaRun r = RunTraced(dir, {"ranged"}, {{"GTRACE_CLOCK", "tsc"}, {"FAKE_CUPTI_OWN_CLOCK", kOwnClock}});
  ASSERT_EQ(r.run.exit_code, 0) << r.run.err;
  EXPECT_TRUE(GtraceLines(r.run.err).empty()) << r.run.err;
  ASSERT_EQ(r.streams.size(), 1u);
  ASSERT_FALSE(r.db.empty()) << r.export_err;
  EXPECT_EQ(CuptiPairsIn(r.streams[0]), 0u);
  Db db(r.db);
  EXPECT_EQ(db.Text("SELECT value FROM META_DATA_CAPTURE WHERE name = 'PROCESS_0:CUPTI_CLOCK'"),
            "gtrace timestamp callback");
  EXPECT_EQ(db.Int("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN NVTX_EVENTS n ON n.text = 'step' "
                   "AND n.start <= k.start AND k.end <= n.end AND k.end - k.start BETWEEN 1998 AND 2002"),
            3);
}

// CUPTI's drop counts and the records lost at the final flush are stamped on the stream clock like
// everything else: on a TSC stream their DIAGNOSTIC_EVENT rows lie inside the run (they were
// CLOCK_MONOTONIC ns read as ticks before, i.e. far outside it).
TEST(CudaStreamClockTsc, CuptiLossesAreOnTheTimeline) {
  if (!ProbeTickCounter().usable) GTEST_SKIP() << "no usable TSC here: " << ProbeTickCounter().reason;
  TempDir dir;
  CudaRun r = RunTraced(dir, {"basic"}, {{"GTRACE_CLOCK", "tsc"}});
  ASSERT_EQ(r.run.exit_code, 0) << r.run.err;
  ASSERT_FALSE(r.db.empty()) << r.export_err;
  Db db(r.db);
  int64_t duration = db.Int("SELECT duration FROM ANALYSIS_DETAILS").value_or(-1);
  ASSERT_GT(duration, 0);
  EXPECT_EQ(db.Rows("SELECT severity, text FROM DIAGNOSTIC_EVENT ORDER BY timestamp"),
            (Rows{"2|gtrace dropped 3 records (dropped by CUPTI)",
                  "2|gtrace dropped 1 CUPTI records without an end (GPU work still running at the final flush)"}));
  EXPECT_EQ(db.Int("SELECT count(*) FROM DIAGNOSTIC_EVENT WHERE timestamp > 0 AND timestamp <= " +
                   std::to_string(duration)),
            2)
      << "duration " << duration << "; timestamps: "
      << ::testing::PrintToString(db.Rows("SELECT timestamp FROM DIAGNOSTIC_EVENT"));
}

}  // namespace
}  // namespace gt::test
