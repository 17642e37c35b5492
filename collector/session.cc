// Session lifecycle: lazy start, the drain thread, flush requests, signals, fork, end.
//
// Lock order: g_start_mutex (session start, fork prepare) -> Session::diag_mutex (leaf).
// Neither is ever taken on the hot path or by a signal handler.
//
// End marks (MarkEnd, issue 14): a process that ends without exit() — _exit, exec, abort, a crash
// signal — asks the drain thread for everything recorded so far plus an end-of-stream chunk, waits
// for it (bounded, futex: async-signal-safe), and goes on to end. The drain thread then holds its
// writes for kEndHoldNs, so an exec or exit_group that follows cannot cut a chunk in half; if the
// process goes on after all (exec failed: ResumeAfterEnd; a handler longjmp'ed), it writes again and
// closes the stream once more later — a reader takes the last end-of-stream chunk.
#include "collector/session.h"

#include "collector/crash_report.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
#include <new>
#include <vector>

#include "collector/drainer.h"
#include "collector/output_path.h"
#include "collector/process_info.h"
#include "collector/schema_fields.h"
#include "collector/session_internal.h"
#include "collector/stream_header.h"
#include "collector/stream_writer.h"

extern char** environ;

namespace gt {

std::atomic<uint32_t> g_enabled_sources{0};
std::atomic<uint32_t> g_generation{1};
__thread ThreadLocalState t_gt_thread __attribute__((tls_model("initial-exec"))) = {nullptr, 0, 0, false, false};

namespace {

constexpr int kMaxEmitters = 16;
constexpr int kMaxStartHooks = 8;
constexpr uint64_t kWriteThresholdBytes = 256u << 10;
constexpr uint64_t kClockSnapshotIntervalNs = 1000000000ull;
// Tick streams also get a pair before a write, unless the last one is younger than this.
constexpr uint64_t kMinWriteSnapshotIntervalNs = 5000000ull;
constexpr int kHandledSignals[] = {SIGTERM, SIGINT};
// Crash signals: flushed (end mark) before the application's handler or the default action runs.
constexpr int kCrashSignals[] = {SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL};
// After an end mark the drain thread writes nothing for this long (or until ResumeAfterEnd): the
// exec or _exit that follows the mark replaces the process in microseconds to milliseconds.
constexpr uint64_t kEndHoldNs = 500000000ull;
// At the end of the session (exit, SIGTERM/SIGINT) the drain thread decodes what the rings hold for
// at most this long; the rest is counted (DROP_SOURCE_PROCESS_END) and the stream closed. Threads
// that go on recording or spinning while main exits take the drain thread's CPU: 64 of them on 2
// cores held exit() up 3.5 s and SIGTERM past its 3 s wait, the stream cut (issue 28 item 3).
// Recording stops when the end begins, so what is left is bounded too. Unloaded, a full 256 MiB
// budget drains in well under this.
constexpr uint64_t kEndDrainBudgetNs = 500000000ull;

struct PendingDiagnostic {
  uint64_t ts_ns;
  uint32_t severity;
  std::string source;
  std::string text;
};

// Heap-allocated once per process image (a forked child makes its own and leaks the parent's,
// whose drain thread does not exist there). Not a global object: no static constructor.
struct Session {
  Config config;
  ProcessInfo info;
  StreamWriter writer;
  bool reopen_reported = false;    // drain thread only
  bool recreate_reported = false;  // drain thread only
  std::unique_ptr<Drainer> drainer;
  uint64_t id = 0;
  uint32_t pid = 0;
  pthread_t thread{};
  std::atomic<uint32_t> flush_requested{0};  // futex word: tickets handed out
  std::atomic<uint32_t> flush_done{0};       // futex word: last ticket served
  std::atomic<bool> stop{false};
  std::atomic<int> terminate_signal{0};      // set by a signal handler whose default action kills
  // Pending end mark, kind | signal << 8 (0: none). Set by MarkEnd (any thread, signal handlers),
  // taken by the drain thread.
  std::atomic<uint32_t> end_mark{0};
  std::atomic<uint32_t> last_end_mark{0};     // the mark the stream ends with now (drain thread)
  std::atomic<uint64_t> hold_until_ns{0};     // after an end mark: no writes before this (0: none)
  std::atomic<bool> ended{false};
  std::atomic<bool> thread_exited{false};
  std::atomic<bool> thread_started{false};  // the drain thread finished its start-up (first write)
  std::string end_reason = "exit";
  std::mutex diag_mutex;
  std::vector<PendingDiagnostic> diags;  // guarded by diag_mutex
  bool writer_failed_reported = false;
  bool drop_line_printed = false;  // the one `gtrace:` line about dropped records (drain thread)
  bool wait_line_printed = false;  // or, when nothing was dropped, the one about full-ring waits
  uint64_t writer_lost_records = 0;
  uint64_t records_at_last_write = 0;
};

RecordDecodeFn g_decoders[kRecordTypeCount] = {};
EmitFn g_emitters[kMaxEmitters] = {};
std::atomic<int> g_emitter_count{0};
SessionStartFn g_start_hooks[kMaxStartHooks] = {};
std::atomic<int> g_start_hook_count{0};
std::atomic<uint64_t> g_no_buffer_drops{0};
pthread_mutex_t g_start_mutex = PTHREAD_MUTEX_INITIALIZER;
std::atomic<Session*> g_session{nullptr};
std::atomic<uint32_t> g_failed_pid{0};  // a start failed in this pid: do not retry on every event
std::atomic<uint64_t> g_session_counter{0};
std::atomic<uint32_t> g_configured_sources{0};
pthread_key_t g_thread_key;
pthread_once_t g_key_once = PTHREAD_ONCE_INIT;
pthread_once_t g_process_once = PTHREAD_ONCE_INIT;
alignas(RingPool) unsigned char g_pool_storage[sizeof(RingPool)];
RingPool* g_pool = nullptr;
struct sigaction g_old_actions[NSIG];
bool g_untraced_until_exec = false;  // this process was forked and must not record until it execs
bool g_forked_without_exec = false;  // this image was forked from a gtrace-active parent (stream header)
std::atomic<bool> g_declined{false};
// The drain thread's wake word: bumped and futex-woken by Wake/PokeDrainThread, waited on by
// DrainMain. A futex and not a pipe: no descriptor an application could close or dup2 its own file
// over (issue 28, item 1). g_drain_armed: a drain thread runs in this process (false in a forked
// child before its own session, and in a second copy of the library, which never records).
std::atomic<uint32_t> g_drain_wake{0};
std::atomic<bool> g_drain_armed{false};
bool g_installed[NSIG];

const char* GetEnv(const char* name) { return ::getenv(name); }

long Futex(std::atomic<uint32_t>* word, int op, uint32_t value, const timespec* timeout) {
  return ::syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), op, value, timeout, nullptr, 0);
}

