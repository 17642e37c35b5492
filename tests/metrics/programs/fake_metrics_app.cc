// fake_metrics_app: a "CUDA application" for the GPU-metrics tests. It drives the fake CUPTI (a test
// double, tests/fakes/): PM samples and kernels are placed on one timeline (the CUPTI clock), so the
// exported GPU_METRICS rows and the gpu_metrics_sum report can be asserted exactly.
//
//   fake_metrics_app <scenario>
//
// Scenarios:
//   timeline   device 0: waits until gtrace has PM sampling running, then a discarded warm-up sample
//              and 20 samples of 100 us from T: 10 "copy" samples (DRAM read 1.5e12 B/s, write
//              1.4e12 B/s, SMs active 20 %, GPC clock 1.98 GHz), 10 "gemm" samples (tensor 80 %,
//              SMs active 95 %, SM issue 40.4 %, DRAM read 2e11 B/s, GPC clock 1.755 GHz); kernels
//              copy_kernel [T+100us, T+900us] and gemm_kernel [T+1.1ms, T+1.9ms]; one overflow.
//   devices    FAKE_CUDA_DEVICE_COUNT devices, a context on each, waits 300 ms, prints
//              "running=<device>,<device>" (the devices gtrace samples) and exits.
//   hold       a context on device 0, prints "running=..." after 300 ms, sleeps 1.5 s, exits.
//   nvtx       range profiler: NVTX "step" x3 (kernel inside each), "other" x1, nested "step"
//              inside a "step" once.
//   kernels    range profiler, kernel mode: 3 kernels, a 250 ms pause, 2 kernels.
//   plain      no GPU metrics expected: an NVTX range and one kernel (for the fail-soft checks).
//   replay     with FAKE_CUPTI_METRICS_REPLAY (the fake's replay of a GPU-metrics raw capture): a context
//              on device 0; when the capture has PM images, waits until sampling runs and every
//              recorded image was delivered; when it has range passes, pushes/pops the recorded NVTX
//              range (a kernel inside each) until every recorded pass was decoded.
#include <nvtx3/nvToolsExt.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

#include <cupti.h>

#include "tests/fakes/fake_cuda.h"

