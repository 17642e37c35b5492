// The hot path of --cudabacktrace: inside the CUPTI enter/exit callbacks of the selected CUDA APIs,
// on the application thread. At API entry the caller's stack is unwound into a preallocated
// per-thread slot; at exit, if the call lasted at least its class's threshold, the stack (minus the
// frames of gtrace, CUPTI and libunwind on top) goes into the thread's ring as one record; otherwise
// it is forgotten.
//
// Per-thread state lives in a CaptureArea indexed by ThreadBuffer::index (one mmap'ed array sized
// to the ring pool, reserved at set-up and touched only by threads that capture): no allocation,
// lock or system call here, beyond what libunwind itself does the first time (unwinder.h). Nested
// API calls (a runtime call whose driver calls are backtraced too) take one slot each, up to
// kMaxNesting; deeper ones are counted, not captured. Slots are matched by correlation id, so an
// exit whose entry was not seen (callbacks enabled mid-call) is ignored; a window change bumps an
// epoch that discards entries whose exit will never come.
//
// Threads: OnApiCallback on application threads (hot); Install/Uninstall on the set-up thread
// before callbacks are enabled / after they are disabled; the counters are read by the drain thread.
#pragma once

#include <cupti.h>

#include <atomic>
#include <cstdint>

#include "collector/session.h"
#include "inject/callstack/backtrace_spec.h"
#include "inject/callstack/python_frames.h"
#include "inject/callstack/unwinder.h"

