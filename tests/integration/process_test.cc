// The library inside real processes: fork, signals, kill, ranks and output names, a program that
// never uses NVTX, an unwritable output, memory-cap drops, bad settings.
#include <gtest/gtest.h>
#include <signal.h>

#include <string>

#include "gtrace.pb.h"
#include "tests/common/test_util.h"
#include "tools/stream/stream_reader.h"

namespace gt {
namespace {

using test::Db;
using test::RunProgram;
using test::RunOptions;
using test::RunResult;
using test::TempDir;

struct StreamContent {
  schema::StreamHeader header;
  std::vector<std::string> names;  // NVTX messages (literal), in file order
  uint64_t nvtx_records = 0;
  uint64_t dropped = 0;
  bool complete = false;
  std::string close_reason;
};

StreamContent ReadStream(const std::string& path) {
  StreamContent c;
  stream::StreamReader r;
  Status st = r.Open(path);
  EXPECT_TRUE(st.ok()) << st.message();
  if (!st.ok()) return c;
  c.header = r.header();
  std::map<uint64_t, std::string> strings;
  schema::Chunk chunk;
  while (true) {
    bool has = false;
    st = r.Next(&chunk, &has);
    EXPECT_TRUE(st.ok()) << st.message();
    if (!st.ok() || !has) break;
    for (const auto& s : chunk.strings()) strings[s.id()] = s.text();
    for (const auto& e : chunk.nvtx()) {
      ++c.nvtx_records;
      if (e.kind() == schema::NVTX_EVENT_KIND_PUSH) c.names.push_back(strings[e.string_id()]);
    }
    for (const auto& d : chunk.drops()) c.dropped += d.dropped_records();
    if (chunk.has_stats()) c.close_reason = chunk.stats().close_reason();
  }
  c.complete = r.summary().end_of_stream;
  return c;
}

TEST(Process, ForkedChildWritesItsOwnStream) {
  TempDir dir;
  RunResult r = RunProgram({test::SamplePath("fork_child")}, test::TracedRun(dir));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::string> streams = dir.Find(".gtrace");
  ASSERT_EQ(streams.size(), 2u);
  StreamContent a = ReadStream(streams[0]), b = ReadStream(streams[1]);
  StreamContent& parent = a.header.pid() < b.header.pid() ? a : b;
  StreamContent& child = a.header.pid() < b.header.pid() ? b : a;
  EXPECT_EQ(parent.names, (std::vector<std::string>{"parent-before", "parent-after"}));
  EXPECT_EQ(child.names, (std::vector<std::string>{"child-range"}));
  EXPECT_EQ(child.header.ppid(), parent.header.pid());
  EXPECT_TRUE(parent.complete);
  EXPECT_TRUE(child.complete);
  RunResult e = RunProgram({test::CliPath(), "export", "-o", dir.File("all.sqlite"), dir.path()});
  ASSERT_EQ(e.exit_code, 0) << e.err;
  Db db(dir.File("all.sqlite"));
  EXPECT_EQ(db.Int("SELECT count(*) FROM PROCESSES"), 2);
  EXPECT_EQ(db.Int("SELECT count(DISTINCT globalTid >> 24) FROM NVTX_EVENTS"), 2);
}

TEST(Process, ForkBeforeExecCanBeLeftUntraced) {
  TempDir dir;
  RunOptions o = test::TracedRun(dir);
  o.env["GTRACE_TRACE_FORK_BEFORE_EXEC"] = "false";
  RunResult r = RunProgram({test::SamplePath("fork_child")}, o);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::string> streams = dir.Find(".gtrace");
  ASSERT_EQ(streams.size(), 1u);  // the parent's only
  EXPECT_EQ(ReadStream(streams[0]).names, (std::vector<std::string>{"parent-before", "parent-after"}));
}

RunOptions Holding(const TempDir& dir, int signal, int after_ms) {
  RunOptions o = test::TracedRun(dir);
  o.env["GTRACE_FLUSH_MS"] = "50";
  o.signal_to_send = signal;
  o.signal_after_output = "nvtx_threads: holding";  // all ranges are done; then `after_ms` more
  o.signal_after_ms = after_ms;
  return o;
}

TEST(Process, SigtermKeepsEverythingAndStillKillsTheProcess) {
  TempDir dir;
  RunResult r = RunProgram({test::SamplePath("nvtx_threads"), "--threads", "2", "--iterations", "3", "--work-us", "100",
                     "--hold-ms", "10000"},
                    Holding(dir, SIGTERM, 0));
  EXPECT_EQ(r.term_signal, SIGTERM);  // the default action still runs: same status as without gtrace
  EXPECT_EQ(r.exit_code, -1);
  std::vector<std::string> streams = dir.Find(".gtrace");
  ASSERT_EQ(streams.size(), 1u);
  StreamContent c = ReadStream(streams[0]);
  EXPECT_TRUE(c.complete);
  EXPECT_EQ(c.close_reason, "signal SIGTERM");
  EXPECT_EQ(std::count(c.names.begin(), c.names.end(), "iteration"), 6);
  EXPECT_EQ(c.dropped, 0u);
}

TEST(Process, SigkillKeepsWhatWasFlushed) {
  TempDir dir;
  RunResult r = RunProgram({test::SamplePath("nvtx_threads"), "--threads", "2", "--iterations", "3", "--work-us", "100",
                     "--hold-ms", "10000"},
                    Holding(dir, SIGKILL, 500));
  EXPECT_EQ(r.term_signal, SIGKILL);
  std::vector<std::string> streams = dir.Find(".gtrace");
  ASSERT_EQ(streams.size(), 1u);
  StreamContent c = ReadStream(streams[0]);
  EXPECT_FALSE(c.complete);
  EXPECT_EQ(std::count(c.names.begin(), c.names.end(), "iteration"), 6);  // flushed within 50 ms, long before
  RunResult e = RunProgram({test::CliPath(), "export", streams[0]});
  EXPECT_EQ(e.exit_code, 0) << e.err;
  EXPECT_NE(e.err.find("no end marker"), std::string::npos) << e.err;
}

TEST(Process, ProgramWithoutNvtxIsUnchanged) {
  TempDir dir;
  RunOptions plain;
  plain.unset_env = {"LD_PRELOAD", "NVTX_INJECTION64_PATH"};
  RunResult without = RunProgram({test::SamplePath("plain_program"), "a b", "c"}, plain);
  RunResult with = RunProgram({test::SamplePath("plain_program"), "a b", "c"}, test::TracedRun(dir));
  EXPECT_EQ(without.exit_code, 7);
  EXPECT_EQ(with.exit_code, 7);
  EXPECT_EQ(with.out, without.out);
  EXPECT_EQ(without.out, "args=3 threads=1\narg a b\narg c\n");  // no thread of ours
  EXPECT_EQ(with.err, "nvtx_injection=set\n");  // only the armed variable differs; no gtrace: line
  EXPECT_TRUE(dir.Find(".gtrace").empty());     // no stream: nothing was recorded
}

TEST(Process, UntracedSourceWritesNoStream) {
  // NVTX calls under -t cuda: NVTX's initializer runs, but the program never touches CUDA, so
  // there is nothing to record and no (empty) stream may appear.
  TempDir dir;
  RunOptions o = test::TracedRun(dir);
  o.env["GTRACE_TRACE"] = "cuda";
  RunResult r = RunProgram({test::SamplePath("nvtx_threads"), "--threads", "1", "--iterations", "1"}, o);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_TRUE(dir.Find(".gtrace").empty());
}

TEST(Process, RankAndOutputPattern) {
  TempDir dir;
  RunOptions o = test::TracedRun(dir, "rank_%q{SLURM_PROCID}_of_%q{SLURM_NTASKS}");
  o.env["SLURM_PROCID"] = "3";
  o.env["SLURM_LOCALID"] = "1";
  o.env["SLURM_NTASKS"] = "8";
  RunResult r = RunProgram({test::SamplePath("nvtx_threads"), "--threads", "1", "--iterations", "1"}, o);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::string> streams = dir.Find(".gtrace");
  ASSERT_EQ(streams, (std::vector<std::string>{dir.File("rank_3_of_8.gtrace")}));
  StreamContent c = ReadStream(streams[0]);
  EXPECT_EQ(c.header.rank(), 3);
  EXPECT_EQ(c.header.local_rank(), 1);
  EXPECT_EQ(c.header.world_size(), 8);
  EXPECT_EQ(c.header.rank_source(), "SLURM_PROCID");
  // The same name again: never overwritten; the second process gets its pid in the name.
  RunResult again = RunProgram({test::SamplePath("nvtx_threads"), "--threads", "1", "--iterations", "1"}, o);
  ASSERT_EQ(again.exit_code, 0);
  EXPECT_EQ(dir.Find(".gtrace").size(), 2u);
  EXPECT_NE(again.err.find("rank_3_of_8.gtrace exists; writing "), std::string::npos) << again.err;
  RunResult e = RunProgram({test::CliPath(), "export", "-o", dir.File("r.sqlite"), dir.File("rank_3_of_8.gtrace")});
  ASSERT_EQ(e.exit_code, 0) << e.err;
  Db db(dir.File("r.sqlite"));
  EXPECT_EQ(db.Int("SELECT rank FROM MPI_RANKS"), 3);
}

TEST(Process, UnwritableOutputOneLineAndTheAppRunsOn) {
  TempDir dir;
  RunOptions o = test::TracedRun(dir);
  o.env["GTRACE_OUTPUT"] = "/dev/null/nodir/t-%p";
  RunResult r = RunProgram({test::SamplePath("nvtx_threads"), "--threads", "2", "--iterations", "2"}, o);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out, "nvtx_threads: 2 threads x 2 iterations done\n");
  ASSERT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_EQ(r.err.rfind("gtrace: cannot create /dev/null/nodir/t-", 0), 0u) << r.err;
  EXPECT_NE(r.err.find("tracing disabled, the application runs on"), std::string::npos) << r.err;
}

TEST(Process, BadSettingsWarnOnceAndKeepDefaults) {
  TempDir dir;
  RunOptions o = test::TracedRun(dir);
  o.env["GTRACE_BUFFER_MB"] = "lots";
  o.env["GTRACE_FLUSH_MS"] = "1";
  o.env["GTRACE_NOT_A_THING"] = "x";
  RunResult r = RunProgram({test::SamplePath("nvtx_threads"), "--threads", "1", "--iterations", "2"}, o);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 3) << r.err;
  EXPECT_NE(r.err.find("gtrace: GTRACE_BUFFER_MB='lots' is not a whole number"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("gtrace: GTRACE_FLUSH_MS='1' is not a whole number in [10, 60000]"), std::string::npos);
  EXPECT_NE(r.err.find("gtrace: unknown variable GTRACE_NOT_A_THING ignored"), std::string::npos);
  std::vector<std::string> streams = dir.Find(".gtrace");
  ASSERT_EQ(streams.size(), 1u);
  StreamContent c = ReadStream(streams[0]);
  EXPECT_EQ(c.header.buffer_limit_bytes(), 256u << 20);
  EXPECT_EQ(c.header.flush_interval_ms(), 500u);
  EXPECT_EQ(std::count(c.names.begin(), c.names.end(), "iteration"), 2);
}

TEST(Process, MemoryCapDropsAreCountedExactly) {
  // Room for one 64 KiB ring only: with 6 threads most records have no buffer. Every record the
  // program attempted is either in the stream or in a drop count.
  TempDir dir;
  RunOptions o = test::TracedRun(dir);
  o.env["GTRACE_BUFFER_MB"] = "1";
  o.env["GTRACE_THREAD_BUFFER_KB"] = "1024";
  RunResult r = RunProgram({test::SamplePath("nvtx_threads"), "--threads", "6", "--iterations", "10", "--work-us", "3000"}, o);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::string> streams = dir.Find(".gtrace");
  ASSERT_EQ(streams.size(), 1u);
  StreamContent c = ReadStream(streams[0]);
  // nvtx_threads records 30 records on the main thread and 43 per worker (10 x 4 + 3).
  EXPECT_EQ(c.nvtx_records + c.dropped, 30u + 6u * 43u);
  EXPECT_GT(c.dropped, 0u);
  RunResult e = RunProgram({test::CliPath(), "export", "-o", dir.File("d.sqlite"), streams[0]});
  EXPECT_EQ(e.exit_code, 0);
  EXPECT_NE(e.err.find("gtrace dropped"), std::string::npos) << e.err;
  Db db(dir.File("d.sqlite"));
  EXPECT_GE(db.Int("SELECT count(*) FROM DIAGNOSTIC_EVENT WHERE text LIKE '%no free thread buffer%'"), 1);
}

}  // namespace
}  // namespace gt
