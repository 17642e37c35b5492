// Unit tests of the CPython layout table and line-table decoders (inject/callstack/python_layout.h)
// and of the version parser. Where the local Python's development headers are installed (Debian's
// python3.11-dev here), its row is compared with offsetof on those headers.
#include "inject/callstack/python_layout.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "inject/callstack/python_frames.h"

#if defined(GT_HAVE_PYTHON_HEADERS)
#define Py_BUILD_CORE 1
#include <Python.h>
#if PY_VERSION_HEX >= 0x030B0000
#include <internal/pycore_frame.h>
#endif
#endif

namespace gt::callstack {
namespace {

TEST(PythonLayout, KnownVersionsOnly) {
  for (int minor = 9; minor <= 13; ++minor) {
    const PyLayout* l = PyLayoutFor(3, minor);
    ASSERT_NE(l, nullptr) << minor;
    EXPECT_EQ(l->minor, minor);
  }
  EXPECT_EQ(PyLayoutFor(3, 8), nullptr);
  EXPECT_EQ(PyLayoutFor(3, 14), nullptr);
  EXPECT_EQ(PyLayoutFor(2, 7), nullptr);
  EXPECT_EQ(PyLayoutFor(3, 11)->line_table, PyLineTable::kLocations311);
  EXPECT_EQ(PyLayoutFor(3, 10)->frame_kind, PyFrameKind::kFrameObject);
}

TEST(PythonLayout, ParsesPyGetVersionText) {
  int major = 0, minor = 0;
  ASSERT_TRUE(ParsePythonVersion("3.10.12 (main, Nov 20 2023, 15:14:05) [GCC 11.4.0]", &major, &minor));
  EXPECT_EQ(major, 3);
  EXPECT_EQ(minor, 10);
  ASSERT_TRUE(ParsePythonVersion("3.9.2", &major, &minor));
  EXPECT_EQ(minor, 9);
  EXPECT_FALSE(ParsePythonVersion("", &major, &minor));
  EXPECT_FALSE(ParsePythonVersion("3", &major, &minor));
  EXPECT_FALSE(ParsePythonVersion("python 3.11", &major, &minor));
  EXPECT_FALSE(ParsePythonVersion(nullptr, &major, &minor));
}

// 3.9 co_lnotab of a function starting at line 10: bytes 0-5 line 10, 6-13 line 12, 14-19 line 11,
// then a jump of 300 lines split over two pairs (the format's 8-bit deltas).
TEST(PythonLayout, Lnotab39) {
  const std::vector<uint8_t> t = {6, 2, 8, static_cast<uint8_t>(-1), 6, 127, 0, 127, 0, 46};
  auto line = [&](int addr) { return PyAddressToLine(PyLineTable::kLnotab39, t.data(), t.size(), 10, addr); };
  EXPECT_EQ(line(0), 10);
  EXPECT_EQ(line(5), 10);
  EXPECT_EQ(line(6), 12);
  EXPECT_EQ(line(13), 12);
  EXPECT_EQ(line(14), 11);
  EXPECT_EQ(line(20), 11 + 127 + 127 + 46);
  EXPECT_EQ(line(-1), 0);
}

// 3.10 co_linetable: (byte delta, line delta) with -128 = no line; a zero line delta only extends.
TEST(PythonLayout, Linetable310) {
  const std::vector<uint8_t> t = {4, 1, 6, 0, 2, 2, 4, static_cast<uint8_t>(-128), 2, static_cast<uint8_t>(-3)};
  auto line = [&](int addr) { return PyAddressToLine(PyLineTable::kLinetable310, t.data(), t.size(), 20, addr); };
  EXPECT_EQ(line(0), 21);  // [0,4) line 21
  EXPECT_EQ(line(4), 21);  // [4,10): delta 0, same line
  EXPECT_EQ(line(9), 21);
  EXPECT_EQ(line(10), 23);  // [10,12) line 23
  EXPECT_EQ(line(12), 0);   // [12,16) no line
  EXPECT_EQ(line(16), 20);  // [16,18) line 23 - 3
  EXPECT_EQ(line(18), 0);   // past the table
}

// 3.11+ location table (Objects/locations.md): entry = 1 CCCC LLL (code, length-1 code units).
TEST(PythonLayout, Locations311) {
  const std::vector<uint8_t> t = {
      0x80 | (13 << 3) | 0, 0x02,                     // no columns, line +1, 1 unit  -> units [0,1)  line 31
      0x80 | (0 << 3) | 2,  0x05,                     // short form, same line, 3 units -> [1,4)     line 31
      0x80 | (11 << 3) | 1, 4,           9,           // one line form, +1, 2 units   -> [4,6)      line 32
      0x80 | (15 << 3) | 0,                           // no location, 1 unit          -> [6,7)      none
      0x80 | (14 << 3) | 0, 0x03,        0,    1, 2,  // long form, line -1, 1 unit   -> [7,8)      line 31
      0x80 | (13 << 3) | 0, 0x40 | 0x08, 0x01,  // no columns, line +(72/2)=+36 (varint 8 | 1<<6), 1 unit -> [8,9) line
                                                // 67
  };
  auto line = [&](int unit) { return PyAddressToLine(PyLineTable::kLocations311, t.data(), t.size(), 30, unit * 2); };
  EXPECT_EQ(line(0), 31);
  EXPECT_EQ(line(1), 31);
  EXPECT_EQ(line(3), 31);
  EXPECT_EQ(line(4), 32);
  EXPECT_EQ(line(5), 32);
  EXPECT_EQ(line(6), 0);
  EXPECT_EQ(line(7), 31);
  EXPECT_EQ(line(8), 67);
  EXPECT_EQ(line(9), 0);  // past the table
  // A truncated table never reads past its end.
  EXPECT_EQ(PyAddressToLine(PyLineTable::kLocations311, t.data(), 1, 30, 0), 30);  // its line delta is cut off
}

#if defined(GT_HAVE_PYTHON_HEADERS) && PY_VERSION_HEX >= 0x030B0000 && PY_VERSION_HEX < 0x030C0000
TEST(PythonLayout, RowMatchesTheInstalledHeaders311) {
  const PyLayout* l = PyLayoutFor(3, 11);
  ASSERT_NE(l, nullptr);
  EXPECT_EQ(l->tstate_cframe, offsetof(PyThreadState, cframe));
  EXPECT_EQ(l->cframe_current_frame, offsetof(_PyCFrame, current_frame));
  EXPECT_EQ(l->frame_back, offsetof(_PyInterpreterFrame, previous));
  EXPECT_EQ(l->frame_code, offsetof(_PyInterpreterFrame, f_code));
  EXPECT_EQ(l->frame_instr, offsetof(_PyInterpreterFrame, prev_instr));
  EXPECT_EQ(l->frame_owner, offsetof(_PyInterpreterFrame, owner));
  EXPECT_EQ(l->code_filename, offsetof(PyCodeObject, co_filename));
  EXPECT_EQ(l->code_name, offsetof(PyCodeObject, co_qualname));
  EXPECT_EQ(l->code_linetable, offsetof(PyCodeObject, co_linetable));
  EXPECT_EQ(l->code_firstlineno, offsetof(PyCodeObject, co_firstlineno));
  EXPECT_EQ(l->code_adaptive, offsetof(PyCodeObject, co_code_adaptive));
  EXPECT_EQ(l->ascii_object_size, sizeof(PyASCIIObject));
  EXPECT_EQ(l->compact_object_size, sizeof(PyCompactUnicodeObject));
  EXPECT_EQ(kPyBytesData, offsetof(PyBytesObject, ob_sval));
  EXPECT_EQ(kPyUnicodeLength, offsetof(PyASCIIObject, length));
  EXPECT_EQ(kPyUnicodeState, offsetof(PyASCIIObject, state));
  EXPECT_EQ(kPyObjectType, offsetof(PyObject, ob_type));
}
#else
TEST(PythonLayout, RowMatchesTheInstalledHeaders311) {
  GTEST_SKIP() << "no CPython 3.11 development headers at build time (python3.11-dev)";
}
#endif

}  // namespace
}  // namespace gt::callstack
