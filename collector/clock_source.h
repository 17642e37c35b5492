// Choosing the stream clock at session start (slow path, the thread that starts the session).
//
// The tick counter is used only where it is a clock: on x86 the CPU reports an invariant TSC
// (/proc/cpuinfo flags `constant_tsc` and `nonstop_tsc`) and the kernel itself times with it
// (/sys/devices/system/clocksource/clocksource0/current_clocksource is `tsc`, i.e. the kernel found
// it synchronized across CPUs); on aarch64 the generic timer (`arch_sys_counter`). That is the
// default (GTRACE_CLOCK unset or auto). Otherwise, and with GTRACE_CLOCK=monotonic, CLOCK_MONOTONIC. GTRACE_CLOCK=tsc on a machine without a usable
// counter falls back with one warning.
#pragma once

#include <string>
#include <string_view>

namespace gt {

enum class ClockChoice { kAuto, kTsc, kMonotonic };  // GTRACE_CLOCK=auto (default)|tsc|monotonic

bool ParseClockChoice(std::string_view text, ClockChoice* out);

// What the machine offers. `reason` says why not when false (for the fallback warning).
struct TickCounterSupport {
  bool usable = false;
  std::string reason;
};
// Reads the two files (paths overridable for tests).
TickCounterSupport ProbeTickCounter(const char* cpuinfo_path = "/proc/cpuinfo",
                                    const char* clocksource_path =
                                        "/sys/devices/system/clocksource/clocksource0/current_clocksource");

// Decides and sets the process's stream clock (StreamNow, clock.h). Returns true for ticks.
// *warning is set when `choice` asked for tsc and the machine cannot give it.
bool SelectStreamClock(ClockChoice choice, const TickCounterSupport& support, std::string* warning);

// The tick counter's rate in ticks per ns, Q32 fixed point (ticks/ns << 32), measured by spinning
// ~2 ms against CLOCK_MONOTONIC on the calling thread; 0 when it could not be measured. Bounded
// whatever the clocks do: a CLOCK_MONOTONIC that does not advance on this thread (a program that
// virtualises time, e.g. a capture replay pinning it inside NCCL calls, issue 31) ends the spin
// after a fixed number of reads and the rate comes from CLOCK_MONOTONIC_RAW (a raw syscall), or
// is 0 when that did not advance either. Never on the hot path.
uint64_t MeasureTickRateQ32();

}  // namespace gt
