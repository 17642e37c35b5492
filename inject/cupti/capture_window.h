// Capture windows: when recording is on (nsys's --capture-range=none|cudaProfilerApi|nvtx,
// --nvtx-capture, --capture-range-end=stop|repeat[:N]|none, --delay, --duration; GTRACE_* twins in
// collector/config.h). A window switches every configured source (NVTX, CUDA, NCCL) through
// gt::SetRecording; CUDA additionally turns its CUPTI activity kinds and callbacks on and off through
// the hook the CUPTI tracer installs, so outside a window CUDA costs (almost) nothing.
//
// Semantics (documented in docs/cuda-tracing.md):
//  - time zero is when libgtrace was loaded (preload) or else when the session started;
//  - nothing opens a window before time zero + delay; `none` opens one then;
//  - `cudaProfilerApi`: cudaProfilerStart opens, cudaProfilerStop closes; `nvtx`: the first
//    push/start of the named range opens, its matching pop/end closes;
//  - end `stop`: no window after the first; `repeat[:N]`: up to N windows (unlimited without N);
//    `none`: the range end is ignored, the window stays open;
//  - duration: counted from the first window's opening; when it elapses the window closes for good.
//
// Threads: triggers arrive on application threads (NVTX hooks, CUPTI profiler-API callbacks — rare
// slow paths that take this module's mutex, a leaf lock never held across a CUPTI call), timers on
// the drain thread (the module's emitter). The hot path sees only relaxed atomic loads.
#pragma once

#include <atomic>
#include <cstdint>

namespace gt::capture {

// ELF constructor (preloaded library): time zero for --delay.
void NoteLoadTime(uint64_t ns);

// Registers the session-start hook and the emitter with the collector (idempotent). Every injection
// entry point calls it before its first EnsureSession; called again after it, it adopts a session
// that some other module started before the hook was registered.
void RegisterWithCollector();

// The CUPTI tracer's reconcile function: called after the window state changed, on the thread that
// changed it, with no gtrace lock held. It reads WindowOpen() itself (calls may race; the last wins).
using CudaWindowFn = void (*)();
void SetCudaWindowHook(CudaWindowFn fn);
bool WindowOpen();
// No window will open any more (capture finished); CUPTI callbacks can all be switched off.
bool CaptureFinished();

// --capture-range=cudaProfilerApi (CUPTI callbacks: cudaProfilerStart/cuProfilerStart at exit,
// cudaProfilerStop/cuProfilerStop at entry).
bool UsesCudaProfilerApi();
void OnCudaProfilerStart();
void OnCudaProfilerStop();

// The Python API (inject/api_entry.cc; application threads, slow path, after EnsureSession).
// gtrace.start()/stop() act as cudaProfilerStart/Stop do: only with --capture-range=cudaProfilerApi
// (they need no CUDA). True when a window opened / closed.
bool OnApiStart();
bool OnApiStop();
// gtrace.step(): the current step ends and the next begins; returns the new step's number (steps
// count from 0 at session start). With --capture-range=steps:A-B the window opens when step A
// begins (at session start for A = 0) and closes for good when step B ends.
uint64_t OnStep();

// --capture-range=nvtx. Bits of g_nvtx_trigger: kNvtxOpenArmed while waiting for the range to
// open (recording is off), kNvtxCloseArmed while a window opened by it is open.
inline constexpr uint32_t kNvtxOpenArmed = 1, kNvtxCloseArmed = 2;
extern std::atomic<uint32_t> g_nvtx_trigger;
inline uint32_t NvtxTrigger() { return g_nvtx_trigger.load(std::memory_order_relaxed); }
// NVTX push/start hooks while recording is off: true when this range opened a window (the hook then
// records the range and reports its closing key with NvtxRangeOpened). `domain_name` is nullptr for
// the default domain; the message is UTF-8 `text` or wide `wide`.
bool NvtxRangeOpens(const char* domain_name, const char* text, const wchar_t* wide);
// `push_pop`: key is the nesting level on thread `tid`; otherwise key is the start/end range id.
void NvtxRangeOpened(uint32_t tid, uint32_t domain_id, bool push_pop, uint64_t key);
// NVTX pop/end hooks while kNvtxCloseArmed: closes the window when this ends the opening range.
void NvtxRangeEnded(uint32_t tid, uint32_t domain_id, bool push_pop, uint64_t key);

}  // namespace gt::capture
