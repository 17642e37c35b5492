// The CLI end to end: gtrace export of many streams (merged, --per-rank, databases merged) and
// gtrace analyze (formats, HTML, errors).
#include <unistd.h>

#include <gtest/gtest.h>

#include "tests/common/rank_simulator.h"
#include "tests/common/test_util.h"

namespace gt {
namespace {

test::RunResult Gtrace(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {test::CliPath()};
  argv.insert(argv.end(), args.begin(), args.end());
  return test::RunProgram(argv);
}

TEST(AnalyzeCli, ExportMergeAndAnalyze) {
  test::TempDir dir;
  std::string streams = dir.File("streams");
  ASSERT_EQ(system(("mkdir -p " + streams).c_str()), 0);
  test::SimConfig c;
  c.ranks = 8;
  c.ranks_per_host = 4;
  c.steps = 20;
  c.straggler_rank = 3;
  c.straggler_delay_ns = 2000000;
  c.ntp_offset_ns = {0, 1500000};
  test::SimTruth truth;
  test::SimulateRanks(c, streams, &truth);

  test::RunResult r = Gtrace({"export", "-o", dir.File("job.sqlite"), streams});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("clock alignment (2 host domains)"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("node1: collectives, correction -1500."), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("wrote " + dir.File("job.sqlite") + " (8 streams"), std::string::npos) << r.err;

  r = Gtrace({"export", "--per-rank", "-j", "2", "-o", dir.File("ranks"), streams});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("wrote 8 databases in " + dir.File("ranks")), std::string::npos) << r.err;
  std::vector<std::string> dbs;
  for (uint32_t i = 0; i < 8; ++i)
    dbs.push_back(dir.File("ranks/rank-" + std::to_string(i) + ".sqlite"));
  std::vector<std::string> args = {"export", "-o", dir.File("merged.sqlite")};
  args.insert(args.end(), dbs.begin(), dbs.end());
  r = Gtrace(args);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("(8 databases, 8 processes, one session)"), std::string::npos) << r.err;

  r = Gtrace({"analyze", dir.File("merged.sqlite"), "--step-range", "train_step", "--format", "csv", "-r", "stragglers",
              "--top", "1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.substr(0, r.out.find('\n')),
            "Rank,Host,Times Last,Collectives,Wait Caused (ns),Share (%),Own Wait (ns)");
  EXPECT_EQ(r.out.substr(r.out.find('\n') + 1, 16), "3,node0,100,100,") << r.out;

  // The per-rank databases directly (one session), JSON and the HTML page.
  args = {"analyze", "--format", "json", "-r", "summary", "--html", dir.File("job.html")};
  args.insert(args.end(), dbs.begin(), dbs.end());
  r = Gtrace(args);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.substr(0, 13), "{\n\"summary\": ");
  EXPECT_NE(test::ReadFile(dir.File("job.html")).find("<svg"), std::string::npos);

  // Usage errors.
  EXPECT_EQ(Gtrace({"analyze"}).exit_code, 2);
  EXPECT_EQ(Gtrace({"analyze", "--format", "xml", dir.File("job.sqlite")}).exit_code, 2);
  EXPECT_EQ(Gtrace({"analyze", "-r", "nope", dir.File("job.sqlite")}).exit_code, 2);
  EXPECT_EQ(Gtrace({"export", "-o", dir.File("x.sqlite"), dbs[0], truth.paths[0]}).exit_code, 2);
  EXPECT_EQ(Gtrace({"export", "--align-domain", "moon", "-o", dir.File("y.sqlite"), streams}).exit_code, 2);
  r = Gtrace({"export", dbs[0], dbs[1]});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("name the merged database with -o"), std::string::npos);
}

// GTRACE_ALIGN_MAX_OPS caps the alignment pass of `gtrace export` (anchor_scan.h): 20 steps of 5
// collectives per rank (seq 1..100), at most 16 held: every 8th (seq 8, 16, ..., 96: 12 ends per rank). A value
// that is not a number is a usage error, and nothing is written.
TEST(AnalyzeCli, ExportAlignMaxOpsFromTheEnvironment) {
  test::TempDir dir;
  std::string streams = dir.File("streams");
  ASSERT_EQ(system(("mkdir -p " + streams).c_str()), 0);
  test::SimConfig c;
  c.ranks = 8;
  c.ranks_per_host = 4;
  c.steps = 20;
  c.ntp_offset_ns = {0, 1500000};
  test::SimTruth truth;
  test::SimulateRanks(c, streams, &truth);
  const std::vector<std::string> argv = {test::CliPath(), "export", "-o", dir.File("job.sqlite"), streams};
  test::RunOptions env;
  env.env["GTRACE_ALIGN_MAX_OPS"] = "16";
  test::RunResult r = test::RunProgram(argv, env);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("100 NCCL operations, more than the alignment pass holds (16, GTRACE_ALIGN_MAX_OPS): aligned "
                       "by the collectives whose sequence number is a multiple of 8 (12 ends)"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("node1: collectives, correction -1500."), std::string::npos) << r.err;
  test::Db db(dir.File("job.sqlite"));
  EXPECT_EQ(db.Int("SELECT count(*) FROM GTRACE_RANKS WHERE anchors = 12"), 8);

  env.env["GTRACE_ALIGN_MAX_OPS"] = "lots";
  r = test::RunProgram({test::CliPath(), "export", "-o", dir.File("bad.sqlite"), streams}, env);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("GTRACE_ALIGN_MAX_OPS='lots' is not a number of operations"), std::string::npos) << r.err;
  EXPECT_NE(access(dir.File("bad.sqlite").c_str(), F_OK), 0);
}

}  // namespace
}  // namespace gt
