// The timing loop of the benchmarks that embed CPython and measure at the bottom of a Python
// recursion (bench/callstack/pyframes_bench.cc, bench/cpu_sampling/pysample_bench.cc): the mean of
// a loop of calls on a chosen clock, the median over repetitions, and the Python recursion that
// calls the benchmark's C hook at each depth. Header-only; benchmark code, the main thread (Python
// calls the hook on the thread that runs it).
#pragma once

#include <Python.h>
#include <time.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace gt::bench {

inline uint64_t ClockNs(clockid_t clock) {
  timespec t;
  clock_gettime(clock, &t);
  return static_cast<uint64_t>(t.tv_sec) * 1000000000ull + static_cast<uint64_t>(t.tv_nsec);
}
inline uint64_t MonotonicNs() {
  return ClockNs(CLOCK_MONOTONIC);
}
// The thread's CPU time: on a shared machine a loop of a few ms is preempted, and wall time would
// count the time off the CPU.
inline uint64_t ThreadCpuNs() {
  return ClockNs(CLOCK_THREAD_CPUTIME_ID);
}

// Mean ns per call of `calls` calls of `body`, timed with `now` around the whole loop (one clock
// read before and one after: none inside it).
template <typename Body>
double MeanNsOfCalls(uint64_t (*now)(), int calls, Body&& body) {
  const uint64_t start = now();
  for (int i = 0; i < calls; ++i)
    body();
  return static_cast<double>(now() - start) / calls;
}

inline double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Runs, in the embedded interpreter, a recursion to each depth of 4, 16 and 40 Python frames that
// calls `hook(depth)` at the bottom: a C function `void hook(int)` exported from the executable
// (ENABLE_EXPORTS; ctypes.PyDLL(None) finds it). Returns PyRun_SimpleString's result (0: ran).
inline int RunAtPythonDepths(const std::string& hook) {
  const std::string script =
      "import ctypes\n"
      "measure = ctypes.PyDLL(None)." +
      hook +
      "\n"
      "measure.argtypes = [ctypes.c_int]\n"
      "def down(n, depth):\n"
      "    if n == 0:\n"
      "        measure(depth)\n"
      "    else:\n"
      "        down(n - 1, depth)\n"
      "for depth in (4, 16, 40):\n"
      "    down(depth, depth)\n";
  return PyRun_SimpleString(script.c_str());
}

}  // namespace gt::bench
