// gtrace analyze on the simulator's job: the planted straggler found, the POP factors within 1 %
// of the planted timeline's, iterations from NVTX and from the collective pattern, per-rank
// databases analysed like the merged one; and the pieces (pattern finder, interval arithmetic).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <sstream>

#include "tests/common/rank_simulator.h"
#include "tests/common/test_util.h"
#include "tools/analyze/analysis.h"
#include "tools/analyze/gpu_time.h"
#include "tools/analyze/steps.h"
#include "tools/export/exporter.h"
#include "tools/export/multi_export.h"

namespace gt {
namespace {

test::SimConfig Job() {
  test::SimConfig c;
  c.ranks = 16;
  c.ranks_per_host = 4;
  c.steps = 50;
  c.compute_ns = 30000000;
  c.straggler_rank = 6;
  c.straggler_delay_ns = 2500000;
  c.ntp_offset_ns = {0, -3000000, 1200000, 400000};
  c.drift_ppb = {0, 9000, -12000, 4000};
  for (uint32_t r = 0; r < c.ranks; ++r)
    c.imbalance.push_back(1.0 + 0.05 * (r % 4));  // planted imbalance
  return c;
}

struct Fixture {
  test::TempDir dir;
  test::SimConfig config = Job();
  test::SimTruth truth;
  std::string db;
  Fixture() {
    test::SimulateRanks(config, dir.path(), &truth);
    exporter::MultiExportOptions o;
    o.inputs = truth.paths;
    o.output = dir.File("job.sqlite");
    exporter::MultiExportResult r;
    Status st = exporter::ExportMany(o, &r);
    EXPECT_TRUE(st.ok()) << st.message();
    db = o.output;
  }
};

void ExpectWithin1Percent(double got, double planted, const char* what) {
  EXPECT_LE(std::abs(got - planted), 0.01 * planted) << what << ": got " << got << ", planted " << planted;
}

TEST(Analyze, FindsTheStragglerAndThePlantedEfficiency) {
  Fixture f;
  analyze::AnalyzeOptions o;
  o.databases = {f.db};
  o.step_range = "train_step";
  analyze::Analysis a;
  Status st = analyze::RunAnalysis(o, &a);
  ASSERT_TRUE(st.ok()) << st.message();
  ASSERT_EQ(a.ranks.size(), 16u);
  // POP factors against the simulator's own (the timeline it wrote), within 1 %.
  ASSERT_TRUE(a.pop.valid);
  ExpectWithin1Percent(a.pop.load_balance, f.truth.load_balance, "load balance");
  ExpectWithin1Percent(a.pop.communication, f.truth.communication, "communication efficiency");
  ExpectWithin1Percent(a.pop.orchestration, f.truth.orchestration, "orchestration efficiency");
  ExpectWithin1Percent(a.pop.parallel, f.truth.parallel, "parallel efficiency");
  int64_t comm = 0, overlap = 0;
  for (uint32_t r = 0; r < 16; ++r) {
    comm += f.truth.comm_ns[r];
    overlap += f.truth.overlap_ns[r];
    ExpectWithin1Percent(static_cast<double>(a.ranks[r].compute_ns), static_cast<double>(f.truth.compute_ns[r]),
                         "compute");
    ExpectWithin1Percent(static_cast<double>(a.ranks[r].busy_ns), static_cast<double>(f.truth.busy_ns[r]), "busy");
  }
  ExpectWithin1Percent(a.pop.overlap, static_cast<double>(overlap) / static_cast<double>(comm), "overlap");
  std::printf("POP planted LB %.4f CE %.4f OE %.4f PE %.4f; measured %.4f %.4f %.4f %.4f\n", f.truth.load_balance,
              f.truth.communication, f.truth.orchestration, f.truth.parallel, a.pop.load_balance, a.pop.communication,
              a.pop.orchestration, a.pop.parallel);
  // The straggler: last in every collective, all of the waiting is its doing.
  const analyze::RankResult* worst = &a.ranks[0];
  for (const analyze::RankResult& r : a.ranks) {
    if (r.wait_caused_ns > worst->wait_caused_ns)
      worst = &r;
  }
  EXPECT_EQ(worst->rank, f.config.straggler_rank);
  EXPECT_EQ(worst->times_last, a.instances.size());
  EXPECT_EQ(a.instances.size(), f.config.steps * (f.config.buckets + 1));
  ExpectWithin1Percent(static_cast<double>(worst->wait_caused_ns),
                       static_cast<double>(f.truth.wait_caused_ns[f.config.straggler_rank]), "wait caused");
  EXPECT_EQ(a.entry_source, "gpu");
  // Iterations: every step's slowest rank is the straggler; all ranks take the same wall time.
  ASSERT_EQ(a.steps.size(), f.config.steps);
  for (const analyze::StepResult& s : a.steps) {
    EXPECT_EQ(s.slowest_rank, f.config.straggler_rank) << s.index;
    EXPECT_EQ(s.ranks, 16u);
    EXPECT_LT(s.max_ns - s.min_ns, 20000) << s.index;  // synchronised by the collectives (clock residue only)
  }
  EXPECT_EQ(a.ranks[f.config.straggler_rank].times_slowest, f.config.steps);
  // Its GPU idles while the host is late: the longest gaps are its own, host gap + delay long.
  ASSERT_FALSE(a.top_gaps.empty());
  EXPECT_EQ(a.top_gaps[0].rank, f.config.straggler_rank);
  EXPECT_NEAR(static_cast<double>(a.top_gaps[0].duration_ns),
              static_cast<double>(f.config.host_gap_ns + f.config.straggler_delay_ns + f.config.step_turnaround_ns),
              20000.0);
}

TEST(Analyze, IterationsFromTheCollectivePattern) {
  Fixture f;
  analyze::AnalyzeOptions o;
  o.databases = {f.db};
  analyze::Analysis a;
  ASSERT_TRUE(analyze::RunAnalysis(o, &a).ok());
  EXPECT_NE(a.step_source.find("5 collective(s) per iteration"), std::string::npos) << a.step_source;
  ASSERT_EQ(a.steps.size(), f.config.steps - 1);  // boundary to boundary
  // An iteration lasts one step of the job on every rank.
  for (const analyze::StepResult& s : a.steps)
    EXPECT_EQ(s.slowest_rank, f.config.straggler_rank);
  int64_t step = (f.truth.window_ns + 10000) / f.config.steps;
  EXPECT_NEAR(static_cast<double>(a.steps[10].median_ns), static_cast<double>(step), 0.01 * step);
  ExpectWithin1Percent(a.pop.load_balance, f.truth.load_balance, "load balance");
}

TEST(Analyze, PerRankDatabasesOfOneExportAnalyseLikeTheMergedOne) {
  Fixture f;
  exporter::MultiExportOptions o;
  o.inputs = f.truth.paths;
  o.output = f.dir.File("ranks");
  o.per_rank = true;
  exporter::MultiExportResult r;
  ASSERT_TRUE(exporter::ExportMany(o, &r).ok());
  analyze::AnalyzeOptions ao;
  ao.databases = r.outputs;
  ao.step_range = "train_step";
  analyze::Analysis a, m;
  Status st = analyze::RunAnalysis(ao, &a);
  ASSERT_TRUE(st.ok()) << st.message();
  ao.databases = {f.db};
  ASSERT_TRUE(analyze::RunAnalysis(ao, &m).ok());
  // Two exports of the same streams: alignment estimated twice from the same anchors.
  EXPECT_NEAR(a.pop.parallel, m.pop.parallel, 1e-6);
  EXPECT_EQ(a.ranks[6].times_last, m.ranks[6].times_last);
  // Databases of separate exports are refused (their clocks are on different time lines).
  exporter::ExportOptions eo;
  eo.inputs = {f.truth.paths[0]};
  eo.output = f.dir.File("alone.sqlite");
  exporter::ExportResult er;
  ASSERT_TRUE(exporter::ExportSqlite(eo, &er).ok());
  ao.databases = {f.db, eo.output};
  st = analyze::RunAnalysis(ao, &a);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("Merge them first"), std::string::npos) << st.message();
}

TEST(Analyze, ReportsInEveryFormatAndTheHtmlPage) {
  Fixture f;
  analyze::AnalyzeOptions o;
  o.databases = {f.db};
  o.step_range = "train_step";
  o.keep_entries = true;
  analyze::Analysis a;
  ASSERT_TRUE(analyze::RunAnalysis(o, &a).ok());
  EXPECT_EQ(a.entries.size(), a.instances.size() * 16);
  std::ostringstream table, csv, json;
  ASSERT_TRUE(analyze::WriteReports(a, {}, analyze::Format::kTable, 5, table).ok());
  EXPECT_NE(table.str().find("Ranks by Time They Made Others Wait"), std::string::npos);
  ASSERT_TRUE(analyze::WriteReports(a, {"stragglers"}, analyze::Format::kCsv, 1, csv).ok());
  EXPECT_EQ(csv.str().substr(0, csv.str().find('\n')),
            "Rank,Host,Times Last,Collectives,Wait Caused (ns),Share (%),Own Wait (ns)");
  EXPECT_EQ(csv.str().find("\n6,node1,250,250,"), csv.str().find('\n'));
  ASSERT_TRUE(analyze::WriteReports(a, {"summary", "entries"}, analyze::Format::kJson, 5, json).ok());
  EXPECT_EQ(json.str().substr(0, 13), "{\n\"summary\": ");
  EXPECT_NE(json.str().find("\"entries\": [\n  {\"Communicator\": \"0x000000c0ffee1234\""), std::string::npos);
  std::ostringstream bad;
  EXPECT_FALSE(analyze::WriteReports(a, {"nope"}, analyze::Format::kTable, 5, bad).ok());
  std::string html = f.dir.File("report.html");
  ASSERT_TRUE(analyze::WriteHtml(a, o, html).ok());
  std::string page = test::ReadFile(html);
  EXPECT_NE(page.find("<svg"), std::string::npos);
  EXPECT_NE(page.find("rank 6, "), std::string::npos);
  // Self-contained: no scripts, no links, nothing fetched.
  for (const char* s : {"<script", "src=", "href=", "@import", "url("})
    EXPECT_EQ(page.find(s), std::string::npos) << s;
}

TEST(StepPattern, FindsThePeriodAfterTheLongestPause) {
  // 4 equal buckets and a small final collective per step; forward pass before the first bucket.
  std::vector<uint64_t> sig;
  std::vector<int64_t> t;
  int64_t now = 0;
  for (int step = 0; step < 20; ++step) {
    for (int k = 0; k < 5; ++k) {
      now += k == 0 ? 9000 : 1000;
      sig.push_back(k < 4 ? 7 : 9);
      t.push_back(now);
    }
  }
  analyze::StepPattern p = analyze::FindStepPattern(sig, t);
  ASSERT_TRUE(p.found);
  EXPECT_EQ(p.period, 5u);
  EXPECT_EQ(p.phase, 0u);
  // Every collective alike: the pauses decide (period 5, not 1).
  std::fill(sig.begin(), sig.end(), 7);
  p = analyze::FindStepPattern(sig, t);
  ASSERT_TRUE(p.found);
  EXPECT_EQ(p.period, 5u);
  // One collective per step, even pauses: period 1.
  std::vector<int64_t> even;
  for (int i = 0; i < 40; ++i)
    even.push_back(i * 1000 + (i % 3) * 10);
  p = analyze::FindStepPattern(std::vector<uint64_t>(40, 3), even);
  ASSERT_TRUE(p.found);
  EXPECT_EQ(p.period, 1u);
  // No repetition.
  std::vector<uint64_t> noise;
  for (int i = 0; i < 40; ++i)
    noise.push_back(static_cast<uint64_t>(i * i % 17));
  EXPECT_FALSE(analyze::FindStepPattern(noise, even).found);
}

TEST(GpuTime, UnionsOverlapGapsAndBins) {
  std::vector<analyze::Interval> iv = {{100, 300, false}, {250, 400, true}, {600, 700, false},
                                       {650, 680, true},  {900, 950, true}, {0, 50, false}};
  analyze::GpuTimeOptions o;
  o.window_start_ns = 100;
  o.window_end_ns = 1100;
  o.gap_min_ns = 150;
  o.bins = 4;
  analyze::GpuTime t = analyze::MeasureGpuTime(&iv, o);
  EXPECT_EQ(t.compute_ns, 200 + 100);    // [100,300) + [600,700); [0,50) is outside
  EXPECT_EQ(t.comm_ns, 150 + 30 + 50);   // [250,400) + [650,680) + [900,950)
  EXPECT_EQ(t.busy_ns, 300 + 100 + 50);  // [100,400) + [600,700) + [900,950)
  EXPECT_EQ(t.overlap_ns, 50 + 30);      // [250,300) + [650,680)
  EXPECT_EQ(t.idle_ns, 1000 - 450);
  EXPECT_EQ(t.gaps, 3u);  // [400,600) 200, [700,900) 200, [950,1100) 150
  EXPECT_EQ(t.gap_ns, 550);
  EXPECT_EQ(t.largest.duration_ns, 200);
  EXPECT_EQ(t.largest.start_ns, 400);
  EXPECT_EQ(t.bin_busy_ns, (std::vector<int64_t>{250, 50, 100, 50}));  // bins of 250 ns from 100
}

}  // namespace
}  // namespace gt
