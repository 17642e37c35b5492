// OS runtime backtraces (nsys's --osrt-backtrace-threshold / --osrt-backtrace-depth): an OS runtime
// call that is recorded (at least --osrt-threshold long) and lasted at least the backtrace threshold
// also gets the calling thread's stack, innermost frame = the function that called libc's.
//
// The capture is the one of CUDA backtraces (inject/callstack/): libunwind's unw_backtrace, loaded
// with dlopen at session start, unwinds into the calling thread's preallocated CaptureArea
// (osrt_frames, beside the CUDA slots), the leading frames in libgtrace.so and libunwind (our
// interposer, the record path) are dropped, and one ring record carries the call and its frames. It
// runs after libc's call returned, inside the interposer's record path (t_in_osrt set, so libc calls
// libunwind makes are not traced); the drain thread defines the stack (CallStackDef, shared id space
// with CUDA backtraces) and writes the OsrtCall with its stack_id; gtrace export symbolizes it into
// OSRT_CALLCHAINS.
//
// Threads: SetUpBacktraces on the thread that starts the session (session-start hook); WriteStack
// on application threads inside an interposed call (hot path for calls above the backtrace
// threshold only: no allocation, lock or system call of ours; what libunwind does the first time on
// a thread or for a new call site is in docs/osrt.md, "Backtraces"); the decoder and the config
// fields on the drain thread.
#pragma once

#include <atomic>
#include <cstdint>

#include "collector/chunk_builder.h"
#include "collector/session.h"
#include "inject/osrt/osrt_functions.h"

namespace gt::osrt {

// Calls at least this long (stream-clock units) keep their stack; UINT64_MAX: backtraces off.
extern std::atomic<uint64_t> g_backtrace_threshold;

// Session-start hook part: loads libunwind and reserves the capture areas when
// Config::osrt_backtrace asks for stacks (one gtrace: line and no stacks when that fails).
void SetUpBacktraces(const Config& config, uint64_t threshold_stream_units);

// Application thread, inside the record path (t_in_osrt set): unwinds this thread's stack and
// writes one kRecordOsrtStack record for the call. False when nothing was written (no capture area,
// no frame outside gtrace, ring full): the caller then writes the plain record.
bool WriteCallWithStack(FunctionId id, uint64_t start_ns, uint64_t end_ns, int64_t return_value);

// Drain thread: a kRecordOsrtStack record -> CallStackDef (when new) + one OsrtCall with stack_id.
void DecodeStackRecord(const RecordView& view, ChunkBuilder* chunk);

// Drain thread: OsrtConfig's backtrace fields (inside the open OsrtConfig message).
void WriteBacktraceConfig(ProtoWriter* w);

}  // namespace gt::osrt
