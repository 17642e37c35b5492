// fake_cuda_app: a "CUDA application" that drives the fake CUPTI (tests/fakes/fake_cuda.h) so the
// integration tests can run gtrace's CUDA tracing without a GPU. Every scenario has fixed counts,
// names and durations; tests/cuda/cuda_integration_test.cc asserts the exported rows exactly.
//
//   fake_cuda_app <scenario> [args]
//
// Scenarios:
//   basic             contexts/streams, NVTX "step" around H2D/D2H/D2D/peer copies, memset, three
//                     kernels on two streams, event record + syncs; a graph created, instantiated
//                     and launched; a driver call; an overhead record; a worker thread's kernel;
//                     memory alloc/free records; 3 CUPTI drops; a kernel still running at exit.
//   profiler N        N rounds of { cudaProfilerStart; kernel "window<i>"; cudaProfilerStop;
//                     kernel "gap<i>" }, each kernel inside an NVTX range of its name.
//   nvtx              "warmup" { kernel warmup }, "train" { kernel k1, "inner" { kernel k2 } },
//                     "train" { kernel k3 }, then domain "dom" range "train" { kernel k4 }.
//   timed             kernel "early", sleep 1.5 s, kernel "late", sleep 1.5 s, kernel "later".
//   ranged            3 x { NVTX "step" { cudaLaunchKernel of kernel "k<i>" (2 us, its start set
//                     explicitly on the CUPTI clock; printed as "kernel k<i> cupti_start=S") }, sleep
//                     0.7 s } — spans more than one of the drain thread's 1 s clock pairs.
//   fork              kernel "parent_before"; fork: the child makes an NVTX range and a (fake) CUDA
//                     call and exits 0; the parent waits, launches "parent_after".
//   threads N K       N threads start together and each makes K cudaLaunchKernel calls.
//   exit <code>       NVTX range "alive" + one kernel, then exit with <code>.
//   second-client K   20 steps of K launches of kernel "step<i>"; during steps 10-12 a second CUPTI
//                     client in the process (as kineto for torch.profiler) owns the activity API:
//                     it registers its own buffer callbacks and a TSC-like timestamp callback
//                     (3 ticks per ns), enables kernels, copies, memsets, runtime, driver, sync and
//                     overhead, and at its stop disables all of them and flushes. Prints launches,
//                     the kernels the second client received, and the kernels launched after it.
#include <nvtx3/nvToolsExt.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <cupti.h>

#include "tests/fakes/fake_cuda.h"

