// The CLI end to end: gtrace export of many streams (merged, --per-rank, databases merged) and
// gtrace analyze (formats, HTML, errors).
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

}  // namespace
}  // namespace gt
