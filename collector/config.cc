#include "collector/config.h"

#include <cstring>

#include "collector/sources.h"

namespace gt {
namespace {

// Every variable any part of libgtrace reads. Subsystems add theirs here.
constexpr const char* kKnownVariables[] = {
    "GTRACE_OUTPUT",        "GTRACE_TRACE",          "GTRACE_BUFFER_MB", "GTRACE_THREAD_BUFFER_KB",
    "GTRACE_FLUSH_MS",      "GTRACE_FULL_RING",      "GTRACE_MANIFEST",       "GTRACE_CLOCK",       "GTRACE_FORCE_OVERWRITE", "GTRACE_EXIT_WAIT_MS",
    // CUDA tracing
    "GTRACE_CUPTI_PATH",    "GTRACE_CAPTURE_RANGE",  "GTRACE_CAPTURE_RANGE_END", "GTRACE_NVTX_CAPTURE",
    "GTRACE_DELAY",         "GTRACE_DURATION",       "GTRACE_CUDA_GRAPH_TRACE",  "GTRACE_CUDA_MEMORY_USAGE",
    "GTRACE_CUDA_BUFFER_MB", "GTRACE_RAW_CAPTURE_DIR", "GTRACE_RAW_CAPTURE_SCENARIO",
    // NCCL, GPU metrics, call stacks, processes
    "GTRACE_NCCL_TRACE",    "GTRACE_NCCL_POOL_EVENTS", "GTRACE_GPU_METRICS_DEVICES", "GTRACE_GPU_METRICS_DEBUG", "GTRACE_GPU_METRICS_FREQUENCY",
    "GTRACE_GPU_METRICS_SET", "GTRACE_GPU_METRICS_RANGES", "GTRACE_CUDABACKTRACE", "GTRACE_TRACE_FORK_BEFORE_EXEC",
    // OS runtime tracing (inject/osrt)
    "GTRACE_OSRT_THRESHOLD", "GTRACE_OSRT_BACKTRACE_THRESHOLD", "GTRACE_OSRT_BACKTRACE_DEPTH",
    "GTRACE_PYTHON_BACKTRACE", "GTRACE_LIBUNWIND_PATH",
    // CPU sampling (inject/sampling)
    "GTRACE_SAMPLE", "GTRACE_SAMPLING_FREQUENCY", "GTRACE_PYTHON_SAMPLING", "GTRACE_BACKTRACE",
    // Set by the library itself / tests; GTRACE_LIBRARY is the CLI's (which libgtrace.so `gtrace
    // profile` preloads) and reaches the traced program through its environment (issue 28, item 13).
    "GTRACE_LIBRARY_PATH",  "GTRACE_DISABLE", "GTRACE_LIBRARY",
};

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

bool ParseBounded(const char* name, const char* value, uint64_t lo, uint64_t hi, uint64_t* out,
                  std::vector<std::string>* warnings) {
  uint64_t v = 0;
  if (!ParseUint64(Trim(value), &v) || v < lo || v > hi) {
    warnings->push_back(std::string(name) + "='" + value + "' is not a whole number in [" + std::to_string(lo) +
                        ", " + std::to_string(hi) + "]; using the default");
    return false;
  }
  *out = v;
  return true;
}

}  // namespace

namespace {

// GTRACE_CAPTURE_RANGE, GTRACE_NVTX_CAPTURE, GTRACE_CAPTURE_RANGE_END, GTRACE_DELAY, GTRACE_DURATION.
// A bad value keeps the default and adds a warning, like every other variable.
void LoadCaptureConfig(EnvGetter getenv_fn, Config* c) {
  CaptureConfig& cap = c->capture;
  std::string error;
  if (const char* v = getenv_fn("GTRACE_CAPTURE_RANGE"); v != nullptr && !ParseCaptureRange(v, &cap.range, &error, &cap.step_first, &cap.step_last)) {
    c->warnings.push_back("GTRACE_CAPTURE_RANGE: " + error + "; capturing the whole run");
  }
  if (const char* v = getenv_fn("GTRACE_NVTX_CAPTURE"); v != nullptr &&
      !ParseNvtxCapture(v, &cap.nvtx_message, &cap.nvtx_domain, &cap.nvtx_any_domain, &error)) {
    c->warnings.push_back("GTRACE_NVTX_CAPTURE: " + error);
    cap.nvtx_message.clear();
  }
  if (cap.range == CaptureRange::kNvtx && cap.nvtx_message.empty()) {
    c->warnings.push_back("GTRACE_CAPTURE_RANGE=nvtx needs GTRACE_NVTX_CAPTURE=message[@domain]; capturing the whole run");
    cap.range = CaptureRange::kNone;
  }
  if (cap.range == CaptureRange::kNvtx && !(c->sources & kSourceNvtx)) {
    c->warnings.push_back("GTRACE_CAPTURE_RANGE=nvtx needs nvtx in GTRACE_TRACE; capturing the whole run");
    cap.range = CaptureRange::kNone;
  }
  if (cap.range == CaptureRange::kCudaProfilerApi && !(c->sources & kSourceCuda)) {
    c->warnings.push_back("GTRACE_CAPTURE_RANGE=cudaProfilerApi needs cuda in GTRACE_TRACE; capturing the whole run");
    cap.range = CaptureRange::kNone;
  }
  if (const char* v = getenv_fn("GTRACE_CAPTURE_RANGE_END");
      v != nullptr && !ParseCaptureRangeEnd(v, &cap.end, &cap.repeat_count, &error)) {
    c->warnings.push_back("GTRACE_CAPTURE_RANGE_END: " + error + "; using stop");
  }
  if (const char* v = getenv_fn("GTRACE_DELAY"); v != nullptr && !ParseSecondsNs(v, &cap.delay_ns, &error)) {
    c->warnings.push_back("GTRACE_DELAY: " + error + "; using 0");
    cap.delay_ns = 0;
  }
  if (const char* v = getenv_fn("GTRACE_DURATION"); v != nullptr && !ParseSecondsNs(v, &cap.duration_ns, &error)) {
    c->warnings.push_back("GTRACE_DURATION: " + error + "; recording until the end");
    cap.duration_ns = 0;
  }
}

}  // namespace

bool ParseCaptureRange(std::string_view text, CaptureRange* out, std::string* error, uint64_t* step_first,
                       uint64_t* step_last) {
  text = Trim(text);
  if (text.substr(0, 6) == "steps:") {
    std::string_view range = text.substr(6);
    size_t dash = range.find('-');
    uint64_t a = 0, b = 0;
    if (dash == std::string_view::npos || !ParseUint64(range.substr(0, dash), &a) ||
        !ParseUint64(range.substr(dash + 1), &b) || b < a || step_first == nullptr || step_last == nullptr) {
      *error = "'" + std::string(text) + "': expected steps:A-B with step numbers A <= B";
      return false;
    }
    *out = CaptureRange::kSteps;
    *step_first = a;
    *step_last = b;
    return true;
  }
  if (text == "none") {
    *out = CaptureRange::kNone;
  } else if (text == "cudaProfilerApi") {
    *out = CaptureRange::kCudaProfilerApi;
  } else if (text == "nvtx") {
    *out = CaptureRange::kNvtx;
  } else {
    *error = "unknown capture range '" + std::string(text) + "' (known: none, cudaProfilerApi, nvtx, steps:A-B)";
    return false;
  }
  return true;
}

bool ParseCaptureRangeEnd(std::string_view text, CaptureRangeEnd* end, uint32_t* repeat_count, std::string* error) {
  text = Trim(text);
  *repeat_count = 0;
  if (text == "stop" || text == "stop-shutdown") {
    // stop-shutdown is accepted as stop: gtrace never ends the application.
    *end = CaptureRangeEnd::kStop;
  } else if (text == "none") {
    *end = CaptureRangeEnd::kNone;
  } else if (text == "repeat") {
    *end = CaptureRangeEnd::kRepeat;
  } else if (text.substr(0, 7) == "repeat:") {
    uint64_t n = 0;
    if (!ParseUint64(text.substr(7), &n) || n == 0 || n > 1000000) {
      *error = "'" + std::string(text) + "': repeat:N needs a count from 1 to 1000000";
      return false;
    }
    *end = CaptureRangeEnd::kRepeat;
    *repeat_count = static_cast<uint32_t>(n);
  } else {
    *error = "unknown capture range end '" + std::string(text) + "' (known: stop, repeat[:N], none)";
    return false;
  }
  return true;
}

bool ParseNvtxCapture(std::string_view text, std::string* message, std::string* domain, bool* any_domain,
                      std::string* error) {
  // "message[@domain]"; "@*" = any domain; "\@" is a literal '@'. The last unescaped '@' splits.
  size_t split = std::string_view::npos;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\\' && i + 1 < text.size() && text[i + 1] == '@') {
      ++i;
    } else if (text[i] == '@') {
      split = i;
    }
  }
  auto unescape = [](std::string_view part) {
    std::string out;
    for (size_t i = 0; i < part.size(); ++i) {
      if (part[i] == '\\' && i + 1 < part.size() && part[i + 1] == '@') ++i;
      out.push_back(part[i]);
    }
    return out;
  };
  *message = unescape(text.substr(0, split));
  *domain = split == std::string_view::npos ? std::string() : unescape(text.substr(split + 1));
  *any_domain = split != std::string_view::npos && *domain == "*";
  if (*any_domain) domain->clear();
  if (message->empty()) {
    *error = "'" + std::string(text) + "': the range message is empty (expected message[@domain])";
    return false;
  }
  if (split != std::string_view::npos && domain->empty() && !*any_domain) {
    *error = "'" + std::string(text) + "': the domain after '@' is empty (use message@* for any domain)";
    return false;
  }
  return true;
}

