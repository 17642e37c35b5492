#include "inject/callstack/stack_capture.h"

#include <sys/mman.h>

#include <cstring>

#include "collector/clock.h"

namespace gt::callstack {

CaptureState g_capture;

CaptureArea* ReserveCaptureAreas() {
  CaptureArea* areas = __atomic_load_n(&g_capture.areas, __ATOMIC_ACQUIRE);
  if (areas != nullptr)
    return areas;
  uint32_t count = ThreadBufferCount();
  if (count == 0)
    return nullptr;
  // Reserved, not committed: a thread that never captures never touches its area.
  size_t bytes = sizeof(CaptureArea) * count;
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED)
    return nullptr;
  // area_count first: a reader that sees the pointer (acquire) sees the count.
  g_capture.area_count = count;
  CaptureArea* expected = nullptr;
  if (!__atomic_compare_exchange_n(&g_capture.areas, &expected, static_cast<CaptureArea*>(p), false,
                                   __ATOMIC_RELEASE, __ATOMIC_ACQUIRE)) {
    munmap(p, bytes);  // another set-up thread won; same count (the pool is fixed per process)
    return expected;
  }
  return static_cast<CaptureArea*>(p);  // zero pages: every area starts empty
}

bool InstallCapture(const BacktraceSpec& spec,
                    BacktraceFn backtrace,
                    const uint8_t* runtime_class,
                    const uint8_t* driver_class,
                    const uintptr_t* skip_begin,
                    const uintptr_t* skip_end,
                    int skip_count,
                    const PythonRuntime* python) {
  if (backtrace == nullptr || ReserveCaptureAreas() == nullptr)
    return false;
  g_capture.backtrace = backtrace;
  std::memcpy(g_capture.runtime_class, runtime_class, kMaxCbid);
  std::memcpy(g_capture.driver_class, driver_class, kMaxCbid);
  for (int c = 0; c < kClassCount; ++c)
    g_capture.threshold_ns[c] = spec.threshold_ns[c];
  g_capture.skip_count = skip_count < kMaxSkipRanges ? skip_count : kMaxSkipRanges;
  for (int i = 0; i < g_capture.skip_count; ++i) {
    g_capture.skip_begin[i] = skip_begin[i];
    g_capture.skip_end[i] = skip_end[i];
  }
  g_capture.python = python;
  g_capture.active.store(true, std::memory_order_release);
  return true;
}