namespace {

uint32_t Tid() { return static_cast<uint32_t>(syscall(SYS_gettid)); }

constexpr uint64_t kUs = 1000;

fake_kernel Kernel(uint32_t ctx, uint32_t stream, uint32_t corr, const char* name, uint64_t duration_ns) {
  fake_kernel k{};
  k.device_id = 0;
  k.context_id = ctx;
  k.stream_id = stream;
  k.correlation_id = corr;
  k.name = name;
  k.grid[0] = 4;
  k.grid[1] = 1;
  k.grid[2] = 1;
  k.block[0] = 256;
  k.block[1] = 1;
  k.block[2] = 1;
  k.registers = 16;
  k.gap_ns = 1 * kUs;
  k.duration_ns = duration_ns;
  return k;
}

// cudaLaunchKernel (API `api_us` long) that runs `name` for `kernel_ns`.
uint32_t Launch(uint32_t ctx, uint32_t stream, const char* name, uint64_t kernel_ns, uint64_t api_ns = 5 * kUs) {
  uint32_t c = fake_ApiEnter(0, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, nullptr);
  fake_kernel k = Kernel(ctx, stream, c, name, kernel_ns);
  fake_Kernel(&k);
  fake_ApiExit(c, api_ns, 0);
  return c;
}

uint32_t Setup(uint32_t* stream) {
  fake_cuInit();
  uint32_t ctx = fake_ContextCreate(0);
  uint32_t c = fake_ApiEnter(0, CUPTI_RUNTIME_TRACE_CBID_cudaStreamCreate_v3020, nullptr);
  *stream = fake_StreamCreate(ctx, 2, 0, c);
  fake_ApiExit(c, 2 * kUs, 0);
  return ctx;
}

int Basic() {
  prctl(PR_SET_NAME, "fake_cuda_main", 0, 0, 0);
  uint32_t s1 = 0;
  uint32_t ctx = Setup(&s1);
  uint32_t c = fake_ApiEnter(0, CUPTI_RUNTIME_TRACE_CBID_cudaStreamCreate_v3020, nullptr);
  uint32_t s2 = fake_StreamCreate(ctx, 1, -5, c);
  fake_ApiExit(c, 2 * kUs, 0);

  nvtxRangePushA("step");
  c = fake_ApiEnter(0, CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020, nullptr);
  fake_Memory(1, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, 0x7f0000000000ull, 1 << 20, 0, ctx, 0, c);
  fake_ApiExit(c, 3 * kUs, 0);
  c = fake_ApiEnter(0, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020, nullptr);
  fake_Memcpy(0, ctx, s1, c, 4096, CUPTI_ACTIVITY_MEMCPY_KIND_HTOD, CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE,
              CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, 800);
  fake_ApiExit(c, 4 * kUs, 0);
  uint32_t first_launch = Launch(ctx, s1, "_Z7add_onePKfPfi", 1500);
  Launch(ctx, s2,
         "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEESt5arrayIPcLm1EEEEviT0_T1_", 2500);
  Launch(ctx, s2, "_Z7add_onePKfPfi", 1500);
  c = fake_ApiEnter(0, CUPTI_RUNTIME_TRACE_CBID_cudaMemsetAsync_v3020, nullptr);
  fake_Memset(0, ctx, s1, c, 1024, 0, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, 600);
  fake_ApiExit(c, 2 * kUs, 0);
  c = fake_ApiEnter(0, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020, nullptr);
  fake_Memcpy(0, ctx, s1, c, 8192, CUPTI_ACTIVITY_MEMCPY_KIND_DTOH, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE,
              CUPTI_ACTIVITY_MEMORY_KIND_PINNED, 900);
  fake_ApiExit(c, 4 * kUs, 0);
  c = fake_ApiEnter(0, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020, nullptr);
  fake_Memcpy(0, ctx, s2, c, 2048, CUPTI_ACTIVITY_MEMCPY_KIND_DTOD, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE,
              CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, 300);
  fake_ApiExit(c, 4 * kUs, 0);
  c = fake_ApiEnter(0, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyPeerAsync_v4000, nullptr);
  fake_MemcpyPeer(0, ctx, s1, c, 65536, 0, 1, 1000);
  fake_ApiExit(c, 3 * kUs, 0);
  c = fake_ApiEnter(0, CUPTI_RUNTIME_TRACE_CBID_cudaEventRecord_v3020, nullptr);
  fake_CudaEvent(0, ctx, s1, c, 1, 1);
  fake_ApiExit(c, 1 * kUs, 0);
  c = fake_ApiEnter(0, CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020, nullptr);
  fake_Sync(CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE, ctx, s1, c, 0xFFFFFFFFu, 0, 700);
  fake_ApiExit(c, 3 * kUs, 0);
  c = fake_ApiEnter(0, CUPTI_RUNTIME_TRACE_CBID_cudaEventSynchronize_v3020, nullptr);
  fake_Sync(CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE, ctx, 0xFFFFFFFFu, c, 1, 1, 400);
  fake_ApiExit(c, 2 * kUs, 0);
  c = fake_ApiEnter(0, CUPTI_RUNTIME_TRACE_CBID_cudaFree_v3020, nullptr);
  fake_Memory(2, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, 0x7f0000000000ull, 1 << 20, 0, ctx, 0, c);
  fake_ApiExit(c, 2 * kUs, 0);
  nvtxRangePop();

  // A graph: created and instantiated outside any range, launched in "graph".
  void* graph = fake_GraphCreate(1);
  c = fake_ApiEnter(0, CUPTI_RUNTIME_TRACE_CBID_cudaGraphInstantiate_v12000, nullptr);
  void* exec = fake_GraphInstantiate(graph, 2);
  fake_ApiExit(c, 6 * kUs, 0);
  nvtxRangePushA("graph");
  cudaGraphLaunch_v10000_params params{reinterpret_cast<cudaGraphExec_t>(exec), nullptr};
  c = fake_ApiEnter(0, CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000, &params);
  fake_GraphTrace(0, ctx, s1, c, 1, 3000);
  fake_ApiExit(c, 2500, 0);
  nvtxRangePop();

  fake_Api(1, CUPTI_DRIVER_TRACE_CBID_cuKernelGetName, 700);
  fake_Overhead(CUPTI_ACTIVITY_OVERHEAD_LAZY_FUNCTION_LOADING, Tid(), first_launch, 10 * kUs);
  fake_DropRecords(3);

  // A thread that only ever calls CUDA (no NVTX): its name must still reach ThreadNames.
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
  std::thread worker([&] {
    prctl(PR_SET_NAME, "cuda-worker", 0, 0, 0);
    Launch(ctx, s2, "matmul_kernel", 4000);
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return done; });
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(600));  // several drain/flush cycles
  {
    std::lock_guard<std::mutex> lock(mu);
    done = true;
  }
  cv.notify_all();
  worker.join();