bool ParseSecondsNs(std::string_view text, uint64_t* ns, std::string* error) {
  text = Trim(text);
  size_t dot = text.find('.');
  std::string_view whole = text.substr(0, dot);
  std::string_view frac = dot == std::string_view::npos ? std::string_view() : text.substr(dot + 1);
  uint64_t secs = 0;
  bool ok = !text.empty() && (whole.empty() || ParseUint64(whole, &secs)) && frac.size() <= 9 &&
            !(whole.empty() && frac.empty()) && secs <= 10000000;
  uint64_t frac_ns = 0;
  for (size_t i = 0; ok && i < 9; ++i) {
    char c = i < frac.size() ? frac[i] : '0';
    if (c < '0' || c > '9') ok = false;
    frac_ns = frac_ns * 10 + static_cast<uint64_t>(c - '0');
  }
  if (!ok) {
    *error = "'" + std::string(text) + "' is not a number of seconds (e.g. 5 or 0.25)";
    return false;
  }
  *ns = secs * 1000000000ull + frac_ns;
  return true;
}

bool ParseUint64(std::string_view text, uint64_t* out) {
  if (text.empty() || text.size() > 19) return false;
  uint64_t v = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + static_cast<uint64_t>(c - '0');
  }
  *out = v;
  return true;
}

