// Capture-window and CUDA flags of `gtrace profile`, nsys's spelling, each turned into its GTRACE_*
// twin so that LD_PRELOAD=libgtrace.so with the variables behaves the same:
//   --capture-range=none|cudaProfilerApi|nvtx|steps:A-B   GTRACE_CAPTURE_RANGE
//   --nvtx-capture=RANGE[@DOMAIN|@*]            GTRACE_NVTX_CAPTURE
//   --capture-range-end=stop|repeat[:N]|none    GTRACE_CAPTURE_RANGE_END
//   --delay=S, --duration=S (seconds)           GTRACE_DELAY, GTRACE_DURATION
//   --cuda-graph-trace=graph|node               GTRACE_CUDA_GRAPH_TRACE
//   --cuda-memory-usage[=true|false]            GTRACE_CUDA_MEMORY_USAGE
//   --cupti-path=PATH                           GTRACE_CUPTI_PATH
//   --cuda-buffer-mb=MB                         GTRACE_CUDA_BUFFER_MB
// The library parses the same values (collector/config.cc); here they are checked early so a typo is
// a usage error instead of a warning inside the profiled process.
#include <string>

#include <unistd.h>

#include "tools/cli/commands.h"

namespace gt::cli {
namespace {

bool IsSeconds(std::string_view v) {
  size_t dot = v.find('.');
  std::string_view whole = v.substr(0, dot);
  std::string_view frac = dot == std::string_view::npos ? std::string_view() : v.substr(dot + 1);
  if ((whole.empty() && frac.empty()) || frac.size() > 9 || whole.size() > 8) return false;
  for (char c : whole) {
    if (c < '0' || c > '9') return false;
  }
  for (char c : frac) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

}  // namespace

void AddCaptureFlags(ArgParser* p, std::map<std::string, std::string>* env) {
  p->Add({"capture-range", 'c', true, "RANGE",
          "when to record: none (whole run), cudaProfilerApi (cudaProfilerStart..Stop, gtrace.start()..stop()), "
          "nvtx (the --nvtx-capture range), steps:A-B (steps A to B of gtrace.step(), counted from 0) "
          "(GTRACE_CAPTURE_RANGE; default none)",
          [env](std::string_view v) {
            if (v.substr(0, 6) == "steps:") {
              // The library parses the same text (collector/config.cc, ParseCaptureRange).
              size_t dash = v.find('-', 6);
              uint64_t a = 0, b = 0;
              if (dash == std::string_view::npos ||
                  !ParseUnsigned("--capture-range", v.substr(6, dash - 6), 0, 1000000000000ull, &a).ok() ||
                  !ParseUnsigned("--capture-range", v.substr(dash + 1), a, 1000000000000ull, &b).ok()) {
                return Status::Error("--capture-range: '" + std::string(v) + "' (expected steps:A-B, A <= B)");
              }
            } else if (v != "none" && v != "cudaProfilerApi" && v != "nvtx") {
              return Status::Error("--capture-range: '" + std::string(v) +
                                   "' (known: none, cudaProfilerApi, nvtx, steps:A-B)");
            }
            (*env)["GTRACE_CAPTURE_RANGE"] = std::string(v);
            return Status::Ok();
          }});
  p->Add({"nvtx-capture", 'p', true, "RANGE[@DOMAIN]",
          "the NVTX range that opens a window with --capture-range=nvtx; @* for any domain, \\@ for a literal @ "
          "(GTRACE_NVTX_CAPTURE)",
          [env](std::string_view v) {
            if (v.empty() || v.front() == '@' || v.back() == '@') {
              return Status::Error("--nvtx-capture: '" + std::string(v) + "' (expected RANGE[@DOMAIN])");
            }
            (*env)["GTRACE_NVTX_CAPTURE"] = std::string(v);
            return Status::Ok();
          }});
  p->Add({"capture-range-end", 0, true, "END",
          "after a window: stop (no more windows), repeat[:N] (up to N windows), none (keep recording) "
          "(GTRACE_CAPTURE_RANGE_END; default stop)",
          [env](std::string_view v) {
            bool ok = v == "stop" || v == "stop-shutdown" || v == "none" || v == "repeat";
            if (!ok && v.substr(0, 7) == "repeat:") {
              uint64_t n = 0;
              ok = ParseUnsigned("--capture-range-end", v.substr(7), 1, 1000000, &n).ok();
            }
            if (!ok) {
              return Status::Error("--capture-range-end: '" + std::string(v) + "' (known: stop, repeat[:N], none)");
            }
            (*env)["GTRACE_CAPTURE_RANGE_END"] = std::string(v);
            return Status::Ok();
          }});
  p->Add({"delay", 'y', true, "S", "seconds after launch before recording may start (GTRACE_DELAY; default 0)",
          [env](std::string_view v) {
            if (!IsSeconds(v)) return Status::Error("--delay: '" + std::string(v) + "' is not a number of seconds");
            (*env)["GTRACE_DELAY"] = std::string(v);
            return Status::Ok();
          }});
  p->Add({"duration", 'd', true, "S", "seconds of recording from the first window's start (GTRACE_DURATION)",
          [env](std::string_view v) {
            if (!IsSeconds(v)) return Status::Error("--duration: '" + std::string(v) + "' is not a number of seconds");
            (*env)["GTRACE_DURATION"] = std::string(v);
            return Status::Ok();
          }});
  p->Add({"cuda-graph-trace", 0, true, "graph|node",
          "CUDA graphs as whole launches or as their nodes' kernels and copies (GTRACE_CUDA_GRAPH_TRACE; default "
          "graph)",
          [env](std::string_view v) {
            if (v != "graph" && v != "node") {
              return Status::Error("--cuda-graph-trace: '" + std::string(v) + "' (known: graph, node)");
            }
            (*env)["GTRACE_CUDA_GRAPH_TRACE"] = std::string(v);
            return Status::Ok();
          }});
  p->Add({"cuda-memory-usage", 0, false, "", "record device memory allocations and pools (GTRACE_CUDA_MEMORY_USAGE)",
          [env](std::string_view v) {
            bool on = true;
            ParseBoolValue(v, &on);
            (*env)["GTRACE_CUDA_MEMORY_USAGE"] = on ? "true" : "false";
            return Status::Ok();
          }});
  p->Add({"cupti-path", 0, true, "PATH", "the libcupti to load (GTRACE_CUPTI_PATH; default: found beside the CUDA "
                                         "runtime, in the toolkit, then on the loader path)",
          [env](std::string_view v) {
            // The library would only warn in every process; a wrong path is better caught here.
            if (access(std::string(v).c_str(), R_OK) != 0) {
              return Status::Error("--cupti-path: cannot read '" + std::string(v) + "'");
            }
            (*env)["GTRACE_CUPTI_PATH"] = std::string(v);
            return Status::Ok();
          }});
  p->Add({"cuda-buffer-mb", 0, true, "MB", "memory for CUPTI activity buffers per process (GTRACE_CUDA_BUFFER_MB; "
                                           "default 64)",
          [env](std::string_view v) {
            uint64_t n = 0;
            Status st = ParseUnsigned("--cuda-buffer-mb", v, 1, 4096, &n);
            if (st.ok()) (*env)["GTRACE_CUDA_BUFFER_MB"] = std::to_string(n);
            return st;
          }});
}

Status CheckCaptureFlags(const std::map<std::string, std::string>& env) {
  auto range = env.find("GTRACE_CAPTURE_RANGE");
  bool nvtx_range = range != env.end() && range->second == "nvtx";
  if (nvtx_range && env.count("GTRACE_NVTX_CAPTURE") == 0) {
    return Status::Error("--capture-range=nvtx needs --nvtx-capture=RANGE[@DOMAIN]");
  }
  if (!nvtx_range && env.count("GTRACE_NVTX_CAPTURE") != 0) {
    return Status::Error("--nvtx-capture needs --capture-range=nvtx");
  }
  auto trace = env.find("GTRACE_TRACE");
  if (nvtx_range && trace != env.end() && trace->second.find("nvtx") == std::string::npos) {
    return Status::Error("--capture-range=nvtx needs nvtx in --trace");
  }
  if (range != env.end() && range->second == "cudaProfilerApi" && trace != env.end() &&
      trace->second.find("cuda") == std::string::npos) {
    return Status::Error("--capture-range=cudaProfilerApi needs cuda in --trace");
  }
  return Status::Ok();
}

}  // namespace gt::cli