namespace {

// The calling thread's area, reset when the buffer changed owner or the epoch moved on.
inline CaptureArea* AreaOf(ThreadBuffer* b) {
  if (b == nullptr || b->index >= g_capture.area_count)
    return nullptr;
  CaptureArea* a = &g_capture.areas[b->index];
  uint32_t epoch = g_capture.epoch.load(std::memory_order_relaxed);
  if (a->owner_serial != b->serial || a->epoch != epoch) {
    a->owner_serial = b->serial;
    a->epoch = epoch;
    a->depth = 0;
  }
  return a;
}

inline void Bump(std::atomic<uint64_t>* counter) {
  counter->store(counter->load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
}

inline bool Skipped(uintptr_t pc) {
  for (int i = 0; i < g_capture.skip_count; ++i) {
    if (pc >= g_capture.skip_begin[i] && pc < g_capture.skip_end[i])
      return true;
  }
  return false;
}

}  // namespace

void OnApiEnter(bool driver, uint32_t cbid, uint8_t api_class, const CUpti_CallbackData* cb) {
  CaptureArea* a = AreaOf(CurrentThreadBuffer());
  if (a == nullptr)
    return;
  if (a->depth >= kMaxNesting) {
    Bump(&a->nesting_overflow);
    return;
  }
  CaptureSlot& s = a->slots[a->depth];
  s.correlation_id = cb->correlationId;
  s.cbid = static_cast<uint16_t>(cbid);
  s.driver = driver ? 1 : 0;
  s.api_class = api_class;
  s.start_ns = StreamNow();
  s.frame_count = g_capture.backtrace(s.frames, kCaptureFrames);
  s.unwound_ns = NowNs();
  ++a->depth;
}

void OnApiExit(bool driver, uint32_t cbid, const CUpti_CallbackData* cb) {
  ThreadBuffer* b = CurrentThreadBuffer();
  CaptureArea* a = AreaOf(b);
  if (a == nullptr)
    return;
  int i = a->depth - 1;
  while (i >= 0 && (a->slots[i].correlation_id != cb->correlationId || a->slots[i].cbid != cbid ||
                    a->slots[i].driver != (driver ? 1 : 0))) {
    --i;
  }
  if (i < 0)
    return;      // entry not seen (callbacks switched on mid-call, or nesting overflow)
  a->depth = i;  // pops this call and anything left above it
  CaptureSlot& s = a->slots[i];
  // The threshold is in ns (CLOCK_MONOTONIC); the row's times are on the stream clock.
  if (NowNs() - s.unwound_ns < g_capture.threshold_ns[s.api_class])
    return;
  uint64_t end_ns = StreamNow();
  int first = 0;
  int n = s.frame_count > 0 ? s.frame_count : 0;
  while (first < n && Skipped(reinterpret_cast<uintptr_t>(s.frames[first])))
    ++first;
  int kept = n - first;
  if (kept <= 0) {
    Bump(&a->unwind_failures);
    return;
  }
  uint8_t flags = n >= kCaptureFrames ? kStackTruncated : 0;
  if (kept > kMaxFrames) {
    kept = kMaxFrames;
    flags = kStackTruncated;
  }
  // Python frames are read here, at exit, and only for a call that is kept: the thread never left
  // the native call, so its Python frames are those of the entry, and calls under the threshold pay
  // nothing for them.
  size_t python_bytes = 0;
  int python_frames = 0;
  if (g_capture.python != nullptr) {
    bool python_truncated = false;
    python_frames =
        ReadPythonFrames(*g_capture.python, a->python_scratch, kPythonScratchBytes, &python_bytes, &python_truncated);
    if (python_truncated)
      flags |= kPythonTruncated;
  }
  RecordSpan span;
  size_t frames_bytes = static_cast<size_t>(kept) * sizeof(uint64_t);
  size_t bytes = kStackRecordFramesOffset + frames_bytes + python_bytes;
  if (!BeginRecord(bytes, &span))
    return;  // counted by the ring
  struct {
    RecordHeader h;
    StackRecordFixed f;
  } head;
  static_assert(sizeof(head) == kStackRecordFramesOffset);
  head.h.type = kRecordCallStack;
  head.h.ext_slots = static_cast<uint8_t>(span.n_slots - 1);
  head.h.aux16 = static_cast<uint16_t>(kept);
  head.h.aux32 = s.correlation_id;
  head.h.ts_ns = s.start_ns;
  head.f.duration_ns = end_ns - s.start_ns;
  head.f.cbid = s.cbid;
  head.f.driver = s.driver;
  head.f.flags = flags;
  head.f.return_value = 0;
  if (cb->functionReturnValue != nullptr) {
    // cudaError_t and CUresult are both 4-byte enums.
    int32_t rv;
    std::memcpy(&rv, cb->functionReturnValue, sizeof(rv));
    head.f.return_value = static_cast<uint32_t>(rv);
  }
  head.f.python_frames = static_cast<uint16_t>(python_frames);
  head.f.reserved = 0;
  head.f.python_bytes = static_cast<uint32_t>(python_bytes);
  RecordCopy(span, 0, &head, sizeof(head));
  RecordCopy(span, kStackRecordFramesOffset, &s.frames[first], frames_bytes);
  if (python_bytes > 0)
    RecordCopy(span, kStackRecordFramesOffset + frames_bytes, a->python_scratch, python_bytes);
  CommitRecord(span);
}

void CaptureLossTotals(uint64_t* nesting_overflow, uint64_t* unwind_failures) {
  *nesting_overflow = 0;
  *unwind_failures = 0;
  if (g_capture.areas == nullptr)
    return;
  for (uint32_t i = 0; i < g_capture.area_count; ++i) {
    *nesting_overflow += g_capture.areas[i].nesting_overflow.load(std::memory_order_relaxed);
    *unwind_failures += g_capture.areas[i].unwind_failures.load(std::memory_order_relaxed);
  }
}

}  // namespace gt::callstack
