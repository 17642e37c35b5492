// PmSampler: CUPTI PM sampling on one device — set-up (chip name, counter availability, per-chip
// metric selection, enable, config, counter data image), start/stop, and the decode step that turns
// the hardware buffer into samples on the stream clock.
//
// Threads: only gtrace's metrics thread calls it (set-up, every decode, teardown), so it needs no
// lock; what it reports goes to the drain thread through DeviceInfo (copied under the module's
// mutex) and the SampleQueue. Owned by the metrics module.
//
// Clock: CUPTI stamps samples with its CPU clock — CLOCK_REALTIME by default, or gtrace's own
// timestamp callback (CLOCK_MONOTONIC) when the CUDA tracer registered it. The sampler converts with
// an offset measured by bracketing cuptiGetTimestamp between two CLOCK_MONOTONIC reads (tightest of
// 5 tries, re-measured every second by the module): stream ns = CUPTI ns - offset. With the callback
// registered the offset is ~0 and the conversion is the identity within the bracket width.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "inject/metrics/metric_selection.h"
#include "inject/metrics/profiler_api.h"
#include "inject/metrics/sample_queue.h"

namespace gt::metrics {

// What the stream says about a device (GpuMetricsDevice).
struct DeviceInfo {
  uint32_t device_id = 0;
  std::string uuid;  // 16 raw bytes, or empty
  std::string name;
  std::string chip;
  std::string pci_bus_id;
  uint32_t state = 0;  // field::enums::kGpuMetrics*
  std::string reason;
  std::string set_name;
  std::vector<SelectedMetric> metrics;
  std::vector<RejectedMetric> rejected;
  uint64_t interval_ns = 0;
  uint32_t trigger_mode = 0;
  uint64_t interval_raw = 0;
  uint64_t hw_buffer_bytes = 0;
  uint32_t max_samples = 0;
  int64_t clock_offset_ns = 0;
  uint64_t ts_ns = 0;
  uint32_t passes = 0;
  uint32_t sampler_tid = 0;
};

struct DecodeStats {
  uint64_t samples = 0;    // pushed into the queue
  uint32_t overflows = 0;  // decodes that reported a hardware-buffer overflow
  uint32_t decode_errors = 0;  // samples CUPTI could not describe or evaluate, or whose time did not advance
  uint32_t stale = 0;          // of those: end timestamp not after the last kept sample's
  // What CUPTI answered (GTRACE_GPU_METRICS_DEBUG and the loss line): decode calls, completed
  // samples seen, time spent evaluating them, the last decode's result and stop reason.
  uint32_t decode_calls = 0;
  uint64_t completed = 0;
  uint64_t evaluate_ns = 0;
  uint32_t last_result = 0;
  uint32_t last_stop_reason = 0;
};

// Sizes (bounded memory per sampled device: the hardware buffer is CUPTI's, in driver memory).
inline constexpr uint64_t kHardwareBufferBytes = 64ull << 20;
inline constexpr uint32_t kMaxSamplesPerDecode = 1024;
// SYSCLK trigger (Turing, GA100): the interval is given in SYS clock cycles; gtrace assumes a 1 GHz
// SYS clock, so the effective rate may differ (each sample still carries its exact timestamps).
inline constexpr uint64_t kAssumedSysClockHz = 1000000000ull;

// Text for a CUPTI result that means "counters unavailable" (permissions, another profiler holding
// them, an unsupported configuration), with the documented fix; "" for other results.
std::string UnavailableReason(CUptiResult r, const std::string& call);
// Whether `chip` needs the SYSCLK trigger (no GPU_TIME_INTERVAL on Turing and GA100).
bool NeedsSysclkTrigger(const std::string& chip);

class PmSampler {
 public:
  PmSampler(const ProfilerApi* api, uint32_t device_id) : api_(api), device_id_(device_id) {}
  ~PmSampler() { Disable(); }
  PmSampler(const PmSampler&) = delete;
  PmSampler& operator=(const PmSampler&) = delete;

  // Everything up to (not including) Start. Fills info (chip, metrics, rejected, trigger, ...).
  // False with info->state (UNAVAILABLE or FAILED) and info->reason.
  bool Setup(const std::vector<MetricRequest>& requests, uint64_t interval_ns, DeviceInfo* info);
  CUptiResult Start();
  CUptiResult Stop();
  // Drains the hardware buffer: decodes, evaluates every completed sample, converts its times
  // (stream ns = CUPTI ns - clock_offset_ns) and pushes it. The first sample after each Start is
  // discarded (its interval begins before the counters were armed). False after a failed decode.
  bool Decode(int64_t clock_offset_ns, SampleQueue* queue, DecodeStats* stats);
  void Disable();

  bool running() const { return running_; }
  size_t metric_count() const { return names_.size(); }

 private:
  CUptiResult ResetImage();

  const ProfilerApi* api_;
  uint32_t device_id_;
  CUpti_PmSampling_Object* object_ = nullptr;
  HostObject host_;  // configured with the selected metrics, for EvaluateToGpuValues
  std::vector<std::string> name_storage_;
  std::vector<const char*> names_;
  std::vector<uint8_t> config_image_;
  std::vector<uint8_t> counter_data_;
  std::vector<double> values_;
  bool running_ = false;
  bool discard_next_ = true;
  // CUPTI's end timestamp of the last kept sample. On an H200 (CUDA 13.0, 2026-11-26) CUPTI handed
  // out runs of samples whose end timestamps did not advance (9,446 samples with one timestamp in a
  // 8 s run): they cannot be placed in time, so they are dropped and counted as decode errors.
  uint64_t last_end_raw_ = 0;
};

}  // namespace gt::metrics
