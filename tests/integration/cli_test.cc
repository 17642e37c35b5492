// The gtrace CLI: exit codes, passthrough of the profiled command's status and output, clear
// errors for bad flags and inputs, never overwriting without being told to.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>

#include "tests/common/test_util.h"

namespace gt {
namespace {

using test::RunProgram;
using test::RunOptions;
using test::RunResult;
using test::TempDir;

RunOptions Clean() {
  RunOptions o;
  o.unset_env = {"LD_PRELOAD", "NVTX_INJECTION64_PATH", "GTRACE_OUTPUT", "GTRACE_TRACE"};
  return o;
}

TEST(Cli, UsageAndVersion) {
  RunResult r = RunProgram({test::CliPath()}, Clean());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("usage: gtrace <command>"), std::string::npos);
  r = RunProgram({test::CliPath(), "--version"}, Clean());
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out.rfind("gtrace ", 0), 0u);
  r = RunProgram({test::CliPath(), "frobnicate"}, Clean());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("gtrace: unknown command 'frobnicate'"), std::string::npos);
  for (const char* cmd : {"profile", "export", "stats", "info"}) {
    r = RunProgram({test::CliPath(), cmd, "--help"}, Clean());
    EXPECT_EQ(r.exit_code, 0) << cmd;
    EXPECT_NE(r.out.find(std::string("usage: gtrace ") + cmd), std::string::npos) << cmd;
  }
}

TEST(Cli, ProfileFlagErrors) {
  struct Case {
    std::vector<std::string> args;
    std::string message;
  } cases[] = {
      {{"--bogus", "--", "true"}, "gtrace: profile: unknown option '--bogus'"},
      {{"-t", "cuda,bogus", "true"}, "gtrace: profile: --trace: unknown trace 'bogus' (known: cuda, nvtx, nccl, osrt, none)"},
      {{"-t", "none,nvtx", "true"}, "'none' cannot be combined"},
      {{"--buffer-mb", "0", "true"}, "--buffer-mb: '0' is not a whole number in [1, 65536]"},
      {{"--flush-interval-ms", "x", "true"}, "--flush-interval-ms: 'x' is not a whole number"},
      {{"-o", "bad%z", "true"}, "unknown placeholder '%z'"},
      {{"-o", "bad%q{X", "true"}, "%q must be followed by {VARIABLE}"},
      {{"--export", "json", "true"}, "--export: 'json' (known: sqlite, none)"},
      {{"--stats", "maybe", "true"}, "gtrace: profile: unknown option"},  // 'maybe' is not a boolean: taken as the command? no: error below
      {{}, "gtrace: profile: no command given"},
      {{"-o"}, "-o needs a value"},
  };
  for (const Case& c : cases) {
    std::vector<std::string> argv = {test::CliPath(), "profile"};
    argv.insert(argv.end(), c.args.begin(), c.args.end());
    RunResult r = RunProgram(argv, Clean());
    if (c.message == "gtrace: profile: unknown option") {
      // "--stats maybe true": a switch takes the next word only when it is a boolean, so "maybe"
      // is the command to run: it does not exist.
      EXPECT_EQ(r.exit_code, 127) << r.err;
      continue;
    }
    EXPECT_EQ(r.exit_code, 2) << c.message << "\n" << r.err;
    EXPECT_NE(r.err.find(c.message), std::string::npos) << r.err;
  }
}

TEST(Cli, ProfilePassesThroughStatusAndOutput) {
  TempDir dir;
  RunOptions o = Clean();
  o.cwd = dir.path();
  RunResult r = RunProgram({test::CliPath(), "profile", "-o", "p", "--", test::SamplePath("plain_program"), "--x"}, o);
  EXPECT_EQ(r.exit_code, 7);
  EXPECT_EQ(r.out, "args=2 threads=1\narg --x\n");
  EXPECT_NE(r.err.find("gtrace: no stream was written"), std::string::npos) << r.err;
  r = RunProgram({test::CliPath(), "profile", "--", "/no/such/program"}, o);
  EXPECT_EQ(r.exit_code, 127);
  EXPECT_NE(r.err.find("gtrace: profile: cannot run '/no/such/program': No such file or directory"), std::string::npos)
      << r.err;
  r = RunProgram({test::CliPath(), "profile", "--", "sh", "-c", "kill -TERM $$"}, o);
  EXPECT_EQ(r.exit_code, 128 + 15);
}