bool ParseBool(std::string_view text, bool* out) {
  text = Trim(text);
  for (const char* t : {"1", "true", "yes", "on"}) {
    if (text == t) return *out = true, true;
  }
  for (const char* f : {"0", "false", "no", "off"}) {
    if (text == f) return *out = false, true;
  }
  return false;
}

bool IsKnownVariable(std::string_view name) {
  for (const char* k : kKnownVariables) {
    if (name == k) return true;
  }
  return false;
}

bool ParseTraceList(std::string_view text, uint32_t* mask, std::string* error, std::vector<std::string>* notes) {
  uint32_t m = 0;
  bool none = false;
  size_t count = 0;
  while (true) {
    size_t comma = text.find(',');
    std::string_view item = Trim(text.substr(0, comma));
    if (item.empty()) {
      *error = "empty name in trace list";
      return false;
    }
    ++count;
    if (item == "nvtx") {
      m |= kSourceNvtx;
    } else if (item == "cuda") {
      m |= kSourceCuda;
    } else if (item == "nccl") {
      m |= kSourceNccl;
    } else if (item == "osrt") {
      m |= kSourceOsrt;
    } else if (item == "none") {
      none = true;
    } else if (item == "mpi" || item == "ucx" || item == "oshmem" || item == "cublas" ||
               item == "cudnn" || item == "cusparse" || item == "opengl" || item == "openacc" || item == "openmp" ||
               item == "vulkan" || item == "nvvideo" || item == "python-gil" || item == "syscall") {
      if (notes) notes->push_back("trace '" + std::string(item) + "' is an nsys option gtrace does not implement; ignored");
    } else {
      *error = "unknown trace '" + std::string(item) + "' (known: cuda, nvtx, nccl, osrt, none)";
      return false;
    }
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
  }
  if (none && count > 1) {
    *error = "'none' cannot be combined with other traces";
    return false;
  }
  *mask = m;
  return true;
}

