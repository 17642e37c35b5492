// CPU cost of --cudabacktrace per CUDA API call, measured through the real CUPTI subscriber callback
// (gt::cupti::OnCallback, called directly with a CUpti_CallbackData as CUPTI would; no GPU needed):
//   off        the API is not in a selected class: the callback's early-out;
//   discarded  entry unwinds the stack, exit finds the call shorter than the threshold (nothing kept);
//   kept       entry unwinds, exit keeps the stack: one ring record of 40 + 8 x frames bytes;
//   raw        libunwind's unw_backtrace alone, at the same depth (the unwinder's share).
// Stack depth is set by recursion before the calls; every frame is unwound from .eh_frame (the
// benchmark is built without frame pointers, like most libraries). The unwinder's per-thread cache
// is warm after the first call, which is the steady state of an application calling the same APIs
// from the same places; the first call from a new place costs more (reported separately: "cold").
//
// Output: one line per (mode, depth): "mode=kept depth=16 frames=22 median_ns=812.3 p90_ns=..." —
// the median over repetitions of the mean over `calls` calls. bench/callstack/run.sh turns it into
// bench/results/<date>-callstack-cpu.md.
#include <cupti.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "collector/session.h"
#include "inject/callstack/backtrace_spec.h"
#include "inject/callstack/stack_capture.h"
#include "inject/callstack/unwinder.h"
#include "inject/cupti/cupti_callbacks.h"
#include "inject/cupti/cupti_tracer.h"

namespace {

using gt::callstack::kMaxCbid;

constexpr uint32_t kCbid = CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020;
constexpr uint32_t kOffCbid = CUPTI_RUNTIME_TRACE_CBID_cudaGetDevice_v3020;
constexpr int kRepetitions = 21;
constexpr int kCalls = 2000;

uint64_t Now() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<uint64_t>(t.tv_sec) * 1000000000ull + static_cast<uint64_t>(t.tv_nsec);
}

gt::callstack::Unwinder g_unwinder;
uint8_t g_runtime_class[kMaxCbid];
uint8_t g_driver_class[kMaxCbid];
gt::callstack::BacktraceSpec g_spec;
uint32_t g_correlation = 1;

void Install(uint64_t threshold_ns) {
  g_spec.threshold_ns[gt::callstack::kClassMemory] = threshold_ns;
  gt::callstack::InstallCapture(g_spec, g_unwinder.backtrace, g_runtime_class, g_driver_class, nullptr, nullptr, 0);
}

// One API call as CUPTI reports it: enter and exit callbacks.
inline void ApiCall(uint32_t cbid) {
  CUpti_CallbackData d{};
  d.correlationId = g_correlation++;
  int32_t result = 0;
  d.functionReturnValue = &result;
  d.callbackSite = CUPTI_API_ENTER;
  gt::cupti::OnCallback(nullptr, CUPTI_CB_DOMAIN_RUNTIME_API, cbid, &d);
  d.callbackSite = CUPTI_API_EXIT;
  gt::cupti::OnCallback(nullptr, CUPTI_CB_DOMAIN_RUNTIME_API, cbid, &d);
}

struct Result {
  double median_ns = 0, p90_ns = 0;
  int frames = 0;
  double cold_ns = 0;
};

// Measured at the bottom of a recursion `depth` deep.
__attribute__((noinline)) Result Measure(const std::string& mode, int depth) {
  if (depth > 0) {
    Result r = Measure(mode, depth - 1);
    asm volatile("" ::: "memory");  // no tail call: every level keeps its frame
    return r;
  }
  Result r;
  void* frames[gt::callstack::kCaptureFrames];
  r.frames = g_unwinder.backtrace(frames, gt::callstack::kCaptureFrames);
  uint64_t t0 = Now();
  if (mode == "raw") {
    g_unwinder.backtrace(frames, gt::callstack::kCaptureFrames);
  } else {
    ApiCall(mode == "off" ? kOffCbid : kCbid);
  }
  r.cold_ns = static_cast<double>(Now() - t0);
  std::vector<double> per_call;
  for (int rep = 0; rep < kRepetitions; ++rep) {
    gt::RequestFlush(/*wait=*/true);  // empty the ring (untimed): records are kept, not dropped
    uint64_t start = Now();
    for (int i = 0; i < kCalls; ++i) {
      if (mode == "raw") {
        g_unwinder.backtrace(frames, gt::callstack::kCaptureFrames);
        asm volatile("" ::: "memory");
      } else {
        ApiCall(mode == "off" ? kOffCbid : kCbid);
      }
    }
    per_call.push_back(static_cast<double>(Now() - start) / kCalls);
  }
  std::sort(per_call.begin(), per_call.end());
  r.median_ns = per_call[per_call.size() / 2];
  r.p90_ns = per_call[per_call.size() * 9 / 10];
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  setenv("GTRACE_OUTPUT", "/tmp/gtrace-unwind-bench-%p", 1);
  setenv("GTRACE_TRACE", "cuda", 1);
  setenv("GTRACE_THREAD_BUFFER_KB", "65536", 1);  // a repetition's records fit: nothing is dropped
  if (!gt::EnsureSession(gt::kSourceCuda)) {
    std::fprintf(stderr, "unwind_bench: no session\n");
    return 1;
  }
  std::string stream = gt::SessionStreamPath();
  std::string error;
  if (!gt::callstack::LoadUnwinder(&g_unwinder, &error)) {
    std::fprintf(stderr, "unwind_bench: %s\n", error.c_str());
    return 1;
  }
  g_spec.selected[gt::callstack::kClassMemory] = true;
  g_runtime_class[kCbid] = gt::callstack::kClassMemory;
  gt::cupti::g_tracer_state.store(static_cast<uint32_t>(gt::cupti::TracerState::kActive));
  std::vector<int> depths = {8, 16, 32, 56};
  if (argc > 1)
    depths = {std::atoi(argv[1])};
  std::printf("unwinder=%s repetitions=%d calls=%d\n", g_unwinder.path.c_str(), kRepetitions, kCalls);
  for (int depth : depths) {
    for (const char* mode : {"off", "raw", "discarded", "kept"}) {
      Install(std::string(mode) == "discarded" ? UINT64_MAX : 0);
      Result r = Measure(mode, depth);
      std::printf("mode=%s depth=%d frames=%d median_ns=%.1f p90_ns=%.1f cold_ns=%.0f\n", mode, depth, r.frames,
                  r.median_ns, r.p90_ns, r.cold_ns);
      std::fflush(stdout);
    }
  }
  gt::EndSession("exit");
  unlink(stream.c_str());
  return 0;
}