TEST(Cli, ProfileExportStatsAndOverwriteRules) {
  TempDir dir;
  RunOptions o = Clean();
  o.cwd = dir.path();
  std::vector<std::string> cmd = {test::CliPath(), "profile", "-o", "run", "--export", "sqlite", "--",
                                  test::SamplePath("nvtx_threads"), "--threads", "1", "--iterations", "2"};
  RunResult r = RunProgram(cmd, o);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("gtrace: wrote " + dir.File("run.gtrace")), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("gtrace: wrote " + dir.File("run.sqlite")), std::string::npos) << r.err;
  // Again: refused (exit 2, nothing touched) until forced.
  std::string before = test::ReadFile(dir.File("run.gtrace"));
  r = RunProgram(cmd, o);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("run.gtrace exists; use --force-overwrite=true to replace it"), std::string::npos) << r.err;
  EXPECT_EQ(test::ReadFile(dir.File("run.gtrace")), before);
  cmd.insert(cmd.begin() + 2, "--force-overwrite=true");
  r = RunProgram(cmd, o);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  test::Db db(dir.File("run.sqlite"));
  EXPECT_EQ(db.Int("SELECT count(*) FROM NVTX_EVENTS WHERE text = 'iteration'"), 2);
  // stats straight from the stream (exports next to it when needed).
  r = RunProgram({test::CliPath(), "stats", "-r", "nvtx_sum", "--format", "json", dir.File("run.gtrace")}, o);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("\"Range\": \":iteration\""), std::string::npos) << r.out;
  // Issue 28, item 12: a .sqlite older than its stream (exported while the run still wrote it) is
  // exported again, not reported as the whole run; a current one is reused without a word.
  EXPECT_EQ(r.err, "");
  {
    TempDir later;
    RunResult more = RunProgram({test::CliPath(), "profile", "-o", later.File("run"), "--",
                                 test::SamplePath("nvtx_threads"), "--threads", "1", "--iterations", "5"},
                                o);
    ASSERT_EQ(more.exit_code, 0) << more.err;
    std::filesystem::copy_file(later.File("run.gtrace"), dir.File("run.gtrace"),
                               std::filesystem::copy_options::overwrite_existing);
    // As if run.sqlite had been exported 2 s before the stream's last write.
    std::filesystem::last_write_time(dir.File("run.sqlite"),
                                     std::filesystem::last_write_time(dir.File("run.gtrace")) - std::chrono::seconds(2));
    r = RunProgram({test::CliPath(), "stats", "-r", "nvtx_sum", "--format", "json", dir.File("run.gtrace")}, o);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("\"Instances\": 5, \"Avg (ns)\""), std::string::npos) << r.out;
    EXPECT_EQ(r.err, "gtrace: stats: " + dir.File("run.sqlite") + " is older than " + dir.File("run.gtrace") +
                         "; exporting it again\n");
    r = RunProgram({test::CliPath(), "stats", "-r", "nvtx_sum", "--format", "json", dir.File("run.gtrace")}, o);
    EXPECT_EQ(r.err, "");
    EXPECT_NE(r.out.find("\"Instances\": 5, \"Avg (ns)\""), std::string::npos) << r.out;
  }
  // -o FILE: reports stream into FILE.tmp-<pid>, renamed onto FILE at the end (what the old
  // collect-then-write printed: a failed report is left out, with its error and exit 1).
  r = RunProgram(
      {test::CliPath(), "stats", "-r", "nvtx_sum,cuda_api_trace", "-o", dir.File("report.txt"), dir.File("run.sqlite")},
      o);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find("gtrace: stats: report cuda_api_trace: no CUPTI_ACTIVITY_KIND_RUNTIME table"), std::string::npos)
      << r.err;
  const std::string report = test::ReadFile(dir.File("report.txt"));
  EXPECT_EQ(report.rfind(" ** NVTX Range Summary (nvtx_sum):\n\n", 0), 0u) << report;
  EXPECT_EQ(report.substr(report.size() - 3), "\n\n\n") << report;  // the table's blank line + the separator
  EXPECT_EQ(test::ReadFile(dir.File("report.txt")).find("CUDA API Trace"), std::string::npos);
  for (const auto& entry : std::filesystem::directory_iterator(dir.path()))
    EXPECT_EQ(entry.path().filename().string().find(".tmp-"), std::string::npos) << entry.path();
  r = RunProgram({test::CliPath(), "stats", "-r", "bogus", dir.File("run.sqlite")}, o);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("unknown report 'bogus'"), std::string::npos);
  r = RunProgram({test::CliPath(), "info", dir.File("run.gtrace")}, o);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("closed         yes (exit)"), std::string::npos) << r.out;
}

TEST(Cli, ExportErrors) {
  TempDir dir;
  RunResult r = RunProgram({test::CliPath(), "export", dir.File("missing.gtrace")}, Clean());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "gtrace: export: " + dir.File("missing.gtrace") + ": cannot open: No such file or directory\n");
  r = RunProgram({test::CliPath(), "export"}, Clean());
  EXPECT_EQ(r.exit_code, 2);
  r = RunProgram({test::CliPath(), "export", dir.path()}, Clean());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("no .gtrace files in this directory"), std::string::npos);
  test::WriteFile(dir.File("a.gtrace"), "junk");
  test::WriteFile(dir.File("b.gtrace"), "junk");
  r = RunProgram({test::CliPath(), "export", dir.File("a.gtrace"), dir.File("b.gtrace")}, Clean());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("several inputs: name the database with -o"), std::string::npos);
  r = RunProgram({test::CliPath(), "info", dir.File("a.gtrace")}, Clean());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("offset 0: not a gtrace stream"), std::string::npos);
}

// Issue 28, item 13: a static executable cannot be injected; `profile` says so instead of blaming
// the program for using no NVTX, CUDA or NCCL, and keeps its exit status.
TEST(Cli, StaticExecutableIsNamedAsNotInjectable) {
  const std::string exe = "/sbin/ldconfig";  // static-pie in glibc's Debian packaging
  if (access(exe.c_str(), X_OK) != 0) GTEST_SKIP() << exe << " missing";
  TempDir dir;
  RunOptions o = Clean();
  o.cwd = dir.path();
  RunResult r = RunProgram({test::CliPath(), "profile", "-o", "run", "--", exe, "--version"}, o);
  if (r.err.find("used no NVTX") != std::string::npos && r.err.find("statically") == std::string::npos) {
    // Only a failure if the file really is static: its program headers say.
    RunResult re = RunProgram({"readelf", "-l", exe});
    if (re.out.find("INTERP") != std::string::npos) GTEST_SKIP() << exe << " is dynamically linked here";
  }
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "gtrace: no stream was written: " + exe +
                       " is statically linked, and libgtrace.so cannot be injected into a static executable "
                       "(LD_PRELOAD needs the dynamic loader)\n");
}

}  // namespace
}  // namespace gt
