// nvtx_overhead: ns per NVTX call pair, for comparing a run without gtrace (NVTX calls are
// no-ops), a run under libgtrace.so and runs under the floor libraries (floor_inject.cc). Run by
// scripts/bench.sh and bench/nvtx_overhead/run_floor.sh.
//
//   nvtx_overhead [--pairs-per-rep N] [--reps R] [--pause-ms P] [--mode pushpop|startend|mark]
//                 [--threads T]
//
// Each repetition times N pairs per thread (pushpop: nvtxRangePushA + nvtxRangePop; startend:
// nvtxRangeStartA + nvtxRangeEnd; mark: two nvtxMarkA) on every thread at once, released together;
// between repetitions it sleeps P ms so gtrace's drain thread empties the rings (2N records must fit
// in a thread's ring, see GTRACE_THREAD_BUFFER_KB, or the run measures the drop path instead).
// Time per thread is that thread's CPU time (CLOCK_THREAD_CPUTIME_ID), so runs with more threads
// than cores still measure the per-call cost (a shared cache line written by all threads still
// shows: its misses are CPU time). Prints one line:
//   mode=M threads=T pairs=N reps=R median_ns_per_pair=X min_ns_per_pair=Y
// (median and min over repetitions x threads).
#include <nvtx3/nvToolsExt.h>
#include <pthread.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

namespace {

uint64_t ThreadCpuNs() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

enum class Mode { kPushPop, kStartEnd, kMark };

double RunPairs(Mode mode, long pairs) {
  uint64_t t0 = ThreadCpuNs();
  switch (mode) {
    case Mode::kPushPop:
      for (long i = 0; i < pairs; ++i) {
        nvtxRangePushA("bench-range");
        nvtxRangePop();
      }
      break;
    case Mode::kStartEnd:
      for (long i = 0; i < pairs; ++i) {
        nvtxRangeId_t id = nvtxRangeStartA("bench-range");
        nvtxRangeEnd(id);
      }
      break;
    case Mode::kMark:
      for (long i = 0; i < pairs; ++i) {
        nvtxMarkA("bench-mark");
        nvtxMarkA("bench-mark");
      }
      break;
  }
  return static_cast<double>(ThreadCpuNs() - t0) / static_cast<double>(pairs);
}

}  // namespace

int main(int argc, char** argv) {
  long pairs = 100000, reps = 21, pause_ms = 150, threads = 1;
  Mode mode = Mode::kPushPop;
  std::string mode_name = "pushpop";
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string f = argv[i];
    std::string s = argv[i + 1];
    long v = std::atol(argv[i + 1]);
    if (f == "--pairs-per-rep") pairs = v;
    else if (f == "--reps") reps = v;
    else if (f == "--pause-ms") pause_ms = v;
    else if (f == "--threads") threads = v < 1 ? 1 : v;
    else if (f == "--mode") {
      mode_name = s;
      if (s == "pushpop") mode = Mode::kPushPop;
      else if (s == "startend") mode = Mode::kStartEnd;
      else if (s == "mark") mode = Mode::kMark;
      else {
        std::fprintf(stderr, "nvtx_overhead: unknown mode %s\n", s.c_str());
        return 2;
      }
    }
  }
  nvtxRangePushA("warm-up");  // first call runs NVTX's (and gtrace's) initialisation
  nvtxRangePop();
  std::vector<double> ns;
  std::atomic<long> ready{0};
  std::atomic<long> go{-1};  // repetition the workers may start
  std::atomic<long> done{0};
  std::vector<std::vector<double>> per(threads);
  std::vector<std::thread> workers;
  for (long t = 0; t < threads; ++t) {
    workers.emplace_back([&, t] {
      RunPairs(mode, 100);  // this thread's first record (gtrace takes a ring) outside the timing
      ready.fetch_add(1);
      for (long r = 0; r < reps; ++r) {
        while (go.load(std::memory_order_acquire) < r) std::this_thread::yield();
        per[t].push_back(RunPairs(mode, pairs));
        done.fetch_add(1);
      }
    });
  }
  while (ready.load() < threads) std::this_thread::yield();
  for (long r = 0; r < reps; ++r) {
    go.store(r, std::memory_order_release);
    while (done.load() < (r + 1) * threads) std::this_thread::sleep_for(std::chrono::microseconds(200));
    std::this_thread::sleep_for(std::chrono::milliseconds(pause_ms));
  }
  for (auto& w : workers) w.join();
  for (auto& v : per) ns.insert(ns.end(), v.begin(), v.end());
  std::sort(ns.begin(), ns.end());
  std::printf("mode=%s threads=%ld pairs=%ld reps=%ld median_ns_per_pair=%.2f min_ns_per_pair=%.2f\n",
              mode_name.c_str(), threads, pairs, reps, ns[ns.size() / 2], ns.front());
  return 0;
}
