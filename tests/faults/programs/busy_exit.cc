// busy_exit: N threads record NVTX ranges without pause and never stop; after S seconds the main
// thread ends the process while they run: by exit(0) ("exit") or by SIGTERM's default action
// ("term"). Before it does, it prints the CLOCK_MONOTONIC time (exit_at_ns=...), so the test can
// measure how long the end took (issue 28 item 3: the end is bounded by what was recorded before it
// began, however many threads go on recording).
//   busy_exit <threads> <seconds> exit|term
#include <nvtx3/nvToolsExt.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

int main(int argc, char** argv) {
  int threads = argc > 1 ? std::atoi(argv[1]) : 64;
  double seconds = argc > 2 ? std::atof(argv[2]) : 2;
  bool term = argc > 3 && std::strcmp(argv[3], "term") == 0;
  std::atomic<int> running{0};
  for (int t = 0; t < threads; ++t) {
    std::thread([&running] {
      running.fetch_add(1);
      while (true) {
        nvtxRangePushA("busy");
        nvtxMarkA("tick");
        nvtxRangePop();
      }
    }).detach();
  }
  while (running.load() < threads) std::this_thread::yield();
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  std::printf("exit_at_ns=%lld\n", static_cast<long long>(now.tv_sec) * 1000000000ll + now.tv_nsec);
  std::fflush(stdout);
  if (term) {
    ::kill(::getpid(), SIGTERM);
    while (true) ::pause();  // the signal ends the process, on whichever thread it lands
  }
  std::exit(0);
}
