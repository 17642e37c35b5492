// The capture-window API's entry points (inject/api_entry.cc), declared for the tests that call
// them directly; the Python package finds them with ctypes.
#pragma once

#include <stdint.h>

namespace gt::api {
// Set by entry.cc's constructor when another copy of libgtrace.so records in this process: the API
// entry points forward to that copy's (dlopen handle; nullptr otherwise).
extern void* g_primary_api;
}  // namespace gt::api

extern "C" {
int gtrace_api_version(void) noexcept;
int gtrace_api_start(void) noexcept;
int gtrace_api_stop(void) noexcept;
int gtrace_api_is_active(void) noexcept;
int gtrace_api_mark(const char* text) noexcept;
int64_t gtrace_api_step(void) noexcept;
}
