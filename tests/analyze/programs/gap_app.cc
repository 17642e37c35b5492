// gap_app: a planted GPU idle gap for the GPU-idle attribution test (tests/analyze/gap_causes_test.cc),
// on the fake CUPTI (tests/fakes/fake_cuda.h: a test double; the GPU times are its model).
//
// main: cudaLaunchKernel "before" (200 us of GPU work), then, while the GPU is idle, a planted
// nanosleep of 5 ms (PlantedNap) and a planted read of a pipe that a writer thread fills 20 ms later
// (PlantedRead), then cudaLaunchKernel "after". The GPU gap between the two kernels is therefore
// ~25 ms, and main (the thread that launches "after") spent it in read (~20 ms) and nanosleep (5 ms).
// The writer thread's 20 ms clock_nanosleep overlaps the gap too, but on another thread: it must not
// be named. Built -O0 -g with frame pointers so OS runtime backtraces name the planted functions.
#include <pthread.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include <cupti.h>

#include "tests/fakes/fake_cuda.h"

namespace {

constexpr uint64_t kUs = 1000;
int g_pipe[2];

uint32_t Launch(uint32_t ctx, uint32_t stream, const char* name, uint64_t kernel_ns) {
  uint32_t c = fake_ApiEnter(0, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, nullptr);
  fake_kernel k{};
  k.context_id = ctx;
  k.stream_id = stream;
  k.correlation_id = c;
  k.name = name;
  k.grid[0] = k.grid[1] = k.grid[2] = 1;
  k.block[0] = 128;
  k.block[1] = k.block[2] = 1;
  k.gap_ns = 1 * kUs;
  k.duration_ns = kernel_ns;
  fake_Kernel(&k);
  fake_ApiExit(c, 5 * kUs, 0);
  return c;
}

void* Writer(void*) {
  timespec twenty_ms = {0, 20000000};
  clock_nanosleep(CLOCK_MONOTONIC, 0, &twenty_ms, nullptr);
  char c = 'x';
  (void)!write(g_pipe[1], &c, 1);
  return nullptr;
}

}  // namespace

__attribute__((noinline)) void PlantedNap() {
  timespec five_ms = {0, 5000000};
  nanosleep(&five_ms, nullptr);
}

__attribute__((noinline)) int PlantedRead() {
  char c = 0;
  return read(g_pipe[0], &c, 1) == 1 ? 0 : 3;
}

int main() {
  fake_cuInit();
  uint32_t ctx = fake_ContextCreate(0);
  uint32_t c = fake_ApiEnter(0, CUPTI_RUNTIME_TRACE_CBID_cudaStreamCreate_v3020, nullptr);
  uint32_t stream = fake_StreamCreate(ctx, 2, 0, c);
  fake_ApiExit(c, 2 * kUs, 0);
  if (pipe(g_pipe) != 0)
    return 2;

  Launch(ctx, stream, "before", 200 * kUs);
  PlantedNap();
  pthread_t writer;
  pthread_create(&writer, nullptr, Writer, nullptr);
  int rc = PlantedRead();
  Launch(ctx, stream, "after", 200 * kUs);
  pthread_join(writer, nullptr);
  printf("done\n");
  return rc;
}
