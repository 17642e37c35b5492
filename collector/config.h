// Config: the session's settings, read once from GTRACE_* environment variables when the session
// starts (slow path). `gtrace profile` turns each CLI flag into its variable, so LD_PRELOAD alone
// behaves the same. The injected library never fails on a bad value: it keeps the default and
// reports one warning (printed as a `gtrace:` line and recorded in the stream).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "collector/clock_source.h"

namespace gt {

using EnvGetter = const char* (*)(const char*);

// Capture windows (nsys's --capture-range, --nvtx-capture, --capture-range-end, --delay,
// --duration). The collector only needs `StartsPaused()` (recording begins off); the window logic
// that opens and closes recording lives with the injection code (inject/cupti/capture_window.h).
// kSteps: gtrace.step() (the Python API, inject/api_entry.cc) counts steps; a window covers steps
// step_first..step_last, both included (steps are numbered from 0 at session start).
enum class CaptureRange { kNone, kCudaProfilerApi, kNvtx, kSteps };
enum class CaptureRangeEnd { kStop, kRepeat, kNone };
enum class SampleBacktrace : uint8_t { kFp, kDwarf, kNone };  // GTRACE_BACKTRACE (Config::sample_backtrace)
struct CaptureConfig {
  CaptureRange range = CaptureRange::kNone;    // GTRACE_CAPTURE_RANGE
  uint64_t step_first = 0;                      //   steps:A-B: A
  uint64_t step_last = 0;                       //   steps:A-B: B (>= A)
  std::string nvtx_message;                     // GTRACE_NVTX_CAPTURE "message[@domain]"
  std::string nvtx_domain;                      //   "" = default domain
  bool nvtx_any_domain = false;                 //   "message@*"
  CaptureRangeEnd end = CaptureRangeEnd::kStop;  // GTRACE_CAPTURE_RANGE_END
  uint32_t repeat_count = 0;                    //   repeat:N (0 = no limit)
  uint64_t delay_ns = 0;                        // GTRACE_DELAY (seconds, decimals allowed)
  uint64_t duration_ns = 0;                     // GTRACE_DURATION (0 = until the end)
  bool StartsPaused() const { return range != CaptureRange::kNone || delay_ns > 0; }
};

struct Config {
  std::string output_pattern = "gtrace-%h-%p";  // GTRACE_OUTPUT
  std::string trace = "cuda,nvtx,nccl";          // GTRACE_TRACE, as given
  uint32_t sources = 0;                           // SourceBit mask parsed from `trace`
  // GTRACE_BUFFER_MB: all thread rings together, grown ones included. 256 MiB by measurement
  // (bench/results/2026-11-25-nvtx-burst.md): a 2 M push/pop burst is 256 MiB of records, and a
  // busy machine can keep the drain thread off a CPU for 100+ ms. Committed only when used.
  uint64_t buffer_bytes = 256ull << 20;
  uint64_t thread_buffer_bytes = 0;               // GTRACE_THREAD_BUFFER_KB, the initial ring; 0 = buffer / 128, 64..512 KiB
  uint32_t flush_interval_ms = 500;               // GTRACE_FLUSH_MS: longest time data waits in memory
  // GTRACE_FULL_RING=wait|drop: what a thread whose ring is full (and cannot grow within
  // buffer_bytes) does. wait (default): give its CPU to the drain thread, bounded (at most 10 ms
  // without a sign of life from the drain thread, 1 s without a release of
  // its ring), then drop; drop: drop and count at once.
  // By measurement: bench/results/2026-11-26-burst-8-threads.md (collector/full_ring_wait.h).
  bool full_ring_wait = true;
  // GTRACE_EXIT_WAIT_MS: longest wait for the writer when the process ends by _exit, exec, abort or
  // a crash signal (inject/exit/): the process ends then even if the stream is not finished.
  uint32_t exit_wait_ms = 100;
  std::string manifest_path;                      // GTRACE_MANIFEST: stream paths are appended here
  bool force_overwrite = false;                   // GTRACE_FORCE_OVERWRITE (CLI deletes; library never)
  // GTRACE_TRACE_FORK_BEFORE_EXEC: record in a child that was forked but has not exec'd yet
  // (DataLoader workers, multiprocessing). nsys's default is false; gtrace's is true.
  bool trace_fork_before_exec = true;
  // OS runtime tracing (-t osrt, inject/osrt/): calls shorter than this write nothing
  // (GTRACE_OSRT_THRESHOLD, nanoseconds; nsys's --osrt-threshold, default 1000).
  uint64_t osrt_threshold_ns = 1000;
  // OS runtime backtraces (inject/osrt/osrt_backtrace.cc): a recorded call that lasted at least
  // osrt_backtrace_threshold_ns gets the calling thread's stack, at most osrt_backtrace_depth frames.
  // On only when GTRACE_OSRT_BACKTRACE_THRESHOLD is set (nsys's --osrt-backtrace-threshold, default
  // 80000 there; gtrace keeps -t osrt without stacks unless asked); depth: GTRACE_OSRT_BACKTRACE_DEPTH
  // (nsys's --osrt-backtrace-depth, default 24), 1 to 64.
  bool osrt_backtrace = false;
  uint64_t osrt_backtrace_threshold_ns = 80000;
  uint32_t osrt_backtrace_depth = 24;
  // CPU sampling (inject/sampling/): GTRACE_SAMPLE=process-tree|none (nsys's --sample; "cpu" is
  // accepted as nsys's older name) and GTRACE_SAMPLING_FREQUENCY in Hz (nsys's
  // --sampling-frequency: 100..8000, default 1000).
  std::string sample = "none";
  bool sample_cpu = false;
  uint32_t sampling_frequency_hz = 1000;
  // GTRACE_PYTHON_SAMPLING=true|false (nsys's --python-sampling): with sampling on, each sample of a
  // thread running Python also carries its Python frames (inject/sampling/python_signal_sampler.h).
  bool python_sampling = false;
  // GTRACE_BACKTRACE=fp|dwarf|none (nsys's --backtrace, used with --sample): how a CPU sample's
  // callers are found. fp (default): the kernel's frame-pointer walk. dwarf: libunwind on the
  // sampled thread itself, from the context of the signal its sample raises
  // (inject/sampling/native_stack_slot.h): stacks of code built without frame pointers. none: the
  // sampled instruction only. nsys's lbr reads a hardware PMU's last-branch records, which the
  // software cpu-clock event has not: a warning, fp.
  SampleBacktrace sample_backtrace = SampleBacktrace::kFp;
  CaptureConfig capture;
  // GTRACE_CLOCK: the stream clock (collector/clock_source.h). auto by default (the TSC path passed
  // the GPU kit's row checks on an H200, 2026-11-26): the CPU's invariant tick counter where the
  // kernel trusts it, CLOCK_MONOTONIC otherwise; tsc / monotonic force one.
  ClockChoice clock = ClockChoice::kAuto;

