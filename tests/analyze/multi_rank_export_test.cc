// Many ranks through `gtrace export`: the simulator's streams (hosts with planted clock offsets
// and drifts) exported merged, per rank, and per rank then merged; clock alignment accuracy
// against the true event times; one host left alone; merged parts equal a direct export.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>

#include "tests/common/rank_simulator.h"
#include "tests/common/test_util.h"
#include "tools/export/db_merge.h"
#include "tools/export/exporter.h"
#include "tools/export/multi_export.h"

namespace gt {
namespace {

constexpr int64_t kToleranceNs = 10000;  // the brief: recovered offsets within 10 us

test::SimConfig FourHosts() {
  test::SimConfig c;
  c.ranks = 16;
  c.ranks_per_host = 4;
  c.steps = 60;
  c.compute_ns = 40000000;  // ~3 s of steps: enough span to fit drift
  c.ntp_offset_ns = {0, 2500000, -1700000, 800000};
  c.drift_ppb = {0, 15000, -8000, 3000};
  c.straggler_rank = 5;
  c.straggler_delay_ns = 3000000;
  c.imbalance = std::vector<double>(16, 1.0);
  for (uint32_t r = 0; r < 16; ++r)
    c.imbalance[r] = 1.0 + 0.04 * (r % 4);
  return c;
}

// Session time of each rank's first compute kernel of every step, in rank order ([rank][step]).
std::vector<std::vector<int64_t>> FirstKernels(test::Db& db, const test::SimConfig& c) {
  std::vector<std::vector<int64_t>> out;
  std::vector<std::string> pids = db.Rows("SELECT globalPid FROM GTRACE_RANKS ORDER BY rank");
  for (const std::string& gpid : pids) {
    std::vector<std::string> starts = db.Rows(
        "SELECT k.start FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON s.id = k.shortName WHERE "
        "k.globalPid = " +
        gpid + " AND s.value NOT LIKE '%nccl%' ORDER BY k.start");
    std::vector<int64_t> firsts;
    for (size_t i = 0; i < starts.size(); i += c.kernels_per_step)
      firsts.push_back(std::atoll(starts[i].c_str()));
    out.push_back(firsts);
  }
  return out;
}

// Largest deviation between ranks of (session time - true time): 0 for perfectly aligned clocks.
int64_t WorstMisalignment(test::Db& db, const test::SimConfig& c, const test::SimTruth& truth) {
  std::vector<std::vector<int64_t>> got = FirstKernels(db, c);
  EXPECT_EQ(got.size(), c.ranks);
  int64_t worst = 0;
  for (uint32_t i = 0; i < c.steps; ++i) {
    int64_t base = got[0][i] - truth.first_kernel_true_ns[0][i];
    for (uint32_t r = 1; r < c.ranks; ++r) {
      if (got[r].size() != c.steps)
        return INT64_MAX;
      worst = std::max<int64_t>(worst, std::llabs(got[r][i] - truth.first_kernel_true_ns[r][i] - base));
    }
  }
  return worst;
}

TEST(MultiRankExport, AlignsHostClocksFromCollectiveEnds) {
  test::TempDir dir;
  test::SimConfig c = FourHosts();
  test::SimTruth truth;
  test::SimulateRanks(c, dir.path(), &truth);
  exporter::MultiExportOptions o;
  o.inputs = truth.paths;
  o.output = dir.File("merged.sqlite");
  o.jobs = 2;
  exporter::MultiExportResult r;
  Status st = exporter::ExportMany(o, &r);
  ASSERT_TRUE(st.ok()) << st.message();
  ASSERT_EQ(r.plan.domains.size(), 4u);
  test::Db db(o.output);
  int64_t worst = WorstMisalignment(db, c, truth);
  EXPECT_LE(worst, kToleranceNs);
  std::printf("alignment: worst misalignment over %u ranks x %u steps: %lld ns\n", c.ranks, c.steps,
              static_cast<long long>(worst));
  // The corrections: host 0 is the reference; the others' drift is the planted one, reversed
  // (their offsets are checked event by event above).
  EXPECT_EQ(db.Rows("SELECT domain, method FROM GTRACE_CLOCK_ALIGNMENT ORDER BY domain"),
            (std::vector<std::string>{"0|reference", "1|collectives", "2|collectives", "3|collectives"}));
  for (uint32_t h = 1; h < 4; ++h) {
    EXPECT_NEAR(static_cast<double>(r.plan.domains[h].alignment.correction.drift_ppb),
                -static_cast<double>(c.drift_ppb[h]), 2000.0)
        << "host " << h;
  }
  // Residuals per rank are reported and small (2 us of planted end skew).
  EXPECT_EQ(db.Int("SELECT count(*) FROM GTRACE_RANKS WHERE anchors = " + std::to_string(c.steps * (c.buckets + 1))),
            16);
  EXPECT_LT(*db.Int("SELECT max(residualRmsNs) FROM GTRACE_RANKS"), 3000);
  EXPECT_EQ(db.Int("SELECT count(DISTINCT hostIndex) FROM GTRACE_RANKS"), 4);
  EXPECT_EQ(db.Rows("SELECT rank, localRank, worldSize, hostName FROM GTRACE_RANKS WHERE rank IN (0, 5) ORDER BY rank"),
            (std::vector<std::string>{"0|0|16|node0", "5|1|16|node1"}));
  EXPECT_EQ(db.Int("SELECT count(*) FROM MPI_RANKS"), 16);
}

// The alignment pass under a cap small enough to thin every stream (anchor_scan.h): 300
// collectives per rank (the simulator's seq 1..300), at most 64 held: k = 3 (2^2 leaves 75), 37
// ends per rank (seq 8, 16, ..., 296), the same 37 instances on every host. The planted offsets and drifts are still
// recovered within the tolerance of the uncapped test above.
TEST(MultiRankExport, AlignsFromThinnedCollectivesUnderATinyCap) {
  test::TempDir dir;
  test::SimConfig c = FourHosts();
  test::SimTruth truth;
  test::SimulateRanks(c, dir.path(), &truth);
  exporter::MultiExportOptions o;
  o.inputs = truth.paths;
  o.output = dir.File("merged.sqlite");
  o.jobs = 2;
  o.align_max_ops = 64;
  exporter::MultiExportResult r;
  Status st = exporter::ExportMany(o, &r);
  ASSERT_TRUE(st.ok()) << st.message();
  ASSERT_EQ(r.plan.domains.size(), 4u);
  test::Db db(o.output);
  EXPECT_EQ(db.Int("SELECT count(*) FROM GTRACE_RANKS WHERE anchors = 37"), 16);
  EXPECT_EQ(db.Rows("SELECT domain, method FROM GTRACE_CLOCK_ALIGNMENT ORDER BY domain"),
            (std::vector<std::string>{"0|reference", "1|collectives", "2|collectives", "3|collectives"}));
  EXPECT_EQ(db.Int("SELECT min(instances) FROM GTRACE_CLOCK_ALIGNMENT WHERE domain > 0"), 37);
  const int64_t worst = WorstMisalignment(db, c, truth);
  EXPECT_LE(worst, kToleranceNs);
  std::printf("alignment from 37 of 300 collectives per rank: worst misalignment %lld ns\n",
              static_cast<long long>(worst));
  for (uint32_t h = 1; h < 4; ++h) {
    EXPECT_NEAR(static_cast<double>(r.plan.domains[h].alignment.correction.drift_ppb),
                -static_cast<double>(c.drift_ppb[h]), 2000.0)
        << "host " << h;
  }
  // One note per thinned stream, saying how.
  size_t notes = 0;
  for (const std::string& w : r.warnings) {
    if (w.find("300 NCCL operations, more than the alignment pass holds (64, GTRACE_ALIGN_MAX_OPS): aligned by the "
               "collectives whose sequence number is a multiple of 8 (37 ends)") != std::string::npos)
      ++notes;
  }
  EXPECT_EQ(notes, 16u);
}

TEST(MultiRankExport, WithoutAlignmentTheClocksAreMillisecondsApart) {
  // The same job with --no-align: proves the check above can fail.
  test::TempDir dir;
  test::SimConfig c = FourHosts();
  test::SimTruth truth;
  test::SimulateRanks(c, dir.path(), &truth);
  exporter::MultiExportOptions o;
  o.inputs = truth.paths;
  o.output = dir.File("merged.sqlite");
  o.align = false;
  exporter::MultiExportResult r;
  ASSERT_TRUE(exporter::ExportMany(o, &r).ok());
  test::Db db(o.output);
  EXPECT_GT(WorstMisalignment(db, c, truth), 1000000);
  EXPECT_EQ(db.Int("SELECT count(*) FROM GTRACE_RANKS WHERE alignMethod = 'not-aligned'"), 16);
}

TEST(MultiRankExport, OneHostIsLeftAlone) {
  test::TempDir dir;
  test::SimConfig c;
  c.ranks = 8;
  c.ranks_per_host = 8;
  c.steps = 30;
  test::SimTruth truth;
  test::SimulateRanks(c, dir.path(), &truth);
  exporter::MultiExportOptions o;
  o.inputs = truth.paths;
  o.output = dir.File("one-host.sqlite");
  exporter::MultiExportResult r;
  ASSERT_TRUE(exporter::ExportMany(o, &r).ok());
  test::Db db(o.output);
  EXPECT_EQ(db.Rows("SELECT DISTINCT alignMethod, alignOffsetNs, alignDriftPpb FROM GTRACE_RANKS"),
            (std::vector<std::string>{"reference|0|0"}));
  EXPECT_EQ(WorstMisalignment(db, c, truth), 0);
  // Each process as its own clock domain: the estimate on a shared clock comes out near 0.
  o.output = dir.File("per-rank-domains.sqlite");
  o.align_domain = "rank";
  ASSERT_TRUE(exporter::ExportMany(o, &r).ok());
  test::Db db2(o.output);
  EXPECT_EQ(db2.Int("SELECT count(*) FROM GTRACE_CLOCK_ALIGNMENT WHERE method = 'collectives'"), 7);
  EXPECT_LT(*db2.Int("SELECT max(abs(offsetNs)) FROM GTRACE_CLOCK_ALIGNMENT"), 2000);  // noise: 2 us end skew
  EXPECT_LE(WorstMisalignment(db2, c, truth), 2000);
}

TEST(MultiRankExport, PerRankDatabasesMergedLaterAlignLikeStreams) {
  test::TempDir dir;
  test::SimConfig c = FourHosts();
  test::SimTruth truth;
  test::SimulateRanks(c, dir.path(), &truth);
  // Inside the job: each rank converts its own stream (one session per database).
  std::vector<std::string> dbs;
  for (const std::string& in : truth.paths) {
    exporter::ExportOptions eo;
    eo.inputs = {in};
    eo.output = in + ".sqlite";
    exporter::ExportResult er;
    ASSERT_TRUE(exporter::ExportSqlite(eo, &er).ok());
    dbs.push_back(eo.output);
  }
  exporter::MergeOptions mo;
  mo.inputs = dbs;
  mo.output = dir.File("merged-dbs.sqlite");
  exporter::MergeResult mr;
  Status st = exporter::MergeDatabases(mo, &mr);
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_FALSE(mr.same_session);
  test::Db merged(mo.output);
  EXPECT_LE(WorstMisalignment(merged, c, truth), kToleranceNs);
  EXPECT_EQ(merged.Int("SELECT count(DISTINCT globalPid) FROM CUPTI_ACTIVITY_KIND_KERNEL"), 16);
  EXPECT_EQ(merged.Int("SELECT count(*) FROM GTRACE_CLOCK_ALIGNMENT WHERE method = 'collectives'"), 3);
  // Same answer as exporting the streams together.
  exporter::MultiExportOptions o;
  o.inputs = truth.paths;
  o.output = dir.File("merged-streams.sqlite");
  exporter::MultiExportResult r;
  ASSERT_TRUE(exporter::ExportMany(o, &r).ok());
  test::Db direct(o.output);
  const char* q =
      "SELECT r.rank, k.start, k.end, s.value FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN GTRACE_RANKS r ON r.globalPid = "
      "k.globalPid JOIN StringIds s ON s.id = k.demangledName ORDER BY r.rank, k.start LIMIT 2000";
  std::vector<std::string> a = merged.Rows(q), b = direct.Rows(q);
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i)
    ASSERT_EQ(a[i], b[i]) << i;
  // A database aligned in its own export is refused in a merge across sessions.
  exporter::MergeOptions bad;
  bad.inputs = {o.output, dbs[0]};
  bad.output = dir.File("bad.sqlite");
  st = exporter::MergeDatabases(bad, &mr);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("aligned within its own export"), std::string::npos) << st.message();
}

