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

#include "inject/callstack/python_frames.h"
#include "inject/sampling/python_sample_reader.h"

namespace {

constexpr int kRepetitions = 15;
constexpr int kCalls = 500;

// The thread's CPU time: on a shared machine a loop of a few ms is preempted, and wall time would
// count the time off the CPU.
uint64_t Now() {
  timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<uint64_t>(t.tv_sec) * 1000000000ull + static_cast<uint64_t>(t.tv_nsec);
}

gt::callstack::PythonRuntime g_python;
gt::sampling::PySampleReader* g_reader;
uint8_t g_out[4096];
volatile sig_atomic_t g_handled = 0;

void EmptyHandler(int, siginfo_t*, void*) {
  g_handled = g_handled + 1;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
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
    uint64_t t0 = Now();
    for (int i = 0; i < kCalls; ++i)
      pthread_kill(pthread_self(), SIGPROF);
    uint64_t t1 = Now();
    uint64_t r0 = g_reader->reads();
    for (int i = 0; i < kCalls; ++i)
      g_reader->Read(g_python, pid, tstate, g_out, sizeof(g_out), &bytes, &truncated);
    uint64_t t2 = Now();
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
    uint64_t t3 = Now();
    for (int i = 0; i < kCalls; ++i)
      gt::callstack::ReadPythonFrames(g_python, g_out, sizeof(g_out), &bytes, &truncated);
    uint64_t t4 = Now();
    signal_ns.push_back(static_cast<double>(t1 - t0) / kCalls);
    warm_ns.push_back(static_cast<double>(t2 - t1) / kCalls);
    cold_ns.push_back(static_cast<double>(cold_total) / (kCalls / 10));
    direct_ns.push_back(static_cast<double>(t4 - t3) / kCalls);
  }
  std::printf(
      "depth=%d python_frames=%d signal_ns=%.0f warm_ns=%.0f cold_ns=%.0f direct_ns=%.0f reads=%.1f cold_reads=%.0f "
      "cold_frames=%d\n",
      depth, frames, Median(signal_ns), Median(warm_ns), Median(cold_ns), Median(direct_ns), reads, cold_reads,
      cold_frames);
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
  int rc = PyRun_SimpleString(
      "import ctypes\n"
      "measure = ctypes.PyDLL(None).gt_pysample_bench_measure\n"
      "measure.argtypes = [ctypes.c_int]\n"
      "def down(n, depth):\n"
      "    if n == 0:\n"
      "        measure(depth)\n"
      "    else:\n"
      "        down(n - 1, depth)\n"
      "for depth in (4, 16, 40):\n"
      "    down(depth, depth)\n");
  Py_Finalize();
  return rc == 0 ? 0 : 1;
}