namespace {

constexpr uint64_t kUs = 1000;

void Kernel(uint32_t ctx, const char* name, uint64_t start_ns, uint64_t duration_ns) {
  uint32_t c = fake_ApiEnter(0, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, nullptr);
  fake_kernel k{};
  k.device_id = 0;
  k.context_id = ctx;
  k.stream_id = 7;
  k.correlation_id = c;
  k.name = name;
  k.grid[0] = k.grid[1] = k.grid[2] = 1;
  k.block[0] = k.block[1] = k.block[2] = 32;
  k.gap_ns = 1 * kUs;
  k.duration_ns = duration_ns;
  k.start_ns = start_ns;
  fake_Kernel(&k);
  fake_ApiExit(c, 2 * kUs, 0);
}

bool WaitRunning(uint32_t device) {
  for (int i = 0; i < 1000; ++i) {
    if (fake_PmRunning(device))
      return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

int Timeline() {
  fake_cuInit();
  uint32_t ctx = fake_ContextCreate(0);
  if (!WaitRunning(0)) {
    std::fprintf(stderr, "fake_metrics_app: PM sampling never started\n");
    return 3;
  }
  const uint64_t t = fake_CuptiNow() + 1000 * kUs;
  fake_PmSample(0, t - 100 * kUs, t, "sm__cycles_active.avg.pct_of_peak_sustained_elapsed=99");  // discarded
  const char* copy =
      "dram__bytes_read.sum.per_second=1.5e12;dram__bytes_write.sum.per_second=1.4e12;"
      "sm__cycles_active.avg.pct_of_peak_sustained_elapsed=20;gpc__cycles_elapsed.avg.per_second=1.98e9;"
      "gr__cycles_active.sum.pct_of_peak_sustained_elapsed=100";
  const char* gemm =
      "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed=80;"
      "sm__cycles_active.avg.pct_of_peak_sustained_elapsed=95;smsp__issue_active.avg.pct_of_peak_sustained_elapsed="
      "40.4;dram__bytes_read.sum.per_second=2e11;gpc__cycles_elapsed.avg.per_second=1.755e9;"
      "gr__cycles_active.sum.pct_of_peak_sustained_elapsed=100";
  for (int i = 0; i < 20; ++i) {
    if (i == 12)
      fake_PmOverflowNext(0);
    fake_PmSample(0, t + i * 100 * kUs, t + (i + 1) * 100 * kUs, i < 10 ? copy : gemm);
  }
  Kernel(ctx, "copy_kernel", t + 100 * kUs, 800 * kUs);
  Kernel(ctx, "gemm_kernel", t + 1100 * kUs, 800 * kUs);
  // Let the metrics thread decode while the process still runs (the rest comes at exit).
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  return 0;
}

void PrintRunning(uint32_t devices) {
  std::string running;
  for (uint32_t d = 0; d < devices; ++d) {
    if (fake_PmRunning(d))
      running += (running.empty() ? "" : ",") + std::to_string(d);
  }
  std::printf("running=%s\n", running.c_str());
  std::fflush(stdout);
}

int Devices() {
  const char* n = getenv("FAKE_CUDA_DEVICE_COUNT");
  uint32_t count = n != nullptr ? static_cast<uint32_t>(atoi(n)) : 1;
  fake_cuInit();
  for (uint32_t d = 0; d < count; ++d)
    fake_ContextCreate(d);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  PrintRunning(count);
  return 0;
}

int Hold() {
  fake_cuInit();
  fake_ContextCreate(0);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  PrintRunning(1);
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  return 0;
}

// window: an NVTX range "work" of 150 ms, opened once the metrics thread is set up (the capture
// window of 30-metrics' raw capture).
int Window() {
  fake_cuInit();
  uint32_t ctx = fake_ContextCreate(0);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // the metrics thread sets the device up
  nvtxRangePushA("work");
  Kernel(ctx, "window_kernel", 0, 10 * kUs);
  if (!WaitRunning(0)) {
    std::fprintf(stderr, "fake_metrics_app: PM sampling never started in the window\n");
    return 3;
  }
  const uint64_t t = fake_CuptiNow();
  for (int i = 0; i < 5; ++i)  // the first one is the warm-up sample gtrace discards
    fake_PmSample(0, t + i * 100 * kUs, t + (i + 1) * 100 * kUs, "sm__cycles_active.avg.pct_of_peak_sustained_elapsed=50");
  // Two whose end time does not advance (what the real CUPTI did on an H200): dropped, counted.
  for (int i = 0; i < 2; ++i)
    fake_PmSample(0, t + 4 * 100 * kUs, t + 5 * 100 * kUs, "sm__cycles_active.avg.pct_of_peak_sustained_elapsed=77");
  std::this_thread::sleep_for(std::chrono::milliseconds(150));
  nvtxRangePop();
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  return 0;
}

int Nvtx() {
  fake_cuInit();
  uint32_t ctx = fake_ContextCreate(0);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // the metrics thread prepares the chip
  for (int i = 0; i < 3; ++i) {
    std::string spec = "gpu__time_duration.sum=" + std::to_string(1000 * (i + 1)) +
                       ";dram__bytes_read.sum=" + std::to_string(4096 * (i + 1));
    fake_RangeSetValues(spec.c_str());
    nvtxRangePushA("step");
    if (i == 1) {
      nvtxRangePushA("step");  // nested: not profiled separately
      nvtxRangePop();
    }
    Kernel(ctx, "k", 0, 10 * kUs);
    nvtxRangePop();
  }
  nvtxRangePushA("other");
  Kernel(ctx, "k", 0, 10 * kUs);
  nvtxRangePop();
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  return 0;
}

int Kernels() {
  fake_cuInit();
  uint32_t ctx = fake_ContextCreate(0);
  fake_RangeSetValues("gpu__time_duration.sum=100;sm__inst_executed.sum=5000");
  // Wait until the profiler is on the primary context (the metrics thread enables it).
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  const char* names[] = {"ka", "kb", "kc", "kd", "ke"};
  for (int i = 0; i < 3; ++i) {
    Kernel(ctx, names[i], 0, 10 * kUs);
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(250));
  for (int i = 3; i < 5; ++i) {
    Kernel(ctx, names[i], 0, 10 * kUs);
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  return 0;
}

int Plain() {
  fake_cuInit();
  uint32_t ctx = fake_ContextCreate(0);
  nvtxRangePushA("work");
  Kernel(ctx, "plain_kernel", 0, 10 * kUs);
  nvtxRangePop();
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  return 0;
}

int Replay() {
  fake_cuInit();
  uint32_t ctx = fake_ContextCreate(0);
  if (fake_MetricsReplayPmLeft() > 0) {
    if (!WaitRunning(0)) {
      std::fprintf(stderr, "fake_metrics_app: PM sampling never started\n");
      return 3;
    }
    for (int i = 0; i < 1000 && fake_MetricsReplayPmLeft() > 0; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    if (fake_MetricsReplayPmLeft() > 0) {
      std::fprintf(stderr, "fake_metrics_app: %u recorded PM images never decoded\n", fake_MetricsReplayPmLeft());
      return 3;
    }
  }
  char name[64] = {};
  uint32_t passes = fake_MetricsReplayRangePasses(name, sizeof(name));
  if (passes > 0) {
    // The metrics thread selects the chip's metrics first (with the real host API: hundreds of
    // milliseconds, more on a loaded machine) and ignores the ranges pushed before; push the
    // recorded range until every recorded pass was decoded, for at most 30 s.
    for (int i = 0; i < 3000 && fake_MetricsReplayRangeLeft() > 0; ++i) {
      nvtxRangePushA(name);
      Kernel(ctx, "k", 0, 10 * kUs);
      nvtxRangePop();
      if (fake_MetricsReplayRangeLeft() > 0)
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    if (fake_MetricsReplayRangeLeft() > 0) {
      std::fprintf(stderr, "fake_metrics_app: %u of %u recorded range passes never decoded\n",
                   fake_MetricsReplayRangeLeft(), passes);
      return 3;
    }
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::string scenario = argc > 1 ? argv[1] : "";
  if (scenario == "timeline")
    return Timeline();
  if (scenario == "devices")
    return Devices();
  if (scenario == "hold")
    return Hold();
  if (scenario == "window")
    return Window();
  if (scenario == "nvtx")
    return Nvtx();
  if (scenario == "kernels")
    return Kernels();
  if (scenario == "plain")
    return Plain();
  if (scenario == "replay")
    return Replay();
  std::fprintf(stderr, "usage: fake_metrics_app timeline|devices|hold|nvtx|kernels|plain|replay\n");
  return 2;
}
