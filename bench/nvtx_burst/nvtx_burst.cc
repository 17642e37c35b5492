// nvtx_burst: T threads each push and pop N NVTX ranges in a tight loop, as fast as they can (a
// per-op annotation in a framework, issue 20). Without gtrace the NVTX calls are no-ops; under
// LD_PRELOAD=libgtrace.so every call is a record. bench/nvtx_burst/run.sh runs it both ways,
// alternating, and counts what the stream kept.
//
//   nvtx_burst [--pairs N] [--threads T]
//
// Prints one line: pairs=N threads=T wall_ns=W ns_per_pair=X cpu_ns_per_pair=C [drain_cpu_ns=D] (W: the
// slowest thread's loop; X: W / N, the time one thread spends per pair while all T run; C: the CPU
// time of all T loops together / (N * T), what one pair costs the application; D: under gtrace, the
// CPU time of gtrace's drain thread from just before the burst until it has gone idle after it,
// read from /proc/self/task/<tid>/schedstat, so run.sh can give the drain's CPU per record kept).
#include <dirent.h>
#include <time.h>
#include <nvtx3/nvToolsExt.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

namespace {

// The drain thread of gtrace in this process (comm "gtrace-drain"), or 0 without gtrace.
long FindDrainThread() {
  DIR* d = opendir("/proc/self/task");
  if (d == nullptr) return 0;
  long found = 0;
  while (dirent* e = readdir(d)) {
    if (e->d_name[0] == '.') continue;
    std::string path = std::string("/proc/self/task/") + e->d_name + "/comm";
    if (FILE* f = std::fopen(path.c_str(), "r")) {
      char name[64] = {};
      if (std::fgets(name, sizeof(name), f) != nullptr && std::string(name).rfind("gtrace-drain", 0) == 0) {
        found = std::atol(e->d_name);
      }
      std::fclose(f);
    }
  }
  closedir(d);
  return found;
}

// CPU time the thread has run (ns; first field of schedstat), or -1.
long long ThreadRunNs(long tid) {
  std::string path = "/proc/self/task/" + std::to_string(tid) + "/schedstat";
  FILE* f = std::fopen(path.c_str(), "r");
  if (f == nullptr) return -1;
  long long ns = -1;
  if (std::fscanf(f, "%lld", &ns) != 1) ns = -1;
  std::fclose(f);
  return ns;
}

}  // namespace

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
  std::vector<long long> cpu(static_cast<size_t>(threads));
  auto thread_cpu_ns = [] {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<long long>(ts.tv_sec) * 1000000000ll + ts.tv_nsec;
  };
  auto body = [&](long t) {
    ready.fetch_add(1);
    while (!go.load(std::memory_order_acquire)) std::this_thread::yield();
    long long c0 = thread_cpu_ns();
    auto t0 = std::chrono::steady_clock::now();
    for (long i = 0; i < pairs; ++i) {
      nvtxRangePushA("burst");
      nvtxRangePop();
    }
    auto t1 = std::chrono::steady_clock::now();
    wall[static_cast<size_t>(t)] = std::chrono::duration_cast<std::chrono::nanoseconds>(t1 - t0).count();
    cpu[static_cast<size_t>(t)] = thread_cpu_ns() - c0;
  };
  std::vector<std::thread> pool;
  for (long t = 0; t < threads; ++t) pool.emplace_back(body, t);
  nvtxDomainCreateA("nvtx_burst");  // under gtrace: starts the session and its drain thread (no event)
  long drain_tid = FindDrainThread();
  while (ready.load() < threads) std::this_thread::yield();
  long long drain_before = drain_tid != 0 ? ThreadRunNs(drain_tid) : -1;
  go.store(true, std::memory_order_release);
  for (auto& th : pool) th.join();
  long long w = *std::max_element(wall.begin(), wall.end());
  // The drain thread has caught up when it ran less than 0.2 ms in the last 50 ms (an idle pass
  // every 10 ms costs a few us); at most 20 s.
  long long drain_cpu = -1;
  if (drain_before >= 0) {
    long long last = ThreadRunNs(drain_tid);
    for (int i = 0; i < 400; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      long long now = ThreadRunNs(drain_tid);
      if (now < 0) break;
      bool idle = now - last < 200000;
      last = now;
      if (idle) break;
    }
    if (last >= 0) drain_cpu = last - drain_before;
  }
  long long cpu_sum = 0;
  for (long long c : cpu) cpu_sum += c;
  std::printf("pairs=%ld threads=%ld wall_ns=%lld ns_per_pair=%.2f cpu_ns_per_pair=%.2f", pairs, threads, w,
              pairs > 0 ? static_cast<double>(w) / static_cast<double>(pairs) : 0.0,
              pairs > 0 ? static_cast<double>(cpu_sum) / static_cast<double>(pairs * threads) : 0.0);
  if (drain_cpu >= 0) std::printf(" drain_cpu_ns=%lld", drain_cpu);
  std::printf("\n");
  return 0;
}