namespace {
// CPU sampling (nsys's --sample / --sampling-frequency; inject/sampling/). Like GPU metrics, asked
// for by its own variables, not by GTRACE_TRACE.
void LoadSamplingConfig(EnvGetter getenv_fn, Config* c) {
  if (const char* v = getenv_fn("GTRACE_SAMPLE"); v != nullptr) {
    std::string error;
    if (ParseSampleMode(v, &c->sample_cpu, &error)) {
      c->sample = std::string(Trim(v));
    } else {
      c->warnings.push_back("GTRACE_SAMPLE='" + std::string(v) + "': " + error + "; CPU sampling off");
    }
  }
  uint64_t v64 = 0;
  if (const char* v = getenv_fn("GTRACE_SAMPLING_FREQUENCY");
      v != nullptr && ParseBounded("GTRACE_SAMPLING_FREQUENCY", v, kMinSamplingFrequencyHz, kMaxSamplingFrequencyHz,
                                   &v64, &c->warnings)) {
    c->sampling_frequency_hz = static_cast<uint32_t>(v64);
  }
  if (const char* v = getenv_fn("GTRACE_PYTHON_SAMPLING"); v != nullptr) {
    std::string_view t = Trim(v);
    if (t == "true" || t == "1") {
      c->python_sampling = true;
    } else if (t != "false" && t != "0" && !t.empty()) {
      c->warnings.push_back("GTRACE_PYTHON_SAMPLING='" + std::string(v) + "': expected true or false; Python frames in "
                            "CPU samples are off");
    }
    if (c->python_sampling && !c->sample_cpu) {
      c->warnings.push_back("GTRACE_PYTHON_SAMPLING=true has no effect without GTRACE_SAMPLE=process-tree (CPU "
                            "sampling is off)");
      c->python_sampling = false;
    }
  }
  if (const char* v = getenv_fn("GTRACE_BACKTRACE"); v != nullptr) {
    std::string error;
    SampleBacktrace b = SampleBacktrace::kFp;
    if (!ParseSampleBacktrace(v, &b, &error)) {
      c->warnings.push_back("GTRACE_BACKTRACE='" + std::string(v) + "': " + error + "; fp");
    } else if (b != SampleBacktrace::kFp && !c->sample_cpu) {
      c->warnings.push_back("GTRACE_BACKTRACE=" + std::string(SampleBacktraceName(b)) +
                            " has no effect without GTRACE_SAMPLE=process-tree (CPU sampling is off)");
    } else {
      c->sample_backtrace = b;
    }
  }
  if (c->sample_cpu) c->sources |= kSourceSampling;
}

}  // namespace