namespace gt::callstack {

inline constexpr int kMaxFrames = 64;       // frames kept per stack (CallStackConfig.max_frames)
inline constexpr int kCaptureFrames = 80;   // frames unwound: room for gtrace/CUPTI frames dropped on top
inline constexpr int kMaxNesting = 4;       // API calls in flight per thread that can be captured
inline constexpr uint32_t kMaxCbid = 2048;  // callback ids beyond this are never backtraced
inline constexpr int kMaxSkipRanges = 4;

struct CaptureSlot {
  uint32_t correlation_id;
  uint16_t cbid;
  uint8_t driver;
  uint8_t api_class;
  int32_t frame_count;
  uint64_t start_ns;    // entry, before unwinding (the row's start), stream clock (StreamNow)
  uint64_t unwound_ns;  // entry, after unwinding (what the threshold is measured from), CLOCK_MONOTONIC
  void* frames[kCaptureFrames];
};

struct alignas(64) CaptureArea {
  uint64_t owner_serial;  // ThreadBuffer::serial of the owner the slots belong to
  uint32_t epoch;
  int32_t depth;
  std::atomic<uint64_t> nesting_overflow;  // written by the owner only (load + store), read by the drain thread
  std::atomic<uint64_t> unwind_failures;
  CaptureSlot slots[kMaxNesting];
  // --python-backtrace=cuda: the packed Python frames of the call being recorded (used only between
  // reading them and copying them into the ring record, in one exit callback).
  uint8_t python_scratch[kPythonScratchBytes];
  // -t osrt with --osrt-backtrace-threshold (inject/osrt/osrt_backtrace.cc): the stack of the OS
  // runtime call being recorded, unwound after the call returned, on the owner thread only. Separate
  // from `slots`: a libc call made inside a CUDA call (cudaMemcpy -> ioctl) must not touch them.
  void* osrt_frames[kCaptureFrames];
};

// Read by the hot path; written by Install (before any callback of a selected API is enabled).
struct CaptureState {
  std::atomic<bool> active;
  std::atomic<uint32_t> epoch;
  BacktraceFn backtrace;
  CaptureArea* areas;
  uint32_t area_count;
  uint8_t runtime_class[kMaxCbid];  // ApiClass per CUPTI runtime callback id (kClassNone: not selected)
  uint8_t driver_class[kMaxCbid];
  uint64_t threshold_ns[kClassCount];
  uintptr_t skip_begin[kMaxSkipRanges];  // leading frames inside these ranges are not kept
  uintptr_t skip_end[kMaxSkipRanges];
  int skip_count;
  const PythonRuntime* python;  // --python-backtrace=cuda: the interpreter to read (nullptr: off)
};
extern CaptureState g_capture;

// The ring record (RecordType kRecordCallStack). Head: RecordHeader{aux16 = kept frame count,
// aux32 = correlation id, ts_ns = entry}, then this fixed part, then the frames (8 bytes each), then
// `python_bytes` of packed Python frames (PackedPythonFrame + text each, innermost first).
struct StackRecordFixed {
  uint64_t duration_ns;
  uint16_t cbid;
  uint8_t driver;
  uint8_t flags;  // kStackTruncated, kPythonTruncated
  uint32_t return_value;
  uint16_t python_frames;
  uint16_t reserved;
  uint32_t python_bytes;
};
inline constexpr uint8_t kStackTruncated = 1;
inline constexpr uint8_t kPythonTruncated = 2;
inline constexpr size_t kStackRecordFramesOffset = sizeof(RecordHeader) + sizeof(StackRecordFixed);
static_assert(kStackRecordFramesOffset == 40);
static_assert(kStackRecordFramesOffset + kMaxFrames * sizeof(uint64_t) + kPythonScratchBytes <= kMaxRecordBytes);

// Sets up the state (areas sized to the ring pool). False when the areas cannot be reserved.
// `python`: the interpreter whose frames are added to each kept stack (nullptr: native frames only);
// it must outlive the capture.
bool InstallCapture(const BacktraceSpec& spec,
                    BacktraceFn backtrace,
                    const uint8_t* runtime_class,
                    const uint8_t* driver_class,
                    const uintptr_t* skip_begin,
                    const uintptr_t* skip_end,
                    int skip_count,
                    const PythonRuntime* python = nullptr);
// Reserves the per-thread areas (one per ring buffer; ThreadBufferCount() must be known, i.e. a
// session started) unless they exist. Set-up threads (CUDA backtraces, OS runtime backtraces), also
// concurrently: one mapping wins, the other is unmapped. nullptr when they cannot be reserved.
CaptureArea* ReserveCaptureAreas();
// The area of thread buffer `b` (nullptr when there is none): for the owner thread only.
inline CaptureArea* CaptureAreaOf(const ThreadBuffer* b) {
  CaptureArea* areas = __atomic_load_n(&g_capture.areas, __ATOMIC_ACQUIRE);
  if (b == nullptr || areas == nullptr || b->index >= g_capture.area_count)
    return nullptr;
  return &areas[b->index];
}

// Entries in flight are abandoned (their exits are ignored). Called when callbacks are switched.
inline void NewCaptureEpoch() {
  g_capture.epoch.fetch_add(1, std::memory_order_relaxed);
}

void OnApiEnter(bool driver, uint32_t cbid, uint8_t api_class, const CUpti_CallbackData* cb);
void OnApiExit(bool driver, uint32_t cbid, const CUpti_CallbackData* cb);

// From the CUPTI subscriber callback (RUNTIME/DRIVER domains), after its relaxed enabled check.
inline void OnApiCallback(bool runtime, uint32_t cbid, const CUpti_CallbackData* cb) {
  if (!g_capture.active.load(std::memory_order_relaxed) || cbid >= kMaxCbid)
    return;
  uint8_t c = runtime ? g_capture.runtime_class[cbid] : g_capture.driver_class[cbid];
  if (c == kClassNone)
    return;
  if (cb->callbackSite == CUPTI_API_ENTER) {
    OnApiEnter(!runtime, cbid, c, cb);
  } else {
    OnApiExit(!runtime, cbid, cb);
  }
}

// Drain thread: totals of the per-thread counters.
void CaptureLossTotals(uint64_t* nesting_overflow, uint64_t* unwind_failures);

}  // namespace gt::callstack
