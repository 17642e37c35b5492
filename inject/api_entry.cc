// The capture-window API of libgtrace.so: the extern "C" entry points the Python package
// (python/gtrace, ctypes) calls, and that any other language may call the same way.
//   gtrace_api_version()   1; the Python side checks it before using the others
//   gtrace_api_start()     open a window (as cudaProfilerStart; needs --capture-range=cudaProfilerApi)
//   gtrace_api_stop()      close it (as cudaProfilerStop)
//   gtrace_api_is_active() 1 while recording (a window is open), else 0
//   gtrace_api_mark(text)  an NVTX mark in the default domain (recorded only inside a window)
//   gtrace_api_step()      the current step ends; returns the new step's number
//                          (--capture-range=steps:A-B)
// Every function returns -1 when this process has no recording session (GTRACE_DISABLE, a failed
// start, the session already ended at exit).
//
// Threads: any application thread. These are slow paths (a mutex in the window module, the first
// call starts the session: file, drain thread), except gtrace_api_mark and gtrace_api_is_active,
// which after the first call cost what an NVTX mark / one atomic load costs (plus ApiSession's
// cached check: no system call, no lock).
// A second copy of the library forwards to the copy that records (entry.cc, FindPrimary), so the
// Python side may call whichever copy it finds.
#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <atomic>

#include "collector/session.h"
#include "inject/api_entry.h"
#include "inject/cupti/capture_window.h"
#include "inject/nvtx/nvtx_hooks.h"

namespace {

bool ApiDisabled() {
  const char* d = getenv("GTRACE_DISABLE");
  return d != nullptr && *d != '\0' && strcmp(d, "0") != 0 && strcmp(d, "false") != 0;
}

// 0: first call not done yet; 1: GTRACE_DISABLE; 2: registered with the collector. Registrations
// are process-wide and survive fork, so they are done once (they take locks).
std::atomic<int> g_api_state{0};

// Starts (once) or joins this process's session (a forked child starts its own here). The window
// module's session-start hook must be registered first so that --capture-range arms itself; NVTX's
// decoder so that marks decode. After the first call: two loads and the session's `ended` flag,
// without EnsureSession's and SessionId's getpid() system calls
// (bench/results/2026-11-25-python-mark.md). Still right after fork: the collector's atfork child
// handler clears the installed session, so a forked child takes the slow path and starts its own
// (python.api's fork case). A vfork child shares the parent's memory and runs no atfork handler, but
// never reaches these entry points: they are called from Python code, and CPython runs none between
// vfork and exec.
bool ApiSession() {
  if (g_api_state.load(std::memory_order_acquire) == 2 && gt::SessionInstalledAndRunning())
    return true;
  int state = g_api_state.load(std::memory_order_acquire);
  if (state == 0) {
    if (ApiDisabled()) {
      state = 1;
    } else {
      gt::capture::RegisterWithCollector();
      gt::nvtx::RegisterWithCollector();
      state = 2;
    }
    g_api_state.store(state, std::memory_order_release);
  }
  return state == 2 && gt::EnsureSession(0) && gt::SessionId() != 0;
}

}  // namespace

namespace gt::api {

void* g_primary_api = nullptr;

template <typename Fn>
Fn Forward(const char* name) {
  return g_primary_api != nullptr ? reinterpret_cast<Fn>(dlsym(g_primary_api, name)) : nullptr;
}

}  // namespace gt::api

extern "C" {

__attribute__((visibility("default"))) int gtrace_api_version(void) noexcept {
  return 1;
}

__attribute__((visibility("default"))) int gtrace_api_start(void) noexcept {
  if (auto f = gt::api::Forward<int (*)(void)>("gtrace_api_start"))
    return f();
  if (!ApiSession())
    return -1;
  return gt::capture::OnApiStart() ? 1 : 0;
}

__attribute__((visibility("default"))) int gtrace_api_stop(void) noexcept {
  if (auto f = gt::api::Forward<int (*)(void)>("gtrace_api_stop"))
    return f();
  if (!ApiSession())
    return -1;
  return gt::capture::OnApiStop() ? 1 : 0;
}

__attribute__((visibility("default"))) int gtrace_api_is_active(void) noexcept {
  if (auto f = gt::api::Forward<int (*)(void)>("gtrace_api_is_active"))
    return f();
  if (!ApiSession())
    return -1;
  return gt::capture::WindowOpen() ? 1 : 0;
}

__attribute__((visibility("default"))) int gtrace_api_mark(const char* text) noexcept {
  if (auto f = gt::api::Forward<int (*)(const char*)>("gtrace_api_mark"))
    return f(text);
  if (text == nullptr)
    return 0;
  if (!ApiSession())
    return -1;
  gt::nvtx::HookMarkA(text);  // copies the text into the record; nothing outside a window
  return 0;
}

__attribute__((visibility("default"))) int64_t gtrace_api_step(void) noexcept {
  if (auto f = gt::api::Forward<int64_t (*)(void)>("gtrace_api_step"))
    return f();
  if (!ApiSession())
    return -1;
  return static_cast<int64_t>(gt::capture::OnStep());
}

}  // extern "C"
