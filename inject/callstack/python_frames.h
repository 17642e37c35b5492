// --python-backtrace=cuda: the calling thread's Python frames (file, function, line), read directly
// from CPython's frame chain as sampling profilers (py-spy, Austin) do, never through the C API.
//
// Why not the C API: a CUDA API callback runs inside the CUDA call, and PyTorch releases the GIL
// around it (`.cpu()`, `.to()`); taking the GIL there can deadlock the application and asking for a
// frame object allocates (3.11+). Reading the chain needs neither: PyGILState_GetThisThreadState()
// is a thread-local read that works without the GIL (NULL in a thread with no Python state), and the
// thread's own frames cannot change or be freed while that thread is inside the CUDA call — the
// frames hold references to their code objects, the code objects to their names and line tables,
// and only this thread pops its frames. So the reads are of live memory owned by the calling thread.
//
// Defence against a layout mistake or a corrupt interpreter: the interpreter is found and its exact
// minor version read at set-up (Py_Version, else Py_GetVersion), and only a version with a row in
// python_layout.h is read; a type-object self-check at set-up refuses builds whose object header
// differs (free-threaded 3.13t, debug builds with ref tracing). On the hot path every pointer is
// checked for NULL and alignment before it is followed, every object's type is compared with the
// interpreter's PyCode_Type / PyUnicode_Type / PyBytes_Type before its fields are used, lengths and
// offsets are bounded, and the walk stops after kMaxPythonFrames. We do not use process_vm_readv (a
// system call per pointer, tens of microseconds per stack) or a SIGSEGV guard (signal handlers belong
// to the application): with the checks above a wrong pointer can only come from memory corruption
// of the interpreter itself, which would crash the application without us.
//
// Threads: FindPython on the set-up thread (slow path: dlsym); ReadPythonFrames on the application
// thread inside the CUPTI exit callback of a call that is kept (hot path: no lock, allocation, system
// call or logging; it writes only into the caller's buffer).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "inject/callstack/python_layout.h"

namespace gt::callstack {

inline constexpr int kMaxPythonFrames = 48;         // innermost frames kept per stack
inline constexpr size_t kMaxPythonFileBytes = 255;  // a longer path keeps its last 255 bytes
inline constexpr size_t kMaxPythonFunctionBytes = 127;
inline constexpr size_t kPythonScratchBytes = 8192;  // packed frames of one stack (per capture area)

// Packed frame, as ReadPythonFrames writes it (and the ring record carries it): this header, then
// file_bytes of UTF-8 file name, then function_bytes of UTF-8 function name. No alignment.
struct PackedPythonFrame {
  uint32_t line;  // 0: unknown
  uint8_t file_bytes;
  uint8_t function_bytes;
};
static_assert(sizeof(PackedPythonFrame) == 8);

// The interpreter found in this process. Filled by FindPython; read-only afterwards.
struct PythonRuntime {
  const PyLayout* layout = nullptr;
  int major = 0, minor = 0;
  void* (*this_thread_state)() = nullptr;  // PyGILState_GetThisThreadState
  const void* code_type = nullptr;         // &PyCode_Type
  const void* unicode_type = nullptr;      // &PyUnicode_Type
  const void* bytes_type = nullptr;        // &PyBytes_Type
};

// Looks for a CPython interpreter in the process (dlsym(RTLD_DEFAULT, ...): the executable or a
// libpython loaded globally). False with `why` (one sentence) when there is none, its version is not
// one gtrace knows, or the self-check fails.
bool FindPython(PythonRuntime* out, std::string* why);

// Parses "3.10.12 (main, ...)" (Py_GetVersion's text). False when it does not start with N.N.
bool ParsePythonVersion(const char* text, int* major, int* minor);

// Writes the calling thread's Python frames, innermost first, as PackedPythonFrame records into
// `out` (at most `capacity` bytes). Returns the number of frames; *bytes_written the bytes used;
// *truncated whether frames were left out (depth or room). 0 frames when the thread has no Python
// state or is not running Python code.
int ReadPythonFrames(const PythonRuntime& py, uint8_t* out, size_t capacity, size_t* bytes_written, bool* truncated);

}  // namespace gt::callstack