bool TicketServed(uint32_t done, uint32_t ticket) { return static_cast<int32_t>(done - ticket) >= 0; }

// Waits until `ticket` is served or `timeout_ms` passes. Async-signal-safe (futex + clock).
bool WaitForTicket(Session* s, uint32_t ticket, uint32_t timeout_ms) {
  uint64_t deadline = NowNs() + uint64_t{timeout_ms} * 1000000ull;
  while (true) {
    uint32_t done = s->flush_done.load(std::memory_order_acquire);
    if (TicketServed(done, ticket)) return true;
    if (s->thread_exited.load(std::memory_order_acquire)) return false;
    uint64_t now = NowNs();
    if (now >= deadline) return false;
    uint64_t left = deadline - now;
    if (left > 10000000ull) left = 10000000ull;  // re-check thread_exited every 10 ms
    timespec ts{static_cast<time_t>(left / 1000000000ull), static_cast<long>(left % 1000000000ull)};
    Futex(&s->flush_done, FUTEX_WAIT_PRIVATE, done, &ts);
  }
}

// Async-signal-safe (an atomic and one futex call): termination handlers wake the drain thread too.
void WakeDrain() {
  g_drain_wake.fetch_add(1, std::memory_order_release);
  Futex(&g_drain_wake, FUTEX_WAKE_PRIVATE, 1, nullptr);
}

void Wake(Session*) { WakeDrain(); }

uint32_t RequestTicket(Session* s) {
  uint32_t ticket = s->flush_requested.fetch_add(1, std::memory_order_acq_rel) + 1;
  Wake(s);
  return ticket;
}

Session* CurrentSession() {
  Session* s = g_session.load(std::memory_order_acquire);
  if (s != nullptr && s->pid == static_cast<uint32_t>(::getpid())) return s;
  return nullptr;
}

void WriteOutput(Session* s) {
  std::string* out = s->drainer->output();
  if (out->empty()) return;
  Status st = s->writer.Append(*out);
  uint64_t records = s->drainer->records_total();
  out->clear();
  if (!st.ok()) {
    // The bytes are gone (memory stays bounded); count their records as writer drops.
    s->writer_lost_records += records - s->records_at_last_write;
    if (!s->writer_failed_reported) {
      s->writer_failed_reported = true;
      PrintLine(st.message() + "; records are dropped (and counted) while writing fails");
    }
  } else if (s->writer_lost_records > 0) {
    // Writing works again: the next write carries how much the gap cost.
    s->drainer->EmitWriterDrops(s->writer_lost_records);
    s->writer_lost_records = 0;
    // The `gtrace:` line stays once per session even if the disk keeps filling and emptying;
    // every later loss is still counted in the stream.
  }
  s->records_at_last_write = records;
  // The application took the stream's descriptor or deleted its file, and the writer recovered
  // (collector/stream_writer.h): once each per session, so the user knows why it happened.
  if (s->writer.reopened() > 0 && !s->reopen_reported) {
    s->reopen_reported = true;
    PrintLine("the application closed or replaced gtrace's stream descriptor (closefrom/dup2); reopened " +
              s->writer.path() + ", nothing lost");
  }
  if (s->writer.recreated() > 0 && !s->recreate_reported) {
    s->recreate_reported = true;
    PrintLine(s->writer.path() + " was deleted while the process ran; written again from gtrace's descriptor");
  }
}

void FlushDiagnostics(Session* s) {
  std::vector<PendingDiagnostic> pending;
  {
    std::lock_guard<std::mutex> lock(s->diag_mutex);
    pending.swap(s->diags);
  }
  for (const PendingDiagnostic& d : pending) s->drainer->EmitDiagnostic(d.ts_ns, d.severity, d.source, d.text);
}

std::string SignalReason(int sig) {
  const char* name = sigabbrev_np(sig);
  return std::string("signal SIG") + (name != nullptr ? name : std::to_string(sig).c_str());
}

std::string EndMarkReason(uint32_t kind, uint32_t sig) {
  switch (kind) {
    case field::enums::kEndUnderscoreExit:
      return "_exit";
    case field::enums::kEndExec:
      return "exec";
    case field::enums::kEndAbort:
      return "abort";
    case field::enums::kEndSignal:
      return SignalReason(static_cast<int>(sig));
    default:
      return "exit";
  }
}

