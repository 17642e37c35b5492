// `gtrace export --type perfetto|kineto-json|paraver` end to end: from streams the NVTX sample
// wrote under `gtrace profile` (two ranks), from a database, default output names, errors that name
// the file, never overwriting without --force-overwrite, no temporaries left, and progress only on a
// terminal.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <set>

#include "tests/common/test_util.h"
#include "tests/viewers/perfetto_decoder.h"
#include "tests/viewers/viewer_fixture.h"

namespace gt::viewers {
namespace {

using test::RunProgram;
using test::RunResult;
using test::TempDir;

test::RunOptions Clean() {
  test::RunOptions o;
  o.unset_env = {"LD_PRELOAD", "NVTX_INJECTION64_PATH", "GTRACE_OUTPUT", "GTRACE_TRACE"};
  return o;
}

RunResult Gtrace(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {test::CliPath()};
  argv.insert(argv.end(), args.begin(), args.end());
  return RunProgram(argv, Clean());
}

void ExpectNoTemporaries(const std::string& dir) {
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir)) {
    EXPECT_EQ(e.path().string().find("gtrace-tmp"), std::string::npos) << e.path();
  }
}

TEST(ViewerCli, StreamsOfTwoRanksToEveryFormat) {
  TempDir dir;
  std::filesystem::create_directory(dir.File("streams"));
  for (int rank = 0; rank < 2; ++rank) {
    test::RunOptions o = Clean();
    o.env["OMPI_COMM_WORLD_RANK"] = std::to_string(rank);
    o.env["OMPI_COMM_WORLD_SIZE"] = "2";
    RunResult r =
        RunProgram({test::CliPath(), "profile", "-t", "nvtx", "-o", dir.File("streams/rank%q{OMPI_COMM_WORLD_RANK}"),
                    "--", test::SamplePath("nvtx_threads"), "--threads", "2", "--iterations", "3", "--work-us", "10"},
                   o);
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  RunResult r = Gtrace({"export", "-o", dir.File("run.sqlite"), dir.File("streams")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  test::Db db(dir.File("run.sqlite"));
  const int64_t ranges = *db.Int("SELECT count(*) FROM NVTX_EVENTS WHERE eventType IN (59, 60) AND end IS NOT NULL");
  const int64_t marks = *db.Int("SELECT count(*) FROM NVTX_EVENTS WHERE eventType = 34");
  ASSERT_GT(ranges, 20);
  ASSERT_GT(marks, 4);

  // Streams in, Perfetto out (through a temporary database that is removed).
  r = Gtrace({"export", "--type", "perfetto", "-o", dir.File("run.pftrace"), dir.File("streams")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("gtrace: wrote " + dir.File("run.pftrace") + " (perfetto, 2 processes, "), std::string::npos)
      << r.err;
  EXPECT_EQ(r.err.find('\r'), std::string::npos);  // not a terminal: no progress line
  testing::DecodedTrace t = testing::DecodePerfetto(test::ReadFile(dir.File("run.pftrace")));
  for (const std::string& e : t.errors)
    ADD_FAILURE() << e;
  EXPECT_EQ(static_cast<int64_t>(t.begins), ranges);
  EXPECT_EQ(static_cast<int64_t>(t.instants_count), marks);
  size_t processes = 0;
  std::set<std::string> names;
  for (const auto& [uuid, track] : t.tracks) {
    if (track.kind == 1)
      ++processes, names.insert(track.name);
    if (track.kind == 2)
      names.insert(track.name);
  }
  EXPECT_EQ(processes, 2u);
  EXPECT_EQ(names.count("nvtx_threads [rank 0]"), 1u);
  EXPECT_EQ(names.count("nvtx_threads [rank 1]"), 1u);
  EXPECT_EQ(names.count("worker-1"), 1u);

  // An existing output stops the export before the streams are converted.
  r = Gtrace({"export", "--type", "perfetto", "-o", dir.File("run.pftrace"), dir.File("streams")});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "gtrace: export: " + dir.File("run.pftrace") + " exists; use --force-overwrite to replace it\n");

  // Database in, Kineto JSON (one file per rank) and Paraver out.
  r = Gtrace({"export", "--type", "kineto-json", dir.File("run.sqlite")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("gtrace: wrote " + dir.File("run.kineto") + " (kineto-json, 2 processes, "), std::string::npos);
  EXPECT_TRUE(std::filesystem::exists(dir.File("run.kineto/rank_0.json")));
  EXPECT_TRUE(std::filesystem::exists(dir.File("run.kineto/rank_1.json")));
  RunResult check =
      RunProgram({"python3", std::string(GT_VIEWERS_TEST_DIR) + "/kineto_check.py", dir.File("run.kineto")});
  EXPECT_EQ(check.exit_code, 0) << check.out;
  r = Gtrace({"export", "--type", "paraver", dir.File("run.sqlite")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("gtrace: wrote " + dir.File("run.prv") + " (paraver, 2 processes, "), std::string::npos);
  for (const char* ext : {".prv", ".pcf", ".row"})
    EXPECT_TRUE(std::filesystem::exists(dir.File(std::string("run") + ext)));
  EXPECT_NE(test::ReadFile(dir.File("run.row")).find("worker-0 (rank 1,"), std::string::npos);
  ExpectNoTemporaries(dir.path());
}

TEST(ViewerCli, ErrorsNameTheFileAndOutputsAreKept) {
  TempDir dir;
  testing::WriteFixture(dir.File("run.sqlite"), testing::FixtureOptions{2, false, false, false});
  RunResult r = Gtrace({"export", "--type", "bogus", dir.File("run.sqlite")});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--type: 'bogus' is not supported (known: sqlite, perfetto, kineto-json, paraver, parquet)"),
            std::string::npos);
  r = Gtrace({"export", "--type", "sqlite", dir.File("run.sqlite")});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find(dir.File("run.sqlite") + " is already an SQLite database"), std::string::npos);
  r = Gtrace({"export", "--type", "perfetto", dir.File("missing.sqlite")});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("gtrace: export: " + dir.File("missing.sqlite") + ": no such file"), std::string::npos);
  test::WriteFile(dir.File("text.sqlite"), "not a database at all");
  r = Gtrace({"export", "--type", "paraver", dir.File("text.sqlite")});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find(dir.File("text.sqlite") + " is not an SQLite database"), std::string::npos);
  {
    test::Db other(dir.File("other.sqlite"), false);
    other.Rows("CREATE TABLE t (x)");
  }
  r = Gtrace({"export", "--type", "perfetto", dir.File("other.sqlite")});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find(dir.File("other.sqlite") + " is not an Nsight Systems SQLite export (no StringIds table)"),
            std::string::npos);

  test::WriteFile(dir.File("run.pftrace"), "keep");
  r = Gtrace({"export", "--type", "perfetto", dir.File("run.sqlite")});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find(dir.File("run.pftrace") + " exists; use --force-overwrite to replace it"), std::string::npos);
  EXPECT_EQ(test::ReadFile(dir.File("run.pftrace")), "keep");
  r = Gtrace({"export", "--type", "perfetto", "--force-overwrite", dir.File("run.sqlite")});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(test::ReadFile(dir.File("run.pftrace")), "keep");
  r = Gtrace({"export", "--type", "kineto-json", "-o", dir.File("k.json"), dir.File("run.sqlite")});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("must name a directory (one JSON file per rank)"), std::string::npos);
  r = Gtrace({"export", "--type", "perfetto", dir.File("run.sqlite"), dir.File("run.sqlite")});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("is an SQLite database: give one database, or streams"), std::string::npos);
  ExpectNoTemporaries(dir.path());
}

TEST(ViewerCli, ProgressOnlyOnATerminal) {
  if (std::system("command -v script >/dev/null 2>&1") != 0)
    GTEST_SKIP() << "no script(1) to make a terminal";
  TempDir dir;
  {
    testing::FixtureDb db(dir.File("big.sqlite"));
    for (int i = 0; i < 5000; ++i) {
      db.Runtime(testing::Us(i), testing::Us(i) + 500, testing::GlobalTid(0, 77, 77), i, "cudaFree_v3020");
    }
  }
  // script(1) gives the command a pseudo-terminal; what it printed comes back on stdout.
  std::string cmd =
      test::CliPath() + " export --type perfetto -o " + dir.File("big.pftrace") + " " + dir.File("big.sqlite");
  RunResult r = RunProgram({"script", "-qec", cmd, "/dev/null"}, Clean());
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("\rgtrace: export perfetto: "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("100% (5000/5000 events)"), std::string::npos) << r.out;
  r = Gtrace({"export", "--type", "paraver", "-o", dir.File("big.prv"), dir.File("big.sqlite")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err.find('%'), std::string::npos) << r.err;
}

}  // namespace
}  // namespace gt::viewers
