// SIGPROF routing from each thread's perf event to its slots (Python frames, native stacks), and the
// handler. Design and threads: python_signal_sampler.h and native_stack_slot.h.
#include "inject/sampling/python_signal_sampler.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <sched.h>
#include <signal.h>
#include <unistd.h>

#include <cstring>

#include "inject/sampling/slot_take.h"

namespace gt::sampling {
namespace {

constexpr int kSignal = SIGPROF;
constexpr int kMaxRoutedFds = 4096;  // an event with a larger fd keeps native frames only

// Written by the drain thread before the first route is published (release on g_handler_ready,
// g_python_ready, g_native_ready); read by handlers after an acquire of the flag. Constant-initialized:
// no constructor runs at load.
callstack::PythonRuntime g_python;
NativeUnwinder g_native;
std::atomic<bool> g_handler_ready{false};  // SIGPROF runs OnSigprof
std::atomic<bool> g_python_ready{false};   // g_python is valid
std::atomic<bool> g_native_ready{false};   // g_native is valid
std::atomic<pid_t> g_pid{0};
// fd -> slots of its thread, and per fd whether a handler is using them (outside the slots, so a
// handler never touches their memory after Disarm has let them go).
std::atomic<SampleSlots*> g_routes[kMaxRoutedFds];
std::atomic<uint32_t> g_busy[kMaxRoutedFds];

// Runs on the sampled thread, right after the kernel took its sample (see the header).
void OnSigprof(int /*sig*/, siginfo_t* info, void* context) {
  int saved_errno = errno;
  // Only signals from our events: F_SETSIG fills si_fd and gives a POLL_* code (a kill() or an
  // interval timer's SIGPROF has another code and is ignored).
  if (info != nullptr && info->si_code >= POLL_IN && info->si_code <= POLL_HUP && info->si_fd >= 0 &&
      info->si_fd < kMaxRoutedFds && g_handler_ready.load(std::memory_order_acquire)) {
    int fd = info->si_fd;
    SampleSlots* slots = g_routes[fd].load(std::memory_order_acquire);
    if (slots != nullptr) {
      g_busy[fd].store(1, std::memory_order_seq_cst);
      if (g_routes[fd].load(std::memory_order_seq_cst) == slots) {
        // Native stack first: it starts from the interrupted context, whatever the Python reader costs.
        NativeStackSlot* native = slots->native.load(std::memory_order_acquire);
        if (native != nullptr && context != nullptr && g_native_ready.load(std::memory_order_acquire))
          native->OnSignal(g_native, context);
        PySampleSlot* python = slots->python.load(std::memory_order_acquire);
        if (python != nullptr && g_python_ready.load(std::memory_order_acquire)) {
          // A thread-local read in CPython; NULL on a thread without Python state.
          void* tstate = g_python.this_thread_state != nullptr ? g_python.this_thread_state() : nullptr;
          if (tstate != nullptr)
            python->OnSignal(g_python, g_pid.load(std::memory_order_relaxed), reinterpret_cast<uintptr_t>(tstate));
        }
      }
      g_busy[fd].store(0, std::memory_order_release);
    }
  }
  errno = saved_errno;
}

}  // namespace

void PySampleSlot::OnSignal(const callstack::PythonRuntime& py, pid_t pid, uintptr_t tstate) {
  // The sample's record is in the ring already (written before the signal was queued), and no
  // other sample of this thread can come before this handler runs: data_head is its end offset.
  uint64_t head = __atomic_load_n(&static_cast<const perf_event_mmap_page*>(perf_page_)->data_head, __ATOMIC_ACQUIRE);
  uint64_t w = write_.load(std::memory_order_relaxed);
  if (w - read_.load(std::memory_order_acquire) >= kEntries) {
    full_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  PySampleEntry& e = entries_[w % kEntries];
  size_t bytes = 0;
  bool truncated = false;
  int frames = reader_.Read(py, pid, tstate, e.data, PySampleEntry::kDataBytes, &bytes, &truncated);
  if (frames <= 0)
    return;  // no Python frames: the sample keeps its native frames
  e.data_head = head;
  e.bytes = static_cast<uint32_t>(bytes);
  e.frames = static_cast<uint16_t>(frames);
  e.truncated = truncated ? 1 : 0;
  write_.store(w + 1, std::memory_order_release);
}

const PySampleEntry* PySampleSlot::Take(uint64_t end_offset) {
  return TakeSlotEntry(&read_, write_, entries_, end_offset);
}

bool TakeSampleSignal(std::string* why) {
  struct sigaction old;
  if (sigaction(kSignal, nullptr, &old) != 0) {
    *why = "cannot query SIGPROF's handler";
    return false;
  }
  bool ours = (old.sa_flags & SA_SIGINFO) != 0 && old.sa_sigaction == &OnSigprof;
  bool free = (old.sa_flags & SA_SIGINFO) == 0 && (old.sa_handler == SIG_DFL || old.sa_handler == SIG_IGN);
  if (!ours && !free) {
    *why = "the application handles SIGPROF itself (another profiler?); gtrace does not take it over";
    return false;
  }
  g_pid.store(getpid(), std::memory_order_relaxed);  // also a forked child's: same handler, new pid
  g_handler_ready.store(true, std::memory_order_release);
  if (!ours) {
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_sigaction = &OnSigprof;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    if (sigaction(kSignal, &sa, nullptr) != 0) {
      g_handler_ready.store(false, std::memory_order_release);
      *why = "cannot install the SIGPROF handler";
      return false;
    }
  }
  return true;
}

bool SetUpPythonSampling(std::string* why, std::string* version) {
  if (!g_python_ready.load(std::memory_order_acquire)) {
    callstack::PythonRuntime py;
    if (!callstack::FindPython(&py, why))
      return false;
    int err = 0;
    if (!SelfReadWorks(&err)) {
      *why = std::string("process_vm_readv on this process is refused (") + strerror(err) +
             "; a seccomp profile?), and Python frames are read only through it";
      return false;
    }
    // Published before the handler can see it (no route has a Python part yet).
    g_python = py;
    g_python_ready.store(true, std::memory_order_release);
  }
  if (!TakeSampleSignal(why))
    return false;
  *version = std::to_string(g_python.major) + "." + std::to_string(g_python.minor);
  return true;
}

bool SetUpNativeUnwinding(std::string* why) {
  if (!g_native_ready.load(std::memory_order_acquire)) {
    NativeUnwinder u;
    std::string path;
    if (!LoadNativeUnwinder(&u, &path, why))
      return false;
    g_native = u;
    g_native_ready.store(true, std::memory_order_release);
  }
  return TakeSampleSignal(why);
}

bool SampleSignalStillOurs() {
  struct sigaction now;
  if (sigaction(kSignal, nullptr, &now) != 0)
    return false;
  return (now.sa_flags & SA_SIGINFO) != 0 && now.sa_sigaction == &OnSigprof;
}

bool ArmSampleSignal(int fd, pid_t tid, SampleSlots* slot) {
  if (fd < 0 || fd >= kMaxRoutedFds || !g_handler_ready.load(std::memory_order_acquire))
    return false;
  g_routes[fd].store(slot, std::memory_order_seq_cst);
  f_owner_ex owner;
  owner.type = F_OWNER_TID;
  owner.pid = tid;
  int flags = -1;
  if (fcntl(fd, F_SETOWN_EX, &owner) != 0 || fcntl(fd, F_SETSIG, kSignal) != 0 || (flags = fcntl(fd, F_GETFL)) < 0 ||
      fcntl(fd, F_SETFL, flags | O_ASYNC) != 0) {
    g_routes[fd].store(nullptr, std::memory_order_seq_cst);
    return false;
  }
  return true;
}

void DisarmSampleSignal(int fd, SampleSlots* slot) {
  if (fd < 0 || fd >= kMaxRoutedFds)
    return;
  int flags = fcntl(fd, F_GETFL);
  if (flags >= 0 && (flags & O_ASYNC) != 0)
    fcntl(fd, F_SETFL, flags & ~O_ASYNC);  // no new signals from this event
  if (g_routes[fd].load(std::memory_order_seq_cst) == slot)
    g_routes[fd].store(nullptr, std::memory_order_seq_cst);
  // A handler that loaded the route before the store either set busy before our load (we wait)
  // or sees the cleared route after setting it (it leaves the slot alone).
  while (g_busy[fd].load(std::memory_order_seq_cst) != 0)
    sched_yield();
}

void ForgetSampleSignalRoutes() {
  for (int fd = 0; fd < kMaxRoutedFds; ++fd) {
    g_routes[fd].store(nullptr, std::memory_order_relaxed);
    g_busy[fd].store(0, std::memory_order_relaxed);
  }
  g_pid.store(getpid(), std::memory_order_relaxed);
}

}  // namespace gt::sampling
