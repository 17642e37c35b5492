// --backtrace=dwarf: each CPU sample's native stack, unwound by libunwind on the sampled thread itself.
//
// Why on the thread: the kernel's callchain follows frame pointers, so code built without them
// (-fomit-frame-pointer, the default of -O2 on x86-64; most distribution libraries) gives a right
// leaf and wrong or missing callers. DWARF call-frame information (.eh_frame, present for C++
// exceptions anyway) describes every frame, and libunwind's local unwinder reads it in-process.
//
// How a sample reaches the unwinder: the same per-sample SIGPROF as --python-sampling
// (python_signal_sampler.h routes it): the thread's perf event queues the signal when the hrtimer
// fires in user mode, and it is delivered before the thread runs another instruction of its own. The
// handler hands its ucontext to libunwind (unw_init_local2 with UNW_INIT_SIGNAL_FRAME: the first
// frame is the interrupted instruction, exactly the kernel's sampled IP), walks with unw_step, and
// writes the addresses into the thread's slot, tagged with the perf ring's data_head (the end offset
// of this sample's record, as the Python entries are). The drain thread (cpu_sampler.cc) takes the
// entry whose tag equals a record's end offset and whose first address equals its IP, and writes its
// addresses instead of the kernel's; a sample without one keeps the kernel's (counted:
// CpuSamplingLoss.dwarf_fallbacks).
//
// Async-signal safety (libunwind 1.6, local unwinding, x86-64 / aarch64):
//   - unw_init_local2 / unw_step / unw_get_reg on a cursor on the handler's stack: no malloc.
//     libunwind's one-time initialisation, its caching policy (unw_set_caching_policy, per thread
//     where the build supports it, else its global cache under a lock taken with every signal
//     blocked) and the loading of the library all happen on the drain thread at set-up
//     (SetUpNativeUnwinding), never in a handler.
//   - unw_backtrace is NOT used, although it is libunwind's fast path: its frame cache hangs off a
//     __thread variable of the dlopen'ed libunwind.so, whose first use on each thread goes through
//     __tls_get_addr, which allocates that thread's TLS block with malloc — in a signal handler that
//     may have interrupted malloc itself (a deadlock). unw_step keeps no thread-local state.
//   - A cache miss looks the address up with dl_iterate_phdr (the loader's lock, recursive: a thread
//     interrupted inside it re-enters). libunwind's own system calls (sigprocmask, mincore/msync,
//     mmap of its pools) are async-signal-safe; the handler marks the thread as inside gtrace so the
//     OS runtime interposers (mmap, msync, pthread_mutex_lock) pass them through untraced.
//   - errno is saved and restored by the handler (python_signal_sampler.cc).
// Known limit: a thread interrupted inside dlopen/dlclose while the loader edits its list could see
// it half-updated (the same limit libunwind documents for local unwinding from signal handlers).
//
// Threads: the handler on the owning (sampled) thread is the single producer; the drain thread the
// single consumer (Take/Pop) and the owner (allocates and frees it, after DisarmSampleSignal).
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

namespace gt::sampling {

struct NativeStackEntry {
  static constexpr uint32_t kMaxFrames = 127;  // the kernel's default perf_event_max_stack, as fp
  uint64_t data_head;                          // the perf ring's data_head when the handler ran
  uint32_t frames;
  uint32_t reserved;
  uint64_t ips[kMaxFrames];  // innermost first: ips[0] the interrupted instruction, then return addresses
};

// libunwind's local-unwinding entry points, looked up once (SetUpNativeUnwinding); read by handlers.
// Trivial (a global of this type has no constructor or destructor).
struct NativeUnwinder {
  using InitLocal2Fn = int (*)(void* cursor, void* ucontext, int flag);
  using StepFn = int (*)(void* cursor);
  using GetRegFn = int (*)(void* cursor, int reg, uint64_t* value);
  InitLocal2Fn init_local2 = nullptr;
  StepFn step = nullptr;
  GetRegFn get_reg = nullptr;
};

class NativeStackSlot {
 public:
  static constexpr uint64_t kEntries = 32;  // ~32 ms of one busy thread at 1 kHz; the drain reads every 10

  explicit NativeStackSlot(const void* perf_page) : perf_page_(perf_page) {}
  NativeStackSlot(const NativeStackSlot&) = delete;
  NativeStackSlot& operator=(const NativeStackSlot&) = delete;

  // Signal handler of the owning thread: unwinds from `ucontext` (the handler's third argument).
  void OnSignal(const NativeUnwinder& unwinder, void* ucontext);

  // Drain thread: the entry of the sample whose record ended at `end_offset`, or nullptr; earlier
  // entries (their record was lost) are dropped on the way. Call Pop after using a returned entry.
  const NativeStackEntry* Take(uint64_t end_offset);
  void Pop() { read_.store(read_.load(std::memory_order_relaxed) + 1, std::memory_order_release); }
  uint64_t full() const { return full_.load(std::memory_order_relaxed); }
  uint64_t failed() const { return failed_.load(std::memory_order_relaxed); }

 private:
  const void* perf_page_;  // perf_event_mmap_page of the thread's event (data_head)
  std::atomic<uint64_t> write_{0}, read_{0};
  std::atomic<uint64_t> full_{0};    // samples that found no free entry
  std::atomic<uint64_t> failed_{0};  // samples libunwind could not start on
  NativeStackEntry entries_[kEntries];
};

// Drain thread, once per process: loads libunwind (callstack/unwinder.h: the same search as
// --cudabacktrace, caching policy set there), looks up the local-unwinding functions and runs one
// unwind on this thread (libunwind's one-time set-up). False with `why` (one sentence) when it cannot.
// `path` gets the file that was loaded.
bool LoadNativeUnwinder(NativeUnwinder* out, std::string* path, std::string* why);

}  // namespace gt::sampling