// Drain thread, at the end: one `gtrace:` line when records were dropped, with the count, the
// causes and the setting that would have kept them (issue 20). Once per session.
void PrintDropLine(Session* s) {
  Drainer& d = *s->drainer;
  uint64_t dropped = d.records_dropped_total();
  // Losses of a failing disk alone already had their line (WriteOutput): one line per problem.
  if (dropped == 0 || s->drop_line_printed || d.thread_buffer_drops() + d.no_buffer_drops() + d.end_drops() == 0) return;
  s->drop_line_printed = true;
  uint64_t total = d.records_written() + dropped;
  char pct[32];
  std::snprintf(pct, sizeof(pct), "%.1f", 100.0 * static_cast<double>(dropped) / static_cast<double>(total));
  std::string line = "dropped " + std::to_string(dropped) + " of " + std::to_string(total) + " records (" + pct + " %):";
  uint64_t mb = s->config.buffer_bytes >> 20;
  // Enough for the dropped records on top of today's budget; one ring may use half of it.
  uint64_t need_mb = mb + ((d.thread_buffer_drops() + d.no_buffer_drops()) * kSlotBytes * 2 + (1u << 20) - 1) / (1u << 20);
  uint64_t suggest = 1;
  while (suggest < need_mb) suggest *= 2;
  if (d.thread_buffer_drops() > 0) line += " " + std::to_string(d.thread_buffer_drops()) + " thread buffers full;";
  if (d.no_buffer_drops() > 0) line += " " + std::to_string(d.no_buffer_drops()) + " records of threads that found no free thread buffer;";  // records, not threads
  if (d.thread_buffer_drops() + d.no_buffer_drops() > 0) {
    line += " GTRACE_BUFFER_MB=" + std::to_string(suggest) + " (gtrace profile --buffer-mb=" + std::to_string(suggest) +
            "; now " + std::to_string(mb) + ") would have kept them";
  }
  if (d.thread_buffer_drops() > 0) {
    if (!s->config.full_ring_wait) {
      // The rings were full because the drain thread had too little CPU (more recording threads
      // than cores): waiting for it keeps everything without more memory.
      line += ", as would GTRACE_FULL_RING=wait (now drop)";
    } else if (uint64_t gave_up = FullRingCounters().waits_dropped; gave_up > 0) {
      line += "; " + std::to_string(gave_up) + " waits for a drain thread that gave no sign of life for " +
              std::to_string(kFullRingNoProgressNs / 1000000) + " ms ended in a drop";
    }
  }
  if (d.writer_drops() > 0) line += "; " + std::to_string(d.writer_drops()) + " more lost writing the stream (disk full or failing)";
  if (d.end_drops() > 0) {
    line += (d.thread_buffer_drops() + d.no_buffer_drops() > 0 ? "; " : " ") + std::to_string(d.end_drops()) + " (counted by ring slot) recorded just before the process ended were not written: the end waits " +
            std::to_string(kEndDrainBudgetNs / 1000000) + " ms at most, and threads still running took the writer's CPU";
  }
  PrintLine(line);
}

// Drain thread, at the end, when nothing was dropped: under GTRACE_FULL_RING=wait the application
// may have waited for the drain thread instead (its timeline stretched by that much): one
// `gtrace:` line says how long, so a slowed job is never silent either. Waits under a millisecond
// in all are not worth a line.
void PrintWaitLine(Session* s) {
  if (s->drop_line_printed || s->wait_line_printed) return;
  FullRingStats st = FullRingCounters();
  if (st.waits_kept == 0 || st.wait_ns_total < 1000000) return;
  s->wait_line_printed = true;
  PrintLine("application threads waited " + std::to_string(st.wait_ns_total / 1000000) +
            " ms (summed over threads) for the drain thread, so that full thread buffers lost nothing (" + std::to_string(st.waits_kept) +
            " records waited); GTRACE_FULL_RING=drop never waits (it drops instead), a larger GTRACE_BUFFER_MB "
            "(now " + std::to_string(s->config.buffer_bytes >> 20) + ") or a free core for the drain thread waits less");
}

// Drain thread: everything recorded so far, an end-of-stream chunk, one write; then hold writes.
void WriteEndMark(Session* s, uint32_t mark) {
  uint32_t kind = mark & 0xffu, sig = mark >> 8;
  FlushDiagnostics(s);
  s->drainer->DrainOnce(true);
  FlushDiagnostics(s);  // what the emitters reported in that pass (NVTX's registry count)
  if (s->writer_lost_records > 0) s->drainer->EmitWriterDrops(s->writer_lost_records);
  s->writer_lost_records = 0;
  s->drainer->EmitClockSnapshot();
  s->drainer->EmitEnd(EndMarkReason(kind, sig), kind, sig, s->writer.bytes_written());
  WriteOutput(s);
  PrintDropLine(s);
  PrintWaitLine(s);
  s->last_end_mark.store(mark, std::memory_order_relaxed);
  s->hold_until_ns.store(NowNs() + kEndHoldNs, std::memory_order_release);
}

// Drain thread: a write of the stream file, reported as gtrace's overhead (PROFILER_OVERHEAD) in the
// next chunks written.
void TimedWrite(Session* s) {
  uint64_t start = StreamNow();
  WriteOutput(s);
  s->drainer->NoteOverhead(field::profiler_overhead::kKindStreamWrite, start, StreamNow());
}

