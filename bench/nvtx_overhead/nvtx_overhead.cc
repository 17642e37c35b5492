// nvtx_overhead: ns per nvtxRangePushA/nvtxRangePop pair, for comparing a run without gtrace (NVTX
// calls are no-ops) with a run under LD_PRELOAD=libgtrace.so. Run by scripts/bench.sh.
//
//   nvtx_overhead [--pairs-per-rep N] [--reps R] [--pause-ms P]
//
// Each repetition times N pairs with steady_clock; between repetitions it sleeps P ms so gtrace's
// drain thread empties the ring (N pairs = 2N records must fit in the thread's ring, see
// GTRACE_THREAD_BUFFER_KB, or the run measures the drop path instead). Prints one line:
//   pairs=N reps=R median_ns_per_pair=X min_ns_per_pair=Y
#include <nvtx3/nvToolsExt.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

int main(int argc, char** argv) {
  long pairs = 100000, reps = 21, pause_ms = 150;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string f = argv[i];
    long v = std::atol(argv[i + 1]);
    if (f == "--pairs-per-rep") pairs = v;
    else if (f == "--reps") reps = v;
    else if (f == "--pause-ms") pause_ms = v;
  }
  nvtxRangePushA("warm-up");  // first call runs NVTX's (and gtrace's) initialisation
  nvtxRangePop();
  std::vector<double> ns;
  for (long r = 0; r < reps; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    for (long i = 0; i < pairs; ++i) {
      nvtxRangePushA("bench-range");
      nvtxRangePop();
    }
    auto t1 = std::chrono::steady_clock::now();
    ns.push_back(std::chrono::duration<double, std::nano>(t1 - t0).count() / static_cast<double>(pairs));
    std::this_thread::sleep_for(std::chrono::milliseconds(pause_ms));
  }
  std::sort(ns.begin(), ns.end());
  std::printf("pairs=%ld reps=%ld median_ns_per_pair=%.2f min_ns_per_pair=%.2f\n", pairs, reps, ns[ns.size() / 2],
              ns.front());
  return 0;
}
