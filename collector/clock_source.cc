#include "collector/clock_source.h"

#include <fcntl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "collector/clock.h"

namespace gt {
namespace clock_internal {
std::atomic<bool> g_stream_clock_ticks{false};
}  // namespace clock_internal

namespace {

// Reads at most `limit` bytes of a small text file (no stdio: the session may start anywhere).
std::string ReadSmallFile(const char* path, size_t limit) {
  std::string out;
  int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return out;
  char buf[4096];
  while (out.size() < limit) {
    ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n <= 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return out;
}

// The first "flags" (x86) line of /proc/cpuinfo, with a space at each end for whole-word search.
std::string FirstFlagsLine(const std::string& cpuinfo) {
  size_t pos = 0;
  while (pos < cpuinfo.size()) {
    size_t end = cpuinfo.find('\n', pos);
    if (end == std::string::npos) end = cpuinfo.size();
    std::string_view line(cpuinfo.data() + pos, end - pos);
    if (line.substr(0, 5) == "flags") {
      size_t colon = line.find(':');
      if (colon != std::string_view::npos) return " " + std::string(line.substr(colon + 1)) + " ";
    }
    pos = end + 1;
  }
  return "";
}

}  // namespace

bool ParseClockChoice(std::string_view text, ClockChoice* out) {
  if (text == "auto" || text.empty()) *out = ClockChoice::kAuto;  // empty = unset: the default
  else if (text == "tsc") *out = ClockChoice::kTsc;
  else if (text == "monotonic") *out = ClockChoice::kMonotonic;
  else return false;
  return true;
}

TickCounterSupport ProbeTickCounter(const char* cpuinfo_path, const char* clocksource_path) {
  TickCounterSupport s;
  if (!kHasTickCounter) {
    s.reason = "this CPU architecture has no tick counter gtrace reads";
    return s;
  }
  std::string source = ReadSmallFile(clocksource_path, 256);
  while (!source.empty() && (source.back() == '\n' || source.back() == ' ')) source.pop_back();
#if defined(__x86_64__)
  // cpuinfo repeats the flags per CPU; the first block is enough (the kernel requires them equal).
  std::string flags = FirstFlagsLine(ReadSmallFile(cpuinfo_path, 1 << 16));
  bool constant = flags.find(" constant_tsc ") != std::string::npos;
  bool nonstop = flags.find(" nonstop_tsc ") != std::string::npos;
  if (!constant || !nonstop) {
    s.reason = std::string("the CPU does not report an invariant TSC (") + (constant ? "" : "no constant_tsc") +
               (!constant && !nonstop ? ", " : "") + (nonstop ? "" : "no nonstop_tsc") + ")";
    return s;
  }
  if (source != "tsc") {
    s.reason = "the kernel's clocksource is '" + (source.empty() ? std::string("unknown") : source) + "', not tsc";
    return s;
  }
#else
  (void)cpuinfo_path;
  if (source != "arch_sys_counter") {
    s.reason = "the kernel's clocksource is '" + (source.empty() ? std::string("unknown") : source) +
               "', not arch_sys_counter";
    return s;
  }
#endif
  s.usable = true;
  return s;
}

bool SelectStreamClock(ClockChoice choice, const TickCounterSupport& support, std::string* warning) {
  bool ticks = false;
  if (choice == ClockChoice::kTsc) {
    ticks = support.usable;
    if (!ticks && warning != nullptr) *warning = "GTRACE_CLOCK=tsc: " + support.reason + "; using CLOCK_MONOTONIC";
  } else if (choice == ClockChoice::kAuto) {
    ticks = support.usable;
  }
  clock_internal::g_stream_clock_ticks.store(ticks, std::memory_order_relaxed);
  return ticks;
}

namespace {
// CLOCK_MONOTONIC_RAW straight from the kernel (not through the vDSO or an interposed clock_gettime).
uint64_t RawMonotonicNs() {
  timespec ts{};
  if (::syscall(SYS_clock_gettime, CLOCK_MONOTONIC_RAW, &ts) != 0) return 0;
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

uint64_t RateQ32(uint64_t ticks, uint64_t ns) {
  return ns == 0 ? 0 : static_cast<uint64_t>((static_cast<unsigned __int128>(ticks) << 32) / ns);
}
}  // namespace

uint64_t MeasureTickRateQ32() {
  constexpr uint64_t kSpinNs = 2000000;
  // ~2 ms of reads at ~20 ns each is 1e5; 2e6 bounds a frozen clock's spin to ~40 ms.
  constexpr uint64_t kMaxReads = 2000000;
  uint64_t raw0 = RawMonotonicNs();
  uint64_t t0 = ReadTicks(), n0 = NowNs(), n1 = n0;
  for (uint64_t i = 0; i < kMaxReads && n1 - n0 < kSpinNs && n1 >= n0; ++i) n1 = NowNs();
  uint64_t t1 = ReadTicks();
  uint64_t raw1 = RawMonotonicNs();
  if (t1 <= t0) return 0;
  if (n1 >= n0 && n1 - n0 >= kSpinNs) return RateQ32(t1 - t0, n1 - n0);
  // CLOCK_MONOTONIC stood still (or went back) on this thread: the kernel's raw clock instead.
  return raw1 > raw0 ? RateQ32(t1 - t0, raw1 - raw0) : 0;
}

}  // namespace gt