void* DrainMain(void* arg) {
  auto* s = static_cast<Session*>(arg);
  t_gt_thread.internal = true;
  ::prctl(PR_SET_NAME, "gtrace-drain", 0, 0, 0);
  DrainThreadStarted(static_cast<uint32_t>(::syscall(SYS_gettid)));
  uint64_t flush_interval_ns = uint64_t{s->config.flush_interval_ms} * 1000000ull;
  uint64_t last_write = NowNs();
  uint64_t last_clock = last_write;
  s->drainer->EmitClockSnapshot();
  TimedWrite(s);
  s->thread_started.store(true, std::memory_order_release);
  uint32_t wake_seen = g_drain_wake.load(std::memory_order_acquire);
  while (true) {
    // Woken by flush requests, end marks, and producers whose ring crossed its high-water mark
    // (PokeDrainThread); otherwise every 10 ms, which also serves CUPTI's bounded buffer pool and
    // frees the rings of exited threads. Writes to the file still wait for GTRACE_FLUSH_MS or
    // 256 KiB of output. A wake during the last round changed the word: no wait then.
    timespec ten_ms{0, 10000000};
    Futex(&g_drain_wake, FUTEX_WAIT_PRIVATE, wake_seen, &ten_ms);
    wake_seen = g_drain_wake.load(std::memory_order_acquire);
    uint32_t ticket = s->flush_requested.load(std::memory_order_acquire);
    int term = s->terminate_signal.load(std::memory_order_acquire);
    bool stopping = s->stop.load(std::memory_order_acquire) || term != 0;
    if (term != 0) g_enabled_sources.store(0, std::memory_order_relaxed);
    uint32_t mark = s->end_mark.exchange(0, std::memory_order_acq_rel);
    uint64_t hold = s->hold_until_ns.load(std::memory_order_acquire);
    if (!stopping && hold != 0) {
      uint32_t last = s->last_end_mark.load(std::memory_order_relaxed);
      // abort() raises SIGABRT after its own mark: that is the same end, not a new one.
      bool abort_signal = last == field::enums::kEndAbort && mark == (field::enums::kEndSignal | (SIGABRT << 8));
      bool same_mark = mark == 0 || mark == last || abort_signal;
      if (NowNs() < hold && same_mark) {
        // The process is ending: write nothing an exec or exit_group could cut. Requests are
        // answered: the end mark already holds everything recorded before them.
        s->flush_done.store(ticket, std::memory_order_release);
        Futex(&s->flush_done, FUTEX_WAKE_PRIVATE, INT32_MAX, nullptr);
        continue;
      }
      s->hold_until_ns.store(0, std::memory_order_release);
    }
    FlushDiagnostics(s);
    s->drainer->DrainOnce(stopping);
    uint64_t now = NowNs();
    bool flush_asked = !TicketServed(s->flush_done.load(std::memory_order_relaxed), ticket);
    bool writes = (mark != 0 && !stopping) || stopping || flush_asked ||
                  s->drainer->output()->size() >= kWriteThresholdBytes || now - last_write >= flush_interval_ns;
    // A calibration pair after the records just drained, in the same write: every event in the file
    // then lies between two pairs (a tick stream converts by interpolation, never extrapolation).
    if (now - last_clock >= kClockSnapshotIntervalNs || stopping ||
        (writes && StreamClockIsTicks() && now - last_clock >= kMinWriteSnapshotIntervalNs)) {
      s->drainer->EmitClockSnapshot();
      last_clock = now;
    }
    if (mark != 0 && !stopping) {
      WriteEndMark(s, mark);
      last_write = now;
    } else if (stopping || flush_asked || s->drainer->output()->size() >= kWriteThresholdBytes ||
        now - last_write >= flush_interval_ns) {
      TimedWrite(s);
      last_write = now;
    }
    if (stopping) {
      std::string reason = s->end_reason;
      uint32_t kind = reason == "exit" ? field::enums::kEndExit : 0;
      if (term != 0) {
        reason = SignalReason(term);
        kind = field::enums::kEndSignal;
      }
      FlushDiagnostics(s);
      s->drainer->DrainOnce(true);
      FlushDiagnostics(s);
      if (s->writer_lost_records > 0) s->drainer->EmitWriterDrops(s->writer_lost_records);
      s->writer_lost_records = 0;
      s->drainer->EmitClockSnapshot();  // closes the timeline after the last records
      s->drainer->EmitEnd(reason, kind, static_cast<uint32_t>(term), s->writer.bytes_written());
      WriteOutput(s);
      s->writer.Close();
      PrintDropLine(s);
      PrintWaitLine(s);
      if (s->drainer->corrupt_records() > 0 || s->drainer->intern_misuse() > 0) {
        PrintLine("internal: " + std::to_string(s->drainer->corrupt_records()) + " corrupt records, " +
                  std::to_string(s->drainer->intern_misuse()) + " misplaced strings");
      }
    }
    s->flush_done.store(ticket, std::memory_order_release);
    Futex(&s->flush_done, FUTEX_WAKE_PRIVATE, INT32_MAX, nullptr);
    if (stopping) break;
  }
  SetFullRingPolicy(FullRingPolicy::kDrop);  // no drain thread any more: never wait for one
  DrainThreadStarted(0);
  s->thread_exited.store(true, std::memory_order_release);
  Futex(&s->flush_done, FUTEX_WAKE_PRIVATE, INT32_MAX, nullptr);
  return nullptr;
}

