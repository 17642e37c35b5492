// Unwinder: libunwind's fast local backtrace (unw_backtrace), loaded with dlopen only when
// --cudabacktrace is on, so libgtrace.so has no load-time dependency on libunwind (a process that does
// not ask for backtraces never maps it; tests/integration/symbols_test.sh checks the NEEDED list).
//
// Search order: $GTRACE_LIBUNWIND_PATH (only that, when set); libunwind.so.8 beside libgtrace.so (the
// relocatable bundle ships one); libunwind.so.8 on the loader's path. The nongnu libunwind (the
// "libunwind8" Debian package) is meant: LLVM's libunwind.so.1 has no unw_backtrace fast path.
//
// Cost model, as implemented by libunwind 1.6 on x86-64 and aarch64: unw_backtrace walks the stack with
// a per-thread cache of frame descriptions keyed by return address. A hit costs a few loads per frame,
// no lock, no allocation, no system call. A miss (first time an address is seen on that thread) runs
// the DWARF unwinder for that frame, which looks the address up with dl_iterate_phdr (the loader's
// lock) and parses .eh_frame. The first backtrace of each thread also creates that thread's cache
// (libunwind mmaps it; its thread-local storage may be allocated by the C library). Load() warms the
// calling thread and sets libunwind's per-thread caching policy (no global lock on misses).
//
// Threads: Load once (slow path, inside InitializeInjection); then `backtrace` from any thread.
#pragma once

#include <string>

namespace gt::callstack {

using BacktraceFn = int (*)(void** buffer, int size);

struct Unwinder {
  void* handle = nullptr;
  BacktraceFn backtrace = nullptr;
  std::string path;  // the file that was loaded
};

// False with a one-line reason (naming what was tried) in *error.
bool LoadUnwinder(Unwinder* out, std::string* error);

}  // namespace gt::callstack
