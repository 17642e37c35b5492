// nvtx_signal_reentry: a signal handler records NVTX on a thread that is inside an NVTX call of its
// own (issue 28, item 4). The main thread pushes and pops a long-named range for SECONDS, and on
// until the handler has run 500 times (at most 30 s), while an interval timer (ITIMER_PROF, every
// 100 us of CPU: in practice every kernel tick of CPU time, ~250/s) runs a handler that records a
// mark. A loaded machine gives the process less CPU, so fewer ticks per second: the count, not the
// time, is what the test needs (84 in 1 s once under stress-ng). Prints how many NVTX calls each
// side made, so the test can check every record is intact or counted.
//   nvtx_signal_reentry SECONDS
#include <nvtx3/nvToolsExt.h>
#include <signal.h>
#include <sys/time.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>

namespace {
std::atomic<unsigned long> g_handler_calls{0};
void Handler(int) {
  nvtxMarkA("handler-mark");
  g_handler_calls.fetch_add(1, std::memory_order_relaxed);
}
}  // namespace

int main(int argc, char** argv) {
  double seconds = argc > 1 ? std::atof(argv[1]) : 1.0;
  nvtxMarkA("start");  // NVTX initialised and the session started before the timer runs
  struct sigaction sa {};
  sa.sa_handler = Handler;
  sa.sa_flags = SA_RESTART;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGPROF, &sa, nullptr);
  itimerval tv{{0, 100}, {0, 100}};
  setitimer(ITIMER_PROF, &tv, nullptr);
  auto start = std::chrono::steady_clock::now();
  auto deadline = start + std::chrono::duration<double>(seconds);
  auto cap = start + std::chrono::seconds(30);
  unsigned long main_calls = 1;
  while (true) {
    auto now = std::chrono::steady_clock::now();
    if (now >= cap || (now >= deadline && g_handler_calls.load(std::memory_order_relaxed) >= 500)) break;
    for (int i = 0; i < 100; ++i) {
      nvtxRangePushA("main-range-with-a-name-longer-than-one-slot-of-sixty-four-bytes-so-it-spans-two");
      nvtxRangePop();
    }
    main_calls += 200;
  }
  itimerval off{};
  setitimer(ITIMER_PROF, &off, nullptr);
  std::printf("main_calls=%lu handler_calls=%lu\n", main_calls, g_handler_calls.load());
  return 0;
}
