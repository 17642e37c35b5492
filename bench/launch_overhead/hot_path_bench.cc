// CPU microbenchmarks of the CUDA tracing hot paths (house style: every hot-path entry point has one,
// with its measured cost written down in docs/cuda-tracing.md):
//   - the CUPTI subscriber callback for a graph launch while no window is open (the early-out);
//   - the same callback recording (one relaxed load, a clock read, one 64-byte ring record);
//   - one CUPTI buffer's trip through the pool (request, completion, drain, release).
// No GPU needed: the callback is called directly with a CUpti_CallbackData, as CUPTI would.
#include <benchmark/benchmark.h>
#include <cupti.h>
#include <stdlib.h>
#include <unistd.h>

#include <string>

#include "collector/session.h"
#include "inject/cupti/buffer_pool.h"
#include "inject/cupti/cuda_record.h"
#include "inject/cupti/cupti_callbacks.h"

namespace {

void BM_GraphLaunchCallbackOutsideWindow(benchmark::State& state) {
  gt::SetRecording(gt::kSourceCuda, false);
  cudaGraphLaunch_v10000_params params{reinterpret_cast<cudaGraphExec_t>(0x1), nullptr};
  CUpti_CallbackData data{};
  data.callbackSite = CUPTI_API_EXIT;
  data.functionParams = &params;
  for (auto _ : state) {
    gt::cupti::OnCallback(nullptr, CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000, &data);
    benchmark::ClobberMemory();
  }
}
BENCHMARK(BM_GraphLaunchCallbackOutsideWindow);

void BM_CudaRingRecord(benchmark::State& state) {
  // One session for every run of this benchmark (the drain thread empties the ring meanwhile);
  // the stream goes to /tmp and is removed at exit.
  static bool started = [] {
    setenv("GTRACE_OUTPUT", "/tmp/gtrace-hot-path-bench-%p", 1);
    setenv("GTRACE_TRACE", "cuda", 1);
    bool ok = gt::EnsureSession(gt::kSourceCuda);
    static std::string path = gt::SessionStreamPath();
    atexit([] { unlink(path.c_str()); });
    return ok;
  }();
  if (!started) {
    state.SkipWithError("no session");
    return;
  }
  uint32_t i = 0;
  uint64_t dropped = 0;
  for (auto _ : state) {
    if ((++i & 2047) == 0) {  // keep the ring from filling: drain it, untimed
      state.PauseTiming();
      gt::RequestFlush(/*wait=*/true);
      state.ResumeTiming();
    }
    dropped += !gt::cupti::WriteCudaRecord(gt::cupti::kCudaRecordGraphLaunch, i, 7);
  }
  state.counters["dropped"] = static_cast<double>(dropped);
}
BENCHMARK(BM_CudaRingRecord);

void BM_BufferPoolCycle(benchmark::State& state) {
  static gt::cupti::CuptiBufferPool* pool = [] {
    auto* p = new gt::cupti::CuptiBufferPool();
    p->Init(64 << 10, 16);
    return p;
  }();
  for (auto _ : state) {
    uint8_t* b = pool->Acquire();
    pool->Complete(b, 4096);
    size_t valid = 0;
    uint8_t* c = pool->NextCompleted(&valid);
    pool->Release(c);
    benchmark::DoNotOptimize(c);
  }
}
BENCHMARK(BM_BufferPoolCycle);

}  // namespace

BENCHMARK_MAIN();
