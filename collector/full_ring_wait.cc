#include "collector/full_ring_wait.h"

#include <fcntl.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <ctime>

#include "collector/clock.h"
#include "collector/session.h"

namespace gt {
namespace {

std::atomic<uint32_t> g_policy{static_cast<uint32_t>(FullRingPolicy::kDrop)};
// Drain thread's heartbeat; producers compare it across a wait.
std::atomic<uint32_t> g_heartbeat{0};
// The heartbeat value at which a producer last gave up (bit 32 set: valid). While the heartbeat
// still has that value, full rings drop at once.
std::atomic<uint64_t> g_stalled_at{0};
constexpr uint64_t kStalledValid = uint64_t{1} << 32;
std::atomic<uint32_t> g_drain_tid{0};  // the drain thread's OS tid (0: not known)
std::atomic<uint32_t> g_waiters{0};  // producers inside WaitOnDrain now
std::atomic<uint64_t> g_waits_kept{0};
std::atomic<uint64_t> g_waits_dropped{0};
std::atomic<uint64_t> g_wait_ns{0};
// Threads waiting for a free buffer, and the drain thread's pass counter they sleep on.
std::atomic<uint32_t> g_buffer_waiters{0};
std::atomic<uint32_t> g_pass_seq{0};

long FutexWait(std::atomic<uint32_t>* word, uint32_t value, uint64_t timeout_ns) {
  timespec ts{static_cast<time_t>(timeout_ns / 1000000000ull), static_cast<long>(timeout_ns % 1000000000ull)};
  return ::syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), FUTEX_WAIT_PRIVATE, value, &ts, nullptr, 0);
}

void FutexWakeAll(std::atomic<uint32_t>* word) {
  ::syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), FUTEX_WAKE_PRIVATE, INT32_MAX, nullptr, nullptr, 0);
}

// The scheduler state of the drain thread ('R' running or waiting for a CPU, 'D' in the kernel,
// 'S' asleep, 't'/'T' stopped, ...), or '?' when unknown. Raw system calls: libc's open/read may be
// gtrace's own OS-runtime interposers (inject/osrt), which would record from inside this path.
char DrainThreadState() {
  uint32_t tid = g_drain_tid.load(std::memory_order_relaxed);
  if (tid == 0) return '?';
  char path[48] = "/proc/self/task/";
  size_t n = 16;
  char digits[12];
  size_t k = 0;
  do {
    digits[k++] = static_cast<char>('0' + tid % 10);
    tid /= 10;
  } while (tid != 0);
  while (k > 0) path[n++] = digits[--k];
  const char kStat[] = "/stat";
  for (size_t i = 0; i < sizeof(kStat); ++i) path[n++] = kStat[i];
  long fd = ::syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return '?';
  char buf[256];
  long got = ::syscall(SYS_read, fd, buf, sizeof(buf) - 1);
  ::syscall(SYS_close, fd);
  if (got <= 0) return '?';
  buf[got] = '\0';
  // "tid (comm) S ...": the state follows the last ')' (comm may contain ')').
  const char* state = nullptr;
  for (long i = 0; i < got; ++i) {
    if (buf[i] == ')') state = buf + i;
  }
  return state != nullptr && state[1] == ' ' && state[2] != '\0' ? state[2] : '?';
}

// The wait itself, for room in a ring or for a free buffer. Ordering (no lost wake-up): the caller
// raises its waiting flag before calling; here `seq` is read, then `try_once` retries (reading the
// tail, or the buffers' states), then the thread sleeps only while `seq` still has the value read.
// The drain thread stores the tail (or frees the buffer), bumps `seq`, then reads the flag. All are
// sequentially consistent, so either the drain thread sees the flag and wakes, or the retry sees
// what it did (or the futex call sees the new sequence). `try_once` returns 1 (done), 0 (wait on)
// or -1 (give up: what it waits for cannot come).
template <typename TryOnce>
bool WaitOnDrain(std::atomic<uint32_t>* seq, TryOnce try_once) {
  const uint64_t start_ns = NowNs();
  uint64_t now_ns = start_ns;
  uint64_t alive_ns = start_ns;   // last time the heartbeat was seen to move
  uint64_t moved_ns = start_ns;   // last time the drain thread bumped `seq`
  uint32_t seq_seen = seq->load(std::memory_order_relaxed);
  uint32_t beat = g_heartbeat.load(std::memory_order_acquire);
  g_waiters.fetch_add(1, std::memory_order_relaxed);
  PokeDrainThread();
  bool ok = false, cannot_come = false;
  while (true) {
    uint32_t s = seq->load(std::memory_order_seq_cst);
    int tried = try_once();
    if (tried != 0) {
      ok = tried > 0;
      cannot_come = tried < 0;
      break;
    }
    uint32_t b = g_heartbeat.load(std::memory_order_acquire);
    if (b != beat) {
      beat = b;
      alive_ns = now_ns;
    }
    if (s != seq_seen) {
      seq_seen = s;
      moved_ns = now_ns;
    }
    if (now_ns - moved_ns >= kFullRingMaxWaitNs) break;
    if (now_ns - alive_ns >= kFullRingNoProgressNs) {
      // Silent for that long. A drain thread that is runnable (a loaded machine has not given it a
      // CPU yet) or inside a system call (writing the stream) is alive: wait on, within the cap.
      char st = DrainThreadState();
      if (st != 'R' && st != 'D') break;
      alive_ns = now_ns;
    }
    uint64_t left = kFullRingNoProgressNs - (now_ns - alive_ns);
    FutexWait(seq, s, left);
    now_ns = NowNs();
  }
  g_waiters.fetch_sub(1, std::memory_order_relaxed);
  g_wait_ns.fetch_add(NowNs() - start_ns, std::memory_order_relaxed);
  if (ok) {
    g_waits_kept.fetch_add(1, std::memory_order_relaxed);
    return true;
  }
  if (cannot_come) return false;  // not the drain thread's silence: no stall, no dropped wait
  g_waits_dropped.fetch_add(1, std::memory_order_relaxed);
  // Until the drain thread shows a sign of life, later full rings drop at once: a stopped or dead
  // drain thread costs one wait, and one stuck in a system call (or a wait that hit the cap while
  // the heartbeat stood still) no more than one per heartbeat.
  if (g_heartbeat.load(std::memory_order_acquire) == beat) g_stalled_at.store(beat | kStalledValid, std::memory_order_relaxed);
  return false;
}