void OnSignal(int sig, siginfo_t* info, void* context) {
  int saved_errno = errno;
  const struct sigaction& old = g_old_actions[sig];
  bool old_is_default = !(old.sa_flags & SA_SIGINFO) && old.sa_handler == SIG_DFL;
  Session* s = CurrentSession();
  if (s != nullptr && !s->ended.load(std::memory_order_acquire) && !s->thread_exited.load()) {
    if (old_is_default) {
      // The default action ends the process: finish the stream for good, within the end's budget.
      s->drainer->SetDeadline(NowNs() + kEndDrainBudgetNs);
      s->terminate_signal.store(sig, std::memory_order_release);
    }
    uint32_t ticket = RequestTicket(s);
    WaitForTicket(s, ticket, 3000);
  }
  if (old.sa_flags & SA_SIGINFO) {
    if (old.sa_sigaction != nullptr) old.sa_sigaction(sig, info, context);
  } else if (old.sa_handler == SIG_DFL) {
    // Restore the default and re-raise: delivered when this handler returns (the signal is
    // blocked while it runs), so the exit status is the signal's, as without gtrace.
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    ::sigaction(sig, &dfl, nullptr);
    ::raise(sig);
  } else if (old.sa_handler != SIG_IGN) {
    old.sa_handler(sig);
  }
  errno = saved_errno;
}

// SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL, on the thread that crashed (or called abort/raise).
// Async-signal-safe: MarkEnd only posts to the drain thread and waits on a futex (bounded by
// GTRACE_EXIT_WAIT_MS); on the drain thread itself it does nothing. Then the application's handler
// runs, or the default action: same signal, same core dump as without gtrace.
void OnCrashSignal(int sig, siginfo_t* info, void* context) {
  int saved_errno = errno;
  MarkEnd(EndKind::kSignal, sig);
  struct sigaction old = g_old_actions[sig];
  if (old.sa_flags & SA_RESETHAND) {
    // The application asked for one delivery only: later ones take the default action.
    g_old_actions[sig].sa_handler = SIG_DFL;
    g_old_actions[sig].sa_flags = 0;
  }
  errno = saved_errno;
  if (old.sa_flags & SA_SIGINFO) {
    if (old.sa_sigaction != nullptr) {
      old.sa_sigaction(sig, info, context);
      return;
    }
  } else if (old.sa_handler != SIG_DFL && old.sa_handler != SIG_IGN) {
    old.sa_handler(sig);
    return;
  }
  WriteCrashReport(sig, info);  // the process dies now: say where (collector/crash_report.h)
  // The default action. A fault (si_code > 0) re-executes the faulting instruction when this
  // handler returns and ends the process by the kernel's hand; a sent signal (kill, raise,
  // abort: si_code <= 0) is raised again, delivered when this handler returns.
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  ::sigaction(sig, &dfl, nullptr);
  if (info == nullptr || info->si_code <= 0 || sig == SIGABRT) ::raise(sig);
  errno = saved_errno;
}

// True when `action` is one of ours: a forked child that starts its own session finds the
// parent's handlers installed (and the parent's g_old_actions in its copy of memory).
bool IsOurHandler(const struct sigaction& action) {
  return (action.sa_flags & SA_SIGINFO) && (action.sa_sigaction == OnSignal || action.sa_sigaction == OnCrashSignal);
}

void InstallSignalHandlers() {
  WarmCrashReport();
  for (int sig : kCrashSignals) {
    struct sigaction old {};
    if (::sigaction(sig, nullptr, &old) != 0 || IsOurHandler(old)) continue;
    if (!(old.sa_flags & SA_SIGINFO) && old.sa_handler == SIG_IGN) continue;
    g_old_actions[sig] = old;
    struct sigaction act {};
    act.sa_sigaction = OnCrashSignal;
    act.sa_mask = old.sa_mask;
    // SA_ONSTACK: a stack overflow reaches us only on the application's alternate stack, if any.
    act.sa_flags = (old.sa_flags & ~(SA_RESETHAND | SA_NODEFER)) | SA_SIGINFO | SA_ONSTACK;
    if (::sigaction(sig, &act, nullptr) == 0) g_installed[sig] = true;
  }
  for (int sig : kHandledSignals) {
    struct sigaction old {};
    if (::sigaction(sig, nullptr, &old) != 0 || IsOurHandler(old)) continue;
    if (!(old.sa_flags & SA_SIGINFO) && old.sa_handler == SIG_IGN) continue;  // keep "ignored" (survives exec)
    g_old_actions[sig] = old;
    struct sigaction act {};
    act.sa_sigaction = OnSignal;
    act.sa_mask = old.sa_mask;
    // Keep the application's flags (Python relies on EINTR: no SA_RESTART unless it had it).
    act.sa_flags = (old.sa_flags & ~(SA_RESETHAND | SA_NODEFER)) | SA_SIGINFO;
    if (::sigaction(sig, &act, nullptr) == 0) g_installed[sig] = true;
  }
}

void ThreadExitDestructor(void* value) {
  auto* b = static_cast<ThreadBuffer*>(value);
  ThreadLocalState& s = t_gt_thread;
  if (b != nullptr && s.buffer == b && s.generation == g_generation.load(std::memory_order_relaxed)) {
    g_pool->Retire(b);
    // The drain thread frees it within its next pass: a thread pool that starts a thread per task
    // (one alive at a time) then finds a free buffer instead of waiting for the 10 ms round.
    PokeDrainThread();
  }
  s.buffer = nullptr;
  s.exiting = true;  // thread-local destructors that run after this must not take a new buffer
}

void CreateThreadKey() { pthread_key_create(&g_thread_key, ThreadExitDestructor); }

