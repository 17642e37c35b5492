// PySampleReader: the Python frames of the thread it runs on, read from inside an asynchronous
// signal handler (python_signal_sampler.cc) for --python-sampling.
//
// Why not python_frames.cc's reader: that one runs inside a CUDA call, where the thread's frames
// cannot change under it, and reads memory directly. A signal can arrive at any instruction of the
// interpreter — between freeing a frame's data-stack chunk (munmap) and unlinking the frame, or
// while a code object is being deallocated — so a direct read could fault and kill the host. Every
// read here goes through process_vm_readv on our own pid: a bad address returns EFAULT (a short
// read), never a signal. That is a system call per read (~1 us on an idle machine, several under
// load), so the reader keeps a per-thread cache of code objects: a code object seen before (same
// address, same file-name, name and line-table objects, same first line) costs one read for its
// header and, when its instruction moved, one for its line table; its names are not read again.
// Frames and code headers are always read afresh.
//
// Threads: one reader per sampled thread, used only by that thread's signal handler (never
// concurrently: the signal is blocked while its handler runs). Async-signal-safe: no allocation,
// lock, logging or libc call other than process_vm_readv (errno is saved by the caller).
// Allocated by the drain thread (python_signal_sampler.cc) as part of the thread's slot.
#pragma once

#include <sys/types.h>
#include <cstddef>
#include <cstdint>

#include "inject/callstack/python_frames.h"

namespace gt::sampling {

class PySampleReader {
 public:
  static constexpr int kCacheEntries = 64;             // code objects remembered (direct-mapped)
  static constexpr size_t kScratchBytes = 16384;       // one line table or string copied out
  static constexpr size_t kMaxLineTableBytes = 16000;  // a larger table: line 0 (unknown)

  PySampleReader() = default;
  PySampleReader(const PySampleReader&) = delete;
  PySampleReader& operator=(const PySampleReader&) = delete;

  // Packed frames (callstack::PackedPythonFrame + file + function), innermost first, of thread state
  // `tstate` (the calling thread's) into out[0 .. capacity). Returns the frame count; 0 when the
  // state has no frames or the first read fails. `pid` is getpid() (cached by the caller).
  int Read(const callstack::PythonRuntime& py,
           pid_t pid,
           uintptr_t tstate,
           uint8_t* out,
           size_t capacity,
           size_t* bytes_written,
           bool* truncated);

  // Counters for the bench and tests (read by the same thread or after it stopped).
  uint64_t cache_hits() const { return hits_; }
  uint64_t cache_misses() const { return misses_; }
  uint64_t reads() const { return reads_; }

 private:
  struct Entry {
    uintptr_t code = 0, filename = 0, name = 0, linetable = 0;
    int32_t first_line = 0;
    int32_t last_addr = -1;  // instruction offset of the cached line
    uint32_t last_line = 0;
    uint8_t file_bytes = 0, function_bytes = 0;
    char text[callstack::kMaxPythonFileBytes + callstack::kMaxPythonFunctionBytes];
  };

  // Copies n bytes at `addr` of this process into dst; the bytes actually read (short on a fault).
  size_t ReadSome(pid_t pid, uintptr_t addr, void* dst, size_t n);
  bool ReadAll(pid_t pid, uintptr_t addr, void* dst, size_t n) { return ReadSome(pid, addr, dst, n) == n; }
  // A compact str object as UTF-8 into out[0 .. cap); keep_tail keeps the end when it does not fit.
  size_t CopyString(const callstack::PythonRuntime& py, pid_t pid, uintptr_t s, bool keep_tail, char* out, size_t cap);
  uint32_t LineOf(const callstack::PythonRuntime& py, pid_t pid, const Entry& e, int addr);

  Entry cache_[kCacheEntries];
  uint8_t scratch_[kScratchBytes];
  uint64_t hits_ = 0, misses_ = 0, reads_ = 0;
};

// True when process_vm_readv on our own pid works here (seccomp may refuse it); called once by the
// drain thread before Python sampling is switched on. *err = errno on failure.
bool SelfReadWorks(int* err);

}  // namespace gt::sampling
