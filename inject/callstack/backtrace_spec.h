// What `--cudabacktrace` / GTRACE_CUDABACKTRACE selects, and which CUDA API belongs to which class.
// Pure functions (no CUPTI, no state): the setup code and the unit tests use them.
//
// Syntax (nsys's): a comma-separated list of `all`, `kernel`, `memory`, `sync`, `other`, each with an
// optional `:THRESHOLD` in nanoseconds (calls shorter than that keep no stack; default 80000, nsys's
// default), or `none`. Items apply in order, so `all:1000,memory:0` is 1 us for every class but
// memory, which keeps every call. Classes (names as cuptiGetCallbackName spells them):
//   kernel  launches: names containing "Launch" (cudaLaunchKernel, cuLaunchKernelEx, cudaGraphLaunch)
//           except host-function launches (cudaLaunchHostFunc, cuLaunchHostFunc: "other")
//   sync    names containing "Synchronize", "WaitEvent", "WaitValue", "EventQuery" or "StreamQuery"
//   memory  names containing "Memcpy", "Memset", "Malloc", "Free", "MemAlloc", "HostAlloc",
//           "HostRegister", "HostUnregister", "MemPrefetch", "MemAdvise", or starting with "cuMem"/"cudaMem"
//   other   everything else
// The first matching rule wins, in that order (cudaMemcpyAsync is memory, cudaStreamSynchronize sync).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace gt::callstack {

enum ApiClass : uint8_t {
  kClassNone = 0,  // not backtraced
  kClassKernel = 1,
  kClassMemory = 2,
  kClassSync = 3,
  kClassOther = 4,
  kClassCount = 5,
};

inline constexpr uint64_t kDefaultThresholdNs = 80000;  // nsys's default (80 us)

struct BacktraceSpec {
  bool selected[kClassCount] = {};  // by ApiClass
  uint64_t threshold_ns[kClassCount] = {};
  bool any() const {
    return selected[kClassKernel] || selected[kClassMemory] || selected[kClassSync] || selected[kClassOther];
  }
};

// Parses `text`. "" and "none" select nothing. False (with a reason in *error) on a bad value.
bool ParseBacktraceSpec(std::string_view text, BacktraceSpec* spec, std::string* error);

// The class of a CUDA runtime or driver API, from its CUPTI callback name (version suffix allowed).
ApiClass ClassifyApi(std::string_view callback_name);

const char* ApiClassName(ApiClass c);  // "kernel", "memory", ...

}  // namespace gt::callstack
