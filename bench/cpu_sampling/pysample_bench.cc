// The parts of --python-sampling's cost per sample, measured in one process embedding the local
// CPython (bench/cpu_sampling/run_python.sh prints them beside the end-to-end figure):
//   signal_ns      a SIGPROF sent to this thread and handled by an empty SA_SIGINFO handler (the
//                  delivery and sigreturn every sample pays; the kernel raises ours from the perf
//                  event instead of tgkill, which this includes)
//   warm_ns        PySampleReader::Read at this Python depth with its code-object cache warm (the
//                  steady state: every frame's code object seen before, lines cached)
//   cold_ns        the same with an empty cache (first samples of new code)
//   direct_ns      callstack::ReadPythonFrames, the CUDA backtraces' direct reader (for comparison:
//                  what the frames cost without fault-free reads)
//   reads          process_vm_readv calls per warm read (cold_reads: per cold one)
// Medians over repetitions of the mean of kCalls calls (thread CPU time); modes alternate inside each
// repetition. cold_ns includes one clock read per call (~0.3 us: it is timed call by call).
// Threads: all on the main thread (Python calls back into gt_pysample_bench_measure at each depth).
#include <Python.h>
#include <pthread.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <new>
#include <string>
#include <vector>

#include "bench/common/python_depth_bench.h"
#include "inject/callstack/python_frames.h"
#include "inject/sampling/python_sample_reader.h"

namespace {

constexpr int kRepetitions = 15;
constexpr int kCalls = 500;

// Thread CPU time (bench/common/python_depth_bench.h says why).
uint64_t (*const Now)() = gt::bench::ThreadCpuNs;

gt::callstack::PythonRuntime g_python;
gt::sampling::PySampleReader* g_reader;
uint8_t g_out[4096];
volatile sig_atomic_t g_handled = 0;

void EmptyHandler(int, siginfo_t*, void*) {
  g_handled = g_handled + 1;
}

}  // namespace

extern "C" __attribute__((visibility("default"))) void gt_pysample_bench_measure(int depth) {
  uintptr_t tstate = reinterpret_cast<uintptr_t>(g_python.this_thread_state());
  pid_t pid = getpid();
  size_t bytes = 0;
  bool truncated = false;
  int frames = g_reader->Read(g_python, pid, tstate, g_out, sizeof(g_out), &bytes, &truncated);
  std::vector<double> signal_ns, warm_ns, cold_ns, direct_ns;
  double reads = 0, cold_reads = 0;
  int cold_frames = 0;
  for (int rep = 0; rep < kRepetitions; ++rep) {
    signal_ns.push_back(gt::bench::MeanNsOfCalls(Now, kCalls, [] { pthread_kill(pthread_self(), SIGPROF); }));
    uint64_t r0 = g_reader->reads();
    warm_ns.push_back(gt::bench::MeanNsOfCalls(
        Now, kCalls, [&] { g_reader->Read(g_python, pid, tstate, g_out, sizeof(g_out), &bytes, &truncated); }));
    reads = static_cast<double>(g_reader->reads() - r0) / kCalls;
    uint64_t cold_total = 0;
    for (int i = 0; i < kCalls / 10; ++i) {
      g_reader->~PySampleReader();
      new (g_reader) gt::sampling::PySampleReader();  // an empty cache (untimed)
      uint64_t c0 = Now();
      cold_frames = g_reader->Read(g_python, pid, tstate, g_out, sizeof(g_out), &bytes, &truncated);
      cold_total += Now() - c0;
      cold_reads = static_cast<double>(g_reader->reads());
    }
    cold_ns.push_back(static_cast<double>(cold_total) / (kCalls / 10));
    direct_ns.push_back(gt::bench::MeanNsOfCalls(
        Now, kCalls, [&] { gt::callstack::ReadPythonFrames(g_python, g_out, sizeof(g_out), &bytes, &truncated); }));
  }
  std::printf(
      "depth=%d python_frames=%d signal_ns=%.0f warm_ns=%.0f cold_ns=%.0f direct_ns=%.0f reads=%.1f cold_reads=%.0f "
      "cold_frames=%d\n",
      depth, frames, gt::bench::Median(signal_ns), gt::bench::Median(warm_ns), gt::bench::Median(cold_ns),
      gt::bench::Median(direct_ns), reads, cold_reads, cold_frames);
  std::fflush(stdout);
}

int main() {
  struct sigaction sa = {};
  sa.sa_sigaction = &EmptyHandler;
  sa.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGPROF, &sa, nullptr);
  Py_Initialize();
  std::string error;
  if (!gt::callstack::FindPython(&g_python, &error)) {
    std::fprintf(stderr, "pysample_bench: %s\n", error.c_str());
    return 1;
  }
  g_reader = new gt::sampling::PySampleReader();
  std::printf("python=%d.%d repetitions=%d calls=%d\n", g_python.major, g_python.minor, kRepetitions, kCalls);
  int rc = gt::bench::RunAtPythonDepths("gt_pysample_bench_measure");
  Py_Finalize();
  return rc == 0 ? 0 : 1;
}
