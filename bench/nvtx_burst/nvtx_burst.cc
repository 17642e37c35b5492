// nvtx_burst: T threads each push and pop N NVTX ranges in a tight loop, as fast as they can (a
// per-op annotation in a framework, issue 20). Without gtrace the NVTX calls are no-ops; under
// LD_PRELOAD=libgtrace.so every call is a record. bench/nvtx_burst/run.sh runs it both ways,
// alternating, and counts what the stream kept.
//
//   nvtx_burst [--pairs N] [--threads T]
//
// Prints one line: pairs=N threads=T wall_ns=W ns_per_pair=X (W: the slowest thread's loop; X:
// W / N, the time one thread spends per pair while all T run).
#include <nvtx3/nvToolsExt.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

int main(int argc, char** argv) {
  long pairs = 2000000, threads = 1;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string f = argv[i];
    long v = std::atol(argv[i + 1]);
    if (f == "--pairs") pairs = v;
    else if (f == "--threads") threads = v;
  }
  if (pairs < 0 || threads < 1 || threads > 256) {
    std::fprintf(stderr, "nvtx_burst: bad arguments\n");
    return 2;
  }
  std::atomic<long> ready{0};
  std::atomic<bool> go{false};
  std::vector<long long> wall(static_cast<size_t>(threads));
  auto body = [&](long t) {
    ready.fetch_add(1);
    while (!go.load(std::memory_order_acquire)) std::this_thread::yield();
    auto t0 = std::chrono::steady_clock::now();
    for (long i = 0; i < pairs; ++i) {
      nvtxRangePushA("burst");
      nvtxRangePop();
    }
    auto t1 = std::chrono::steady_clock::now();
    wall[static_cast<size_t>(t)] = std::chrono::duration_cast<std::chrono::nanoseconds>(t1 - t0).count();
  };
  std::vector<std::thread> pool;
  for (long t = 0; t < threads; ++t) pool.emplace_back(body, t);
  while (ready.load() < threads) std::this_thread::yield();
  go.store(true, std::memory_order_release);
  for (auto& th : pool) th.join();
  long long w = *std::max_element(wall.begin(), wall.end());
  std::printf("pairs=%ld threads=%ld wall_ns=%lld ns_per_pair=%.2f\n", pairs, threads, w,
              pairs > 0 ? static_cast<double>(w) / static_cast<double>(pairs) : 0.0);
  return 0;
}
