#include "inject/callstack/backtrace_spec.h"

namespace gt::callstack {
namespace {

bool Contains(std::string_view s, std::string_view part) {
  return s.find(part) != std::string_view::npos;
}

bool ParseThreshold(std::string_view text, uint64_t* out) {
  if (text.empty() || text.size() > 15)
    return false;
  uint64_t v = 0;
  for (char c : text) {
    if (c < '0' || c > '9')
      return false;
    v = v * 10 + static_cast<uint64_t>(c - '0');
  }
  *out = v;
  return true;
}

}  // namespace

bool ParseBacktraceSpec(std::string_view text, BacktraceSpec* spec, std::string* error) {
  *spec = BacktraceSpec();
  if (text.empty() || text == "none")
    return true;
  bool none = false;
  int items = 0;
  size_t start = 0;
  while (true) {
    size_t comma = text.find(',', start);
    std::string_view item =
        text.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
    ++items;
    size_t colon = item.find(':');
    std::string_view name = item.substr(0, colon);
    uint64_t threshold = kDefaultThresholdNs;
    if (colon != std::string_view::npos && !ParseThreshold(item.substr(colon + 1), &threshold)) {
      // Appended piecewise: GCC 12 warns (-Wrestrict, a false positive) on "'" + std::string(...).
      error->assign(1, '\'');
      error->append(item);
      error->append("': the threshold after ':' must be a whole number of nanoseconds");
      return false;
    }
    ApiClass one = kClassNone;
    if (name == "kernel") {
      one = kClassKernel;
    } else if (name == "memory") {
      one = kClassMemory;
    } else if (name == "sync") {
      one = kClassSync;
    } else if (name == "other") {
      one = kClassOther;
    } else if (name == "none" && colon == std::string_view::npos) {
      none = true;
    } else if (name != "all") {
      *error = "unknown class '" + std::string(name) + "' (known: all, kernel, memory, sync, other, none)";
      return false;
    }
    for (int c = kClassKernel; c < kClassCount; ++c) {
      if (name == "all" || c == one) {
        spec->selected[c] = true;
        spec->threshold_ns[c] = threshold;
      }
    }
    if (comma == std::string_view::npos)
      break;
    start = comma + 1;
  }
  if (none && items > 1) {
    *error = "'none' cannot be combined with other classes";
    *spec = BacktraceSpec();
    return false;
  }
  return true;
}

ApiClass ClassifyApi(std::string_view n) {
  if (n.empty())
    return kClassOther;
  if (Contains(n, "Launch") && !Contains(n, "LaunchHostFunc"))
    return kClassKernel;
  if (Contains(n, "Synchronize") || Contains(n, "WaitEvent") || Contains(n, "WaitValue") || Contains(n, "EventQuery") ||
      Contains(n, "StreamQuery")) {
    return kClassSync;
  }
  if (Contains(n, "Memcpy") || Contains(n, "Memset") || Contains(n, "Malloc") || Contains(n, "Free") ||
      Contains(n, "MemAlloc") || Contains(n, "HostAlloc") || Contains(n, "HostRegister") ||
      Contains(n, "HostUnregister") || Contains(n, "MemPrefetch") || Contains(n, "MemAdvise") ||
      n.substr(0, 5) == "cuMem" || n.substr(0, 7) == "cudaMem") {
    return kClassMemory;
  }
  return kClassOther;
}

const char* ApiClassName(ApiClass c) {
  switch (c) {
    case kClassKernel:
      return "kernel";
    case kClassMemory:
      return "memory";
    case kClassSync:
      return "sync";
    case kClassOther:
      return "other";
    default:
      return "none";
  }
}

}  // namespace gt::callstack
