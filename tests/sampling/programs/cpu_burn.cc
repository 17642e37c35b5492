// A program that burns CPU in known functions, for the CPU-sampling tests and benchmark
// (tests/sampling/, bench/cpu_sampling/). Built with frame pointers and without inlining, so the
// kernel's frame-pointer walk sees main -> burn_a / burn_b.
//
//   cpu_burn [total_ms] [worker_ms]
// The main thread alternates burn_a for 7 ms and burn_b for 3 ms of its own CPU time (70 % / 30 %)
// until it has used total_ms (default 1000) of CPU. With worker_ms > 0 it first starts a thread
// (named "burn-worker") that burns worker_ms of CPU time in worker_c — a thread created after the
// session started, which the sampler must pick up. Prints "done", the main loop's CPU ms and its
// CLOCK_MONOTONIC start and end.
//
// With CPU_BURN_WAIT_SAMPLED=1 in the environment (the sampling tests set it where sampling is
// expected to work) each thread first waits (sleeping, up to 60 s) until gtrace's drain thread has
// opened its perf event (one more "anon_inode:[perf_event]" descriptor in /proc/self/fd): the work
// starts on that event, not after a guess at how soon a loaded machine gets there, so the tests can
// count one sample per ms of the thread's CPU time.
#include <pthread.h>
#include <time.h>

#include <cstdio>
#include <cstdlib>

#include "burn_loop.h"  // same directory: these programs are built without the project include path

// Each burner spins until this thread's CPU clock advanced `ns` (burn_loop.h).
extern "C" __attribute__((noinline)) void burn_a(long ns) {
  GT_BURN_FOR(ns, 1ul, 6364136223846793005ul, 1442695040888963407ul);
}

extern "C" __attribute__((noinline)) void burn_b(long ns) {
  GT_BURN_FOR(ns, 2ul, 2862933555777941757ul, 3037000493ul);
}

extern "C" __attribute__((noinline)) void worker_c(long ns) {
  GT_BURN_FOR(ns, 3ul, 3935559000370003845ul, 2691343689449507681ul);
}

namespace {
void* Worker(void* arg) {
  pthread_setname_np(pthread_self(), "burn-worker");
  WaitUntilSampled(2);  // the main thread's event and this thread's
  worker_c(*static_cast<long*>(arg));
  return nullptr;
}
}  // namespace

int main(int argc, char** argv) {
  long total_ms = argc > 1 ? atol(argv[1]) : 1000;
  long worker_ms = argc > 2 ? atol(argv[2]) : 0;
  WaitUntilSampled(1);
  pthread_t worker{};
  long worker_ns = worker_ms * 1000000L;
  if (worker_ms > 0)
    pthread_create(&worker, nullptr, Worker, &worker_ns);
  long start = ThreadCpuNs();
  long loop_start_ns = MonotonicNs();
  for (long done = 0; done < total_ms; done += 10) {
    burn_a(7000000L);
    burn_b(3000000L);
  }
  long loop_end_ns = MonotonicNs();
  if (worker_ms > 0)
    pthread_join(worker, nullptr);
  // The main loop's CPU ms and its CLOCK_MONOTONIC bounds (the tests place the samples inside them).
  std::printf("done %ld loop %ld %ld\n", (ThreadCpuNs() - start) / 1000000L, loop_start_ns, loop_end_ns);
  return 0;
}