void ForkPrepare() { pthread_mutex_lock(&g_start_mutex); }
void ForkParent() { pthread_mutex_unlock(&g_start_mutex); }
void ForkChild() {
  // Only the forking thread exists here. Abandon the parent's session (its drain thread is not
  // in this process); the first record in the child starts a session of its own — unless the
  // parent's configuration says forked children are not traced until they exec.
  pthread_mutex_unlock(&g_start_mutex);
  g_generation.fetch_add(1, std::memory_order_relaxed);
  Session* parent = g_session.load(std::memory_order_acquire);
  bool trace_child = !g_untraced_until_exec;  // a grandchild of an untraced child stays untraced
  if (trace_child && parent != nullptr) {
    trace_child = parent->config.trace_fork_before_exec;
  } else if (trace_child) {
    // The parent never started a session: read the setting the same way LoadConfig would.
    bool b = true;
    const char* v = ::getenv("GTRACE_TRACE_FORK_BEFORE_EXEC");
    if (v != nullptr && ParseBool(v, &b)) trace_child = b;
  }
  if (!trace_child) g_untraced_until_exec = true;
  g_forked_without_exec = true;
  g_session.store(nullptr, std::memory_order_release);
  g_drain_armed.store(false, std::memory_order_relaxed);  // the parent's drain thread is not here
  SetFullRingPolicy(FullRingPolicy::kDrop);  // until the child's own session starts its drain thread
  g_failed_pid.store(trace_child ? 0 : static_cast<uint32_t>(::getpid()), std::memory_order_relaxed);
  if (!trace_child) g_enabled_sources.store(0, std::memory_order_relaxed);
  if (g_pool != nullptr) g_pool->ResetAfterFork();
  t_gt_thread.buffer = nullptr;
  pthread_once(&g_key_once, CreateThreadKey);
  pthread_setspecific(g_thread_key, nullptr);
}

void ProcessOnce() { pthread_atfork(ForkPrepare, ForkParent, ForkChild); }

bool AppendManifest(const std::string& manifest, const std::string& stream_path) {
  char resolved[4096];
  std::string line = (::realpath(stream_path.c_str(), resolved) != nullptr ? std::string(resolved) : stream_path) + "\n";
  int fd = ::open(manifest.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return false;
  bool ok = ::write(fd, line.data(), line.size()) == static_cast<ssize_t>(line.size());
  ::close(fd);
  return ok;
}

// Called with g_start_mutex held. Returns the running session, or nullptr (reason printed).
Session* StartSession() {
  auto s = std::make_unique<Session>();
  s->config = LoadConfig(GetEnv, environ);
  s->pid = static_cast<uint32_t>(::getpid());
  if (const char* d = ::getenv("GTRACE_DISABLE"); d != nullptr) {
    bool off = false;
    if (ParseBool(d, &off) && off) return nullptr;
  }
  {
    // Before the header's clock pair and before any source is enabled: every stream timestamp
    // reads the clock chosen here. Without a forced clock two cases stay on CLOCK_MONOTONIC: GPU
    // metrics (the PM sampler may map CUPTI's own clock by an offset in ns, inject/metrics, not onto
    // ticks) and raw capture (captures are replayed on CLOCK_MONOTONIC, docs/capture.md).
    ClockChoice choice = s->config.clock;
    const char* raw_capture = GetEnv("GTRACE_RAW_CAPTURE_DIR");
    if (choice == ClockChoice::kAuto &&
        ((s->config.sources & kSourceGpuMetrics) != 0 || (raw_capture != nullptr && *raw_capture != 0))) {
      choice = ClockChoice::kMonotonic;
    }
    std::string warning;
    SelectStreamClock(choice, ProbeTickCounter(), &warning);
    if (!warning.empty()) s->config.warnings.push_back(warning);
  }
  for (const std::string& w : s->config.warnings) PrintLine(w);
  g_configured_sources.store(s->config.sources, std::memory_order_relaxed);
  if (s->config.sources == 0) return nullptr;
  s->info = ReadProcessInfo(GetEnv);
  s->info.forked_without_exec = g_forked_without_exec;
  if (g_pool == nullptr) {
    auto* pool = new (g_pool_storage) RingPool();
    if (!pool->Init(s->config.buffer_bytes, s->config.thread_buffer_bytes)) {
      PrintLine("cannot reserve " + std::to_string(s->config.buffer_bytes >> 20) + " MiB of trace buffers; tracing disabled");
      return nullptr;
    }
    g_pool = pool;
  }
  std::string path, warning;
  Status st = ExpandOutputPattern(s->config.output_pattern, s->info.host_name, s->pid, ::getenv, &path, &warning);
  if (!st.ok()) {
    PrintLine(st.message() + "; using gtrace-%h-%p");
    ExpandOutputPattern("gtrace-%h-%p", s->info.host_name, s->pid, ::getenv, &path);
  } else if (!warning.empty()) {
    PrintLine(warning);
  }
  st = s->writer.Open(path, s->pid);
  if (!st.ok()) {
    PrintLine(st.message() + "; tracing disabled, the application runs on");
    return nullptr;
  }
  // A taken name that holds this pid was written by this process before an exec (a pid is not
  // reused while its process lives): the new image's stream beside it is expected, not news.
  bool own_pre_exec = s->config.output_pattern.find("%p") != std::string::npos;
  if (s->writer.renamed() && !own_pre_exec) PrintLine(WithStreamExtension(path) + " exists; writing " + s->writer.path() + " instead");
  s->id = g_session_counter.fetch_add(1, std::memory_order_relaxed) + 1;
  st = s->writer.Append(EncodeStreamPreamble(s->info, s->config, ReadClockPair(), GT_VERSION_STRING));
  if (!st.ok()) {
    PrintLine(st.message() + "; tracing disabled, the application runs on");
    return nullptr;
  }
  if (!s->config.manifest_path.empty() && !AppendManifest(s->config.manifest_path, s->writer.path())) {
    PrintLine("cannot append to GTRACE_MANIFEST " + s->config.manifest_path);
  }
  s->drainer = std::make_unique<Drainer>(g_pool, s->id);
  // The drain thread blocks every signal, so handlers run on application threads only.
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, &old);
  int rc = pthread_create(&s->thread, nullptr, DrainMain, s.get());
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  if (rc != 0) {
    PrintLine(std::string("cannot start the writer thread: ") + strerror(rc) + "; tracing disabled");
    return nullptr;
  }
  g_drain_armed.store(true, std::memory_order_relaxed);
  // Full rings wait for the drain thread only while one runs (collector/full_ring_wait.h).
  SetFullRingPolicy(s->config.full_ring_wait ? FullRingPolicy::kWait : FullRingPolicy::kDrop);
  // Wait (once, at most 200 ms) until the drain thread is past its start-up allocations. An
  // application that forks right after its first NVTX call (fork_child, DataLoader workers) would
  // otherwise fork while that thread is inside the allocator: glibc's malloc survives that, but
  // allocators without fork handlers (ASan's in GCC 12, some custom mallocs) leave the child's next
  // thread waiting on a lock nobody holds.
  for (int i = 0; i < 2000 && !s->thread_started.load(std::memory_order_acquire); ++i) {
    timespec pause{0, 100000};
    ::nanosleep(&pause, nullptr);
  }
  pthread_once(&g_key_once, CreateThreadKey);
  return s.release();
}

}  // namespace

