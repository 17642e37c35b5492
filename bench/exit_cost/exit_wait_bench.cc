// exit_wait_bench REPEATS: how long an ending process waits for a drain thread that cannot finish
// (issue 14: the wait is bounded by GTRACE_EXIT_WAIT_MS, default 100 ms). In-process, linked with
// the collector: a session starts, an emitter stalls the drain thread (as a slow disk or a lock
// held by the ending thread would), and gt::MarkEnd — what _exit, exec and abort call — is timed.
// Each repeat then releases the drain thread, lets it write the late mark and resumes recording.
// Also times MarkEnd with a free drain thread and nothing pending, for comparison.
// Prints: stalled_median_ms=... stalled_max_ms=... free_median_us=... exit_wait_ms=...
#include <stdlib.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <string>
#include <vector>

#include "collector/clock.h"
#include "collector/session.h"

namespace {

std::atomic<bool> g_stall{false};
std::atomic<bool> g_in_stall{false};

void StallingEmitter(gt::ChunkBuilder*, uint64_t) {
  while (g_stall.load()) {
    g_in_stall.store(true);
    timespec pause{0, 1000000};
    nanosleep(&pause, nullptr);
  }
  g_in_stall.store(false);
}

void Sleep(long ms) {
  timespec t{ms / 1000, (ms % 1000) * 1000000};
  nanosleep(&t, nullptr);
}

}  // namespace

int main(int argc, char** argv) {
  int repeats = argc > 1 ? std::atoi(argv[1]) : 15;
  char dir[] = "/tmp/gtrace-exit-wait-XXXXXX";
  if (mkdtemp(dir) == nullptr) return 1;
  setenv("GTRACE_OUTPUT", (std::string(dir) + "/w").c_str(), 1);
  setenv("GTRACE_TRACE", "nvtx", 1);
  if (!gt::RegisterEmitter(StallingEmitter) || !gt::EnsureSession(0)) return 1;
  std::vector<double> stalled_ms, free_us;
  for (int i = 0; i < repeats; ++i) {
    uint64_t t0 = gt::NowNs();
    gt::MarkEnd(gt::EndKind::kExec, 0);
    free_us.push_back(static_cast<double>(gt::NowNs() - t0) / 1000.0);
    gt::ResumeAfterEnd();
    g_stall.store(true);
    while (!g_in_stall.load()) Sleep(1);
    t0 = gt::NowNs();
    gt::MarkEnd(gt::EndKind::kUnderscoreExit, 0);
    stalled_ms.push_back(static_cast<double>(gt::NowNs() - t0) / 1e6);
    g_stall.store(false);
    Sleep(30);  // the drain thread writes the late mark
    gt::ResumeAfterEnd();
    Sleep(20);
  }
  gt::EndSession("exit");
  std::sort(stalled_ms.begin(), stalled_ms.end());
  std::sort(free_us.begin(), free_us.end());
  std::printf("stalled_median_ms=%.1f stalled_max_ms=%.1f free_median_us=%.1f exit_wait_ms=%u\n",
              stalled_ms[stalled_ms.size() / 2], stalled_ms.back(), free_us[free_us.size() / 2],
              gt::SessionConfig() != nullptr ? gt::SessionConfig()->exit_wait_ms : 100u);
  std::string cleanup = std::string("rm -rf ") + dir;
  return std::system(cleanup.c_str()) == 0 ? 0 : 1;
}
