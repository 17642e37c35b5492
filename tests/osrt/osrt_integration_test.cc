// OS runtime tracing end to end (issue 18): programs under LD_PRELOAD=libgtrace.so with -t osrt,
// exported by the gtrace CLI, asserted with SQL on OSRT_API and with the osrt_sum report.
//  - osrt_known: the planted blocking calls (a mutex held 5 ms by another thread, a 20 ms pipe read,
//    a 10 ms nanosleep, and the helpers' sleeps) are exactly the rows above a 1 ms threshold, and no
//    row is shorter (a fast call stretched past 1 ms by the scheduler on a loaded machine is
//    tolerated, at most 3, and listed); with threshold 0 every call of
//    the program is a row (exact counts per function and thread), so the threshold is what drops
//    the fast ones;
//  - osrt_behavior: every interposed call's result and errno (EINTR and cancellation included) are
//    the same with and without gtrace, and the interrupted calls are rows with libc's result.
#include <gtest/gtest.h>
#include <unistd.h>

#include <map>
#include <string>
#include <vector>

#include "tests/common/test_util.h"

namespace gt {
namespace {

using test::Db;
using test::RunOptions;
using test::RunProgram;
using test::RunResult;
using test::TempDir;

constexpr int64_t kMs = 1000000;

// Runs `argv` traced with -t osrt and `threshold_ns`, exports its stream(s) to DIR/out.sqlite.
std::string TraceAndExport(const TempDir& dir, std::vector<std::string> argv, const std::string& threshold_ns,
                           RunResult* run) {
  RunOptions o = test::TracedRun(dir);
  o.env["GTRACE_TRACE"] = "osrt";
  o.env["GTRACE_OSRT_THRESHOLD"] = threshold_ns;
  *run = RunProgram(argv, o);
  std::string db = dir.File("out.sqlite");
  std::vector<std::string> streams = dir.Find(".gtrace");
  std::vector<std::string> cmd = {test::CliPath(), "export", "-o", db};
  cmd.insert(cmd.end(), streams.begin(), streams.end());
  RunResult ex = RunProgram(cmd);
  EXPECT_EQ(ex.exit_code, 0) << ex.err;
  return db;
}

TEST(OsrtKnown, ExactlyThePlantedCallsAboveTheThreshold) {
  TempDir dir;
  RunResult run;
  std::string path = TraceAndExport(dir, {test::SamplePath("osrt_known")}, "1000000", &run);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.out, "done\n");
  Db db(path);
  ASSERT_TRUE(db.ok()) << db.error();
  // Nothing shorter than the threshold was written.
  EXPECT_EQ(db.Int("SELECT count(*) FROM OSRT_API WHERE \"end\" - start < 1000000"), 0);
  // The planted calls, once each: main (tid == pid) waited in pthread_mutex_lock, read (1 byte) and
  // nanosleep; the holder slept in usleep with the mutex held, the writer in clock_nanosleep.
  const char* kRow =
      "SELECT s.value, CASE WHEN (o.globalTid & 16777215) = ((o.globalTid >> 24) & 16777215) THEN 'main' ELSE "
      "'helper' END, o.eventClass, o.returnValue, o.nestingLevel, o.callchainId, o.argumentsId, o.\"end\" - o.start "
      "FROM OSRT_API o JOIN StringIds s ON s.id = o.nameId ";
  std::vector<std::string> rows = db.Rows(std::string(kRow) + "ORDER BY o.start");
  std::map<std::string, int64_t> planted;  // "name|thread|class|rv|nesting|chain|args" -> duration
  std::vector<std::string> stretched;      // fast calls a descheduled thread made last >= 1 ms
  for (const std::string& r : rows) {
    std::string key = r.substr(0, r.rfind('|'));
    int64_t ns = std::stoll(r.substr(r.rfind('|') + 1));
    bool fast_call = key.rfind("write|main|", 0) == 0 || key.rfind("read|main|27|1|", 0) == 0 ||
                     key.rfind("pthread_mutex_lock|main|", 0) == 0 || key.rfind("pthread_join|main|", 0) == 0 ||
                     key.rfind("open|main|", 0) == 0 || key.rfind("pipe|main|", 0) == 0 ||
                     key.rfind("write|helper|", 0) == 0 || key.rfind("pthread_mutex_lock|helper|", 0) == 0;
    if (planted.count(key) == 0 && (key == "pthread_mutex_lock|main|27|0|0|0|0" || key == "read|main|27|1|0|0|0" ||
                                    key == "nanosleep|main|27|0|0|0|0" || key == "usleep|helper|27|0|0|0|0" ||
                                    key == "clock_nanosleep|helper|27|0|0|0|0")) {
      planted[key] = ns;
    } else if (fast_call) {
      stretched.push_back(r);
    } else {
      ADD_FAILURE() << "unexpected OSRT row " << r;
    }
  }
  ASSERT_EQ(planted.size(), 5u) << ::testing::PrintToString(rows);
  // A loaded CI machine may deschedule the program inside a fast call; such a call did last >= 1 ms
  // (nsys would record it too). More than a few means the threshold is not what filters.
  EXPECT_LE(stretched.size(), 3u) << ::testing::PrintToString(stretched);
  int64_t lock = planted["pthread_mutex_lock|main|27|0|0|0|0"], read = planted["read|main|27|1|0|0|0"],
          sleep = planted["nanosleep|main|27|0|0|0|0"];
  EXPECT_GE(lock, 5 * kMs);  // the holder sleeps 5 ms once main sleeps in the lock
  EXPECT_LE(lock, 500 * kMs);
  EXPECT_GE(read, 15 * kMs);  // the writer sleeps 20 ms from its start
  EXPECT_LE(read, 1000 * kMs);
  EXPECT_GE(sleep, 10 * kMs);
  EXPECT_LE(sleep, 1000 * kMs);
  EXPECT_GE(planted["usleep|helper|27|0|0|0|0"], 5 * kMs);
  EXPECT_GE(planted["clock_nanosleep|helper|27|0|0|0|0"], 20 * kMs);
  EXPECT_EQ(db.Int("SELECT count(DISTINCT globalTid) FROM OSRT_API"), 3);
  EXPECT_EQ(db.Text("SELECT value FROM META_DATA_CAPTURE WHERE name = 'PROCESS_0:OSRT_THRESHOLD'"), "1000000");