  // Still running when the process exits: the forced flush delivers it with end = 0.
  c = fake_ApiEnter(0, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, nullptr);
  fake_kernel running = Kernel(ctx, s1, c, "_Z13still_runningv", 0);
  fake_KernelRunning(&running);
  fake_ApiExit(c, 5 * kUs, 0);
  return 0;
}

int Profiler(int rounds) {
  uint32_t s = 0;
  uint32_t ctx = Setup(&s);
  for (int i = 1; i <= rounds; ++i) {
    std::string win = "window" + std::to_string(i), gap = "gap" + std::to_string(i);
    fake_Api(0, CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStart_v4000, 1 * kUs);
    nvtxRangePushA(win.c_str());
    Launch(ctx, s, win.c_str(), 1000);
    nvtxRangePop();
    fake_Api(0, CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStop_v4000, 1 * kUs);
    nvtxRangePushA(gap.c_str());
    Launch(ctx, s, gap.c_str(), 1000);
    nvtxRangePop();
  }
  std::printf("kernel kind after: %d\n", fake_KindEnabled(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
  std::printf("runtime kind after: %d\n", fake_KindEnabled(CUPTI_ACTIVITY_KIND_RUNTIME));
  std::printf("graph callback after: %d\n",
              fake_CallbackEnabled(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000));
  std::printf("profiler callback after: %d\n",
              fake_CallbackEnabled(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStart_v4000));
  return 0;
}

// graphwindow: a graph instantiated before any window, then launched once in each of: the gap before
// window 1, window 1, the gap, window 2 (twice), the gap after. GRAPH_TRACE records of the launches
// inside the windows (3) are kept, the others (3) dropped.
int GraphWindow() {
  uint32_t s = 0;
  uint32_t ctx = Setup(&s);
  void* graph = fake_GraphCreate(7);
  uint32_t c = fake_ApiEnter(0, CUPTI_RUNTIME_TRACE_CBID_cudaGraphInstantiate_v12000, nullptr);
  void* exec = fake_GraphInstantiate(graph, 8);
  fake_ApiExit(c, 6 * kUs, 0);
  cudaGraphLaunch_v10000_params params{reinterpret_cast<cudaGraphExec_t>(exec), nullptr};
  auto launch = [&](uint64_t gpu_ns) {
    uint32_t id = fake_ApiEnter(0, CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000, &params);
    fake_GraphTrace(0, ctx, s, id, 7, gpu_ns);
    fake_ApiExit(id, 2500, 0);
  };
  launch(1000);  // before window 1
  for (int w = 1; w <= 2; ++w) {
    fake_Api(0, CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStart_v4000, 1 * kUs);
    for (int i = 0; i < w; ++i) launch(2000 + 1000 * w);
    fake_Api(0, CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStop_v4000, 1 * kUs);
    launch(9000);  // in the gap after window w
  }
  std::printf("graph trace kind after: %d\n", fake_KindEnabled(CUPTI_ACTIVITY_KIND_GRAPH_TRACE));
  return 0;
}

int Nvtx() {
  uint32_t s = 0;
  uint32_t ctx = Setup(&s);
  nvtxRangePushA("warmup");
  Launch(ctx, s, "warmup", 1000);
  nvtxRangePop();
  nvtxRangePushA("train");
  Launch(ctx, s, "k1", 1000);
  nvtxRangePushA("inner");
  Launch(ctx, s, "k2", 1000);
  nvtxRangePop();
  nvtxRangePop();
  nvtxRangePushA("train");
  Launch(ctx, s, "k3", 1000);
  nvtxRangePop();
  nvtxDomainHandle_t dom = nvtxDomainCreateA("dom");
  nvtxEventAttributes_t a{};
  a.version = NVTX_VERSION;
  a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  a.messageType = NVTX_MESSAGE_TYPE_ASCII;
  a.message.ascii = "train";
  nvtxDomainRangePushEx(dom, &a);
  Launch(ctx, s, "k4", 1000);
  nvtxDomainRangePop(dom);
  std::printf("kernel kind after: %d\n", fake_KindEnabled(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
  return 0;
}

int Timed() {
  uint32_t s = 0;
  uint32_t ctx = Setup(&s);
  Launch(ctx, s, "early", 1000);
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  Launch(ctx, s, "late", 1000);
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  Launch(ctx, s, "later", 1000);
  std::printf("kernel kind after: %d\n", fake_KindEnabled(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
  return 0;
}

int Ranged() {
  uint32_t s = 0;
  uint32_t ctx = Setup(&s);
  const char* names[] = {"k0", "k1", "k2"};
  for (const char* name : names) {
    nvtxRangePushA("step");
    uint32_t c = fake_ApiEnter(0, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, nullptr);
    fake_kernel k = Kernel(ctx, s, c, name, 2 * kUs);
    k.start_ns = fake_CuptiNow() + kUs;  // 1 us after the launch began, on whatever clock CUPTI has
    fake_Kernel(&k);
    fake_ApiExit(c, 5 * kUs, 0);
    // The range closes after the kernel ended on the GPU (2 us, at most 2.2 us in CUPTI units at
    // the 10%-fast clock the tests use at most).
    while (fake_CuptiNow() < k.start_ns + 4 * kUs) {
    }
    nvtxRangePop();
    std::printf("kernel %s cupti_start=%llu\n", name, static_cast<unsigned long long>(k.start_ns));
    std::this_thread::sleep_for(std::chrono::milliseconds(700));
  }
  return 0;
}

int Fork() {
  uint32_t s = 0;
  uint32_t ctx = Setup(&s);
  Launch(ctx, s, "parent_before", 1000);
  std::fflush(stdout);
  pid_t child = fork();
  if (child == 0) {
    nvtxRangePushA("child-range");
    fake_Api(0, CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020, 1 * kUs);
    nvtxRangePop();
    std::exit(0);  // runs atexit handlers (gtrace's must not touch CUPTI here)
  }
  int status = 0;
  waitpid(child, &status, 0);
  Launch(ctx, s, "parent_after", 1000);
  int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  std::printf("child pid %d status %d\n", static_cast<int>(child), code);
  return code == 0 ? 0 : 20;
}

int Threads(int n, int k) {
  uint32_t s = 0;
  uint32_t ctx = Setup(&s);
  std::atomic<int> ready{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < n; ++t) {
    threads.emplace_back([&] {
      ready.fetch_add(1);
      while (ready.load() < n) {
      }
      for (int i = 0; i < k; ++i) fake_Api(0, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, 1 * kUs);
    });
  }
  for (std::thread& t : threads) t.join();
  (void)ctx;
  std::printf("declined records: %llu\n", static_cast<unsigned long long>(fake_RecordsDeclined()));
  std::printf("buffers zeroed on app threads: %llu\n",
              static_cast<unsigned long long>(fake_CallCount("zeroed-on-app-thread")));
  return 0;
}

// The second CUPTI client (kineto's CuptiActivityApi shape), calling CUPTI through its exported names.
namespace second_client {
std::atomic<uint64_t> kernels{0}, buffers_not_ours{0};
std::mutex mu;
std::vector<uint8_t*> own;
uint64_t CUPTIAPI Tsc() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (static_cast<uint64_t>(t.tv_sec) * 1000000000ull + static_cast<uint64_t>(t.tv_nsec)) * 3;
}
void CUPTIAPI Request(uint8_t** buffer, size_t* size, size_t* max_records) {
  *size = 256 << 10;
  *buffer = static_cast<uint8_t*>(aligned_alloc(8, *size));
  // kineto hands CUPTI aligned_alloc'd memory as it comes: recycled heap, not zeroes (and CUPTI zeroes
  // it unless someone set ZEROED_OUT_ACTIVITY_BUFFER). Fresh mmap'd memory would hide that here, ASan's
  // allocator did not: dirty it as a reused block would be.
  std::memset(*buffer, 0xa5, *size);
  *max_records = 0;
  std::lock_guard<std::mutex> lock(mu);
  own.push_back(*buffer);
}
void CUPTIAPI Complete(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid) {
  CUpti_Activity* r = nullptr;
  while (cuptiActivityGetNextRecord(buffer, valid, &r) == CUPTI_SUCCESS) {
    if (r->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) kernels.fetch_add(1);
  }
  std::lock_guard<std::mutex> lock(mu);
  for (uint8_t*& b : own) {
    if (b == buffer) {
      free(b);
      b = nullptr;
      return;
    }
  }
  buffers_not_ours.fetch_add(1);  // a buffer gtrace lent: never freed here
}
constexpr CUpti_ActivityKind kKinds[] = {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
                                         CUPTI_ACTIVITY_KIND_MEMSET,            CUPTI_ACTIVITY_KIND_RUNTIME,
                                         CUPTI_ACTIVITY_KIND_DRIVER,            CUPTI_ACTIVITY_KIND_SYNCHRONIZATION,
                                         CUPTI_ACTIVITY_KIND_OVERHEAD};
void Start() {
  cuptiActivityRegisterCallbacks(&Request, &Complete);
  cuptiActivityRegisterTimestampCallback(&Tsc);
  for (CUpti_ActivityKind k : kKinds) cuptiActivityEnable(k);
}
void Stop() {
  for (CUpti_ActivityKind k : kKinds) cuptiActivityDisable(k);
  cuptiActivityFlushAll(0);
}
}  // namespace second_client

int SecondClient(int k) {
  uint32_t s = 0;
  uint32_t ctx = Setup(&s);
  uint64_t launches = 0, after = 0;
  for (int step = 0; step < 20; ++step) {
    if (step == 10) second_client::Start();
    if (step == 13) second_client::Stop();
    std::string name = "step" + std::to_string(step);  // the fake copies kernel names
    for (int i = 0; i < k; ++i) Launch(ctx, s, name.c_str(), 1000);
    launches += static_cast<uint64_t>(k);
    if (step >= 13) after += static_cast<uint64_t>(k);
  }
  std::printf("launches %llu\nsecond_client_kernels %llu\nkernels_after_second_client %llu\n",
              static_cast<unsigned long long>(launches),
              static_cast<unsigned long long>(second_client::kernels.load()),
              static_cast<unsigned long long>(after));
  return 0;
}

int Exit(int code) {
  nvtxRangePushA("alive");
  uint32_t s = 0;
  uint32_t ctx = Setup(&s);
  Launch(ctx, s, "alive_kernel", 1000);
  nvtxRangePop();
  return code;
}

}  // namespace

int main(int argc, char** argv) {
  std::string scenario = argc > 1 ? argv[1] : "basic";
  int a = argc > 2 ? std::atoi(argv[2]) : 0;
  int b = argc > 3 ? std::atoi(argv[3]) : 0;
  if (scenario == "basic") return Basic();
  if (scenario == "profiler") return Profiler(a > 0 ? a : 1);
  if (scenario == "nvtx") return Nvtx();
  if (scenario == "graphwindow") return GraphWindow();
  if (scenario == "timed") return Timed();
  if (scenario == "ranged") return Ranged();
  if (scenario == "fork") return Fork();
  if (scenario == "threads") return Threads(a, b);
  if (scenario == "second-client") return SecondClient(a);
  if (scenario == "exit") return Exit(a);
  std::fprintf(stderr, "unknown scenario %s\n", scenario.c_str());
  return 2;
}
