// TSC-timestamped NVTX rows agree with CLOCK_MONOTONIC read by the program at the same instants:
// nvtx_clock_app brackets each nvtxRangePushA / nvtxRangePop with clock_gettime and runs ~2.5 s
// (several calibration pairs), traced under GTRACE_CLOCK=tsc and =monotonic. After export, every
// range's start and end, measured from the first probe range, must lie inside the program's
// brackets widened by the stated conversion error (1 us); durations likewise. Session time zero
// cancels out: only differences of exported times are compared with differences of the program's.
#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

#include "collector/clock_source.h"
#include "tests/common/test_util.h"

namespace gt::test {
namespace {

constexpr int64_t kStatedErrorNs = 1000;

struct Bracket {
  int64_t m0, m1, m2, m3;
};

class ClockAgreement : public ::testing::TestWithParam<std::string> {};

TEST_P(ClockAgreement, NvtxRowsMatchTheProgramsClockGettime) {
  const std::string clock = GetParam();
  if (clock == "tsc" && !ProbeTickCounter().usable) GTEST_SKIP() << "no usable TSC here: " << ProbeTickCounter().reason;
  TempDir dir;
  RunOptions o = TracedRun(dir, "agree");
  o.env["GTRACE_CLOCK"] = clock;
  o.env["GTRACE_TRACE"] = "nvtx";
  o.env["GTRACE_FLUSH_MS"] = "300";  // several writes, each with its calibration pair
  RunResult run = RunProgram({SamplePath("nvtx_clock_app"), "50", "50"}, o);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.err, "");
  std::vector<Bracket> probes;
  std::istringstream in(run.out);
  Bracket b{};
  while (in >> b.m0 >> b.m1 >> b.m2 >> b.m3) probes.push_back(b);
  ASSERT_EQ(probes.size(), 50u);

  RunResult info = RunProgram({CliPath(), "info", "--json", dir.File("agree.gtrace")});
  EXPECT_NE(info.out.find("\"clock\":\"" + clock + "\""), std::string::npos) << info.out;
  RunResult e = RunProgram({CliPath(), "export", "-o", dir.File("agree.sqlite"), dir.File("agree.gtrace")});
  ASSERT_EQ(e.exit_code, 0) << e.err;
  Db db(dir.File("agree.sqlite"));
  std::vector<std::string> rows = db.Rows("SELECT start, end FROM NVTX_EVENTS WHERE text = 'probe' ORDER BY start");
  ASSERT_EQ(rows.size(), 50u);
  std::vector<std::pair<int64_t, int64_t>> ranges;
  for (const std::string& r : rows) {
    size_t bar = r.find('|');
    ranges.push_back({std::stoll(r.substr(0, bar)), std::stoll(r.substr(bar + 1))});
  }
  // Each range's push lies in [m0, m1] and its pop in [m2, m3] of its iteration. Relative to the
  // first range's push (in [m0', m1'] of the first iteration): start_i - start_0 in
  // [m0_i - m1_0, m1_i - m0_0], widened by the stated error.
  int64_t worst_ns = 0;
  for (size_t i = 0; i < ranges.size(); ++i) {
    int64_t s = ranges[i].first - ranges[0].first;
    int64_t en = ranges[i].second - ranges[0].first;
    int64_t lo_s = probes[i].m0 - probes[0].m1, hi_s = probes[i].m1 - probes[0].m0;
    int64_t lo_e = probes[i].m2 - probes[0].m1, hi_e = probes[i].m3 - probes[0].m0;
    EXPECT_GE(s, lo_s - kStatedErrorNs) << "range " << i;
    EXPECT_LE(s, hi_s + kStatedErrorNs) << "range " << i;
    EXPECT_GE(en, lo_e - kStatedErrorNs) << "range " << i;
    EXPECT_LE(en, hi_e + kStatedErrorNs) << "range " << i;
    int64_t d = ranges[i].second - ranges[i].first;
    EXPECT_GE(d, probes[i].m2 - probes[i].m1 - kStatedErrorNs) << "range " << i;
    EXPECT_LE(d, probes[i].m3 - probes[i].m0 + kStatedErrorNs) << "range " << i;
    worst_ns = std::max({worst_ns, lo_s - s, s - hi_s, lo_e - en, en - hi_e});
  }
  // The run spans more than two seconds: the conversion crossed several calibration segments.
  EXPECT_GT(probes.back().m0 - probes.front().m0, 2000000000);
  RecordProperty("worst_outside_bracket_ns", std::to_string(worst_ns));
}

INSTANTIATE_TEST_SUITE_P(Clocks, ClockAgreement, ::testing::Values("tsc", "monotonic"),
                         [](const ::testing::TestParamInfo<std::string>& p) { return p.param; });

}  // namespace
}  // namespace gt::test
