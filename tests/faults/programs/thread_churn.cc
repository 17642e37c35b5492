// thread_churn: <threads> short-lived threads, one alive at a time, each recording <ranges> NVTX
// push/pop pairs and exiting (issue 28 item 5: a worker pool that spawns a thread per task). Prints
// how many NVTX calls were made, so the test can check every one is in the stream.
//   thread_churn <threads> <ranges>
#include <nvtx3/nvToolsExt.h>

#include <cstdio>
#include <cstdlib>
#include <thread>

int main(int argc, char** argv) {
  int threads = argc > 1 ? std::atoi(argv[1]) : 5000;
  int ranges = argc > 2 ? std::atoi(argv[2]) : 20;
  unsigned long long calls = 0;
  for (int t = 0; t < threads; ++t) {
    std::thread([ranges] {
      for (int i = 0; i < ranges; ++i) {
        nvtxRangePushA("task");
        nvtxRangePop();
      }
    }).join();
    calls += 2ull * static_cast<unsigned>(ranges);
  }
  std::printf("nvtx_calls=%llu\n", calls);
  return 0;
}
