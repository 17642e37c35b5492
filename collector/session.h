// The recording session of one process: configuration, the per-thread rings, the drain thread and
// the stream file. It starts lazily, when an injection entry point first asks for it (NVTX init,
// CUDA injection, NCCL plugin init), so a process that never uses NVTX, CUDA or NCCL gets no
// file, no thread and no cost. A forked child gets its own session (and file) on its first record.
//
// Threads:
//   - application threads: only the inline hot-path helpers below (BeginRecord / CommitRecord)
//     and, once per thread, AcquireBufferSlow();
//   - the drain thread (owned by the session): decodes rings into chunks and writes the file;
//   - any thread on a slow path: EnsureSession, RequestFlush, ReportDiagnostic, EndSession.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "collector/chunk_builder.h"
#include "collector/clock.h"
#include "collector/config.h"
#include "collector/full_ring_wait.h"
#include "collector/record_types.h"
#include "collector/ring_pool.h"
#include "collector/sources.h"

namespace gt {

// --- hot-path gate --------------------------------------------------------------------------

// SourceBit mask of what is being recorded right now. Zero before the session starts, when a
// capture window is closed, and after the session ends.
extern std::atomic<uint32_t> g_enabled_sources;
// Bumped in a forked child, so thread buffers cached by the parent's threads are taken again.
extern std::atomic<uint32_t> g_generation;

inline bool IsEnabled(uint32_t source_bits) {
  return (g_enabled_sources.load(std::memory_order_relaxed) & source_bits) != 0;
}

struct ThreadLocalState {
  ThreadBuffer* buffer;
  uint32_t generation;
  uint32_t retry_countdown;  // after a failed acquire, records to skip before trying again
  bool exiting;              // the thread is being torn down: record nothing more
  bool internal;             // gtrace's own threads: never record
};
// __thread, not thread_local: a C++ `extern thread_local` makes every access outside session.cc
// test a weak TLS-init symbol first (a load and a branch on each hot-path check, seen in the OS
// runtime interposers' disassembly); a __thread variable of a trivial type never has one.
extern __thread ThreadLocalState t_gt_thread __attribute__((tls_model("initial-exec")));

ThreadBuffer* AcquireBufferSlow();

inline ThreadBuffer* CurrentThreadBuffer() {
  ThreadLocalState& s = t_gt_thread;
  if (__builtin_expect(s.buffer != nullptr && s.generation == g_generation.load(std::memory_order_relaxed), 1)) {
    return s.buffer;
  }
  return AcquireBufferSlow();
}

// A record being written into the calling thread's ring.
struct RecordSpan {
  ThreadBuffer* buffer;
  uint64_t pos;
  uint32_t n_slots;
};

// Reserves room for a record of `total_bytes` (RecordHeader included) in the ring of `b`, a buffer
// the caller already looked up with CurrentThreadBuffer() (not null). False when the ring is full
// and stays full; the loss is counted. Never blocks or allocates on a record that fits. A full
// ring goes out of line to ReserveWhenFull (collector/full_ring_wait.h): under
// GTRACE_FULL_RING=wait (default) it waits, bounded, for the drain thread before dropping. Callers
// read the clock and build the record only after this succeeded, so a dropped record costs a few ns.
//
// The head moves only at commit, so a record begun inside another on the same thread (a signal
// handler that records while the thread is inside a hook) would reserve the same slots and
// overwrite the open record (issue 28, item 4): it drops instead, counted with the ring's drops.
// Handlers nest, so a plain producer-private flag with compiler fences is enough.
__attribute__((always_inline)) inline bool BeginRecordIn(ThreadBuffer* b, size_t total_bytes, RecordSpan* span) {
  if (__builtin_expect(b->writing != 0, 0)) {
    b->ring.CountDrop();
    return false;
  }
  b->writing = 1;
  std::atomic_signal_fence(std::memory_order_seq_cst);
  uint32_t n = static_cast<uint32_t>((total_bytes + kSlotBytes - 1) / kSlotBytes);
  if (__builtin_expect(n == 0 || n > kMaxExtSlots + 1 || !b->ring.Reserve(n, &span->pos), 0)) {
    // By value, not through &span->pos: a pointer into `span` passed out of line would make the
    // compiler keep the span in memory on the path that fits too.
    uint64_t pos = ReserveWhenFull(b, n);
    if (pos == kNoRoom) {  // counted by ReserveWhenFull
      std::atomic_signal_fence(std::memory_order_seq_cst);
      b->writing = 0;
      return false;
    }
    span->pos = pos;
  }
  span->buffer = b;
  span->n_slots = n;
  return true;
}
// Gives up a reservation without publishing it (a probe, or a fast path that hands over to the
// general one). Nothing of it becomes visible.
inline void AbandonRecord(const RecordSpan& span) {
  std::atomic_signal_fence(std::memory_order_seq_cst);
  span.buffer->writing = 0;
}
// The same in the calling thread's buffer; also false when the thread has no buffer.
inline bool BeginRecord(size_t total_bytes, RecordSpan* span) {
  ThreadBuffer* b = CurrentThreadBuffer();
  if (b == nullptr) return false;
  return BeginRecordIn(b, total_bytes, span);
}
inline RecordHeader* RecordHead(const RecordSpan& span) {
  return reinterpret_cast<RecordHeader*>(span.buffer->ring.At(span.pos)->bytes);
}
// Writes `len` bytes at `offset` from the start of the record (offset >= 16 for payload).
inline void RecordCopy(const RecordSpan& span, size_t offset, const void* src, size_t len) {
  span.buffer->ring.CopyIn(span.pos, offset, src, len);
}
// Out of line, rare: wakes the drain thread because a ring crossed its high-water mark (one
// FUTEX_WAKE on the drain thread's wake word per crossing, never per record; errno kept).
void PokeDrainThread();
// Publishes the record. When the ring crosses its high-water mark (half full) and has not poked
// the drain thread since that thread last emptied it, wakes the drain thread (issue 20).
__attribute__((always_inline)) inline void CommitRecord(const RecordSpan& span) {
  ThreadRing& ring = span.buffer->ring;
  uint64_t end = span.pos + span.n_slots;
  ring.Commit(end);
  std::atomic_signal_fence(std::memory_order_seq_cst);
  span.buffer->writing = 0;
  if (__builtin_expect(ring.MaybeHighWater(end), 0) && ring.CrossedHighWater(end)) PokeDrainThread();
}

// --- drain-side extension points ----------------------------------------------------------

// A record as the drain thread sees it: contiguous bytes (header first), n_slots * 64 long.
struct RecordView {
  const RecordHeader* header;
  const unsigned char* bytes;
  size_t size_bytes;
  uint32_t tid;  // owner of the ring
};
using RecordDecodeFn = void (*)(const RecordView& record, ChunkBuilder* chunk);
// Process-level data a module adds every drain cycle (registrations, CUPTI buffers, ...).
// `session_id` changes when a new session starts (a forked child): re-send everything then.
using EmitFn = void (*)(ChunkBuilder* chunk, uint64_t session_id);
// Called by the drain thread when the session ends, before the final drain (stop CUPTI, ...).
using StopFn = void (*)();
// Called once per session, on the thread that started it, right after the session is published and
// before EnsureSession returns (capture windows arm their triggers here). Must not call EnsureSession.
using SessionStartFn = void (*)(const Config& config, uint64_t session_id);

// Registration happens before EnsureSession (from injection init code); tables are fixed-size.
void RegisterRecordDecoder(RecordType type, RecordDecodeFn fn);
bool RegisterEmitter(EmitFn fn);
bool RegisterSessionStartHook(SessionStartFn fn);

// Drain thread (emitters only): announces OS thread `tid` (name from /proc, priority) in a chunk of
// its own, for threads that appear only in records gtrace did not take from a ring (CUPTI API
// records). `chunk` must be open at nesting depth 0; it is reopened as a process-level chunk.
// A thread that exited is named from collector/thread_names.h when it was noted there. False when no
// name is known: nothing is written then.
bool EmitThreadInfo(ChunkBuilder* chunk, uint32_t tid);

// --- lifecycle (slow paths) ---------------------------------------------------------------

// Starts this process's session if it is not running. True when recording is possible for
// `source` (configured and the session is up). Thread-safe; cheap once started.
bool EnsureSession(uint32_t source);
// True when this process (getpid()) has a running session. Never starts one (inject/osrt asks it
// from inside libc calls, where starting a session is not safe). One getpid() system call.
bool SessionRunsHere();
// SessionRunsHere without its getpid(): a session is installed and has not ended. A forked child
// has none installed (the atfork child handler clears it), but a vfork child shares the parent's
// memory and runs no atfork handler: only for callers that never run there (the Python API's entry
// points, reached from Python code only). Two loads, no lock; any thread.
bool SessionInstalledAndRunning();
// The configuration of the running session (nullptr before start).
const Config* SessionConfig();
uint64_t SessionId();
// Configured sources (whether or not a capture window is open).
uint32_t ConfiguredSources();
// Turns sources on or off at run time (capture windows). A session whose configuration starts
// paused (Config::capture.StartsPaused()) records nothing until the first SetRecording(.., true).
void SetRecording(uint32_t source_bits, bool on);

// Drains every ring and writes the file now. Waits up to `timeout_ms` for the drain thread when
// `wait` is true. Must not be called from the drain thread or a signal handler.
void RequestFlush(bool wait, uint32_t timeout_ms = 5000);

// How a process ends without exit() (schema EndReason; values equal its numbers).
enum class EndKind : uint32_t { kUnderscoreExit = 2, kExec = 3, kAbort = 4, kSignal = 5 };

// The process is about to end by `kind` (inject/exit/: _exit, exec, abort; crash signals): the
// drain thread writes everything recorded so far and an end-of-stream chunk saying how (`signal`
// for kSignal), then holds its writes for 500 ms or until ResumeAfterEnd. Waits at most
// Config::exit_wait_ms (GTRACE_EXIT_WAIT_MS, default 100). True when the mark was written in time.
// Any thread, also a signal handler (atomics, a pipe write and a futex wait only); does nothing on
// gtrace's own threads, without a running session of this pid (a forked or vfork'ed child that
// has none), or after EndSession. errno is preserved.
bool MarkEnd(EndKind kind, int signal);
// The end did not happen (exec failed, a SIGABRT handler returned into the program): the drain
// thread writes again at once; the stream will be closed again later. Async-signal-safe.
void ResumeAfterEnd();

// One line for the user (`gtrace: text` on stderr, unless `print` is false) and a Diagnostic in
// the stream. Slow paths only.
void ReportDiagnostic(uint32_t severity, std::string_view source, std::string_view text, bool print = true);

// Final drain, end-of-stream chunk, close. Idempotent. Bounded wait: never hangs the host.
void EndSession(const char* reason);

// Prints "gtrace: <text>" to stderr with a single write (no stdio).
void PrintLine(std::string_view text);

// Path of the stream file of the running session ("" when none).
std::string SessionStreamPath();

// Number of thread buffers in the pool (fixed once the first session started; 0 before). A module
// that keeps per-thread state beside the ring indexes it by ThreadBuffer::index < this.
uint32_t ThreadBufferCount();

// This copy of the library is not the one that records in this process (another copy of
// libgtrace.so was loaded first, e.g. LD_PRELOAD of one path and CUDA_INJECTION64_PATH naming
// another): EnsureSession fails from now on, in this process and its forked children.
void DeclineSessions();

}  // namespace gt
