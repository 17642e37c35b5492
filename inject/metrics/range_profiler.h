// RangeProfiler: CUPTI's range profiler (--gpu-metrics-ranges, opt-in): a chosen single-pass metric
// list collected per NVTX range (CUPTI user ranges) or per kernel (CUPTI auto ranges).
//
//  - NVTX mode (`nvtx:RANGE[@DOMAIN]`): the application thread that pushes the matching NVTX range
//    starts the profiler on its current context and pushes a CUPTI range; the matching pop (same
//    thread, same nesting level) pops it, stops the profiler and decodes — which waits for the
//    range's GPU work, so each profiled range ends with a synchronisation of its context. These
//    CUPTI calls happen on the application thread because CUPTI ties user ranges to it
//    (unavoidable); the evaluation of the decoded counter data happens on gtrace's metrics thread:
//    the image is copied into one of a fixed number of handoff buffers (none free: the range is
//    dropped and counted). Push/pop ranges only; a matching range nested in a profiled one is
//    ignored. Metric selection (host API) runs ahead of time on the metrics thread, per chip.
//  - Kernel mode (`kernel`): the metrics thread enables the profiler on the primary context of each
//    device it owns, once that context is active, with auto ranges and kernel replay: CUPTI
//    SERIALISES EVERY KERNEL LAUNCH (a `gtrace:` line says so). Every 100 ms it stops, decodes,
//    evaluates and restarts the profiler (kernels launched in that short gap are not profiled).
//    CUPTI names the ranges "0", "1", ... in launch order; the exporter maps them to the context's
//    kernels in start order inside the pass's time span.
//
// Threads: NVTX hooks (application threads, behind one relaxed load of `g_range_armed`), the
// metrics thread (Pump), the drain thread (Take). `mu_` guards the context table, the handoff queue
// and the results; it is never held across a CUPTI call made from an application thread... except
// that each context's own CUPTI calls are serialised by that context's mutex (lock order: context
// mutex, then mu_). Owned by the metrics module (never freed).
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "inject/metrics/metric_selection.h"
#include "inject/metrics/metrics_options.h"
#include "inject/metrics/profiler_api.h"

namespace gt::metrics {

extern std::atomic<bool> g_range_armed;
inline bool RangeProfilerArmed() {
  return g_range_armed.load(std::memory_order_relaxed);
}

struct RangeResult {
  uint32_t device_id = 0;
  uint32_t context_id = 0;
  uint32_t mode = 0;  // field::enums::kRangeMode*
  std::string range_name;
  uint32_t range_index = 0;
  uint64_t pass_id = 0;
  uint64_t pass_start_ns = 0;
  uint64_t pass_end_ns = 0;
  uint32_t tid = 0;
  std::vector<double> values;
  uint64_t ranges_dropped = 0;
};

struct RangeConfigInfo {
  uint32_t device_id = 0;
  uint32_t context_id = 0;
  uint32_t mode = 0;
  std::string nvtx_message;
  std::string nvtx_domain;
  std::string chip;
  std::vector<SelectedMetric> metrics;
  std::vector<RejectedMetric> rejected;
  std::string reason;
  uint32_t max_ranges_per_pass = 0;
};

inline constexpr uint32_t kMaxRangesPerPass = 64;  // kernel mode: ranges per 100 ms pass
inline constexpr size_t kRangeHandoffBuffers = 16;
inline constexpr size_t kMaxPendingResults = 65536;
inline constexpr uint64_t kKernelPassNs = 100000000ull;

class RangeProfiler {
 public:
  RangeProfiler();
  ~RangeProfiler();
  RangeProfiler(const RangeProfiler&) = delete;
  RangeProfiler& operator=(const RangeProfiler&) = delete;

  // Metrics thread, once the driver is up: selects the metric list for every chip among `devices`
  // (CUDA ordinals), then arms the NVTX hooks (NVTX mode). `exiting` (set by the exit hook) cancels
  // the selection between host calls; nothing is armed then.
  void Prepare(const ProfilerApi* api,
               const DriverApi* driver,
               const MetricsOptions& options,
               const std::vector<MetricRequest>& requests,
               const std::vector<uint32_t>& devices,
               const std::atomic<bool>* exiting = nullptr);

  // NVTX hooks (application threads). `domain_name` nullptr = default domain.
  void OnNvtxPush(const char* domain_name,
                  const char* text,
                  const wchar_t* wide,
                  uint32_t domain_id,
                  uint32_t tid,
                  int depth);
  void OnNvtxPop(uint32_t tid, uint32_t domain_id, int depth);

  // Metrics thread: evaluates handed-off images; kernel mode: enables contexts and rotates passes.
  // `final`: stop and decode everything (process exit).
  void Pump(uint64_t now_ns, bool final);

  // Drain thread: moves out what is ready for the stream.
  void Take(std::vector<RangeConfigInfo>* configs, std::vector<RangeResult>* results, uint64_t* dropped);

  // Fork child: never touch CUPTI again.
  void MakeInert() {
    inert_.store(true, std::memory_order_release);
    g_range_armed.store(false, std::memory_order_relaxed);
  }

 private:
  struct Context;
  struct Pending {
    Context* context = nullptr;
    std::vector<uint8_t> image;
    std::string name;
    uint64_t pass_id = 0, start_ns = 0, end_ns = 0, dropped = 0;
    uint32_t tid = 0;
  };
  struct ChipSelection {
    Selection selection;
    std::vector<const char*> names;
  };

  bool Matches(const char* domain_name, const char* text, const wchar_t* wide) const;
  Context* ContextFor(void* cu_context, uint32_t device_id, bool kernel_mode);  // caller holds no lock
  bool EnableContext(Context* c, bool kernel_mode);
  bool StartPass(Context* c);
  // Stops the current pass, decodes it and queues its image for evaluation (context mutex held).
  void EndPass(Context* c, uint64_t end_ns);
  void Evaluate(Pending* p);
  void Fail(Context* c, const std::string& why);

  const ProfilerApi* api_ = nullptr;
  const DriverApi* driver_ = nullptr;
  MetricsOptions options_;
  std::atomic<bool> inert_{false};
  std::atomic<int> open_nvtx_passes_{0};  // lets every other NVTX pop return after one relaxed load

  std::mutex mu_;                                                // guards everything below
  std::map<std::string, std::shared_ptr<ChipSelection>> chips_;  // chip -> selection
  std::map<uint32_t, std::string> device_chip_;                  // ordinal -> chip
  std::vector<std::unique_ptr<Context>> contexts_;
  std::vector<std::vector<uint8_t>> free_buffers_;
  std::deque<Pending> pending_;
  std::vector<RangeConfigInfo> configs_;
  std::vector<RangeResult> results_;
  uint64_t dropped_ = 0;
  uint64_t next_pass_ = 1;
  std::vector<uint32_t> kernel_devices_;
};

}  // namespace gt::metrics
