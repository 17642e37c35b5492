// capture_scenario: the fixed CUDA scenario recorded once per GPU kind by
// scripts/gpu-check.d/15-capture.sh with gtrace's raw capture on (docs/capture.md); the CPU replay
// tests (tests/replay/real_capture_test.cc) assert the exported rows against the counts this
// program prints with --expect.
//
//   capture_scenario            run the scenario; prints "ok" and exits 0 when every call succeeded
//   capture_scenario --expect whole|window
//                               print the expected counts (JSON) for a whole-run capture or for a
//                               --capture-range=cudaProfilerApi capture; no CUDA call is made
//
// Set-up: device 0; streams s1 (non-blocking) and s2 (non-blocking, highest priority); device
// buffers a, b, c; pinned host buffers p1, p2; pageable host buffer h; event e; a graph captured on
// s1 with two kernels "graph_add" and instantiated.
// Inside cudaProfilerStart/Stop (the window):
//   H2D p1->a on s1; kernel "scale" x2 on s1; event e recorded on s1; cudaStreamWaitEvent(s2, e);
//   kernel "offset" x2 on s2; memset c on s2; D2D a->c on s2; D2H c->p2 on s2;
//   cudaStreamSynchronize(s2); cudaEventSynchronize(e).
// After the window: H2D h->b (cudaMemcpy, pageable); H2H p1->p2 (cudaMemcpy, pinned);
//   cudaGraphLaunch x2 on s1; cudaDeviceSynchronize. No peer copy (one device is assumed).
#include <cuda_profiler_api.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#define CHECK(call)                                                                               \
  do {                                                                                            \
    cudaError_t err_ = (call);                                                                    \
    if (err_ != cudaSuccess) {                                                                    \
      std::fprintf(stderr, "capture_scenario: %s failed: %s\n", #call, cudaGetErrorString(err_)); \
      std::exit(3);                                                                               \
    }                                                                                             \
  } while (0)

namespace {

constexpr int kN = 4096;  // floats per buffer (16 KiB): small copies, one record each
constexpr size_t kBytes = kN * sizeof(float);

__global__ void scale(float* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    x[i] *= 2.0f;
}
__global__ void offset(float* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    x[i] += 1.0f;
}
__global__ void graph_add(float* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    x[i] += 3.0f;
}

// Exact counts of exported rows ("expected") and upper bounds where CUDA may or may not make a
// GPU record ("at_most": a host-to-host copy between pinned buffers; stream-wait-event syncs).
int PrintExpected(const char* mode) {
  bool whole = std::strcmp(mode, "whole") == 0;
  if (!whole && std::strcmp(mode, "window") != 0) {
    std::fprintf(stderr, "capture_scenario: --expect whole|window\n");
    return 2;
  }
  std::printf("{\n  \"scenario\": \"capture_scenario\",\n  \"source\": \"samples/cuda/capture_scenario.cu\",\n");
  std::printf("  \"mode\": \"%s\",\n", mode);
  std::printf(
      "  \"expected\": {\"kernels\": 4, \"kernel_streams\": 2, \"memcpy_htod\": %d, \"memcpy_dtoh\": 1, "
      "\"memcpy_dtod\": 1, \"memset\": 1, \"cuda_event\": 1, \"sync_stream\": 1, \"sync_event\": 1, "
      "\"sync_context\": %d, \"graph_launches\": %d, \"launch_calls\": %d, \"graph_launch_calls\": %d, "
      "\"gpus\": 1},\n",
      whole ? 2 : 1, whole ? 1 : 0, whole ? 2 : 0, whole ? 6 : 4, whole ? 2 : 0);
  std::printf("  \"at_most\": {\"memcpy_htoh\": %d, \"sync_wait_event\": 1}\n}\n", whole ? 1 : 0);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 3 && std::strcmp(argv[1], "--expect") == 0)
    return PrintExpected(argv[2]);
  if (argc != 1) {
    std::fprintf(stderr, "usage: capture_scenario [--expect whole|window]\n");
    return 2;
  }
  CHECK(cudaSetDevice(0));
  CHECK(cudaFree(nullptr));  // context creation before anything is timed
  int least = 0, greatest = 0;
  CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
  cudaStream_t s1, s2;
  CHECK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
  CHECK(cudaStreamCreateWithPriority(&s2, cudaStreamNonBlocking, greatest));
  float *a, *b, *c, *p1, *p2;
  CHECK(cudaMalloc(&a, kBytes));
  CHECK(cudaMalloc(&b, kBytes));
  CHECK(cudaMalloc(&c, kBytes));
  CHECK(cudaMallocHost(&p1, kBytes));
  CHECK(cudaMallocHost(&p2, kBytes));
  auto* h = static_cast<float*>(std::malloc(kBytes));
  for (int i = 0; i < kN; ++i)
    p1[i] = h[i] = static_cast<float>(i);
  cudaEvent_t e;
  CHECK(cudaEventCreate(&e));
  const int threads = 256, blocks = (kN + threads - 1) / threads;

  // The graph: captured on s1 (the launches are recorded as API calls, not as kernels).
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  CHECK(cudaStreamBeginCapture(s1, cudaStreamCaptureModeGlobal));
  graph_add<<<blocks, threads, 0, s1>>>(a, kN);
  graph_add<<<blocks, threads, 0, s1>>>(a, kN);
  CHECK(cudaStreamEndCapture(s1, &graph));
  CHECK(cudaGraphInstantiate(&exec, graph, 0));

  CHECK(cudaProfilerStart());
  CHECK(cudaMemcpyAsync(a, p1, kBytes, cudaMemcpyHostToDevice, s1));
  scale<<<blocks, threads, 0, s1>>>(a, kN);
  scale<<<blocks, threads, 0, s1>>>(a, kN);
  CHECK(cudaGetLastError());
  CHECK(cudaEventRecord(e, s1));
  CHECK(cudaStreamWaitEvent(s2, e, 0));
  offset<<<blocks, threads, 0, s2>>>(b, kN);
  offset<<<blocks, threads, 0, s2>>>(b, kN);
  CHECK(cudaGetLastError());
  CHECK(cudaMemsetAsync(c, 0, kBytes, s2));
  CHECK(cudaMemcpyAsync(c, a, kBytes, cudaMemcpyDeviceToDevice, s2));
  CHECK(cudaMemcpyAsync(p2, c, kBytes, cudaMemcpyDeviceToHost, s2));
  CHECK(cudaStreamSynchronize(s2));
  CHECK(cudaEventSynchronize(e));
  CHECK(cudaProfilerStop());

  CHECK(cudaMemcpy(b, h, kBytes, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(p2, p1, kBytes, cudaMemcpyHostToHost));
  CHECK(cudaGraphLaunch(exec, s1));
  CHECK(cudaGraphLaunch(exec, s1));
  CHECK(cudaDeviceSynchronize());

  CHECK(cudaGraphExecDestroy(exec));
  CHECK(cudaGraphDestroy(graph));
  CHECK(cudaEventDestroy(e));
  CHECK(cudaFreeHost(p1));
  CHECK(cudaFreeHost(p2));
  CHECK(cudaFree(a));
  CHECK(cudaFree(b));
  CHECK(cudaFree(c));
  CHECK(cudaStreamDestroy(s1));
  CHECK(cudaStreamDestroy(s2));
  std::free(h);
  std::printf("ok\n");
  return 0;
}
