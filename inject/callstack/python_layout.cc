// Rows and line-table decoders of python_layout.h. Sources of the numbers: python_layout.h (CPython's
// headers at the v3.9.0 .. v3.13.0 tags via py-spy's bindgen output, py-spy commit d230d82; 3.11 also
// Debian's python3.11-dev, checked by offsetof in tests/callstack/python_layout_test.cc).
#include "inject/callstack/python_layout.h"

namespace gt::callstack {
namespace {

// clang-format off
constexpr PyLayout kLayouts[] = {
    // 3.9: PyThreadState{prev 0, next 8, interp 16, frame 24}; PyFrameObject{VAR_HEAD 0..24, f_back 24,
    // f_code 32, f_builtins 40, f_globals 48, f_locals 56, f_valuestack 64, f_stacktop 72, f_trace 80,
    // f_trace_lines 88, f_trace_opcodes 89, f_gen 96, f_lasti 104}; PyCodeObject{HEAD 0..16, 7 ints
    // 16..44 (co_firstlineno 40), co_code 48, co_consts 56, co_names 64, co_varnames 72, co_freevars 80,
    // co_cellvars 88, co_cell2arg 96, co_filename 104, co_name 112, co_lnotab 120}; PyASCIIObject 48
    // bytes (wstr), PyCompactUnicodeObject 72.
    {9, PyFrameKind::kFrameObject, PyLineTable::kLnotab39,
     /*tstate_frame*/ 24, /*tstate_cframe*/ 0, /*cframe_current_frame*/ 0,
     /*frame_back*/ 24, /*frame_code*/ 32, /*frame_lasti*/ 104, /*frame_instr*/ 0, /*frame_owner*/ 0, -1,
     /*code_filename*/ 104, /*code_name*/ 112, /*code_linetable*/ 120, /*code_firstlineno*/ 40, /*code_adaptive*/ 0,
     48, 72},
    // 3.10: PyThreadState as 3.9 (frame 24); PyFrameObject{..., f_valuestack 64, f_trace 72,
    // f_stackdepth 80, f_trace_lines 84, f_trace_opcodes 85, f_gen 88, f_lasti 96 (code units)};
    // PyCodeObject as 3.9 with co_linetable at 120.
    {10, PyFrameKind::kFrameObject, PyLineTable::kLinetable310,
     24, 0, 0,
     24, 32, 96, 0, 0, -1,
     104, 112, 120, 40, 0,
     48, 72},
    // 3.11: PyThreadState{prev 0, next 8, interp 16, _initialized 24, _static 28, recursion_remaining 32,
    // recursion_limit 36, recursion_headroom 40, tracing 44, tracing_what 48, cframe 56};
    // _PyCFrame{use_tracing 0, current_frame 8, previous 16}; _PyInterpreterFrame{f_func 0, f_globals 8,
    // f_builtins 16, f_locals 24, f_code 32, frame_obj 40, previous 48, prev_instr 56, stacktop 64,
    // is_entry 68, owner 69}; PyCodeObject{VAR_HEAD 0..24, co_consts 24, co_names 32,
    // co_exceptiontable 40, co_flags 48, co_warmup 52, _co_linearray_entry_size 54, co_argcount 56, ...,
    // co_firstlineno 72, ..., co_localsplusnames 96, co_localspluskinds 104, co_filename 112,
    // co_name 120, co_qualname 128, co_linetable 136, co_weakreflist 144, _co_code 152,
    // _co_linearray 160, _co_firsttraceable 168, co_extra 176, co_code_adaptive 184}.
    {11, PyFrameKind::kInterpreterFrame, PyLineTable::kLocations311,
     0, 56, 8,
     48, 32, 0, 56, 69, -1,
     112, 128, 136, 72, 184,
     48, 72},
    // 3.12: PyThreadState{prev 0, next 8, interp 16, _status 24, py_recursion_remaining 28, ...,
    // what_event 48, cframe 56}; _PyCFrame{current_frame 0, previous 8}; _PyInterpreterFrame{f_code 0,
    // previous 8, f_funcobj 16, f_globals 24, f_builtins 32, f_locals 40, frame_obj 48, prev_instr 56,
    // stacktop 64, return_offset 68, owner 70}; FRAME_OWNED_BY_CSTACK = 3; PyCodeObject{..., co_flags 48,
    // co_argcount 52, ..., co_firstlineno 68, ..., co_version 92, co_localsplusnames 96, ...,
    // co_filename 112, co_name 120, co_qualname 128, co_linetable 136, co_weakreflist 144,
    // _co_cached 152, _co_instrumentation_version 160, _co_monitoring 168, _co_firsttraceable 176,
    // co_extra 184, co_code_adaptive 192}; PyASCIIObject 40 bytes (no wstr), PyCompactUnicodeObject 56.
    {12, PyFrameKind::kInterpreterFrame, PyLineTable::kLocations311,
     0, 56, 0,
     8, 0, 0, 56, 70, 3,
     112, 128, 136, 68, 192,
     40, 56},
    // 3.13: PyThreadState{prev 0, next 8, interp 16, eval_breaker 24, _status 32, _whence 36, state 40,
    // py_recursion_remaining 44, ..., what_event 64, current_frame 72}; _PyInterpreterFrame{f_executable 0,
    // previous 8, ..., instr_ptr 56, stacktop 64, return_offset 68, owner 70}; PyCodeObject as 3.12 up to
    // co_weakreflist 144, then co_executors 152, _co_cached 160, _co_instrumentation_version 168,
    // _co_monitoring 176, _co_firsttraceable 184, co_extra 192, co_code_adaptive 200.
    {13, PyFrameKind::kInterpreterFrame, PyLineTable::kLocations311,
     72, 0, 0,
     8, 0, 0, 56, 70, 3,
     112, 128, 136, 68, 200,
     40, 56},
};
// clang-format on

// 3.11+ location table varints (Objects/locations.md): 6 bits per byte, bit 6 = more follows.
int ReadVarint(const uint8_t* table, size_t size, size_t* pos) {
  if (*pos >= size)
    return 0;
  uint32_t b = table[(*pos)++];
  uint32_t value = b & 63;
  uint32_t shift = 0;
  while ((b & 64) != 0 && *pos < size && shift < 24) {
    b = table[(*pos)++];
    shift += 6;
    value |= (b & 63) << shift;
  }
  return static_cast<int>(value);
}

int ReadSignedVarint(const uint8_t* table, size_t size, size_t* pos) {
  uint32_t u = static_cast<uint32_t>(ReadVarint(table, size, pos));
  return (u & 1) != 0 ? -static_cast<int>(u >> 1) : static_cast<int>(u >> 1);
}

int Lnotab39(const uint8_t* t, size_t size, int line, int addr) {
  int at = 0;
  for (size_t i = 0; i + 1 < size; i += 2) {
    at += t[i];
    if (at > addr)
      break;
    line += static_cast<int8_t>(t[i + 1]);
  }
  return line;
}

int Linetable310(const uint8_t* t, size_t size, int line, int addr) {
  int end = 0;
  for (size_t i = 0; i + 1 < size; i += 2) {
    int start = end;
    end = start + t[i];
    int delta = static_cast<int8_t>(t[i + 1]);
    bool no_line = delta == -128;
    if (!no_line)
      line += delta;
    if (addr >= start && addr < end)
      return no_line ? 0 : line;
  }
  return 0;
}

int Locations311(const uint8_t* t, size_t size, int line, int addr) {
  int unit = addr / 2;  // the table counts code units of 2 bytes
  int at = 0;
  size_t pos = 0;
  while (pos < size) {
    uint8_t first = t[pos++];
    if ((first & 0x80) == 0)
      return 0;  // not at an entry start: a malformed table
    int code = (first >> 3) & 15;
    int length = (first & 7) + 1;
    bool no_line = code == 15;
    if (code == 14 || code == 13) {
      line += ReadSignedVarint(t, size, &pos);
    } else if (code >= 10 && code <= 12) {
      line += code - 10;
    }
    if (unit >= at && unit < at + length)
      return no_line || line < 0 ? 0 : line;
    at += length;
    while (pos < size && (t[pos] & 0x80) == 0)
      ++pos;  // the rest of this entry (columns)
  }
  return 0;
}

}  // namespace

const PyLayout* PyLayoutFor(int major, int minor) {
  if (major != 3)
    return nullptr;
  for (const PyLayout& l : kLayouts) {
    if (l.minor == minor)
      return &l;
  }
  return nullptr;
}

int PyAddressToLine(PyLineTable format, const uint8_t* table, size_t size, int first_line, int addr) {
  if (table == nullptr || addr < 0)
    return 0;
  int line = 0;
  switch (format) {
    case PyLineTable::kLnotab39:
      line = Lnotab39(table, size, first_line, addr);
      break;
    case PyLineTable::kLinetable310:
      line = Linetable310(table, size, first_line, addr);
      break;
    case PyLineTable::kLocations311:
      line = Locations311(table, size, first_line, addr);
      break;
  }
  return line > 0 ? line : 0;
}

}  // namespace gt::callstack