bool ParseSampleMode(std::string_view text, bool* on, std::string* error) {
  text = Trim(text);
  // "cpu" is nsys's older spelling of process-tree (`nsys profile -s cpu`).
  if (text == "process-tree" || text == "cpu") {
    *on = true;
    return true;
  }
  if (text == "none") {
    *on = false;
    return true;
  }
  if (text == "system-wide") {
    *error = "system-wide sampling needs root and is not implemented (use process-tree)";
    return false;
  }
  *error = "not process-tree or none";
  return false;
}

bool ParseSampleBacktrace(std::string_view text, SampleBacktrace* out, std::string* error) {
  text = Trim(text);
  if (text == "fp") {
    *out = SampleBacktrace::kFp;
  } else if (text == "dwarf") {
    *out = SampleBacktrace::kDwarf;
  } else if (text == "none") {
    *out = SampleBacktrace::kNone;
  } else if (text == "lbr") {
    *error = "lbr needs a hardware PMU's last branch records, and gtrace samples the software cpu-clock event";
    return false;
  } else {
    *error = "not fp, dwarf or none";
    return false;
  }
  return true;
}

const char* SampleBacktraceName(SampleBacktrace b) {
  switch (b) {
    case SampleBacktrace::kDwarf:
      return "dwarf";
    case SampleBacktrace::kNone:
      return "none";
    case SampleBacktrace::kFp:
      break;
  }
  return "fp";
}

