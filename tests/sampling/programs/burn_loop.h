// The CPU burn loop shared by the sampling test programs cpu_burn.cc (built with frame pointers)
// and nofp_burn.cc (built without them, for --backtrace=dwarf). Each program includes it once and
// keeps its own compile options: the loop compiles into each burner as if written there.
//
// Single thread per burner; the clock read is per thread (CLOCK_THREAD_CPUTIME_ID).
#pragma once

#include <time.h>

// An unnamed namespace on purpose: each program is one translation unit, and its helpers keep the
// names the samples were symbolized with before ("(anonymous namespace)::ThreadCpuNs()").
namespace {

volatile unsigned long g_sink = 0;

long ThreadCpuNs() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec * 1000000000L + ts.tv_nsec;
}

long MonotonicNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1000000000L + ts.tv_nsec;
}

}  // namespace

// The body of a burner: spins until this thread's CPU clock advanced `ns`, stepping a 64-bit linear
// congruential generator (x = x * mul + add from `seed`; each burner its own constants). The clock is
// read every 20000 steps (~20 us of work), so nearly every sample lands in the burner's own loop, not
// in clock_gettime. A macro, not an inline function, on purpose: the symbolizer reports an inlined
// function's instructions at its header's lines, and the tests match the leaf's file
// ('a at %nofp_burn.cc:%', 'burn_a at %cpu_burn.cc:%'); expanded in place, the loop keeps the
// burner's own file.
#define GT_BURN_FOR(ns, seed, mul, add)         \
  do {                                          \
    long gt_until = ThreadCpuNs() + (ns);       \
    unsigned long gt_x = (seed);                \
    while (ThreadCpuNs() < gt_until) {          \
      for (int gt_i = 0; gt_i < 20000; ++gt_i)  \
        gt_x = gt_x * (mul) + (add);            \
      g_sink = gt_x;                            \
    }                                           \
  } while (0)
