#include "inject/sampling/perf_thread_event.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cstring>

namespace gt::sampling {
namespace {

// 8 data pages (32 KiB) per thread: at 1 kHz a sample of a 20-frame stack is ~220 bytes, so the ring
// holds ~150 ms of one busy thread — the drain thread reads it every 10 ms, and a stall longer than
// that loses samples (counted from PERF_RECORD_LOST), never blocks the thread. Small because the
// rings of all threads are locked memory: the kernel allows perf_event_mlock_kb (516 KiB) per CPU
// and then RLIMIT_MEMLOCK, so ~30 threads fit on 2 CPUs before RLIMIT_MEMLOCK is used.
constexpr size_t kDataPages = 8;

constexpr uint64_t kSampleType =
    PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN;

}  // namespace

PerfThreadEvent* PerfThreadEvent::Open(pid_t tid, uint64_t period_ns, bool enabled, bool wakeup_each_sample, int* err,
                                       bool* mapping_failed) {
  *mapping_failed = false;
  perf_event_attr attr;
  std::memset(&attr, 0, sizeof(attr));
  attr.size = sizeof(attr);
  attr.type = PERF_TYPE_SOFTWARE;
  // cpu-clock: an hrtimer on the thread's CPU time, available without a PMU (VMs, containers) and
  // allowed for one's own threads at perf_event_paranoid <= 2 with exclude_kernel.
  attr.config = PERF_COUNT_SW_CPU_CLOCK;
  attr.sample_period = period_ns;
  attr.sample_type = kSampleType;
  attr.disabled = enabled ? 0 : 1;
  attr.exclude_kernel = 1;
  attr.exclude_hv = 1;
  attr.exclude_callchain_kernel = 1;
  attr.use_clockid = 1;
  attr.clockid = CLOCK_MONOTONIC;
  attr.sample_max_stack = kMaxFrames;
  if (wakeup_each_sample) {
    // A wakeup per sample: with O_ASYNC armed (python_signal_sampler.cc) each one signals the thread.
    attr.watermark = 0;
    attr.wakeup_events = 1;
  } else {
    // No wakeups: nobody polls, the drain thread reads on its own schedule.
    attr.watermark = 1;
    attr.wakeup_watermark = static_cast<uint32_t>(kDataPages * 4096);
  }
  int fd = static_cast<int>(syscall(SYS_perf_event_open, &attr, tid, -1, -1, PERF_FLAG_FD_CLOEXEC));
  if (fd < 0) {
    *err = errno;
    return nullptr;
  }
  long page = sysconf(_SC_PAGESIZE);
  size_t bytes = static_cast<size_t>(page) * (1 + kDataPages);
  void* map = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (map == MAP_FAILED) {
    *err = errno;
    *mapping_failed = true;
    close(fd);
    return nullptr;
  }
  auto* e = new PerfThreadEvent();
  e->tid_ = tid;
  e->fd_ = fd;
  e->map_ = map;
  e->map_bytes_ = bytes;
  auto* meta = static_cast<perf_event_mmap_page*>(map);
  e->data_ = static_cast<uint8_t*>(map) + (meta->data_offset != 0 ? meta->data_offset : static_cast<uint64_t>(page));
  e->data_bytes_ = meta->data_size != 0 ? meta->data_size : static_cast<uint64_t>(page) * kDataPages;
  e->tail_ = __atomic_load_n(&meta->data_tail, __ATOMIC_RELAXED);
  return e;
}

PerfThreadEvent::~PerfThreadEvent() {
  if (map_ != nullptr)
    munmap(map_, map_bytes_);
  if (fd_ >= 0)
    close(fd_);
}

void PerfThreadEvent::SetEnabled(bool on) {
  ioctl(fd_, on ? PERF_EVENT_IOC_ENABLE : PERF_EVENT_IOC_DISABLE, 0);
}

bool PerfThreadEvent::Next(PerfSample* out, PerfReadCounts* counts) {
  auto* meta = static_cast<perf_event_mmap_page*>(map_);
  if (!have_head_) {
    head_ = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE);  // pairs with the kernel's store
    have_head_ = true;
  }
  while (head_ - tail_ >= sizeof(perf_event_header)) {
    perf_event_header h;
    // Copy the header, then the record, byte-wise across the ring's end when it wraps.
    auto copy = [&](void* dst, uint64_t from, size_t n) {
      uint64_t o = from % data_bytes_;
      size_t first = static_cast<size_t>(data_bytes_ - o) < n ? static_cast<size_t>(data_bytes_ - o) : n;
      std::memcpy(dst, data_ + o, first);
      if (first < n)
        std::memcpy(static_cast<uint8_t*>(dst) + first, data_, n - first);
    };
    copy(&h, tail_, sizeof(h));
    if (h.size < sizeof(h) || head_ - tail_ < h.size) {  // torn or corrupt: drop what is left
      ++counts->malformed;
      tail_ = head_;
      return false;
    }
    uint64_t at = tail_;
    tail_ += h.size;
    if (h.type == PERF_RECORD_LOST) {
      struct {
        uint64_t id, lost;
      } l;
      if (h.size >= sizeof(h) + sizeof(l)) {
        copy(&l, at + sizeof(h), sizeof(l));
        counts->lost += l.lost;
      }
      continue;
    }
    if (h.type != PERF_RECORD_SAMPLE)
      continue;
    size_t body = h.size - sizeof(h);
    if (body > sizeof(scratch_) || body < 6 * sizeof(uint64_t)) {
      ++counts->malformed;
      continue;
    }
    copy(scratch_, at + sizeof(h), body);
    // Layout for kSampleType: ip, (pid, tid), time, (cpu, res), period, nr, ips[nr].
    const uint64_t* p = scratch_;
    uint64_t ip = p[0];
    uint32_t pid_tid[2];
    std::memcpy(pid_tid, &p[1], sizeof(pid_tid));
    uint32_t cpu_res[2];
    std::memcpy(cpu_res, &p[3], sizeof(cpu_res));
    uint64_t nr = p[5];
    if (6 + nr > body / sizeof(uint64_t)) {
      ++counts->malformed;
      continue;
    }
    out->tid = pid_tid[1];
    out->time_ns = p[2];
    out->cpu = cpu_res[0];
    out->period_ns = p[4];
    // Drop the PERF_CONTEXT_* markers (values >= PERF_CONTEXT_MAX, i.e. the top 4095 addresses),
    // compacting the frames in place at the start of scratch_.
    uint64_t* frames = scratch_;
    uint32_t n = 0;
    for (uint64_t i = 0; i < nr; ++i) {
      uint64_t a = p[6 + i];
      if (a >= static_cast<uint64_t>(PERF_CONTEXT_MAX))
        continue;
      frames[n++] = a;
    }
    if (n == 0 && ip != 0)
      frames[n++] = ip;  // no callchain (e.g. the walk failed at once): the IP alone
    out->ips = frames;
    out->ip_count = n;
    out->end_offset = tail_;
    return true;
  }
  return false;
}

void PerfThreadEvent::Release() {
  auto* meta = static_cast<perf_event_mmap_page*>(map_);
  __atomic_store_n(&meta->data_tail, tail_, __ATOMIC_RELEASE);  // the kernel may reuse the room now
  have_head_ = false;
}

}  // namespace gt::sampling
