// The NVTX samples under LD_PRELOAD=libgtrace.so -> stream -> `gtrace export` -> exact rows.
#include <gtest/gtest.h>

#include <string>

#include "tests/common/test_util.h"

namespace gt {
namespace {

using test::Db;
using test::RunProgram;
using test::RunResult;
using test::TempDir;

// Runs `argv` traced, exports its single stream with the CLI and returns the database path.
std::string TraceAndExport(const TempDir& dir, const std::vector<std::string>& argv, RunResult* run = nullptr) {
  RunResult r = RunProgram(argv, test::TracedRun(dir));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err.find("gtrace:"), std::string::npos) << r.err;  // nothing to complain about
  if (run != nullptr) *run = r;
  std::vector<std::string> streams = dir.Find(".gtrace");
  EXPECT_EQ(streams.size(), 1u);
  if (streams.empty()) return {};
  RunResult e = RunProgram({test::CliPath(), "export", "-o", dir.File("out.sqlite"), streams[0]});
  EXPECT_EQ(e.exit_code, 0) << e.err;
  return dir.File("out.sqlite");
}

constexpr char kName[] = "coalesce(text, (SELECT value FROM StringIds WHERE id = textId))";

TEST(NvtxThreadsSample, EveryFeatureExactly) {
  TempDir dir;
  std::string path = TraceAndExport(
      dir, {test::SamplePath("nvtx_threads"), "--threads", "3", "--iterations", "5", "--work-us", "2000"});
  Db db(path);
  ASSERT_TRUE(db.ok());
  // Counts per (eventType, name, domain).
  std::vector<std::string> counts = db.Rows(std::string("SELECT eventType, ") + kName +
                                            ", domainId, count(*) FROM NVTX_EVENTS GROUP BY 1, 2, 3 ORDER BY 1, 2");
  std::vector<std::string> expected = {
      "33|Compute|0|1",
      "33|IO|0|1",
      "33|Setup|1|1",
      "34|domain-mark|1|1",
      "34|mark-ascii|0|1",
      "34|mark-payload|0|1",
      "34|mark-w|0|1",
      "34|registered-mark|1|1",
      "39|main|0|1",
      "39|worker-0|0|1",
      "39|worker-1|0|1",
      "39|worker-2|0|1",
      "59|init-a|0|1",
      "59|init-w-\xc3\xbc|0|1",
      "59|iteration|0|15",
      "59|p-float|0|1",
      "59|p-i32|0|1",
      "59|p-u32|0|1",
      "59|p-u64|0|1",
      "59|registered-range|1|1",
      "59|setup|0|1",
      "59|work|0|15",
      "59|worker-domain-range|1|3",
      "60|cross-thread|0|1",
      "60|main-se|0|1",
      "75|sample|1|1",
      "76|NULL|1|1",
  };
  EXPECT_EQ(counts, expected);
  // Registered strings go to textId, literals to text — never both, never neither.
  EXPECT_EQ(db.Rows("SELECT eventType, text IS NULL, textId IS NULL FROM NVTX_EVENTS WHERE textId IS NOT NULL ORDER BY eventType"),
            (std::vector<std::string>{"34|1|0", "59|1|0"}));
  // Every "work" lies inside an "iteration" of its own thread, and lasts at least the busy time.
  EXPECT_EQ(db.Int("SELECT count(*) FROM NVTX_EVENTS w WHERE w.text = 'work' AND EXISTS (SELECT 1 FROM NVTX_EVENTS i "
                   "WHERE i.text = 'iteration' AND i.globalTid = w.globalTid AND i.start <= w.start AND i.end >= w.end)"),
            15);
  EXPECT_GE(db.Int("SELECT min(end - start) FROM NVTX_EVENTS WHERE text = 'work'"), 2000000);
  EXPECT_EQ(db.Int("SELECT count(DISTINCT globalTid) FROM NVTX_EVENTS WHERE text = 'iteration'"), 3);
  EXPECT_EQ(db.Int("SELECT count(*) FROM NVTX_EVENTS WHERE end < start"), 0);
  // Attributes and payloads.
  EXPECT_EQ(db.Rows("SELECT color, category, int64Value FROM NVTX_EVENTS WHERE text = 'init-a'"),
            (std::vector<std::string>{"4278255360|1|-42"}));
  EXPECT_EQ(db.Rows("SELECT text, uint64Value, uint32Value, int32Value, floatValue FROM NVTX_EVENTS WHERE text LIKE "
                    "'p-%' ORDER BY text"),
            (std::vector<std::string>{"p-float|NULL|NULL|NULL|1.5", "p-i32|NULL|NULL|-9|NULL",
                                      "p-u32|NULL|8|NULL|NULL", "p-u64|7|NULL|NULL|NULL"}));
  EXPECT_EQ(db.Rows("SELECT doubleValue FROM NVTX_EVENTS WHERE text = 'mark-payload'"),
            (std::vector<std::string>{"2.5"}));
  EXPECT_EQ(db.Rows("SELECT category FROM NVTX_EVENTS WHERE textId = (SELECT id FROM StringIds WHERE value = "
                    "'registered-range')"),
            (std::vector<std::string>{"7"}));
  // Nesting of the setup block: init-a and init-w inside setup.
  EXPECT_EQ(db.Int("SELECT count(*) FROM NVTX_EVENTS c, NVTX_EVENTS p WHERE p.text = 'setup' AND c.text LIKE 'init-%' "
                   "AND c.start >= p.start AND c.end <= p.end"),
            2);
  // Start/end: cross-thread ends on worker 0, main-se on the starting thread.
  EXPECT_EQ(db.Rows("SELECT text, globalTid = endGlobalTid, rangeId IS NOT NULL FROM NVTX_EVENTS WHERE eventType = 60 "
                    "ORDER BY text"),
            (std::vector<std::string>{"cross-thread|0|1", "main-se|1|1"}));
  // Thread names: NVTX names win, one row per thread that appears.
  EXPECT_EQ(db.Rows("SELECT s.value FROM ThreadNames t JOIN StringIds s ON s.id = t.nameId ORDER BY s.value"),
            (std::vector<std::string>{"main", "worker-0", "worker-1", "worker-2"}));
  EXPECT_EQ(db.Int("SELECT count(DISTINCT globalTid) FROM NVTX_EVENTS WHERE globalTid NOT IN (SELECT globalTid FROM "
                   "ThreadNames)"),
            0);
  // Extended payload schema as registered (static id NVTX_PAYLOAD_SCHEMA_ID_STATIC_START + 5).
  EXPECT_EQ(db.Rows("SELECT domainId, schemaId, name, type, flags, numEntries, payloadSize, alignTo FROM "
                    "NVTX_PAYLOAD_SCHEMAS"),
            (std::vector<std::string>{"1|16777221|sample.schema|1|NULL|3|16|NULL"}));
  EXPECT_EQ(db.Rows("SELECT idx, name, type, description, offset FROM NVTX_PAYLOAD_SCHEMA_ENTRIES ORDER BY idx"),
            (std::vector<std::string>{"0|a|18|NULL|NULL", "1|b|15|signed|8", "2|c|15|NULL|12"}));
  // One process; the report sees what SQL sees.
  EXPECT_EQ(db.Int("SELECT count(*) FROM PROCESSES"), 1);
  RunResult stats = RunProgram({test::CliPath(), "stats", "--report", "nvtx_sum", "--format", "csv", path});
  ASSERT_EQ(stats.exit_code, 0) << stats.err;
  EXPECT_NE(stats.out.find(",15,"), std::string::npos) << stats.out;
  EXPECT_NE(stats.out.find("PushPop,:iteration"), std::string::npos) << stats.out;
  EXPECT_NE(stats.out.find("PushPop,sample:worker-domain-range"), std::string::npos) << stats.out;
}

TEST(NvtxThreadsSample, TwoNvtxInstancesInOneProcess) {
  TempDir dir;
  RunResult run;
  std::string path = TraceAndExport(dir, {test::SamplePath("two_instances")}, &run);
  EXPECT_EQ(run.out, "two instances done\n");
  Db db(path);
  EXPECT_EQ(db.Rows("SELECT text FROM NVTX_EVENTS ORDER BY start"),
            (std::vector<std::string>{"from-main", "from-library"}));
}

TEST(PythonSample, NvtxPackage) {
  RunResult probe = RunProgram({"python3", "-c", "import nvtx"});
  if (probe.exit_code != 0) GTEST_SKIP() << "python3 with the nvtx package is not available (scripts/setup.sh installs it)";
  TempDir dir;
  std::string path = TraceAndExport(dir, {"python3", test::SourceDir() + "/samples/nvtx_sample.py", "--steps", "4"});
  Db db(path);
  ASSERT_TRUE(db.ok());
  std::vector<std::string> counts = db.Rows(std::string("SELECT eventType, ") + kName +
                                            ", domainId, count(*) FROM NVTX_EVENTS GROUP BY 1, 2, 3 ORDER BY 1, 2");
  EXPECT_EQ(counts, (std::vector<std::string>{"33|train|1|1", "34|checkpoint|1|1", "59|backward|0|4",
                                              "59|forward|0|4", "59|load_batch|0|4", "59|manual|0|1", "59|step|1|4",
                                              "60|io|0|1", "75|python-sample|1|1", "76|NULL|1|1"}));
  // forward and backward nested in step (same thread, inside its interval); payload = step index.
  EXPECT_EQ(db.Int("SELECT count(*) FROM NVTX_EVENTS c JOIN NVTX_EVENTS p ON p.globalTid = c.globalTid WHERE "
                   "p.textId = (SELECT id FROM StringIds WHERE value = 'step') AND c.textId IN (SELECT id FROM "
                   "StringIds WHERE value IN ('forward','backward','load_batch')) AND c.start >= p.start AND c.end <= "
                   "p.end"),
            12);
  EXPECT_EQ(db.Rows("SELECT group_concat(coalesce(int64Value, uint64Value), ',') FROM (SELECT * FROM NVTX_EVENTS "
                    "WHERE domainId = 1 AND eventType = 59 ORDER BY start)"),
            (std::vector<std::string>{"0,1,2,3"}));
  EXPECT_GE(db.Int(std::string("SELECT min(end - start) FROM NVTX_EVENTS WHERE ") + kName + " = 'backward'"),
            2000000);
  EXPECT_EQ(db.Rows("SELECT globalTid = endGlobalTid FROM NVTX_EVENTS WHERE eventType = 60"),
            (std::vector<std::string>{"0"}));  // ended on the "ender" thread
}

// gtrace's own work as nsys's PROFILER_OVERHEAD (issue 15): every write of the stream file is a row on
// the drain thread (one thread, none of the application's: no ThreadNames row), overheadType 0 (nsys's
// OVERHEAD_UNDEFINED, which it uses for its own non-CUPTI work). With a flush interval longer than the
// run the drain loop writes the file twice — at session start and when the session stops — and each
// is described in a later chunk; the very last write (the end-of-stream chunk) cannot describe itself.
TEST(ProfilerOverhead, StreamWritesAreRowsOfTheDrainThread) {
  TempDir dir;
  test::RunOptions o = test::TracedRun(dir);
  o.env["GTRACE_FLUSH_MS"] = "60000";
  RunResult r = RunProgram({test::SamplePath("nvtx_threads"), "--threads", "2", "--iterations", "3"}, o);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::string> streams = dir.Find(".gtrace");
  ASSERT_EQ(streams.size(), 1u);
  RunResult e = RunProgram({test::CliPath(), "export", "-o", dir.File("out.sqlite"), streams[0]});
  ASSERT_EQ(e.exit_code, 0) << e.err;
  Db db(dir.File("out.sqlite"));
  ASSERT_TRUE(db.ok());
  // The DDL is nsys 3.25.0's.
  EXPECT_EQ(db.Rows("SELECT name FROM pragma_table_info('PROFILER_OVERHEAD') ORDER BY cid"),
            (std::vector<std::string>{"start", "end", "globalTid", "nameId", "overheadType"}));
  EXPECT_EQ(db.Rows("SELECT s.value, p.overheadType, count(*) FROM PROFILER_OVERHEAD p JOIN StringIds s ON "
                    "s.id = p.nameId WHERE s.value = 'gtrace stream write' GROUP BY 1, 2"),
            (std::vector<std::string>{"gtrace stream write|0|2"}));
  // Only gtrace's names, only its drain thread, named; every row a real interval inside the session.
  EXPECT_EQ(db.Rows("SELECT DISTINCT s.value FROM PROFILER_OVERHEAD p JOIN StringIds s ON s.id = p.nameId WHERE "
                    "s.value NOT IN ('gtrace stream write', 'gtrace buffer drain')"),
            (std::vector<std::string>{}));
  EXPECT_EQ(db.Int("SELECT count(DISTINCT globalTid) FROM PROFILER_OVERHEAD"), 1);
  EXPECT_EQ(db.Int("SELECT count(*) FROM PROFILER_OVERHEAD p WHERE p.globalTid IN (SELECT globalTid FROM ThreadNames) "
                   "OR p.globalTid IN (SELECT globalTid FROM NVTX_EVENTS)"),
            0);
  EXPECT_EQ(db.Int("SELECT count(*) FROM PROFILER_OVERHEAD WHERE start > \"end\" OR start < 0"), 0);
  EXPECT_EQ(db.Int("SELECT count(*) FROM PROFILER_OVERHEAD p WHERE p.globalTid >> 24 <> (SELECT globalPid >> 24 "
                   "FROM PROCESSES)"),
            0);
  // The first write (session start) comes before every NVTX event.
  EXPECT_EQ(db.Int("SELECT min(start) <= (SELECT min(start) FROM NVTX_EVENTS) FROM PROFILER_OVERHEAD"), 1);
}

}  // namespace
}  // namespace gt