namespace internal {
RecordDecodeFn DecoderFor(uint8_t type) { return type < kRecordTypeCount ? g_decoders[type] : nullptr; }
int EmitterCount() { return g_emitter_count.load(std::memory_order_acquire); }
EmitFn EmitterAt(int i) { return g_emitters[i]; }
uint64_t NoBufferDrops() { return g_no_buffer_drops.load(std::memory_order_relaxed); }
}  // namespace internal

void RegisterRecordDecoder(RecordType type, RecordDecodeFn fn) {
  if (type < kRecordTypeCount) g_decoders[type] = fn;
}

bool RegisterEmitter(EmitFn fn) {
  pthread_mutex_lock(&g_start_mutex);
  int n = g_emitter_count.load(std::memory_order_relaxed);
  bool ok = false;
  bool present = false;
  for (int i = 0; i < n; ++i) present |= g_emitters[i] == fn;
  if (present) {
    ok = true;
  } else if (n < kMaxEmitters) {
    g_emitters[n] = fn;
    g_emitter_count.store(n + 1, std::memory_order_release);
    ok = true;
  }
  pthread_mutex_unlock(&g_start_mutex);
  return ok;
}

bool RegisterSessionStartHook(SessionStartFn fn) {
  pthread_mutex_lock(&g_start_mutex);
  int n = g_start_hook_count.load(std::memory_order_relaxed);
  bool ok = false;
  bool present = false;
  for (int i = 0; i < n; ++i) present |= g_start_hooks[i] == fn;
  if (present) {
    ok = true;
  } else if (n < kMaxStartHooks) {
    g_start_hooks[n] = fn;
    g_start_hook_count.store(n + 1, std::memory_order_release);
    ok = true;
  }
  pthread_mutex_unlock(&g_start_mutex);
  return ok;
}

// Whether `config` asks for `source` at all. NVTX hooks are also needed, without NVTX being
// recorded, to see the range that opens an NVTX capture window.
bool Wants(const Config& config, uint32_t source) {
  if (source == 0 || (config.sources & source) != 0) return true;
  return source == kSourceNvtx && config.capture.range == CaptureRange::kNvtx;
}

bool EnsureSession(uint32_t source) {
  Session* s = CurrentSession();
  if (s == nullptr) {
    if (g_declined.load(std::memory_order_relaxed)) return false;
    uint32_t pid = static_cast<uint32_t>(::getpid());
    if (g_failed_pid.load(std::memory_order_relaxed) == pid) return false;
    // An entry point of a source that is not traced (NCCL's plugin under -t cuda, say) must not
    // create a stream that would stay empty: another source may still start the session.
    if (source != 0 && !Wants(LoadConfig(GetEnv, environ), source)) return false;
    pthread_once(&g_process_once, ProcessOnce);
    pthread_mutex_lock(&g_start_mutex);
    s = CurrentSession();
    bool started_here = false;
    if (s == nullptr && g_failed_pid.load(std::memory_order_relaxed) != pid) {
      s = StartSession();
      if (s == nullptr) {
        g_failed_pid.store(pid, std::memory_order_relaxed);
        g_enabled_sources.store(0, std::memory_order_relaxed);
      } else {
        g_session.store(s, std::memory_order_release);
        // A capture window (range or delay) decides when recording starts.
        g_enabled_sources.store(s->config.capture.StartsPaused() ? 0 : s->config.sources, std::memory_order_release);
        InstallSignalHandlers();
        started_here = true;
      }
    }
    pthread_mutex_unlock(&g_start_mutex);
    if (s == nullptr) return false;
    if (started_here) {
      int n = g_start_hook_count.load(std::memory_order_acquire);
      for (int i = 0; i < n; ++i) g_start_hooks[i](s->config, s->id);
    }
  }
  if (s->ended.load(std::memory_order_acquire)) return false;
  return Wants(s->config, source);
}