// Every table, as text with string ids resolved (ids may differ between equivalent databases).
std::vector<std::string> Dump(test::Db& db, const std::string& table) {
  std::vector<std::string> cols = db.Rows("SELECT name FROM pragma_table_info('" + table + "')");
  static const std::set<std::string> kStringCols = {"nameId",    "textId",      "demangledName",
                                                    "shortName", "mangledName", "jsonTextId"};
  std::string sel;
  for (const std::string& c : cols) {
    std::string e =
        kStringCols.count(c) ? "(SELECT value FROM StringIds WHERE id = t.\"" + c + "\")" : "t.\"" + c + "\"";
    sel += (sel.empty() ? "" : ", ") + e;
  }
  std::vector<std::string> rows = db.Rows("SELECT " + sel + " FROM \"" + table + "\" t");
  std::sort(rows.begin(), rows.end());
  return rows;
}

TEST(MultiRankExport, MergedPartsEqualOneDirectExport) {
  test::TempDir dir;
  test::SimConfig c = FourHosts();
  c.ranks = 8;
  c.steps = 8;
  c.cuda_api = true;
  test::SimTruth truth;
  test::SimulateRanks(c, dir.path(), &truth);
  exporter::ExportOptions eo;
  eo.inputs = truth.paths;
  eo.output = dir.File("direct.sqlite");
  exporter::ExportResult er;
  ASSERT_TRUE(exporter::ExportSqlite(eo, &er).ok());
  exporter::MultiExportOptions o;
  o.inputs = truth.paths;
  o.output = dir.File("parts.sqlite");
  o.align = false;
  o.jobs = 3;
  exporter::MultiExportResult r;
  ASSERT_TRUE(exporter::ExportMany(o, &r).ok());
  test::Db a(eo.output), b(o.output);
  std::vector<std::string> tables = a.Rows("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name");
  EXPECT_EQ(tables, b.Rows("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name"));
  for (const std::string& t : tables) {
    if (t == "META_DATA_EXPORT" || t == "StringIds" || t == "GTRACE_RANKS" || t == "GTRACE_CLOCK_ALIGNMENT")
      continue;
    EXPECT_EQ(Dump(a, t), Dump(b, t)) << t;
  }
  // GTRACE_RANKS differs only in the session id.
  EXPECT_EQ(a.Rows("SELECT globalPid, rank, hostIndex, clockOffsetNs FROM GTRACE_RANKS ORDER BY rank"),
            b.Rows("SELECT globalPid, rank, hostIndex, clockOffsetNs FROM GTRACE_RANKS ORDER BY rank"));
  EXPECT_EQ(b.Int("SELECT max(id) + 1 - count(*) FROM StringIds"), 0);  // dense
  EXPECT_EQ(b.Int("SELECT count(*) FROM StringIds"), a.Int("SELECT count(*) FROM StringIds"));
}

