// launch_overhead: the cost of CUDA tracing per kernel launch (GPU machine, run by hand through
// run.sh). A loop of empty-kernel launches, timed per repetition:
//
//   launch_overhead --mode none|floor|window [--launches N] [--reps R] [--warmup W]
//
//   none    no profiler in this process (run it also under LD_PRELOAD=libgtrace.so: "gtrace")
//   floor   a bare CUPTI subscriber in this process, enabling the same activity kinds gtrace enables
//           with a consumer that only counts kernel records (the least any CUPTI tracer can cost)
//   window  cudaProfilerStart/Stop around the middle 10 % of each repetition's launches (run under
//           gtrace --capture-range=cudaProfilerApi --capture-range-end=repeat: the cost outside
//           the window must be the "none" cost)
//
// Output, one line per repetition then a summary (parsed by run.sh):
//   rep <i> host_ns_per_launch <x> total_ns_per_launch <y> [outside_ns_per_launch <z> inside_ns_per_launch <w>]
//   kernels_recorded <n>   (floor: kernel records the subscriber received; must equal R x (W + N))
// host = the launch loop alone; total = until cudaDeviceSynchronize returns (GPU-side cost included).
#include <cuda_profiler_api.h>
#include <cuda_runtime.h>
#include <cupti.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#define CHECK(call)                                                                               \
  do {                                                                                            \
    cudaError_t e_ = (call);                                                                      \
    if (e_ != cudaSuccess) {                                                                      \
      std::fprintf(stderr, "launch_overhead: %s: %s\n", #call, cudaGetErrorString(e_));           \
      std::exit(3);                                                                               \
    }                                                                                             \
  } while (0)
#define CUPTI_CHECK(call)                                                                         \
  do {                                                                                            \
    CUptiResult r_ = (call);                                                                      \
    if (r_ != CUPTI_SUCCESS) {                                                                    \
      const char* s_ = "?";                                                                       \
      cuptiGetResultString(r_, &s_);                                                              \
      std::fprintf(stderr, "launch_overhead: %s: %s\n", #call, s_);                              \
      std::exit(4);                                                                               \
    }                                                                                             \
  } while (0)

__global__ void empty_kernel() {}

namespace {

uint64_t NowNs() {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count());
}

// --- the floor: a bare CUPTI subscriber ---------------------------------------------------------
constexpr size_t kBufferBytes = 4u << 20;  // gtrace's default buffer size
std::atomic<uint64_t> g_kernel_records{0};
std::atomic<bool> g_stop_flusher{false};

void CUPTIAPI NoopCallback(void*, CUpti_CallbackDomain, CUpti_CallbackId, const void*) {}
void CUPTIAPI BufferRequested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, kBufferBytes));
  *size = kBufferBytes;
  *max_records = 0;
}
void CUPTIAPI BufferCompleted(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid) {
  CUpti_Activity* record = nullptr;
  uint64_t kernels = 0;
  while (cuptiActivityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS) {
    if (record->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) ++kernels;
  }
  g_kernel_records.fetch_add(kernels);
  std::free(buffer);
}

std::thread StartFloor() {
  CUpti_SubscriberHandle subscriber;
  CUPTI_CHECK(cuptiSubscribe(&subscriber, &NoopCallback, nullptr));
  CUPTI_CHECK(cuptiSetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM));
  CUPTI_CHECK(cuptiActivityRegisterCallbacks(&BufferRequested, &BufferCompleted));
  // The kinds gtrace enables (inject/cupti/cupti_tracer.cc), graph-level graph tracing.
  for (CUpti_ActivityKind k :
       {CUPTI_ACTIVITY_KIND_DEVICE, CUPTI_ACTIVITY_KIND_CONTEXT, CUPTI_ACTIVITY_KIND_STREAM,
        CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMCPY2,
        CUPTI_ACTIVITY_KIND_MEMSET, CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_ACTIVITY_KIND_DRIVER,
        CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, CUPTI_ACTIVITY_KIND_CUDA_EVENT, CUPTI_ACTIVITY_KIND_OVERHEAD,
        CUPTI_ACTIVITY_KIND_GRAPH_TRACE}) {
    CUPTI_CHECK(cuptiActivityEnable(k));
  }
  // Flushes like gtrace's drain thread: every 500 ms.
  return std::thread([] {
    while (!g_stop_flusher.load()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
      cuptiActivityFlushAll(0);
    }
  });
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  std::string mode = "none";
  long launches = 200000, reps = 5, warmup = 1000;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--mode" && i + 1 < argc) {
      mode = argv[++i];
    } else if (a == "--launches" && i + 1 < argc) {
      launches = std::atol(argv[++i]);
    } else if (a == "--reps" && i + 1 < argc) {
      reps = std::atol(argv[++i]);
    } else if (a == "--warmup" && i + 1 < argc) {
      warmup = std::atol(argv[++i]);
    } else {
      std::fprintf(stderr, "usage: launch_overhead --mode none|floor|window [--launches N] [--reps R] [--warmup W]\n");
      return 2;
    }
  }
  if ((mode != "none" && mode != "floor" && mode != "window") || launches < 1000 || reps < 1) {
    std::fprintf(stderr, "launch_overhead: bad arguments\n");
    return 2;
  }
  std::thread flusher;
  if (mode == "floor") flusher = StartFloor();
  CHECK(cudaFree(nullptr));  // initialize CUDA (and, under gtrace, InitializeInjection)
  const long window_begin = launches * 45 / 100, window_end = launches * 55 / 100;
  std::vector<double> host, total, outside, inside;
  for (long r = 0; r < reps; ++r) {
    for (long i = 0; i < warmup; ++i) empty_kernel<<<1, 1>>>();
    CHECK(cudaDeviceSynchronize());
    uint64_t t0 = NowNs(), in_ns = 0;
    for (long i = 0; i < launches; ++i) {
      if (mode == "window" && i == window_begin) {
        CHECK(cudaProfilerStart());
        in_ns = NowNs();
      }
      empty_kernel<<<1, 1>>>();
      if (mode == "window" && i == window_end - 1) {
        CHECK(cudaProfilerStop());
        in_ns = NowNs() - in_ns;
      }
    }
    uint64_t t1 = NowNs();
    CHECK(cudaDeviceSynchronize());
    uint64_t t2 = NowNs();
    CHECK(cudaGetLastError());
    host.push_back(double(t1 - t0) / launches);
    total.push_back(double(t2 - t0) / launches);
    std::printf("rep %ld host_ns_per_launch %.1f total_ns_per_launch %.1f", r, host.back(), total.back());
    if (mode == "window") {
      long n_in = window_end - window_begin;
      inside.push_back(double(in_ns) / n_in);
      outside.push_back(double(t1 - t0 - in_ns) / (launches - n_in));
      std::printf(" outside_ns_per_launch %.1f inside_ns_per_launch %.1f", outside.back(), inside.back());
    }
    std::printf("\n");
  }
  std::printf("median host_ns_per_launch %.1f total_ns_per_launch %.1f", Median(host), Median(total));
  if (mode == "window") std::printf(" outside_ns_per_launch %.1f inside_ns_per_launch %.1f", Median(outside), Median(inside));
  std::printf("\n");
  if (mode == "floor") {
    g_stop_flusher.store(true);
    flusher.join();
    cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    std::printf("kernels_recorded %llu\n", static_cast<unsigned long long>(g_kernel_records.load()));
  }
  return 0;
}
