// Choosing, per chip and at run time, the metrics of a set that CUPTI can collect in one pass, with
// the Profiler Host API (which works without a driver or GPU: CPU tests use the real libcupti).
//
// Algorithm (every step on a fresh host object, because a failed cuptiProfilerHostConfigAddMetrics
// poisons its object: every later call on it fails):
//   1. each requested metric alone: its candidates in order; the first one ConfigAddMetrics accepts
//      and that needs one pass is taken; the others are recorded as rejected with CUPTI's reason;
//   2. the taken metrics together: while the set is refused or needs more than one pass, the last
//      (lowest-priority) metric is dropped and recorded ("does not fit in one pass with ...");
//   3. the config image of the final set (built with the device's counter availability image when
//      one is given, so runtime restrictions count) is kept for SetConfig.
//
// Runs on gtrace's metrics thread (or a test's); reentrant; no gtrace state.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "inject/metrics/metric_catalog.h"
#include "inject/metrics/profiler_api.h"

namespace gt::metrics {

struct SelectedMetric {
  MetricRequest request;
  std::string cupti_name;  // the candidate the chip accepted
};

struct RejectedMetric {
  std::string key;
  std::string cupti_name;
  std::string reason;
};

struct Selection {
  std::vector<SelectedMetric> metrics;  // accepted, in request order
  std::vector<RejectedMetric> rejected;
  std::vector<uint8_t> config_image;
  size_t passes = 0;
  std::string error;  // set when nothing could be selected (unknown chip, no host API, ...)

  bool ok() const { return error.empty() && !metrics.empty(); }
  std::vector<const char*> CuptiNames() const;
};

// `availability` may be null (then runtime restrictions are not taken into account). `cancel`, when
// set by another thread (the process is exiting), ends the selection before its next host call with
// kSelectionCancelled: the selection makes tens of host calls, and CUPTI's static objects are
// destroyed by exit handlers while a thread still inside the host API crashes the host.
inline constexpr const char* kSelectionCancelled = "metric selection cancelled: the process is exiting";
Selection SelectMetrics(const ProfilerApi& api,
                        const std::string& chip,
                        const uint8_t* availability,
                        ProfilerKind kind,
                        const std::vector<MetricRequest>& requests,
                        const std::atomic<bool>* cancel = nullptr);

// RAII host object (cuptiProfilerHostInitialize / Deinitialize). Used by the selection and by the
// decoders (EvaluateToGpuValues needs a host object configured with the same metrics).
class HostObject {
 public:
  HostObject() = default;
  ~HostObject() { Reset(); }
  HostObject(const HostObject&) = delete;
  HostObject& operator=(const HostObject&) = delete;

  CUptiResult Init(const ProfilerApi* api, const std::string& chip, const uint8_t* availability, ProfilerKind kind);
  CUptiResult AddMetrics(const std::vector<const char*>& names);
  // Config image and its pass count (after AddMetrics succeeded).
  CUptiResult ConfigImage(std::vector<uint8_t>* image, size_t* passes);
  // Evaluates `names` for range/sample `index` of `counter_data` into `values`.
  CUptiResult Evaluate(const uint8_t* counter_data,
                       size_t counter_data_size,
                       size_t index,
                       const std::vector<const char*>& names,
                       double* values);
  void Reset();
  CUpti_Profiler_Host_Object* get() const { return object_; }

 private:
  const ProfilerApi* api_ = nullptr;
  CUpti_Profiler_Host_Object* object_ = nullptr;
};

}  // namespace gt::metrics