TEST(MultiRankExport, PerRankOutputsShareOneSession) {
  test::TempDir dir;
  test::SimConfig c = FourHosts();
  c.ranks = 8;
  c.steps = 20;
  test::SimTruth truth;
  test::SimulateRanks(c, dir.path(), &truth);
  exporter::MultiExportOptions o;
  o.inputs = truth.paths;
  o.output = dir.File("ranks");
  o.per_rank = true;
  exporter::MultiExportResult r;
  Status st = exporter::ExportMany(o, &r);
  ASSERT_TRUE(st.ok()) << st.message();
  ASSERT_EQ(r.outputs.size(), 8u);
  EXPECT_EQ(r.outputs[3], dir.File("ranks/rank-3.sqlite"));
  std::set<std::string> sessions;
  for (const std::string& out : r.outputs) {
    test::Db db(out);
    EXPECT_EQ(db.Int("SELECT count(*) FROM GTRACE_RANKS"), 1);
    sessions.insert(*db.Text("SELECT sessionId FROM GTRACE_RANKS"));
    EXPECT_EQ(db.Int("SELECT count(*) FROM GTRACE_CLOCK_ALIGNMENT"), 2);  // every domain of the session
    EXPECT_EQ(db.Int("SELECT max(id) + 1 - count(*) FROM StringIds"), 0);
  }
  EXPECT_EQ(sessions.size(), 1u);
  // Merging them is a copy (one session): aligned like a merged export.
  exporter::MergeOptions mo;
  mo.inputs = r.outputs;
  mo.output = dir.File("merged.sqlite");
  exporter::MergeResult mr;
  st = exporter::MergeDatabases(mo, &mr);
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_TRUE(mr.same_session);
  test::Db merged(mo.output);
  EXPECT_LE(WorstMisalignment(merged, c, truth), kToleranceNs);
  EXPECT_EQ(merged.Int("SELECT count(*) FROM GTRACE_CLOCK_ALIGNMENT"), 2);
  // Existing outputs are kept unless forced.
  st = exporter::ExportMany(o, &r);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("exists"), std::string::npos);
}

}  // namespace
}  // namespace gt
