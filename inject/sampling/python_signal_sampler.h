// --python-sampling: the Python frames of each CPU sample, read on the sampled thread itself.
//
// How a sample reaches the thread's Python frames: the kernel's cpu-clock event of the thread
// (perf_thread_event.h) is opened with a wakeup per sample and armed with O_ASYNC, F_SETSIG SIGPROF
// and F_SETOWN_EX(F_OWNER_TID, the thread). When the hrtimer fires in user mode, the kernel writes
// the sample (native stack) into the event's ring and queues SIGPROF for that thread; the signal is
// delivered on the return to user space, before the thread runs another instruction of its own. So
// the handler sees the Python state of the sampled instruction. It reads the thread's frames with
// PySampleReader (fault-free reads) into the thread's slot — one fixed-size entry per sample, tagged
// with the event ring's data_head at that moment, which is the end offset of the sample's record.
// The drain thread, decoding that record, takes the entry with the same offset (entries of samples
// whose signal was merged with the next one, or whose record was lost, are dropped unmatched).
//
// Signals: SIGPROF is taken only when nobody handles it (SIG_DFL or SIG_IGN at set-up); otherwise
// one gtrace: line and Python frames stay off. cpu-clock with exclude_kernel fires only in user
// mode, so the signal never interrupts a system call (no EINTR for the application); SA_RESTART
// anyway. errno is preserved.
//
// The same signal also carries --backtrace=dwarf (native_stack_slot.h): a thread's route points to
// its SampleSlots, with a Python part, a native part, or both; the handler fills each part it has.
// SIGPROF is taken once for both (TakeSampleSignal), under the same rule.
//
// Threads: SetUp, Arm, Disarm and the slots' Take/Pop on the drain thread (cpu_sampler.cc); the
// handler on each sampled thread. A slot is freed only after Disarm, which unpublishes it and waits
// until no handler uses it (a per-slot busy flag, seq_cst on both sides).
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>

#include "inject/callstack/python_frames.h"
#include "inject/sampling/native_stack_slot.h"
#include "inject/sampling/python_sample_reader.h"

namespace gt::sampling {

// No initializers: an entry is written before it is published, and the pages of a thread that never
// runs Python stay untouched (not resident).
struct PySampleEntry {
  static constexpr size_t kDataBytes = 4096 - 16;
  uint64_t data_head;  // the perf ring's data_head when the handler ran: its sample's end offset
  uint32_t bytes;      // packed frames (callstack::PackedPythonFrame ...)
  uint16_t frames;
  uint8_t truncated;
  uint8_t reserved;
  uint8_t data[kDataBytes];
};
static_assert(sizeof(PySampleEntry) == 4096);

// One sampled thread's entries: single producer (its signal handler), single consumer (the drain
// thread). Allocated and freed by the drain thread.
class PySampleSlot {
 public:
  static constexpr uint64_t kEntries = 32;  // ~32 ms of one busy thread at 1 kHz; the drain reads every 10

  explicit PySampleSlot(const void* perf_page) : perf_page_(perf_page) {}
  PySampleSlot(const PySampleSlot&) = delete;
  PySampleSlot& operator=(const PySampleSlot&) = delete;

  // Drain thread: the entry written for the sample whose record ended at `end_offset`, or nullptr.
  // Entries of earlier samples (no record matched them) are dropped on the way; call Pop after
  // using a returned entry.
  const PySampleEntry* Take(uint64_t end_offset);
  void Pop() { read_.store(read_.load(std::memory_order_relaxed) + 1, std::memory_order_release); }
  uint64_t full() const { return full_.load(std::memory_order_relaxed); }

  // Signal handler of the owning thread.
  void OnSignal(const callstack::PythonRuntime& py, pid_t pid, uintptr_t tstate);

  std::atomic<uint32_t> busy{0};

 private:
  const void* perf_page_;  // perf_event_mmap_page of the thread's event (data_head)
  std::atomic<uint64_t> write_{0}, read_{0};
  std::atomic<uint64_t> full_{0};  // samples whose frames found no free entry
  PySampleReader reader_;
  PySampleEntry entries_[kEntries];
};

// One sampled thread's parts, reached by the handler through its event's route. Parts are set by the
// drain thread (a Python part may come later than a native one: the interpreter is found late) and
// freed with the whole, by the drain thread, after DisarmSampleSignal.
struct SampleSlots {
  SampleSlots() = default;
  ~SampleSlots() {
    delete python.load(std::memory_order_relaxed);
    delete native.load(std::memory_order_relaxed);
  }
  SampleSlots(const SampleSlots&) = delete;
  SampleSlots& operator=(const SampleSlots&) = delete;
  std::atomic<PySampleSlot*> python{nullptr};
  std::atomic<NativeStackSlot*> native{nullptr};
};

// Drain thread: takes SIGPROF for the per-sample handler unless the application handles it (then
// false with `why`). Idempotent; both set-ups below call it.
bool TakeSampleSignal(std::string* why);
// Drain thread, once per process: finds the interpreter, checks that process_vm_readv works on
// ourselves and takes SIGPROF. False with `why` (one sentence) when Python frames cannot be read.
// `version` gets "3.11" on success.
bool SetUpPythonSampling(std::string* why, std::string* version);
// Drain thread, once per process: loads libunwind (native_stack_slot.h) and takes SIGPROF. False with
// `why` when native stacks cannot be unwound on the threads (samples keep the kernel's fp stacks).
bool SetUpNativeUnwinding(std::string* why);
// Drain thread: routes the signals of event `fd` (thread `tid`) to `slots`. False when the event
// cannot be armed (fd beyond the table, fcntl refused, SIGPROF not taken): that thread's samples keep
// the kernel's frames.
bool ArmSampleSignal(int fd, pid_t tid, SampleSlots* slots);
// Drain thread: stops routing to `slots` and waits until no handler uses it; then it may be freed
// (with the event closed first or after: a signal for an unrouted fd is ignored).
void DisarmSampleSignal(int fd, SampleSlots* slots);
// Drain thread, every cycle while on: whether SIGPROF still runs our handler (the application may
// install its own later; then every route must be disarmed at once).
bool SampleSignalStillOurs();
// Fork child (drain thread of the new session): forget the parent's routes without touching them.
void ForgetSampleSignalRoutes();

}  // namespace gt::sampling