  // Every GTRACE_* variable present, as seen (recorded in the stream header).
  std::vector<std::pair<std::string, std::string>> raw;
  // Problems found while reading (unknown variables, bad values); each becomes one `gtrace:` line.
  std::vector<std::string> warnings;
};

Config LoadConfig(EnvGetter getenv_fn, char** environ_list);

// Trace list "cuda,nvtx,nccl" / "none" -> SourceBit mask. Unknown names are errors; nsys names
// gtrace does not implement (mpi, ucx, ...) are accepted with a note in *notes.
bool ParseTraceList(std::string_view text, uint32_t* mask, std::string* error, std::vector<std::string>* notes);

// Capture-window values, as the CLI flags and GTRACE_* variables spell them. False (with *error) on a
// bad value. "S" seconds accept decimals ("0.5"); the result is in nanoseconds.
// "steps:A-B" fills *step_first/*step_last (an error when they are nullptr).
bool ParseCaptureRange(std::string_view text, CaptureRange* out, std::string* error, uint64_t* step_first = nullptr,
                       uint64_t* step_last = nullptr);
bool ParseCaptureRangeEnd(std::string_view text, CaptureRangeEnd* end, uint32_t* repeat_count, std::string* error);
bool ParseNvtxCapture(std::string_view text, std::string* message, std::string* domain, bool* any_domain,
                      std::string* error);
bool ParseSecondsNs(std::string_view text, uint64_t* ns, std::string* error);

// GTRACE_SAMPLE / --sample: "process-tree" or "cpu" -> on, "none" -> off; anything else (also nsys's
// root-only "system-wide") is an error.
bool ParseSampleMode(std::string_view text, bool* on, std::string* error);
// GTRACE_BACKTRACE's values: fp, dwarf, none. False with a reason in *error (lbr: why not).
bool ParseSampleBacktrace(std::string_view text, SampleBacktrace* out, std::string* error);
// "fp", "dwarf", "none" (what CpuSamplingConfig.backtrace carries).
const char* SampleBacktraceName(SampleBacktrace b);
inline constexpr uint64_t kMinSamplingFrequencyHz = 100, kMaxSamplingFrequencyHz = 8000;

// Shared value parsers (also used by subsystems for their own variables).
bool ParseUint64(std::string_view text, uint64_t* out);
bool ParseBool(std::string_view text, bool* out);  // true/false/1/0/yes/no/on/off

// Names of all GTRACE_* variables the library understands (for the unknown-variable warning).
bool IsKnownVariable(std::string_view name);

}  // namespace gt
