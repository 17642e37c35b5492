// OS runtime tracing (-t osrt): the state shared by the interposed libc functions
// (osrt_hooks_*.cc) and the drain-side decoder (osrt_tracer.cc).
//
// Who calls what:
//   - any application thread, inside an interposed libc call: RealFunction (one load; lazy
//     resolution the first time) and Traced (the hot path: one relaxed load when osrt is off; then
//     two thread-local flags, two stream-clock reads (rdtsc on a tick stream) and a compare with the
//     threshold in stream-clock units; only a call at least the threshold long saves errno and
//     writes one 64-byte record into the thread's ring);
//   - the loading thread (ELF constructors): ResolveAll, then StartIfWanted from entry.cc;
//   - the drain thread: the record decoder and the emitter registered by Register().
//
// Safety rules this code keeps (docs/osrt.md):
//   - a call's result and errno are libc's: errno is saved after the call and restored after the
//     record; nothing runs between entry and the libc call but a clock read;
//   - cancellation points stay cancellation points: the interposers of functions glibc declares
//     without __THROW are not noexcept, and the library is built with unwind tables, so the forced
//     unwind of pthread_cancel passes through them;
//   - dlsym(RTLD_NEXT) may allocate (calloc -> an allocator's lock -> our pthread_mutex_lock): a
//     thread-local guard makes a nested resolution return nullptr, and each interposer then has a
//     fallback (the system call, or a trylock loop) that does not resolve anything;
//   - gtrace's own threads (drain thread, metrics sampler: ThreadLocalState::internal) and a thread
//     already inside our record path are never traced;
//   - no session is ever started from inside an interposed call (it could be a vfork child, an
//     allocator holding its lock, or a forked child); the session starts in the constructor or from
//     another source, and a thread's first record takes its ring only when a session runs here.
#pragma once

#include <errno.h>

#include <atomic>
#include <cstdint>
#include <type_traits>

#include "collector/clock.h"
#include "collector/session.h"
#include "inject/osrt/osrt_functions.h"

namespace gt::osrt {

// Calls shorter than this write nothing (Config::osrt_threshold_ns; set at session start).
// In stream-clock units (ns, or ticks on a tick stream: osrt_tracer.cc converts it at session start).
extern std::atomic<uint64_t> g_threshold_ns;
// True while this thread resolves a libc function or writes an OSRT record: nested interposed calls
// (from dlsym's allocator, from AcquireBufferSlow's locks) go straight to libc, untraced.
// __thread (initial-exec): no TLS-init check, no __tls_get_addr (see t_gt_thread in session.h).
extern __thread bool t_in_osrt __attribute__((tls_model("initial-exec")));

// libc's definitions, by FunctionId (zero-initialised: no static constructor); filled by
// ResolveSlow, read by RealFunction.
extern std::atomic<void*> g_real[kFunctionCount];
// dlsym(RTLD_NEXT) of `id`, stored in g_real; nullptr when a resolution is already running on this
// thread or libc has no such function.
void* ResolveSlow(FunctionId id);

// libc's definition of `id`; nullptr as ResolveSlow. Any thread, any time (also before our
// constructors ran). Inline: after the constructor's ResolveAll this is one load and a branch.
inline void* RealFunction(FunctionId id) {
  void* f = g_real[id].load(std::memory_order_acquire);
  if (__builtin_expect(f != nullptr, 1))
    return f;
  return ResolveSlow(id);
}
// Resolves every function (constructor, before the program's code runs).
void ResolveAll();

// Writes one record for a call of `id` from `start_ns` to `end_ns` that returned `return_value`.
// Application thread, hot path (no lock, no allocation, no system call once the thread has a ring).
void WriteCall(FunctionId id, uint64_t start_ns, uint64_t end_ns, int64_t return_value);

// Marks the calling application thread as inside gtrace (session start, the final flush at exit):
// the libc calls gtrace itself makes there are not traced as the application's.
class InsideGtrace {
 public:
  InsideGtrace() : saved_(t_in_osrt) { t_in_osrt = true; }
  ~InsideGtrace() { t_in_osrt = saved_; }
  InsideGtrace(const InsideGtrace&) = delete;
  InsideGtrace& operator=(const InsideGtrace&) = delete;

 private:
  bool saved_;
};

// Drain thread: one ring record -> one OsrtCall in `chunk` (registered for kRecordOsrt).
void DecodeRecord(const RecordView& view, ChunkBuilder* chunk);

// Registers the decoder, the emitter and the session-start hook (idempotent; loading thread).
void Register();
// Preloaded with GTRACE_TRACE containing "osrt": starts the session now, so that a process that
// never calls NVTX, CUDA or NCCL is traced too (entry.cc's constructor).
void StartIfWanted();

template <typename R>
inline int64_t AsInt64(R value) {
  if constexpr (std::is_pointer_v<R>) {
    return static_cast<int64_t>(reinterpret_cast<intptr_t>(value));
  } else {
    return static_cast<int64_t>(value);
  }
}

// Runs `call` (libc's function) and records it when it lasted at least the threshold. Deliberately
// not noexcept: a cancelled call unwinds through here (and not ASan-instrumented: osrt_interpose.h).
// Below the threshold it does nothing but: one relaxed load (osrt on?), two thread-local flags
// (initial-exec: %fs-relative loads), one relaxed load of the clock choice, two clock reads around
// the call (rdtsc on a tick stream: the threshold is in ticks, converted once at session start) and
// one compare. errno is saved only on the record path (the clock reads do not touch it).
template <typename Call>
__attribute__((no_sanitize("address"))) inline auto Traced(FunctionId id, Call&& call) -> decltype(call()) {
  if (__builtin_expect(!IsEnabled(kSourceOsrt), 1))
    return call();
  if (t_gt_thread.internal || t_in_osrt)
    return call();
  // The clock choice is fixed before any source is enabled (clock.h): read it once for both reads.
  const bool ticks = StreamClockIsTicks();
  uint64_t start_ns = ticks ? ReadTicks() : NowNs();
  auto result = call();
  uint64_t end_ns = ticks ? ReadTicks() : NowNs();
  if (__builtin_expect(end_ns - start_ns >= g_threshold_ns.load(std::memory_order_relaxed), 0)) {
    int saved_errno = errno;
    WriteCall(id, start_ns, end_ns, AsInt64(result));
    errno = saved_errno;
  }
  return result;
}

}  // namespace gt::osrt
