// CPU cost of --python-backtrace=cuda per kept CUDA API stack, measured through the real CUPTI
// subscriber callback (gt::cupti::OnCallback called directly, as in unwind_bench.cc) from inside an
// embedded CPython, at the bottom of a Python recursion of the given depth:
//   native   enter + exit of one cudaMemcpy whose stack is kept, native frames only (the floor);
//   python   the same with the calling thread's Python frames read and added to the record;
//   read     ReadPythonFrames alone (the walk: frames, names, line tables), no API call.
// native and python alternate repetition by repetition in the same process and the same stack, so
// the difference is the Python frames' cost. Python runs while the GIL is held here; the walk does
// not use the GIL, so holding it or not changes nothing in what is measured.
//
// Output: one line per (mode, depth): "mode=python depth=16 python_frames=18 median_ns=..." — the
// median over repetitions of the mean over `calls` calls. bench/callstack/run_pyframes.sh writes
// bench/results/<date>-pyframes.md from it.
#include <Python.h>
#include <cupti.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "bench/common/python_depth_bench.h"
#include "collector/session.h"
#include "inject/callstack/backtrace_spec.h"
#include "inject/callstack/python_frames.h"
#include "inject/callstack/stack_capture.h"
#include "inject/callstack/unwinder.h"
#include "inject/cupti/cupti_callbacks.h"
#include "inject/cupti/cupti_tracer.h"

namespace {

using gt::callstack::kMaxCbid;

constexpr uint32_t kCbid = CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020;
constexpr int kRepetitions = 21;
constexpr int kCalls = 2000;

gt::callstack::Unwinder g_unwinder;
gt::callstack::PythonRuntime g_python;
uint8_t g_runtime_class[kMaxCbid];
uint8_t g_driver_class[kMaxCbid];
gt::callstack::BacktraceSpec g_spec;
uint32_t g_correlation = 1;
uint8_t g_scratch[gt::callstack::kPythonScratchBytes];

void Install(bool python) {
  g_spec.threshold_ns[gt::callstack::kClassMemory] = 0;  // every call is kept
  gt::callstack::InstallCapture(g_spec, g_unwinder.backtrace, g_runtime_class, g_driver_class, nullptr, nullptr, 0,
                                python ? &g_python : nullptr);
}

inline void ApiCall() {
  CUpti_CallbackData d{};
  d.correlationId = g_correlation++;
  int32_t result = 0;
  d.functionReturnValue = &result;
  d.callbackSite = CUPTI_API_ENTER;
  gt::cupti::OnCallback(nullptr, CUPTI_CB_DOMAIN_RUNTIME_API, kCbid, &d);
  d.callbackSite = CUPTI_API_EXIT;
  gt::cupti::OnCallback(nullptr, CUPTI_CB_DOMAIN_RUNTIME_API, kCbid, &d);
}

double MeanOfCalls(int mode) {
  return gt::bench::MeanNsOfCalls(gt::bench::MonotonicNs, kCalls, [mode] {
    if (mode == 2) {
      size_t bytes = 0;
      bool truncated = false;
      gt::callstack::ReadPythonFrames(g_python, g_scratch, sizeof(g_scratch), &bytes, &truncated);
      asm volatile("" ::: "memory");
    } else {
      ApiCall();
    }
  });
}

}  // namespace

// Called from the embedded Python at the bottom of its recursion (ctypes.PyDLL(None)).
extern "C" __attribute__((visibility("default"))) void gt_pyframes_bench_measure(int depth) {
  size_t bytes = 0;
  bool truncated = false;
  int frames = gt::callstack::ReadPythonFrames(g_python, g_scratch, sizeof(g_scratch), &bytes, &truncated);
  std::vector<double> native, python, read;
  for (int rep = 0; rep < kRepetitions; ++rep) {  // alternating: native, python, read
    gt::RequestFlush(/*wait=*/true);              // empty the ring (untimed): records are kept, not dropped
    Install(false);
    native.push_back(MeanOfCalls(0));
    gt::RequestFlush(/*wait=*/true);
    Install(true);
    python.push_back(MeanOfCalls(1));
    read.push_back(MeanOfCalls(2));
  }
  double n = gt::bench::Median(native), p = gt::bench::Median(python), r = gt::bench::Median(read);
  std::printf("depth=%d python_frames=%d python_bytes=%zu native_ns=%.1f python_ns=%.1f read_ns=%.1f ratio=%.2f\n",
              depth, frames, bytes, n, p, r, p / n);
  std::fflush(stdout);
}

int main() {
  setenv("GTRACE_OUTPUT", "/tmp/gtrace-pyframes-bench-%p", 1);
  setenv("GTRACE_TRACE", "cuda", 1);
  setenv("GTRACE_THREAD_BUFFER_KB", "65536", 1);  // a repetition's records fit: nothing is dropped
  if (!gt::EnsureSession(gt::kSourceCuda)) {
    std::fprintf(stderr, "pyframes_bench: no session\n");
    return 1;
  }
  std::string stream = gt::SessionStreamPath();
  std::string error;
  if (!gt::callstack::LoadUnwinder(&g_unwinder, &error)) {
    std::fprintf(stderr, "pyframes_bench: %s\n", error.c_str());
    return 1;
  }
  Py_Initialize();
  if (!gt::callstack::FindPython(&g_python, &error)) {
    std::fprintf(stderr, "pyframes_bench: %s\n", error.c_str());
    return 1;
  }
  g_spec.selected[gt::callstack::kClassMemory] = true;
  g_runtime_class[kCbid] = gt::callstack::kClassMemory;
  gt::cupti::g_tracer_state.store(static_cast<uint32_t>(gt::cupti::TracerState::kActive));
  std::printf("python=%d.%d unwinder=%s repetitions=%d calls=%d\n", g_python.major, g_python.minor,
              g_unwinder.path.c_str(), kRepetitions, kCalls);
  int rc = gt::bench::RunAtPythonDepths("gt_pyframes_bench_measure");
  Py_Finalize();
  gt::EndSession("exit");
  unlink(stream.c_str());
  return rc == 0 ? 0 : 1;
}