  // osrt_sum: nsys's columns, one row per planted function.
  RunResult csv = RunProgram({test::CliPath(), "stats", "--report", "osrt_sum", "--format", "csv", path});
  ASSERT_EQ(csv.exit_code, 0) << csv.err;
  std::vector<std::string> lines;
  size_t pos = 0;
  while (pos < csv.out.size()) {
    size_t nl = csv.out.find('\n', pos);
    lines.push_back(csv.out.substr(pos, nl - pos));
    pos = nl == std::string::npos ? csv.out.size() : nl + 1;
  }
  // A header and one line per function (5 planted; a stretched fast call may add write, open...).
  ASSERT_EQ(static_cast<int64_t>(lines.size()), 1 + *db.Int("SELECT count(DISTINCT nameId) FROM OSRT_API")) << csv.out;
  EXPECT_EQ(lines[0], "Time (%),Total Time (ns),Num Calls,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Name");
  std::map<std::string, std::string> by_name;
  for (size_t i = 1; i < lines.size(); ++i)
    by_name[lines[i].substr(lines[i].rfind(',') + 1)] = lines[i];
  const std::pair<const char*, int64_t> expected[] = {
      {"nanosleep", sleep},
      {"usleep", planted["usleep|helper|27|0|0|0|0"]},
      {"clock_nanosleep", planted["clock_nanosleep|helper|27|0|0|0|0"]}};
  // (pthread_mutex_lock, read and write may have a stretched fast call beside the planted one.)
  EXPECT_EQ(by_name.count("pthread_mutex_lock"), 1u);
  EXPECT_EQ(by_name.count("read"), 1u);
  for (const auto& [name, ns] : expected) {
    std::string n = std::to_string(ns);
    // Total, calls, avg, med, min, max, stddev of one call.
    std::string tail = "," + n + ",1," + n + ".0," + n + ".0," + n + "," + n + ",0.0," + name;
    const std::string& line = by_name[name];
    ASSERT_GE(line.size(), tail.size()) << line;
    EXPECT_EQ(line.substr(line.size() - tail.size()), tail);
  }
}

TEST(OsrtKnown, ThresholdZeroRecordsEveryCall) {
  TempDir dir;
  RunResult run;
  std::string path = TraceAndExport(dir, {test::SamplePath("osrt_known")}, "0", &run);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  Db db(path);
  ASSERT_TRUE(db.ok()) << db.error();
  // Per function and thread (main = tid equal to pid; holder and writer are the other two threads):
  // every interposed call the program makes, and none of gtrace's own.
  std::vector<std::string> rows = db.Rows(
      "SELECT s.value, CASE WHEN (o.globalTid & 16777215) = ((o.globalTid >> 24) & 16777215) THEN 'main' "
      "ELSE 'other' END AS t, count(*) FROM OSRT_API o JOIN StringIds s ON s.id = o.nameId GROUP BY 1, 2 "
      "ORDER BY 1, 2");
  EXPECT_EQ(rows, (std::vector<std::string>{
                      "clock_nanosleep|other|1",       // the writer's 20 ms
                      "nanosleep|main|1",
                      "open|main|1",
                      "pipe|main|1",
                      "pthread_join|main|2",
                      "pthread_mutex_lock|main|2001",  // the contended one + 2000 fast ones
                      "pthread_mutex_lock|other|1",    // the holder's
                      "read|main|201",                 // the 20 ms one + 200 fast ones
                      "usleep|other|1",                // the holder's 5 ms
                      "write|main|400",                // 200 to /dev/null + 200 into the pipe
                      "write|other|1",                 // the writer's
                  }));
  EXPECT_EQ(db.Int("SELECT count(DISTINCT globalTid) FROM OSRT_API"), 3);
  EXPECT_EQ(db.Int("SELECT count(*) FROM OSRT_API WHERE \"end\" < start"), 0);
}

TEST(OsrtBehavior, ResultsAndErrnoUnchangedIncludingEintrAndCancellation) {
  TempDir plain_dir, traced_dir, work_a, work_b;
  RunOptions plain;
  plain.unset_env = test::TracedRun(plain_dir).unset_env;
  RunResult without = RunProgram({test::SamplePath("osrt_behavior"), work_a.path()}, plain);
  RunResult with;
  std::string path = TraceAndExport(traced_dir, {test::SamplePath("osrt_behavior"), work_b.path()}, "0", &with);
  ASSERT_EQ(without.exit_code, 0) << without.err;
  EXPECT_EQ(with.exit_code, without.exit_code) << with.err;
  EXPECT_EQ(with.term_signal, 0);
  EXPECT_EQ(with.out, without.out);  // byte for byte: every result, errno, EINTR and cancellation line
  EXPECT_NE(without.out.find("cancel read                 join=0 canceled=1 cleanup=1"), std::string::npos);
  EXPECT_NE(without.out.find("read EINTR                         rc=-1 errno=4"), std::string::npos);
  EXPECT_NE(without.out.find("\nend\n"), std::string::npos);
  Db db(path);
  ASSERT_TRUE(db.ok()) << db.error();
  // The interrupted and failing calls are rows with libc's result.
  EXPECT_GE(db.Int("SELECT count(*) FROM OSRT_API o JOIN StringIds s ON s.id = o.nameId WHERE s.value = 'read' "
                   "AND o.returnValue = -1 AND o.\"end\" - o.start >= 10000000"),
            1);  // the read that SIGALRM interrupted after 20 ms
  EXPECT_EQ(db.Int("SELECT count(*) FROM OSRT_API o JOIN StringIds s ON s.id = o.nameId WHERE s.value = "
                   "'pthread_mutex_timedlock' AND o.returnValue = 110"),
            1);  // ETIMEDOUT
  EXPECT_EQ(db.Int("SELECT count(*) FROM OSRT_API o JOIN StringIds s ON s.id = o.nameId WHERE s.value = "
                   "'clock_nanosleep' AND o.returnValue = 4"),
            1);  // EINTR, returned (clock_nanosleep does not set errno)
  // A cancelled call never returns: no row for the cancelled threads' read and nanosleep of 10 s.
  EXPECT_EQ(db.Int("SELECT count(*) FROM OSRT_API o JOIN StringIds s ON s.id = o.nameId WHERE s.value = "
                   "'nanosleep' AND o.\"end\" - o.start >= 1000000000"),
            0);
}

TEST(OsrtCli, ProfileFlagsAndStatsWithoutOsrt) {
  TempDir dir;
  RunOptions o = test::TracedRun(dir);
  o.preload = false;
  RunResult run = RunProgram({test::CliPath(), "profile", "-t", "osrt", "--osrt-threshold=4000000", "--osrt-backtrace-depth=8",
                              "-o", dir.File("p"), "--export=sqlite", "--", test::SamplePath("osrt_known")},
                             o);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.err.find("not implemented"), std::string::npos) << run.err;
  Db db(dir.File("p.sqlite"));
  ASSERT_TRUE(db.ok()) << db.error();
  // The 5 planted calls (4 ms threshold: the 5 ms lock wait may be a little shorter, so not asserted).
  EXPECT_GE(db.Int("SELECT count(*) FROM OSRT_API"), 4);
  EXPECT_EQ(db.Int("SELECT count(*) FROM OSRT_API WHERE \"end\" - start < 4000000"), 0);
  EXPECT_EQ(db.Text("SELECT value FROM META_DATA_CAPTURE WHERE name = 'PROCESS_0:OSRT_THRESHOLD'"), "4000000");
  // A run without -t osrt has no OSRT_API: osrt_sum says so and fails.
  TempDir plain;
  RunResult nv = RunProgram({test::CliPath(), "profile", "-t", "nvtx", "-o", plain.File("q"), "--export=sqlite", "--",
                             test::SamplePath("nvtx_threads"), "--threads", "1", "--iterations", "2"},
                            o);
  ASSERT_EQ(nv.exit_code, 0) << nv.err;
  RunResult sum = RunProgram({test::CliPath(), "stats", "--report", "osrt_sum", plain.File("q.sqlite")});
  EXPECT_NE(sum.exit_code, 0);
  EXPECT_NE((sum.out + sum.err).find("no OSRT_API table"), std::string::npos) << sum.out << sum.err;
}

}  // namespace
}  // namespace gt
