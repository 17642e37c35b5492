// Finding CPython (set-up) and walking the calling thread's frame chain (hot path). Why direct reads
// and which checks guard them: python_frames.h.
#include "inject/callstack/python_frames.h"

#include <dlfcn.h>

#include <cstring>

namespace gt::callstack {
namespace {

using Address = uintptr_t;

// A pointer that may be followed: non-null, 8-aligned, not in the first page.
inline bool Plausible(Address p) {
  return p >= 4096 && (p & 7) == 0;
}

template <typename T>
inline T Load(Address base, size_t offset) {
  T v;
  std::memcpy(&v, reinterpret_cast<const void*>(base + offset), sizeof(T));
  return v;
}

inline bool HasType(Address object, const void* type) {
  return Plausible(object) && Load<const void*>(object, kPyObjectType) == type;
}

// Appends `c` as UTF-8 if it fits in out[*n .. cap). False when it does not.
inline bool PutUtf8(uint32_t c, uint8_t* out, size_t* n, size_t cap) {
  uint8_t b[4];
  size_t k;
  if (c < 0x80) {
    b[0] = static_cast<uint8_t>(c);
    k = 1;
  } else if (c < 0x800) {
    b[0] = static_cast<uint8_t>(0xC0 | (c >> 6));
    b[1] = static_cast<uint8_t>(0x80 | (c & 0x3F));
    k = 2;
  } else if (c < 0x10000) {
    b[0] = static_cast<uint8_t>(0xE0 | (c >> 12));
    b[1] = static_cast<uint8_t>(0x80 | ((c >> 6) & 0x3F));
    b[2] = static_cast<uint8_t>(0x80 | (c & 0x3F));
    k = 3;
  } else {
    if (c > 0x10FFFF)
      c = 0xFFFD;
    b[0] = static_cast<uint8_t>(0xF0 | (c >> 18));
    b[1] = static_cast<uint8_t>(0x80 | ((c >> 12) & 0x3F));
    b[2] = static_cast<uint8_t>(0x80 | ((c >> 6) & 0x3F));
    b[3] = static_cast<uint8_t>(0x80 | (c & 0x3F));
    k = 4;
  }
  if (*n + k > cap)
    return false;
  std::memcpy(out + *n, b, k);
  *n += k;
  return true;
}

// Copies str object `s` as UTF-8 into out[0 .. cap). `keep_tail`: when it does not fit, keep the
// end (a path's file name) rather than the start. Returns the bytes written (0 when `s` is not a
// compact str).
size_t CopyString(const PythonRuntime& py, Address s, bool keep_tail, uint8_t* out, size_t cap) {
  if (!HasType(s, py.unicode_type))
    return 0;
  const PyLayout& l = *py.layout;
  int64_t length = Load<int64_t>(s, kPyUnicodeLength);
  uint32_t state = Load<uint32_t>(s, kPyUnicodeState);
  uint32_t kind = (state >> 2) & 7;
  bool compact = ((state >> 5) & 1) != 0;
  bool ascii = ((state >> 6) & 1) != 0;
  if (!compact || length < 0 || length > (1 << 20) || (kind != 1 && kind != 2 && kind != 4))
    return 0;
  Address data = s + (ascii ? l.ascii_object_size : l.compact_object_size);
  size_t count = static_cast<size_t>(length);
  size_t first = 0;
  if (ascii) {
    if (keep_tail && count > cap)
      first = count - cap;
    size_t n = count - first < cap ? count - first : cap;
    std::memcpy(out, reinterpret_cast<const void*>(data + first), n);
    return n;
  }
  // Non-ASCII: at most 4 UTF-8 bytes per code point; for the tail start far enough back.
  if (keep_tail && count * 4 > cap)
    first = count > cap ? count - cap : 0;
  size_t n = 0;
  for (size_t i = first; i < count; ++i) {
    uint32_t c = kind == 1   ? Load<uint8_t>(data, i)
                 : kind == 2 ? Load<uint16_t>(data, i * 2)
                             : Load<uint32_t>(data, i * 4);
    if (!PutUtf8(c, out, &n, cap))
      break;
  }
  return n;
}

// Line of the instruction at byte offset `addr` of code object `code`.
int LineOf(const PythonRuntime& py, Address code, int addr) {
  const PyLayout& l = *py.layout;
  int first_line = Load<int32_t>(code, l.code_firstlineno);
  Address table = Load<Address>(code, l.code_linetable);
  if (!HasType(table, py.bytes_type))
    return 0;
  int64_t size = Load<int64_t>(table, kPyVarObjectSize);
  if (size < 0 || size > (1 << 24))
    return 0;
  return PyAddressToLine(l.line_table, reinterpret_cast<const uint8_t*>(table + kPyBytesData),
                         static_cast<size_t>(size), first_line, addr);
}

// The thread's innermost frame (PyFrameObject* or _PyInterpreterFrame*), 0 when none.
Address InnermostFrame(const PyLayout& l, Address tstate) {
  if (l.tstate_cframe != 0) {
    Address cframe = Load<Address>(tstate, l.tstate_cframe);
    if (!Plausible(cframe))
      return 0;
    return Load<Address>(cframe, l.cframe_current_frame);
  }
  return Load<Address>(tstate, l.tstate_frame);
}

}  // namespace

bool ParsePythonVersion(const char* text, int* major, int* minor) {
  if (text == nullptr)
    return false;
  int a = 0, b = 0;
  const char* p = text;
  if (*p < '0' || *p > '9')
    return false;
  while (*p >= '0' && *p <= '9')
    a = a * 10 + (*p++ - '0');
  if (*p++ != '.' || *p < '0' || *p > '9')
    return false;
  while (*p >= '0' && *p <= '9')
    b = b * 10 + (*p++ - '0');
  *major = a;
  *minor = b;
  return true;
}

bool FindPython(PythonRuntime* out, std::string* why) {
  *out = PythonRuntime();
  int major = 0, minor = 0;
  if (const auto* hex = static_cast<const unsigned long*>(dlsym(RTLD_DEFAULT, "Py_Version"))) {
    major = static_cast<int>((*hex >> 24) & 0xFF);  // PY_VERSION_HEX (3.11+)
    minor = static_cast<int>((*hex >> 16) & 0xFF);
  } else if (auto* get = reinterpret_cast<const char* (*)()>(dlsym(RTLD_DEFAULT, "Py_GetVersion"))) {
    if (!ParsePythonVersion(get(), &major, &minor)) {
      *why = "cannot read the Python version";
      return false;
    }
  } else {
    *why = "no Python interpreter in this process (Py_Version/Py_GetVersion not found)";
    return false;
  }
  out->major = major;
  out->minor = minor;
  std::string version = std::to_string(major) + "." + std::to_string(minor);
  out->layout = PyLayoutFor(major, minor);
  if (out->layout == nullptr) {
    *why = "Python " + version + " is not one gtrace can read (3.9-3.13)";
    return false;
  }
  out->this_thread_state = reinterpret_cast<void* (*)()>(dlsym(RTLD_DEFAULT, "PyGILState_GetThisThreadState"));
  out->code_type = dlsym(RTLD_DEFAULT, "PyCode_Type");
  out->unicode_type = dlsym(RTLD_DEFAULT, "PyUnicode_Type");
  out->bytes_type = dlsym(RTLD_DEFAULT, "PyBytes_Type");
  const void* type_type = dlsym(RTLD_DEFAULT, "PyType_Type");
  if (out->this_thread_state == nullptr || out->code_type == nullptr || out->unicode_type == nullptr ||
      out->bytes_type == nullptr || type_type == nullptr) {
    *why = "Python " + version + " lacks PyGILState_GetThisThreadState or its type objects";
    out->layout = nullptr;
    return false;
  }
  // Self-check of the object header: a static type object's ob_type is &PyType_Type at offset 8 in
  // the default build; free-threaded (3.13t) and trace-refs builds put it elsewhere.
  Address code_type = reinterpret_cast<Address>(out->code_type);
  if (Load<const void*>(code_type, kPyObjectType) != type_type ||
      Load<const void*>(reinterpret_cast<Address>(out->unicode_type), kPyObjectType) != type_type) {
    *why = "Python " + version + " has an object layout gtrace does not know (free-threaded or debug build?)";
    out->layout = nullptr;
    return false;
  }
  return true;
}

int ReadPythonFrames(const PythonRuntime& py, uint8_t* out, size_t capacity, size_t* bytes_written, bool* truncated) {
  *bytes_written = 0;
  *truncated = false;
  if (py.layout == nullptr || py.this_thread_state == nullptr)
    return 0;
  const PyLayout& l = *py.layout;
  Address tstate = reinterpret_cast<Address>(py.this_thread_state());
  if (!Plausible(tstate))
    return 0;  // a thread with no Python state
  Address frame = InnermostFrame(l, tstate);
  int frames = 0;
  size_t used = 0;
  // Bounded walk: a corrupt chain (a cycle) ends at the step limit.
  for (int steps = 0; Plausible(frame) && steps < 4 * kMaxPythonFrames; ++steps) {
    Address code = Load<Address>(frame, l.frame_code);
    Address next = Load<Address>(frame, l.frame_back);
    int addr = -1;
    bool python_code = true;
    if (l.frame_kind == PyFrameKind::kInterpreterFrame) {
      int8_t owner = Load<int8_t>(frame, l.frame_owner);
      python_code = owner != l.owner_cstack;  // 3.12+ entry shim frames run no Python code
    }
    if (python_code && HasType(code, py.code_type)) {
      if (l.frame_kind == PyFrameKind::kFrameObject) {
        int32_t lasti = Load<int32_t>(frame, l.frame_lasti);
        addr = l.line_table == PyLineTable::kLnotab39 ? lasti : lasti * 2;  // 3.10 counts code units
      } else {
        Address instr = Load<Address>(frame, l.frame_instr);
        Address start = code + l.code_adaptive;
        int64_t units = Load<int64_t>(code, kPyVarObjectSize);  // code units (ob_size)
        if (instr >= start && units > 0 && instr < start + static_cast<Address>(units) * 2)
          addr = static_cast<int>(instr - start);
      }
      if (frames >= kMaxPythonFrames || capacity - used < sizeof(PackedPythonFrame) + 2) {
        *truncated = true;
        break;
      }
      PackedPythonFrame head;
      uint8_t* text = out + used + sizeof(head);
      size_t room = capacity - used - sizeof(head);
      size_t file_cap = room / 2 < kMaxPythonFileBytes ? room / 2 : kMaxPythonFileBytes;
      size_t file = CopyString(py, Load<Address>(code, l.code_filename), true, text, file_cap);
      size_t function_cap = room - file < kMaxPythonFunctionBytes ? room - file : kMaxPythonFunctionBytes;
      size_t function = CopyString(py, Load<Address>(code, l.code_name), false, text + file, function_cap);
      head.line = addr >= 0 ? static_cast<uint32_t>(LineOf(py, code, addr)) : 0;
      head.file_bytes = static_cast<uint8_t>(file);
      head.function_bytes = static_cast<uint8_t>(function);
      std::memcpy(out + used, &head, sizeof(head));
      used += sizeof(head) + file + function;
      ++frames;
    }
    frame = next;
  }
  *bytes_written = used;
  return frames;
}

}  // namespace gt::callstack
