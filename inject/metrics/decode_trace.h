// DecodeTrace: GTRACE_GPU_METRICS_DEBUG=1 prints what CUPTI's PM sampling answered, per device: at
// each start and stop and once a second, the decode calls, completed samples, the time spent
// evaluating them (per sample) and the last decode's result and stop reason. Off by default; a
// diagnostic for the GPU machine, where no debugger leaves CUPTI undisturbed. Metrics thread only.
#pragma once

#include <stdlib.h>

#include <cstdint>
#include <string>

#include "collector/session.h"
#include "inject/metrics/pm_sampler.h"

namespace gt::metrics {

class DecodeTrace {
 public:
  static bool On() {
    static const bool on = [] {
      const char* v = getenv("GTRACE_GPU_METRICS_DEBUG");
      return v != nullptr && v[0] != '\0' && v[0] != '0';
    }();
    return on;
  }
  void Add(const DecodeStats& s) {
    total_.decode_calls += s.decode_calls;
    total_.completed += s.completed;
    total_.evaluate_ns += s.evaluate_ns;
    total_.samples += s.samples;
    total_.overflows += s.overflows;
    total_.decode_errors += s.decode_errors;
    total_.stale += s.stale;
    if (s.decode_calls != 0) {
      total_.last_result = s.last_result;
      total_.last_stop_reason = s.last_stop_reason;
    }
  }
  // `event`: "start", "stop" or "" (printed at most once a second).
  void Print(uint32_t device, const char* event, uint64_t now_ns) {
    if (!On() || (event[0] == '\0' && now_ns - last_ns_ < 1000000000ull)) return;
    last_ns_ = now_ns;
    const DecodeStats& t = total_;
    PrintLine("metrics debug: device " + std::to_string(device) + (event[0] ? std::string(" ") + event : "") +
              ": decode calls " + std::to_string(t.decode_calls) + ", completed samples " +
              std::to_string(t.completed) + ", queued " + std::to_string(t.samples) + ", evaluate " +
              std::to_string(t.completed ? t.evaluate_ns / t.completed : 0) + " ns/sample, overflows " +
              std::to_string(t.overflows) + ", errors " + std::to_string(t.decode_errors) + " (stale timestamps " +
              std::to_string(t.stale) + "), last result " +
              std::to_string(t.last_result) + ", last stop reason " + std::to_string(t.last_stop_reason));
  }

 private:
  DecodeStats total_;
  uint64_t last_ns_ = 0;
};

}  // namespace gt::metrics
