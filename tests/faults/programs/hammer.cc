// hammer: N threads for S seconds, each looping { NVTX push; a fake cudaLaunchKernel with its
// kernel; NVTX pop } against the fake CUPTI (tests/fakes, a test double). Prints how many NVTX
// calls and kernels it made, so the test can check every one is recorded or counted as dropped.
//   hammer <threads> <seconds>
#include <nvtx3/nvToolsExt.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

#include "tests/fakes/fake_cuda.h"

int main(int argc, char** argv) {
  int threads = argc > 1 ? std::atoi(argv[1]) : 64;
  double seconds = argc > 2 ? std::atof(argv[2]) : 10;
  fake_cuInit();
  uint32_t ctx = fake_ContextCreate(0);
  std::atomic<uint64_t> nvtx_calls{0}, kernels{0};
  std::atomic<bool> go{false};
  auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      while (!go.load()) std::this_thread::yield();
      uint64_t n = 0, k = 0;
      while (std::chrono::steady_clock::now() < deadline) {
        nvtxRangePushA("hammer");
        uint32_t corr = fake_Api(0, 211 /* cudaLaunchKernel_v7000 */, 200);
        fake_kernel kern{};
        kern.device_id = 0;
        kern.context_id = ctx;
        kern.stream_id = 7;
        kern.correlation_id = corr;
        kern.name = "_Z6hammerv";
        kern.grid[0] = kern.grid[1] = kern.grid[2] = 1;
        kern.block[0] = kern.block[1] = kern.block[2] = 32;
        kern.duration_ns = 1000;
        fake_Kernel(&kern);
        nvtxRangePop();
        n += 2;
        ++k;
      }
      nvtx_calls += n;
      kernels += k;
    });
  }
  go = true;
  for (auto& th : pool) th.join();
  std::printf("nvtx_calls=%llu kernels=%llu\n", static_cast<unsigned long long>(nvtx_calls.load()),
              static_cast<unsigned long long>(kernels.load()));
  return 0;
}
