// The CPU burn loop shared by the sampling test programs cpu_burn.cc (built with frame pointers)
// and nofp_burn.cc (built without them, for --backtrace=dwarf). Each program includes it once and
// keeps its own compile options: the loop compiles into each burner as if written there.
//
// Single thread per burner; the clock read is per thread (CLOCK_THREAD_CPUTIME_ID).
#pragma once

#include <dirent.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

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

// With CPU_BURN_WAIT_SAMPLED=1 (the sampling tests set it where sampling is expected to work): sleeps
// (up to 60 s) until gtrace's drain thread has opened perf events for `events` threads of this process
// (as many "anon_inode:[perf_event]" descriptors in /proc/self/fd), so the work starts on that event,
// not after a guess at how soon a loaded machine gets there, and the tests can count one sample per ms
// of the thread's CPU time.
int PerfEventFds() {
  DIR* d = opendir("/proc/self/fd");
  if (d == nullptr)
    return 0;
  int n = 0;
  char path[300], target[64];  // d_name is at most 255 bytes
  while (dirent* e = readdir(d)) {
    std::snprintf(path, sizeof path, "/proc/self/fd/%s", e->d_name);
    ssize_t len = readlink(path, target, sizeof target - 1);
    if (len > 0) {
      target[len] = '\0';
      n += std::strcmp(target, "anon_inode:[perf_event]") == 0;
    }
  }
  closedir(d);
  return n;
}

void WaitUntilSampled(int events) {
  const char* wait = std::getenv("CPU_BURN_WAIT_SAMPLED");
  if (wait == nullptr || std::strcmp(wait, "1") != 0)
    return;
  for (int ms = 0; ms < 60000 && PerfEventFds() < events; ++ms)
    usleep(1000);
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
