// A program built WITHOUT frame pointers (-O2 -fomit-frame-pointer, tests/sampling/CMakeLists.txt)
// that burns CPU in known functions, for --backtrace=dwarf (sampling.SamplingDwarf.*) and its
// benchmark: main -> chain -> a (70 % of the main thread's CPU time) / b (30 %). Every function of the
// chain is kept out of line and unclonable (noipa), and chain calls a and b in a loop (no tail call),
// so a correct unwinder finds main -> chain -> a|b; the kernel's frame-pointer walk cannot, since no
// function here keeps %rbp as a frame pointer.
//
//   nofp_burn [total_ms]
// chain alternates a for 7 ms and b for 3 ms of the thread's CPU time until total_ms (default 1000)
// are used. Prints "done <cpu_ms> loop <start_ns> <end_ns>" (CLOCK_MONOTONIC bounds of the loop).
#include <time.h>

#include <cstdio>
#include <cstdlib>

#include "burn_loop.h"  // same directory: these programs are built without the project include path

#if defined(__clang__)
#define GT_KEEP __attribute__((noinline))
#else
#define GT_KEEP __attribute__((noipa))
#endif

// Each spins until this thread's CPU clock advanced `ns` (burn_loop.h: the loop is expanded here,
// so it is built with this file's options, without frame pointers).
extern "C" GT_KEEP void a(long ns) {
  GT_BURN_FOR(ns, 1ul, 6364136223846793005ul, 1442695040888963407ul);
}

extern "C" GT_KEEP void b(long ns) {
  GT_BURN_FOR(ns, 2ul, 2862933555777941757ul, 3037000493ul);
}

extern "C" GT_KEEP long chain(long total_ms) {
  long rounds = 0;
  for (long done = 0; done < total_ms; done += 10) {
    a(7000000L);
    b(3000000L);
    ++rounds;
  }
  return rounds;  // used by main: the calls above are not in tail position
}

int main(int argc, char** argv) {
  long total_ms = argc > 1 ? atol(argv[1]) : 1000;
  WaitUntilSampled(1);  // burn_loop.h
  long start = ThreadCpuNs();
  long loop_start_ns = MonotonicNs();
  long rounds = chain(total_ms);
  long loop_end_ns = MonotonicNs();
  std::printf("done %ld loop %ld %ld rounds %ld\n", (ThreadCpuNs() - start) / 1000000L, loop_start_ns, loop_end_ns,
              rounds);
  return 0;
}
