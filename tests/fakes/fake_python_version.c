/* THIS IS A TEST DOUBLE, not Python: it exports only the `Py_Version` symbol that CPython 3.11+
 * exports (the PY_VERSION_HEX of the running interpreter), with the value of CPython 3.14.0 final,
 * a version gtrace has no frame layout for. Preloaded into a C++ program, it makes libgtrace.so see
 * an interpreter it must refuse (one `gtrace:` line, Python frames off, native stacks kept). */
const unsigned long Py_Version = 0x030E00F0UL;
