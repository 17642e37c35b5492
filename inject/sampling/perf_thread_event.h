// PerfThreadEvent: one thread's sampling event (perf_event_open, software cpu-clock, user space only)
// and its mmap'ed ring, from which the kernel's samples are read.
//
// The kernel interrupts the thread every `period_ns` of its CPU time, walks its user stack by frame
// pointers (PERF_SAMPLE_CALLCHAIN, exclude_callchain_kernel) and appends a PERF_RECORD_SAMPLE to the
// ring; nothing runs on the application thread in user space. Timestamps are CLOCK_MONOTONIC
// (use_clockid), converted to the stream clock by the reader (cpu_sampler.cc).
//
// Threads: opened, read and closed by the drain thread only (cpu_sampler.cc's emitter). Owned by the
// sampler's thread table. Not copyable; movable only through unique_ptr.
#pragma once

#include <sys/types.h>
#include <cstdint>

namespace gt::sampling {

// One decoded PERF_RECORD_SAMPLE. `ips` points into the event's scratch buffer: valid until the next
// Read call on the same event.
struct PerfSample {
  uint32_t tid = 0;
  uint32_t cpu = 0;
  uint64_t time_ns = 0;           // CLOCK_MONOTONIC
  uint64_t period_ns = 0;         // cpu-clock count this sample stands for
  const uint64_t* ips = nullptr;  // user frames, innermost first (context markers removed)
  uint32_t ip_count = 0;
  uint64_t end_offset = 0;  // ring offset just past this record (matches a Python entry's data_head)
};

// What Read saw besides samples.
struct PerfReadCounts {
  uint64_t lost = 0;       // PERF_RECORD_LOST totals
  uint64_t malformed = 0;  // records that did not parse (skipped)
};

class PerfThreadEvent {
 public:
  static constexpr uint32_t kMaxFrames = 127;  // the kernel's default perf_event_max_stack

  // Opens the event for thread `tid` of this process; `enabled` false opens it disabled (capture
  // window closed). Returns nullptr with *err = errno on failure (EACCES/EPERM: perf_event_paranoid
  // or seccomp; ESRCH: the thread is gone).
  // *mapping_failed tells a refused ring (mmap: the per-user perf_event_mlock_kb budget and
  // RLIMIT_MEMLOCK exhausted by many threads) from a refused event.
  // `wakeup_each_sample`: a wakeup per sample, so that an O_ASYNC owner gets a signal per sample
  // (--python-sampling, python_signal_sampler.h); otherwise no wakeups at all.
  static PerfThreadEvent* Open(pid_t tid, uint64_t period_ns, bool enabled, bool wakeup_each_sample, int* err,
                               bool* mapping_failed);
  ~PerfThreadEvent();
  PerfThreadEvent(const PerfThreadEvent&) = delete;
  PerfThreadEvent& operator=(const PerfThreadEvent&) = delete;

  // Calls fn(sample) for every complete sample in the ring, oldest first, and frees their room.
  template <typename Fn>
  void Read(PerfReadCounts* counts, Fn&& fn) {
    PerfSample s;
    while (Next(&s, counts))
      fn(s);
    Release();
  }
  void SetEnabled(bool on);
  pid_t tid() const { return tid_; }
  int fd() const { return fd_; }
  const void* meta_page() const { return map_; }  // perf_event_mmap_page (data_head)

 private:
  PerfThreadEvent() = default;
  bool Next(PerfSample* out, PerfReadCounts* counts);
  void Release();

  pid_t tid_ = 0;
  int fd_ = -1;
  void* map_ = nullptr;
  size_t map_bytes_ = 0;
  uint8_t* data_ = nullptr;
  uint64_t data_bytes_ = 0;
  uint64_t head_ = 0;  // snapshot of data_head for this Read
  uint64_t tail_ = 0;  // our read position
  bool have_head_ = false;
  uint64_t scratch_[8 + kMaxFrames + 8];  // one record copied out of the ring when it wraps
};

}  // namespace gt::sampling
