// capture_replay: replays a raw capture (docs/capture.md) through the fake CUPTI (a TEST DOUBLE)
// into libgtrace.so, which decodes it with its real code and writes a stream as in the recording
// process. Run it like any traced program (LD_PRELOAD / CUDA_INJECTION64_PATH=libgtrace.so,
// GTRACE_CUPTI_PATH=libgt_fake_cupti.so).
//
//   capture_replay <capture.gtcap>
//
// Prints the replay's counts as "key=value" lines; exits 0 when the file was replayed, 2 when it
// could not be read.
//
// The recorded timestamps are on the recording machine's CLOCK_MONOTONIC (gtrace's clock, which
// CUPTI used through the timestamp callback). So that the replayed records fall inside the replay's
// session (the exporter clamps times before a stream's start to 0), this program moves
// CLOCK_MONOTONIC for the whole process: clock_gettime below interposes libc's (the executable's
// definition wins for libgtrace.so and the fake too) and makes "now" start kLeadNs before the
// capture's start_ns: enough for the replay's session to start (a loaded CI machine can take
// milliseconds) before the first recorded timestamp. Nothing in the capture is changed.
#include <dlfcn.h>
#include <time.h>

#include <atomic>
#include <cstdio>
#include <string>

#include "tests/fakes/capture_reader.h"
#include "tests/fakes/fake_cuda.h"

namespace {
std::atomic<int64_t> g_monotonic_shift_ns{0};  // subtracted from CLOCK_MONOTONIC readings
constexpr int64_t kLeadNs = 1000000000;

using ClockGettimeFn = int (*)(clockid_t, timespec*);
ClockGettimeFn RealClockGettime() {
  static ClockGettimeFn fn = reinterpret_cast<ClockGettimeFn>(dlsym(RTLD_NEXT, "clock_gettime"));
  return fn;
}
}  // namespace

extern "C" int clock_gettime(clockid_t clock, timespec* ts) {
  int r = RealClockGettime()(clock, ts);
  int64_t shift = g_monotonic_shift_ns.load(std::memory_order_relaxed);
  if (r == 0 && clock == CLOCK_MONOTONIC && shift != 0) {
    int64_t ns = static_cast<int64_t>(ts->tv_sec) * 1000000000 + ts->tv_nsec - shift;
    ts->tv_sec = ns / 1000000000;
    ts->tv_nsec = ns % 1000000000;
  }
  return r;
}

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: capture_replay <capture.gtcap>\n");
    return 2;
  }
  fake::CaptureFile file;
  std::string error;
  if (!fake::ReadCaptureFile(argv[1], &file, &error)) {
    std::fprintf(stderr, "fake-replay: %s\n", error.c_str());
    return 2;
  }
  if (auto it = file.info.find("start_ns"); it != file.info.end()) {
    timespec now;
    RealClockGettime()(CLOCK_MONOTONIC, &now);
    int64_t now_ns = static_cast<int64_t>(now.tv_sec) * 1000000000 + now.tv_nsec;
    g_monotonic_shift_ns.store(now_ns - (static_cast<int64_t>(std::stoull(it->second)) - kLeadNs));
  }
  fake_cuInit();
  fake_replay_stats st{};
  if (fake_ReplayCapture(argv[1], &st) != 0)
    return 2;
  std::printf(
      "callbacks_fired=%llu\ncallbacks_skipped=%llu\nbuffers_delivered=%llu\nbuffers_declined=%llu\n"
      "records=%llu\nwalk_mismatches=%llu\nstrings_missing=%llu\ndrops_replayed=%llu\n",
      static_cast<unsigned long long>(st.callbacks_fired), static_cast<unsigned long long>(st.callbacks_skipped),
      static_cast<unsigned long long>(st.buffers_delivered), static_cast<unsigned long long>(st.buffers_declined),
      static_cast<unsigned long long>(st.records), static_cast<unsigned long long>(st.walk_mismatches),
      static_cast<unsigned long long>(st.strings_missing), static_cast<unsigned long long>(st.drops_replayed));
  return 0;
}