Config LoadConfig(EnvGetter getenv_fn, char** environ_list) {
  Config c;
  for (char** e = environ_list; e != nullptr && *e != nullptr; ++e) {
    if (std::strncmp(*e, "GTRACE_", 7) != 0) continue;
    const char* eq = std::strchr(*e, '=');
    if (eq == nullptr) continue;
    std::string name(*e, eq - *e);
    c.raw.emplace_back(name, eq + 1);
    if (!IsKnownVariable(name)) c.warnings.push_back("unknown variable " + name + " ignored");
  }
  if (const char* v = getenv_fn("GTRACE_OUTPUT"); v != nullptr) {
    if (*v != '\0') {
      c.output_pattern = v;
    } else {
      c.warnings.push_back("GTRACE_OUTPUT is empty; using the default name");
    }
  }
  if (const char* v = getenv_fn("GTRACE_TRACE"); v != nullptr) c.trace = v;
  std::string error;
  if (!ParseTraceList(c.trace, &c.sources, &error, &c.warnings)) {
    c.warnings.push_back("GTRACE_TRACE='" + c.trace + "': " + error + "; using cuda,nvtx,nccl");
    c.trace = "cuda,nvtx,nccl";
    ParseTraceList(c.trace, &c.sources, &error, nullptr);
  }
  uint64_t v64 = 0;
  if (const char* v = getenv_fn("GTRACE_BUFFER_MB"); v != nullptr && ParseBounded("GTRACE_BUFFER_MB", v, 1, 65536, &v64, &c.warnings)) {
    c.buffer_bytes = v64 << 20;
  }
  if (const char* v = getenv_fn("GTRACE_THREAD_BUFFER_KB");
      v != nullptr && ParseBounded("GTRACE_THREAD_BUFFER_KB", v, 16, 1 << 20, &v64, &c.warnings)) {
    c.thread_buffer_bytes = v64 << 10;
  }
  if (const char* v = getenv_fn("GTRACE_FLUSH_MS"); v != nullptr && ParseBounded("GTRACE_FLUSH_MS", v, 10, 60000, &v64, &c.warnings)) {
    c.flush_interval_ms = static_cast<uint32_t>(v64);
  }
  if (const char* v = getenv_fn("GTRACE_FULL_RING"); v != nullptr) {
    std::string_view t = Trim(v);
    if (t == "wait") {
      c.full_ring_wait = true;
    } else if (t == "drop") {
      c.full_ring_wait = false;
    } else {
      c.warnings.push_back(std::string("GTRACE_FULL_RING='") + v + "' is not wait or drop; using wait");
    }
  }
  if (const char* v = getenv_fn("GTRACE_EXIT_WAIT_MS");
      v != nullptr && ParseBounded("GTRACE_EXIT_WAIT_MS", v, 1, 10000, &v64, &c.warnings)) {
    c.exit_wait_ms = static_cast<uint32_t>(v64);
  }
  if (const char* v = getenv_fn("GTRACE_OSRT_THRESHOLD");
      v != nullptr && ParseBounded("GTRACE_OSRT_THRESHOLD", v, 0, 3600000000000ull, &v64, &c.warnings)) {
    c.osrt_threshold_ns = v64;
  }
  if (const char* v = getenv_fn("GTRACE_OSRT_BACKTRACE_THRESHOLD");
      v != nullptr && ParseBounded("GTRACE_OSRT_BACKTRACE_THRESHOLD", v, 0, 3600000000000ull, &v64, &c.warnings)) {
    c.osrt_backtrace = true;
    c.osrt_backtrace_threshold_ns = v64;
  }
  if (const char* v = getenv_fn("GTRACE_OSRT_BACKTRACE_DEPTH");
      v != nullptr && ParseBounded("GTRACE_OSRT_BACKTRACE_DEPTH", v, 1, 64, &v64, &c.warnings)) {
    c.osrt_backtrace_depth = static_cast<uint32_t>(v64);
  }
  if (const char* v = getenv_fn("GTRACE_MANIFEST"); v != nullptr) c.manifest_path = v;
  if (const char* v = getenv_fn("GTRACE_FORCE_OVERWRITE"); v != nullptr && !ParseBool(v, &c.force_overwrite)) {
    c.warnings.push_back(std::string("GTRACE_FORCE_OVERWRITE='") + v + "' is not a boolean; using false");
  }
  if (const char* v = getenv_fn("GTRACE_TRACE_FORK_BEFORE_EXEC");
      v != nullptr && !ParseBool(v, &c.trace_fork_before_exec)) {
    c.warnings.push_back(std::string("GTRACE_TRACE_FORK_BEFORE_EXEC='") + v + "' is not a boolean; using true");
  }
  if (const char* v = getenv_fn("GTRACE_CLOCK"); v != nullptr && !ParseClockChoice(Trim(v), &c.clock)) {
    c.warnings.push_back(std::string("GTRACE_CLOCK='") + v + "' is not auto, tsc or monotonic; using auto");
  }
  // GPU metrics are asked for by their own variables (as nsys's --gpu-metrics-devices), not by
  // GTRACE_TRACE; inject/metrics reads the values and reports bad ones.
  if (const char* v = getenv_fn("GTRACE_GPU_METRICS_DEVICES"); v != nullptr && Trim(v) != "none" && !Trim(v).empty()) {
    c.sources |= kSourceGpuMetrics;
  }
  if (const char* v = getenv_fn("GTRACE_GPU_METRICS_RANGES"); v != nullptr && Trim(v) != "none" && !Trim(v).empty()) {
    c.sources |= kSourceGpuMetrics;
  }
  LoadSamplingConfig(getenv_fn, &c);
  LoadCaptureConfig(getenv_fn, &c);
  if (c.thread_buffer_bytes == 0) {
    // The initial ring; rings under pressure grow within buffer_bytes (issue 20), so 512 KiB is
    // enough to start: at a high-water mark of half, 4096 records before the drain thread is poked.
    c.thread_buffer_bytes = c.buffer_bytes / 128;
    if (c.thread_buffer_bytes < (64u << 10)) c.thread_buffer_bytes = 64u << 10;
    if (c.thread_buffer_bytes > (512u << 10)) c.thread_buffer_bytes = 512u << 10;
  }
  if (c.thread_buffer_bytes > c.buffer_bytes) c.thread_buffer_bytes = c.buffer_bytes;
  return c;
}

}  // namespace gt
