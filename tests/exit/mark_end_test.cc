// gt::MarkEnd inside one process, with the drain thread under our control (an emitter that can be
// made to stall, standing in for a writer stuck on a slow disk or a lock held by the thread that is
// ending): the wait is bounded by GTRACE_EXIT_WAIT_MS, nothing deadlocks, and a process that goes
// on after the mark (ResumeAfterEnd) writes again and closes the stream once more.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <time.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "collector/clock.h"
#include "collector/session.h"
#include "gtrace.pb.h"
#include "tests/common/test_util.h"
#include "tools/stream/stream_reader.h"

namespace gt {
namespace {

std::atomic<bool> g_stall{false};
std::atomic<int> g_stalled_cycles{0};

// Drain thread, every cycle: waits (up to 2 s) while the test says stall.
void StallingEmitter(ChunkBuilder*, uint64_t) {
  if (!g_stall.load())
    return;
  g_stalled_cycles.fetch_add(1);
  for (int i = 0; i < 200 && g_stall.load(); ++i) {
    timespec pause{0, 10000000};
    nanosleep(&pause, nullptr);
  }
}

uint64_t ElapsedMs(uint64_t start_ns) {
  return (NowNs() - start_ns) / 1000000;
}

TEST(MarkEnd, BoundedWaitNoDeadlockAndResume) {
  test::TempDir dir;
  setenv("GTRACE_OUTPUT", dir.File("mark").c_str(), 1);
  setenv("GTRACE_TRACE", "nvtx", 1);
  setenv("GTRACE_EXIT_WAIT_MS", "150", 1);
  ASSERT_TRUE(RegisterEmitter(StallingEmitter));
  ASSERT_TRUE(EnsureSession(0));

  // 1. A free drain thread: the mark is written well inside the bound.
  uint64_t t0 = NowNs();
  EXPECT_TRUE(MarkEnd(EndKind::kExec, 0));
  EXPECT_LT(ElapsedMs(t0), 150u);
  ResumeAfterEnd();  // "exec failed": record on

  // 2. A stuck drain thread: every caller (8 threads at once) returns after the bound, not later.
  g_stall.store(true);
  while (g_stalled_cycles.load() == 0)
    std::this_thread::yield();
  std::vector<std::thread> threads;
  std::atomic<int> timed_out{0};
  std::atomic<uint64_t> longest_ms{0};
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([&] {
      uint64_t start = NowNs();
      if (!MarkEnd(EndKind::kUnderscoreExit, 0))
        timed_out.fetch_add(1);
      uint64_t ms = ElapsedMs(start);
      uint64_t prev = longest_ms.load();
      while (ms > prev && !longest_ms.compare_exchange_weak(prev, ms)) {
      }
    });
  }
  for (auto& t : threads)
    t.join();
  EXPECT_EQ(timed_out.load(), 8);
  EXPECT_GE(longest_ms.load(), 150u);
  EXPECT_LT(longest_ms.load(), 1500u);  // the bound plus scheduling on a loaded 2-core machine
  g_stall.store(false);

  // 3. The drain thread catches up and writes the mark; then the process "goes on" and ends normally.
  uint64_t t1 = NowNs();
  EXPECT_TRUE(MarkEnd(EndKind::kUnderscoreExit, 0));  // the same mark: answered once it is written
  EXPECT_LT(ElapsedMs(t1), 2500u);
  ResumeAfterEnd();
  EndSession("exit");

  std::vector<std::string> files = dir.Find(".gtrace");
  ASSERT_EQ(files.size(), 1u);
  stream::StreamReader r;
  ASSERT_TRUE(r.Open(files[0]).ok());
  std::vector<std::string> reasons;
  schema::Chunk c;
  while (true) {
    bool has = false;
    ASSERT_TRUE(r.Next(&c, &has).ok());
    if (!has)
      break;
    if (c.has_stats())
      reasons.push_back(c.stats().close_reason());
  }
  EXPECT_TRUE(r.summary().end_of_stream);
  // exec (resumed), _exit (written late, resumed), then the real end.
  EXPECT_EQ(reasons, (std::vector<std::string>{"exec", "_exit", "exit"}));
}

}  // namespace
}  // namespace gt
