// Where CPython 3.9-3.13 keep what --python-backtrace=cuda reads (x86-64 and aarch64 LP64, the default
// GIL build): the thread state's current frame, each frame's code object, previous frame and
// instruction position, the code object's file name, function name and line table, and the layouts
// of compact str and bytes objects. Plus the decoders of the three line-table formats.
//
// These are facts of the interpreter, not an API: every minor version moved something, so each has its
// own row and an unknown version gets no row (Python frames are then off). Sources, per row: CPython's
// Include/cpython/{pystate,code,frameobject,unicodeobject,bytesobject}.h and (3.11+)
// Include/internal/pycore_frame.h at the tags v3.9.0 .. v3.13.0, read as the bindgen output of those
// headers in benfred/py-spy src/python_bindings/v3_9_5.rs, v3_10_0.rs, v3_12_0.rs, v3_13_0.rs (py-spy
// commit of 2025, mirrored for this change), and for 3.11 Debian's python3.11-dev headers
// (/usr/include/python3.11), which tests/callstack/python_layout_test.cc compares with offsetof when
// they are installed. Offsets are bytes from the start of the object. Every row is exercised end to end
// by callstack.python_frames.3.N where that interpreter exists (3.9.18-3.13.0 on the machine it was
// written on).
//
// Threads: the tables are constant; the decoders are pure functions (any thread; the hot path calls
// them on bytes it already bounds-checked).
#pragma once

#include <cstddef>
#include <cstdint>

namespace gt::callstack {

// How a code object's line table is encoded.
enum class PyLineTable : uint8_t {
  kLnotab39,      // 3.9 co_lnotab: (byte increment, signed line increment) pairs; f_lasti in bytes
  kLinetable310,  // 3.10 co_linetable (PEP 626): (byte delta, signed line delta, -128 = none) pairs
  kLocations311,  // 3.11+ co_linetable (PEP 657 location table): entries of code units
};

// How the thread state leads to the innermost frame, and what a frame is.
enum class PyFrameKind : uint8_t {
  kFrameObject,       // 3.9/3.10: tstate->frame is a PyFrameObject chain (f_back, f_code, f_lasti)
  kInterpreterFrame,  // 3.11+: _PyInterpreterFrame chain (previous, f_code/f_executable, prev_instr/instr_ptr)
};

struct PyLayout {
  int minor;  // 3.<minor>
  PyFrameKind frame_kind;
  PyLineTable line_table;
  // PyThreadState.
  uint16_t tstate_frame;          // 3.9/3.10 frame; 3.13 current_frame (a _PyInterpreterFrame*)
  uint16_t tstate_cframe;         // 3.11/3.12 cframe (a _PyCFrame*); 0 when the version has none
  uint16_t cframe_current_frame;  // _PyCFrame.current_frame
  // Frame (PyFrameObject or _PyInterpreterFrame).
  uint16_t frame_back;   // f_back / previous
  uint16_t frame_code;   // f_code / f_executable
  uint16_t frame_lasti;  // 3.9/3.10 f_lasti (int)
  uint16_t frame_instr;  // 3.11/3.12 prev_instr, 3.13 instr_ptr (a _Py_CODEUNIT*)
  uint16_t frame_owner;  // 3.11+ owner (char)
  int8_t owner_cstack;   // 3.12+ FRAME_OWNED_BY_CSTACK (an entry shim frame: not Python code); -1 none
  // PyCodeObject.
  uint16_t code_filename;
  uint16_t code_name;       // co_qualname (3.11+), co_name before
  uint16_t code_linetable;  // co_lnotab (3.9), co_linetable (3.10+)
  uint16_t code_firstlineno;
  uint16_t code_adaptive;  // 3.11+ co_code_adaptive (the code units; ob_size of the code object counts them)
  // str: compact objects only (every code object's names are). sizeof(PyASCIIObject) /
  // sizeof(PyCompactUnicodeObject): the data follows them (ASCII / other compact strings).
  uint16_t ascii_object_size;
  uint16_t compact_object_size;
};

// Common to 3.9-3.13 (Include/object.h, Include/cpython/unicodeobject.h, bytesobject.h).
inline constexpr size_t kPyObjectType = 8;      // PyObject.ob_type
inline constexpr size_t kPyVarObjectSize = 16;  // PyVarObject.ob_size
inline constexpr size_t kPyUnicodeLength = 16;  // PyASCIIObject.length (code points)
inline constexpr size_t kPyUnicodeState = 32;   // PyASCIIObject.state: interned:2 kind:3 compact:1 ascii:1
inline constexpr size_t kPyBytesData = 32;      // PyBytesObject.ob_sval (after ob_shash)

// The row of 3.<minor>, or nullptr when gtrace does not know it.
const PyLayout* PyLayoutFor(int major, int minor);

// Line of the instruction at byte offset `addr` of a code object whose line table is `table`
// (`size` bytes) and first line `first_line`. 0 when the instruction has no line or `addr` lies
// outside the table. Reads only table[0 .. size).
int PyAddressToLine(PyLineTable format, const uint8_t* table, size_t size, int first_line, int addr);

}  // namespace gt::callstack