bool StalledNow() {
  uint64_t stalled = g_stalled_at.load(std::memory_order_relaxed);
  return stalled == (g_heartbeat.load(std::memory_order_acquire) | kStalledValid);
}

}  // namespace

void SetFullRingPolicy(FullRingPolicy policy) {
  g_policy.store(static_cast<uint32_t>(policy), std::memory_order_relaxed);
  g_stalled_at.store(0, std::memory_order_relaxed);
  if (policy == FullRingPolicy::kWait) {  // a new session (a forked child's too) counts its own waits
    g_waits_kept.store(0, std::memory_order_relaxed);
    g_waits_dropped.store(0, std::memory_order_relaxed);
    g_wait_ns.store(0, std::memory_order_relaxed);
  }
}

FullRingPolicy CurrentFullRingPolicy() { return static_cast<FullRingPolicy>(g_policy.load(std::memory_order_relaxed)); }

__attribute__((noinline)) uint64_t ReserveWhenFull(ThreadBuffer* buffer, uint32_t n) {
  ThreadRing& ring = buffer->ring;
  if (g_policy.load(std::memory_order_relaxed) == static_cast<uint32_t>(FullRingPolicy::kWait) && n > 0 &&
      n <= kMaxExtSlots + 1 && n <= ring.capacity()) {
    // The drain thread gave no sign of life in a whole earlier wait and still has not: drop at once.
    if (!StalledNow()) {
      int saved_errno = errno;
      uint64_t pos = 0;
      ring.waiting_word()->store(1, std::memory_order_seq_cst);
      bool ok = WaitOnDrain(ring.release_seq_word(), [&] { return ring.Reserve(n, &pos) ? 1 : 0; });
      ring.waiting_word()->store(0, std::memory_order_relaxed);
      errno = saved_errno;
      if (ok) return pos;
    }
  }
  ring.CountDrop();
  return kNoRoom;
}

ThreadBuffer* AcquireWhenNoneFree(RingPool* pool, uint32_t tid, const char* thread_name) {
  if (g_policy.load(std::memory_order_relaxed) != static_cast<uint32_t>(FullRingPolicy::kWait) || pool->retired() == 0 ||
      StalledNow()) {
    return nullptr;
  }
  int saved_errno = errno;
  ThreadBuffer* b = nullptr;
  g_buffer_waiters.fetch_add(1, std::memory_order_seq_cst);
  WaitOnDrain(&g_pass_seq, [&] {
    b = pool->Acquire(tid, thread_name);
    if (b != nullptr) return 1;
    // Nothing left to free: the threads that hold the buffers are alive (or grown rings hold the
    // budget). Waiting would not help; the caller drops and counts.
    return pool->retired() == 0 ? -1 : 0;
  });
  g_buffer_waiters.fetch_sub(1, std::memory_order_relaxed);
  errno = saved_errno;
  return b;
}

void DrainPassDone() {
  g_pass_seq.fetch_add(1, std::memory_order_seq_cst);
  if (g_buffer_waiters.load(std::memory_order_seq_cst) != 0) FutexWakeAll(&g_pass_seq);
}

void DrainThreadStarted(uint32_t tid) { g_drain_tid.store(tid, std::memory_order_relaxed); }

bool ProducersWaiting() { return g_waiters.load(std::memory_order_relaxed) != 0; }

void DrainHeartbeat() { g_heartbeat.fetch_add(1, std::memory_order_release); }

void DrainReleasedRing(ThreadRing& ring) {
  ring.release_seq_word()->fetch_add(1, std::memory_order_seq_cst);
  if (ring.ProducerWaiting()) FutexWakeAll(ring.release_seq_word());
}

FullRingStats FullRingCounters() {
  return {g_waits_kept.load(std::memory_order_relaxed), g_waits_dropped.load(std::memory_order_relaxed),
          g_wait_ns.load(std::memory_order_relaxed)};
}

}  // namespace gt
