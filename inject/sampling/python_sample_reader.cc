// Fault-free reads of the calling thread's Python frames from a signal handler. Why process_vm_readv
// and the cache: python_sample_reader.h. The walk and its checks follow python_frames.cc (the CUDA
// backtraces' reader), with every load replaced by a copy out of process_vm_readv.
#include "inject/sampling/python_sample_reader.h"

#include <errno.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cstring>

namespace gt::sampling {
namespace {

using callstack::PackedPythonFrame;
using callstack::PyFrameKind;
using callstack::PyLayout;

inline bool Plausible(uintptr_t p) {
  return p >= 4096 && (p & 7) == 0;
}

template <typename T>
inline T Field(const uint8_t* block, size_t offset) {
  T v;
  std::memcpy(&v, block + offset, sizeof(T));
  return v;
}

inline size_t Max(size_t a, size_t b) {
  return a > b ? a : b;
}

// Bytes of a frame that the walk uses (the frame may be shorter than the largest object: a
// _PyInterpreterFrame at the end of its data-stack chunk).
size_t FrameBytes(const PyLayout& l) {
  size_t n = Max(l.frame_back + 8u, l.frame_code + 8u);
  if (l.frame_kind == PyFrameKind::kFrameObject)
    return Max(n, l.frame_lasti + 4u);
  return Max(Max(n, l.frame_instr + 8u), l.frame_owner + 1u);
}

// Bytes of a code object's header that the walk uses.
size_t CodeBytes(const PyLayout& l) {
  size_t n = Max(Max(l.code_filename, l.code_name), l.code_linetable) + 8u;
  n = Max(n, l.code_firstlineno + 4u);
  if (l.frame_kind == PyFrameKind::kInterpreterFrame)
    n = Max(n, l.code_adaptive);
  return n;
}

bool PutUtf8(uint32_t c, char* out, size_t* n, size_t cap) {
  char b[4];
  size_t k;
  if (c < 0x80) {
    b[0] = static_cast<char>(c);
    k = 1;
  } else if (c < 0x800) {
    b[0] = static_cast<char>(0xC0 | (c >> 6));
    b[1] = static_cast<char>(0x80 | (c & 0x3F));
    k = 2;
  } else if (c < 0x10000) {
    b[0] = static_cast<char>(0xE0 | (c >> 12));
    b[1] = static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    b[2] = static_cast<char>(0x80 | (c & 0x3F));
    k = 3;
  } else {
    if (c > 0x10FFFF)
      c = 0xFFFD;
    b[0] = static_cast<char>(0xF0 | (c >> 18));
    b[1] = static_cast<char>(0x80 | ((c >> 12) & 0x3F));
    b[2] = static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    b[3] = static_cast<char>(0x80 | (c & 0x3F));
    k = 4;
  }
  if (*n + k > cap)
    return false;
  std::memcpy(out + *n, b, k);
  *n += k;
  return true;
}

}  // namespace

size_t PySampleReader::ReadSome(pid_t pid, uintptr_t addr, void* dst, size_t n) {
  ++reads_;
  iovec local{dst, n};
  iovec remote{reinterpret_cast<void*>(addr), n};
  ssize_t got = process_vm_readv(pid, &local, 1, &remote, 1, 0);
  return got > 0 ? static_cast<size_t>(got) : 0;
}

size_t PySampleReader::CopyString(const callstack::PythonRuntime& py,
                                  pid_t pid,
                                  uintptr_t s,
                                  bool keep_tail,
                                  char* out,
                                  size_t cap) {
  if (!Plausible(s))
    return 0;
  const PyLayout& l = *py.layout;
  // Header and (most) data in one read; a short read is fine as long as it covers what is used.
  size_t want = l.compact_object_size + 4 * cap;
  if (want > kScratchBytes)
    want = kScratchBytes;
  size_t got = ReadSome(pid, s, scratch_, want);
  if (got < l.compact_object_size || Field<const void*>(scratch_, callstack::kPyObjectType) != py.unicode_type)
    return 0;
  int64_t length = Field<int64_t>(scratch_, callstack::kPyUnicodeLength);
  uint32_t state = Field<uint32_t>(scratch_, callstack::kPyUnicodeState);
  uint32_t kind = (state >> 2) & 7;
  bool compact = ((state >> 5) & 1) != 0;
  bool ascii = ((state >> 6) & 1) != 0;
  if (!compact || length < 0 || length > (1 << 20) || (kind != 1 && kind != 2 && kind != 4))
    return 0;
  size_t data = ascii ? l.ascii_object_size : l.compact_object_size;
  size_t count = static_cast<size_t>(length);
  size_t unit = ascii ? 1 : kind;
  // Which code points to copy: all, or (keep_tail) the last ones that can fit.
  size_t first = 0;
  if (count > cap)
    first = keep_tail ? count - cap : 0;
  size_t last = first + (count - first < cap ? count - first : cap);
  const uint8_t* units = scratch_ + data + first * unit;  // code point `first`
  if (data + last * unit > got) {
    // The tail of a long name lies past the first read: read exactly the units needed.
    size_t bytes = (last - first) * unit;
    if (bytes > kScratchBytes || !ReadAll(pid, s + data + first * unit, scratch_, bytes))
      return 0;
    units = scratch_;
  }
  if (ascii) {
    std::memcpy(out, units, last - first);
    return last - first;
  }
  size_t n = 0;
  for (size_t i = 0; i < last - first; ++i) {
    uint32_t c = kind == 1 ? units[i] : kind == 2 ? Field<uint16_t>(units, i * 2) : Field<uint32_t>(units, i * 4);
    if (!PutUtf8(c, out, &n, cap))
      break;
  }
  return n;
}

uint32_t PySampleReader::LineOf(const callstack::PythonRuntime& py, pid_t pid, const Entry& e, int addr) {
  if (!Plausible(e.linetable))
    return 0;
  // The bytes object's header and the first part of its data in one read.
  size_t got = ReadSome(pid, e.linetable, scratch_, 512);
  if (got < callstack::kPyBytesData || Field<const void*>(scratch_, callstack::kPyObjectType) != py.bytes_type)
    return 0;
  int64_t size = Field<int64_t>(scratch_, callstack::kPyVarObjectSize);
  if (size < 0 || static_cast<size_t>(size) > kMaxLineTableBytes)
    return 0;
  size_t need = callstack::kPyBytesData + static_cast<size_t>(size);
  if (got < need && !ReadAll(pid, e.linetable + got, scratch_ + got, need - got))
    return 0;
  int line = callstack::PyAddressToLine(py.layout->line_table, scratch_ + callstack::kPyBytesData,
                                        static_cast<size_t>(size), e.first_line, addr);
  return line > 0 ? static_cast<uint32_t>(line) : 0;
}

int PySampleReader::Read(const callstack::PythonRuntime& py,
                         pid_t pid,
                         uintptr_t tstate,
                         uint8_t* out,
                         size_t capacity,
                         size_t* bytes_written,
                         bool* truncated) {
  *bytes_written = 0;
  *truncated = false;
  if (py.layout == nullptr || !Plausible(tstate))
    return 0;
  const PyLayout& l = *py.layout;
  uintptr_t frame = 0;
  if (l.tstate_cframe != 0) {
    uintptr_t cframe = 0;
    if (!ReadAll(pid, tstate + l.tstate_cframe, &cframe, 8) || !Plausible(cframe) ||
        !ReadAll(pid, cframe + l.cframe_current_frame, &frame, 8))
      return 0;
  } else if (!ReadAll(pid, tstate + l.tstate_frame, &frame, 8)) {
    return 0;
  }
  const size_t frame_bytes = FrameBytes(l);
  const size_t code_bytes = CodeBytes(l);
  uint8_t fb[128];
  uint8_t cb[256];
  if (frame_bytes > sizeof(fb) || code_bytes > sizeof(cb))
    return 0;
  int frames = 0;
  size_t used = 0;
  for (int steps = 0; Plausible(frame) && steps < 4 * callstack::kMaxPythonFrames; ++steps) {
    if (!ReadAll(pid, frame, fb, frame_bytes))
      break;  // the frame is gone (its chunk freed under us): stop here, keep what was read
    uintptr_t code = Field<uintptr_t>(fb, l.frame_code);
    uintptr_t next = Field<uintptr_t>(fb, l.frame_back);
    bool python_code = true;
    if (l.frame_kind == PyFrameKind::kInterpreterFrame)
      python_code = Field<int8_t>(fb, l.frame_owner) != l.owner_cstack;
    if (python_code && Plausible(code) && ReadAll(pid, code, cb, code_bytes) &&
        Field<const void*>(cb, callstack::kPyObjectType) == py.code_type) {
      int addr = -1;
      if (l.frame_kind == PyFrameKind::kFrameObject) {
        int32_t lasti = Field<int32_t>(fb, l.frame_lasti);
        addr = l.line_table == callstack::PyLineTable::kLnotab39 ? lasti : lasti * 2;
      } else {
        uintptr_t instr = Field<uintptr_t>(fb, l.frame_instr);
        uintptr_t start = code + l.code_adaptive;
        int64_t units = Field<int64_t>(cb, callstack::kPyVarObjectSize);
        if (instr >= start && units > 0 && instr < start + static_cast<uintptr_t>(units) * 2)
          addr = static_cast<int>(instr - start);
      }
      if (frames >= callstack::kMaxPythonFrames || capacity - used < sizeof(PackedPythonFrame) + 2) {
        *truncated = true;
        break;
      }
      uintptr_t filename = Field<uintptr_t>(cb, l.code_filename);
      uintptr_t name = Field<uintptr_t>(cb, l.code_name);
      uintptr_t linetable = Field<uintptr_t>(cb, l.code_linetable);
      int32_t first_line = Field<int32_t>(cb, l.code_firstlineno);
      Entry& e = cache_[(code >> 4) % kCacheEntries];
      if (e.code == code && e.filename == filename && e.name == name && e.linetable == linetable &&
          e.first_line == first_line) {
        ++hits_;
      } else {
        ++misses_;
        e.code = code;
        e.filename = filename;
        e.name = name;
        e.linetable = linetable;
        e.first_line = first_line;
        e.last_addr = -1;
        e.file_bytes =
            static_cast<uint8_t>(CopyString(py, pid, filename, true, e.text, callstack::kMaxPythonFileBytes));
        e.function_bytes = static_cast<uint8_t>(
            CopyString(py, pid, name, false, e.text + e.file_bytes, callstack::kMaxPythonFunctionBytes));
      }
      if (addr != e.last_addr) {
        e.last_line = addr >= 0 ? LineOf(py, pid, e, addr) : 0;
        e.last_addr = addr;
      }
      // Room: the innermost frames are kept; a frame whose text does not fit ends the walk.
      size_t text = static_cast<size_t>(e.file_bytes) + e.function_bytes;
      if (capacity - used < sizeof(PackedPythonFrame) + text) {
        *truncated = true;
        break;
      }
      PackedPythonFrame head;
      head.line = e.last_line;
      head.file_bytes = e.file_bytes;
      head.function_bytes = e.function_bytes;
      std::memcpy(out + used, &head, sizeof(head));
      std::memcpy(out + used + sizeof(head), e.text, text);
      used += sizeof(head) + text;
      ++frames;
    }
    frame = next;
  }
  *bytes_written = used;
  return frames;
}

bool SelfReadWorks(int* err) {
  static const uint64_t kProbe = 0x6774726163650000ull;
  uint64_t copy = 0;
  iovec local{&copy, sizeof(copy)};
  iovec remote{const_cast<uint64_t*>(&kProbe), sizeof(kProbe)};
  errno = 0;
  ssize_t got = process_vm_readv(getpid(), &local, 1, &remote, 1, 0);
  *err = errno;
  return got == static_cast<ssize_t>(sizeof(copy)) && copy == kProbe;
}

}  // namespace gt::sampling
