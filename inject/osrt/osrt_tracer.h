// OS runtime tracing (-t osrt): the state shared by the interposed libc functions
// (osrt_hooks_*.cc) and the drain-side decoder (osrt_tracer.cc).
//
// Who calls what:
//   - any application thread, inside an interposed libc call: RealFunction (lazy resolution) and
//     Traced (the hot path: one relaxed load when osrt is off; two clock reads and, for a call at
//     least the threshold long, one 64-byte record into the thread's ring);
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
extern thread_local bool t_in_osrt __attribute__((tls_model("initial-exec")));

// libc's definition of `id` (dlsym(RTLD_NEXT)); nullptr when a resolution is already running on this
// thread or libc has no such function. Any thread, any time (also before our constructors ran).
void* RealFunction(FunctionId id);
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
template <typename Call>
__attribute__((no_sanitize("address"))) inline auto Traced(FunctionId id, Call&& call) -> decltype(call()) {
  if (__builtin_expect(!IsEnabled(kSourceOsrt), 1))
    return call();
  if (t_gt_thread.internal || t_in_osrt)
    return call();
  uint64_t start_ns = StreamNow();
  auto result = call();
  uint64_t end_ns = StreamNow();
  if (end_ns - start_ns >= g_threshold_ns.load(std::memory_order_relaxed)) {
    int saved_errno = errno;
    WriteCall(id, start_ns, end_ns, AsInt64(result));
    errno = saved_errno;
  }
  return result;
}

}  // namespace gt::osrt
