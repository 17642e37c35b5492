#pragma once
// One `gtrace:` line when the host process dies of a crash signal that nobody handles: the signal,
// the faulting address, the thread, and the return addresses of the crashing thread as
// module+offset (symbolize offline: `addr2line -e MODULE OFFSET`, or `nm -D` for stripped ones).
// The line says where a crash happened without a debugger (the GPU machine has none that leaves
// CUDA undisturbed), also when the crash is in CUDA's or the application's code, not gtrace's.
#include <signal.h>

namespace gt {

// Once, at session start (any thread): loads the unwinder libc's backtrace() uses, so the
// handler never loads anything.
void WarmCrashReport();

// From the crash-signal handler, only when the default action (death) follows. Async-signal-safe
// apart from backtrace() (warmed above): reads /proc/self/maps with read(2), formats by hand,
// writes with write(2). No allocation, no locks.
void WriteCrashReport(int sig, const siginfo_t* info);

}  // namespace gt
