// cuda_streams: a CUDA program with fixed counts of everything gtrace's CUDA tracing records, for
// scripts/gpu-check.d/10-cuda.sh (which asserts the exported rows exactly).
//
//   cuda_streams [--iterations N] [--window] [--fork]
//
// Set-up (before the loop): two streams (s1 non-blocking, s2 created with priority -1 ... the
// greatest priority the device allows), device buffers, one pinned and one pageable host buffer,
// two events, and a CUDA graph captured on s1 with two kernels (graph_k1, graph_k2).
// Each iteration i (NVTX push/pop "iteration"):
//   H2D copy pinned -> device on s1; kernel "scale" on s1; event e1 recorded on s1;
//   cudaStreamWaitEvent(s2, e1); kernel "offset" on s2; D2D copy on s2; memset on s2;
//   D2H copy device -> pinned on s2; H2D copy pageable -> device (synchronous, legacy stream);
//   cudaGraphLaunch on s1; event e2 recorded on s2; cudaStreamSynchronize(s2); cudaStreamSynchronize(s1).
// Per iteration: 2 kernels + 1 graph launch (2 graph kernels), 4 copies (2 HtoD, 1 DtoH, 1 DtoD),
// 1 memset, 2 event records.
// --window: cudaProfilerStart before iteration N/3 and cudaProfilerStop after iteration 2N/3-1
//   (the middle third; N must be a multiple of 3).
// --fork: after the loop, fork a child that makes one NVTX range and exits; the parent waits (the
//   child must not hang in CUPTI) and prints the child's exit status.
// Prints "ok" and exits 0 when every CUDA call succeeded.
#include <cuda_profiler_api.h>
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#define CHECK(call)                                                                                 \
  do {                                                                                              \
    cudaError_t err_ = (call);                                                                      \
    if (err_ != cudaSuccess) {                                                                      \
      std::fprintf(stderr, "cuda_streams: %s failed: %s\n", #call, cudaGetErrorString(err_));     \
      std::exit(3);                                                                                 \
    }                                                                                               \
  } while (0)

__global__ void scale(float* x, int n, float a) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= a;
}
__global__ void offset(float* x, int n, float b) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] += b;
}
__global__ void graph_k1(float* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = x[i] * 0.5f;
}
__global__ void graph_k2(float* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = x[i] + 1.0f;
}

int main(int argc, char** argv) {
  int iterations = 30;
  bool window = false, do_fork = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--iterations") == 0 && i + 1 < argc) {
      iterations = std::atoi(argv[++i]);
    } else if (std::strcmp(argv[i], "--window") == 0) {
      window = true;
    } else if (std::strcmp(argv[i], "--fork") == 0) {
      do_fork = true;
    } else {
      std::fprintf(stderr, "usage: cuda_streams [--iterations N] [--window] [--fork]\n");
      return 2;
    }
  }
  if (window && iterations % 3 != 0) {
    std::fprintf(stderr, "cuda_streams: --window needs a multiple of 3 iterations\n");
    return 2;
  }
  const int n = 1 << 16;
  const size_t bytes = n * sizeof(float);
  const int threads = 256, blocks = (n + threads - 1) / threads;

  cudaStream_t s1, s2;
  CHECK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
  int least = 0, greatest = 0;
  CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
  CHECK(cudaStreamCreateWithPriority(&s2, cudaStreamDefault, greatest));
  float *d_a, *d_b, *h_pinned;
  CHECK(cudaMalloc(&d_a, bytes));
  CHECK(cudaMalloc(&d_b, bytes));
  CHECK(cudaMallocHost(&h_pinned, bytes));
  std::vector<float> h_pageable(n, 1.0f);
  for (int i = 0; i < n; ++i) h_pinned[i] = static_cast<float>(i);
  cudaEvent_t e1, e2;
  CHECK(cudaEventCreateWithFlags(&e1, cudaEventDisableTiming));
  CHECK(cudaEventCreate(&e2));

  cudaGraph_t graph;
  cudaGraphExec_t exec;
  CHECK(cudaStreamBeginCapture(s1, cudaStreamCaptureModeGlobal));
  graph_k1<<<blocks, threads, 0, s1>>>(d_b, n);
  graph_k2<<<blocks, threads, 0, s1>>>(d_b, n);
  CHECK(cudaStreamEndCapture(s1, &graph));
  CHECK(cudaGraphInstantiate(&exec, graph, 0));

  for (int it = 0; it < iterations; ++it) {
    if (window && it == iterations / 3) CHECK(cudaProfilerStart());
    nvtxRangePushA("iteration");
    CHECK(cudaMemcpyAsync(d_a, h_pinned, bytes, cudaMemcpyHostToDevice, s1));
    scale<<<blocks, threads, 0, s1>>>(d_a, n, 2.0f);
    CHECK(cudaGetLastError());
    CHECK(cudaEventRecord(e1, s1));
    CHECK(cudaStreamWaitEvent(s2, e1, 0));
    offset<<<blocks, threads, 0, s2>>>(d_a, n, 1.0f);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpyAsync(d_b, d_a, bytes, cudaMemcpyDeviceToDevice, s2));
    CHECK(cudaMemsetAsync(d_a, 0, bytes, s2));
    CHECK(cudaMemcpyAsync(h_pinned, d_b, bytes, cudaMemcpyDeviceToHost, s2));
    CHECK(cudaMemcpy(d_a, h_pageable.data(), bytes, cudaMemcpyHostToDevice));
    CHECK(cudaGraphLaunch(exec, s1));
    CHECK(cudaEventRecord(e2, s2));
    CHECK(cudaStreamSynchronize(s2));
    CHECK(cudaStreamSynchronize(s1));
    nvtxRangePop();
    if (window && it == 2 * iterations / 3 - 1) CHECK(cudaProfilerStop());
  }
  CHECK(cudaDeviceSynchronize());

  if (do_fork) {
    std::fflush(stdout);
    pid_t child = fork();
    if (child == 0) {
      nvtxRangePushA("child");
      nvtxRangePop();
      std::exit(0);  // atexit handlers run in the child too (gtrace's must not touch CUPTI there)
    }
    int status = 0;
    waitpid(child, &status, 0);
    std::printf("child status %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
  }

  CHECK(cudaGraphExecDestroy(exec));
  CHECK(cudaGraphDestroy(graph));
  CHECK(cudaEventDestroy(e1));
  CHECK(cudaEventDestroy(e2));
  CHECK(cudaFreeHost(h_pinned));
  CHECK(cudaFree(d_a));
  CHECK(cudaFree(d_b));
  CHECK(cudaStreamDestroy(s1));
  CHECK(cudaStreamDestroy(s2));
  std::printf("ok\n");
  return 0;
}
