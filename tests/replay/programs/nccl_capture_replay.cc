// nccl_capture_replay: replays a raw NCCL capture (docs/capture.md, nccl-<pid>.gtcap) through the
// fake NCCL host (a TEST DOUBLE, tests/fakes/fake_nccl_replay.cc) into the real profiler plugin of
// libgtrace.so, which records it with its real code and writes a stream as in the recording
// process. Run it like any traced program (LD_PRELOAD=libgtrace.so: the preload constructor sets
// NCCL_PROFILER_PLUGIN, which the fake host loads).
//
//   nccl_capture_replay <nccl-PID.gtcap>
//
// Prints the replay's counts as "key=value" lines; exits 0 when the file was replayed, 2 when not.
//
// Clocks. This program's clock_gettime interposes libc's (the executable's definition wins for the
// dlopen'ed plugin too). With R = the recording's realtime - monotonic (info frame):
//   - a replay thread inside a plugin call sees CLOCK_MONOTONIC pinned to the call's recorded time
//     (the time the plugin used in the recording), and CLOCK_REALTIME = that + R: the plugin
//     records exactly the recorded times, and a clock snapshot taken there has the recording's R;
//   - every other reading sees CLOCK_MONOTONIC = real CLOCK_REALTIME - R: the recording's clock,
//     advanced by the wall time since (so it is later than every recorded time: the session's
//     periodic snapshots and the drain thread's times come after the replayed events), with the
//     recording's realtime - monotonic difference. CLOCK_REALTIME itself is left alone there, so
//     timed waits (deadlines on CLOCK_REALTIME) behave.
// The stream's realtime - monotonic snapshots are then R exactly, where the recording's jittered
// around it by tens of ns: the exporter puts NCCL's GPU %globaltimer values (replayed raw) where
// the recording's did to within that jitter.
#include <dlfcn.h>
#include <time.h>

#include <atomic>
#include <cstdio>
#include <string>

#include "tests/fakes/capture_reader.h"
#include "tests/fakes/fake_nccl_host.h"

namespace {
std::atomic<int64_t> g_realtime_minus_monotonic_ns{0};  // R
std::atomic<bool> g_on{false};
thread_local int64_t t_pinned_ns = 0;  // a replay thread inside a plugin call

using ClockGettimeFn = int (*)(clockid_t, timespec*);
ClockGettimeFn RealClockGettime() {
  static ClockGettimeFn fn = reinterpret_cast<ClockGettimeFn>(dlsym(RTLD_NEXT, "clock_gettime"));
  return fn;
}

void SetNs(timespec* ts, int64_t ns) {
  ts->tv_sec = ns / 1000000000;
  ts->tv_nsec = ns % 1000000000;
}

void Pin(uint64_t ts_ns) {
  t_pinned_ns = static_cast<int64_t>(ts_ns);
}
}  // namespace

extern "C" int clock_gettime(clockid_t clock, timespec* ts) {
  if (!g_on.load(std::memory_order_relaxed) || (clock != CLOCK_MONOTONIC && clock != CLOCK_REALTIME)) {
    return RealClockGettime()(clock, ts);
  }
  int64_t r = g_realtime_minus_monotonic_ns.load(std::memory_order_relaxed);
  if (t_pinned_ns != 0) {
    SetNs(ts, clock == CLOCK_MONOTONIC ? t_pinned_ns : t_pinned_ns + r);
    return 0;
  }
  int rc = RealClockGettime()(CLOCK_REALTIME, ts);
  if (rc == 0 && clock == CLOCK_MONOTONIC)
    SetNs(ts, static_cast<int64_t>(ts->tv_sec) * 1000000000 + ts->tv_nsec - r);
  return rc;
}

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: nccl_capture_replay <nccl-PID.gtcap>\n");
    return 2;
  }
  fake::CaptureFile file;
  std::string error;
  if (!fake::ReadCaptureFile(argv[1], &file, &error)) {
    std::fprintf(stderr, "fake-nccl-replay: %s\n", error.c_str());
    return 2;
  }
  if (file.info["kind"] != "nccl") {
    std::fprintf(stderr, "fake-nccl-replay: %s is not an NCCL capture (kind=%s)\n", argv[1], file.info["kind"].c_str());
    return 2;
  }
  if (auto it = file.info.find("realtime_minus_monotonic_ns"); it != file.info.end()) {
    g_realtime_minus_monotonic_ns.store(std::stoll(it->second));
    g_on.store(true);
  }
  fake_nccl::ReplayStats st;
  {
    fake_nccl::Host host;
    if (!host.ReplayCapture(argv[1], &Pin, &st, &error)) {
      std::fprintf(stderr, "fake-nccl-replay: %s\n", error.c_str());
      return 2;
    }
  }
  std::printf(
      "inits=%llu\nstarts=%llu\nstates=%llu\nstops=%llu\nfinalizes=%llu\nthreads=%llu\nhandle_mismatches=%llu\n"
      "handles_unknown=%llu\nparents_not_ours=%llu\nstrings_cut=%llu\ndropped_in_capture=%llu\n",
      static_cast<unsigned long long>(st.inits), static_cast<unsigned long long>(st.starts),
      static_cast<unsigned long long>(st.states), static_cast<unsigned long long>(st.stops),
      static_cast<unsigned long long>(st.finalizes), static_cast<unsigned long long>(st.threads),
      static_cast<unsigned long long>(st.handle_mismatches), static_cast<unsigned long long>(st.handles_unknown),
      static_cast<unsigned long long>(st.parents_not_ours), static_cast<unsigned long long>(st.strings_cut),
      static_cast<unsigned long long>(st.dropped_in_capture));
  return 0;
}