ThreadBuffer* AcquireBufferSlow() {
  ThreadLocalState& t = t_gt_thread;
  if (t.exiting || t.internal) return nullptr;
  uint32_t gen = g_generation.load(std::memory_order_relaxed);
  if (t.generation != gen) {
    t.buffer = nullptr;
    t.generation = gen;
    t.retry_countdown = 0;
  }
  if (t.retry_countdown > 0) {
    --t.retry_countdown;
    g_no_buffer_drops.fetch_add(1, std::memory_order_relaxed);
    return nullptr;
  }
  if (!EnsureSession(0) || g_pool == nullptr) return nullptr;
  char name[17] = {};
  ::prctl(PR_GET_NAME, name, 0, 0, 0);
  ThreadBuffer* b = g_pool->Acquire(CurrentTid(), name);
  if (b == nullptr) b = AcquireWhenNoneFree(g_pool, CurrentTid(), name);
  if (b == nullptr) {
    t.retry_countdown = 1024;  // a scan of every buffer is not worth it on each record
    g_no_buffer_drops.fetch_add(1, std::memory_order_relaxed);
    return nullptr;
  }
  pthread_once(&g_key_once, CreateThreadKey);
  pthread_setspecific(g_thread_key, b);
  t.buffer = b;
  return b;
}

bool SessionRunsHere() {
  Session* s = CurrentSession();
  return s != nullptr && !s->ended.load(std::memory_order_acquire);
}

bool SessionInstalledAndRunning() {
  Session* s = g_session.load(std::memory_order_acquire);
  return s != nullptr && !s->ended.load(std::memory_order_acquire);
}

const Config* SessionConfig() {
  Session* s = CurrentSession();
  return s != nullptr ? &s->config : nullptr;
}

uint64_t SessionId() {
  Session* s = CurrentSession();
  return s != nullptr ? s->id : 0;
}

uint32_t ConfiguredSources() { return g_configured_sources.load(std::memory_order_relaxed); }

uint32_t ThreadBufferCount() { return g_pool != nullptr ? g_pool->count() : 0; }

void DeclineSessions() {
  g_declined.store(true, std::memory_order_relaxed);
  g_enabled_sources.store(0, std::memory_order_relaxed);
}

std::string SessionStreamPath() {
  Session* s = CurrentSession();
  return s != nullptr ? s->writer.path() : std::string();
}

void SetRecording(uint32_t source_bits, bool on) {
  Session* s = CurrentSession();
  if (s == nullptr || s->ended.load(std::memory_order_acquire)) return;
  if (on) {
    g_enabled_sources.fetch_or(source_bits & s->config.sources, std::memory_order_release);
  } else {
    g_enabled_sources.fetch_and(~source_bits, std::memory_order_release);
  }
}

void RequestFlush(bool wait, uint32_t timeout_ms) {
  Session* s = CurrentSession();
  if (s == nullptr || s->ended.load(std::memory_order_acquire) || t_gt_thread.internal) return;
  uint32_t ticket = RequestTicket(s);
  if (wait) WaitForTicket(s, ticket, timeout_ms);
}

bool MarkEnd(EndKind kind, int sig) {
  int saved_errno = errno;
  bool done = false;
  Session* s = CurrentSession();
  if (s != nullptr && !t_gt_thread.internal && !s->ended.load(std::memory_order_acquire) &&
      !s->thread_exited.load(std::memory_order_acquire)) {
    s->end_mark.store(static_cast<uint32_t>(kind) | (static_cast<uint32_t>(sig) << 8), std::memory_order_release);
    uint32_t ticket = RequestTicket(s);
    done = WaitForTicket(s, ticket, s->config.exit_wait_ms);
  }
  errno = saved_errno;
  return done;
}

void ResumeAfterEnd() {
  int saved_errno = errno;
  Session* s = CurrentSession();
  if (s != nullptr && s->hold_until_ns.exchange(0, std::memory_order_acq_rel) != 0) Wake(s);
  errno = saved_errno;
}

void ReportDiagnostic(uint32_t severity, std::string_view source, std::string_view text, bool print) {
  if (print) PrintLine(std::string(text));
  Session* s = CurrentSession();
  if (s == nullptr) return;
  std::lock_guard<std::mutex> lock(s->diag_mutex);
  if (s->diags.size() < 1000) s->diags.push_back({StreamNow(), severity, std::string(source), std::string(text)});
}

void EndSession(const char* reason) {
  Session* s = CurrentSession();
  if (s == nullptr || s->ended.exchange(true)) return;
  g_enabled_sources.store(0, std::memory_order_release);
  if (s->thread_exited.load(std::memory_order_acquire)) return;  // a signal already finished the stream
  s->end_reason = reason != nullptr ? reason : "exit";
  s->drainer->SetDeadline(NowNs() + kEndDrainBudgetNs);
  s->stop.store(true, std::memory_order_release);
  Wake(s);
  timespec deadline;
  clock_gettime(CLOCK_REALTIME, &deadline);
  deadline.tv_sec += 5;
  if (pthread_timedjoin_np(s->thread, nullptr, &deadline) != 0) {
    PrintLine("the writer thread did not finish within 5 s; the stream may end early");
  }
}

void PokeDrainThread() {
  if (!g_drain_armed.load(std::memory_order_relaxed)) return;
  // One syscall per high-water crossing (not per record): the price of not dropping. A raw futex
  // call, which gtrace's OS-runtime interposers (inject/osrt) never see as the application's.
  int saved_errno = errno;
  WakeDrain();
  errno = saved_errno;
}

void PrintLine(std::string_view text) {
  char buf[1024];
  size_t n = 0;
  auto put = [&](std::string_view part) {
    size_t k = part.size() < sizeof(buf) - 1 - n ? part.size() : sizeof(buf) - 1 - n;
    std::memcpy(buf + n, part.data(), k);
    n += k;
  };
  put("gtrace: ");
  put(text);
  buf[n++] = '\n';
  ssize_t r = ::write(2, buf, n);
  (void)r;
}

}  // namespace gt
