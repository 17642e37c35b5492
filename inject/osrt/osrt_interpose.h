// The shape of one interposed libc function (osrt_hooks_*.cc): find libc's definition, run the
// fallback when there is none (a resolution already running on this thread, see osrt_tracer.h),
// else call it through Traced. SPEC is `noexcept` exactly where glibc's declaration has __THROW:
// functions that are cancellation points are declared without it and must stay unwindable.
#pragma once

#include "inject/osrt/osrt_tracer.h"

// Under ASan, a frame with stack redzones that pthread_cancel's forced unwind skips keeps its shadow
// poisoned, and ASan's own __asan_handle_no_return then trips over it (a CHECK failure in the
// sigaltstack interceptor, seen with GCC 12's libasan in osrt_behavior's cancellation of a thread
// blocked in read). The interposers hold no buffers worth checking: no stack instrumentation there.
#define GT_OSRT_NO_ASAN __attribute__((no_sanitize("address")))

#define GT_OSRT_DEFINE(R, name, PARAMS, ARGS, SPEC, ...)                                            \
  extern "C" __attribute__((visibility("default"))) GT_OSRT_NO_ASAN R name PARAMS SPEC {            \
    using Fn = R(*) PARAMS;                                                                         \
    Fn real = reinterpret_cast<Fn>(::gt::osrt::RealFunction(::gt::osrt::kFn_##name));               \
    if (__builtin_expect(real == nullptr, 0)) {                                                     \
      __VA_ARGS__;                                                                                  \
    }                                                                                               \
    return ::gt::osrt::Traced(::gt::osrt::kFn_##name, [&]() GT_OSRT_NO_ASAN { return real ARGS; });  \
  }

// Fallbacks.
#define GT_OSRT_NOSYS(value) \
  errno = ENOSYS;            \
  return value
#define GT_OSRT_SYSCALL(R, ...) return static_cast<R>(::syscall(__VA_ARGS__))
