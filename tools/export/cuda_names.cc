#include "tools/export/cuda_names.h"

#include <cxxabi.h>

#include <cstdio>
#include <cstdlib>

#include "tools/export/nsys_spelling.h"

namespace gt::exporter {
namespace {

bool IsOpen(char c) { return c == '(' || c == '<' || c == '['; }
bool IsClose(char c) { return c == ')' || c == '>' || c == ']'; }

// Index of the bracket opening the one that closes at s[end] (scanning back, all bracket kinds
// nest), or npos.
size_t MatchingOpen(std::string_view s, size_t end) {
  int depth = 0;
  for (size_t i = end + 1; i-- > 0;) {
    if (IsClose(s[i])) {
      ++depth;
    } else if (IsOpen(s[i])) {
      if (--depth == 0) return i;
    }
  }
  return std::string_view::npos;
}

std::string_view TrimRight(std::string_view s) {
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return s;
}

}  // namespace

std::string DemangleKernelName(std::string_view mangled) {
  if (mangled.size() < 2 || mangled[0] != '_' || mangled[1] != 'Z') return std::string(mangled);
  std::string input(mangled);
  int status = 0;
  char* out = abi::__cxa_demangle(input.c_str(), nullptr, nullptr, &status);
  if (status != 0 || out == nullptr) return input;
  std::string result(out);
  std::free(out);
  return NsysDemangledSpelling(result, input);
}

std::string ShortKernelName(std::string_view name) {
  std::string_view s = TrimRight(name);
  // Trailing qualifiers of a member function ("... ) const").
  for (std::string_view q : {" const", " volatile", " &&", " &"}) {
    if (s.size() > q.size() && s.substr(s.size() - q.size()) == q && s.find('(') != std::string_view::npos) {
      s = TrimRight(s.substr(0, s.size() - q.size()));
    }
  }
  // Parameter list, then the function's own template arguments.
  if (!s.empty() && s.back() == ')') {
    size_t open = MatchingOpen(s, s.size() - 1);
    if (open != std::string_view::npos && open > 0) s = TrimRight(s.substr(0, open));
  }
  if (!s.empty() && s.back() == '>') {
    size_t open = MatchingOpen(s, s.size() - 1);
    if (open != std::string_view::npos && open > 0) s = TrimRight(s.substr(0, open));
  }
  // Scope and return type: what follows the last "::" or space outside brackets.
  int depth = 0;
  size_t begin = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (IsOpen(c)) {
      ++depth;
    } else if (IsClose(c)) {
      --depth;
    } else if (depth == 0 && c == ' ') {
      begin = i + 1;
    } else if (depth == 0 && c == ':' && i + 1 < s.size() && s[i + 1] == ':') {
      begin = i + 2;
      ++i;
    }
  }
  std::string_view base = s.substr(begin);
  return base.empty() ? std::string(name) : std::string(base);
}

KernelNames MakeKernelNames(std::string_view cupti_name) {
  KernelNames n;
  n.mangled = std::string(cupti_name);
  n.demangled = DemangleKernelName(cupti_name);
  n.short_name = ShortKernelName(n.demangled);
  return n;
}

int64_t NsysMemKind(uint32_t cupti_memory_kind) {
  if (cupti_memory_kind == 0 || cupti_memory_kind > 7) return 7;  // unknown
  return static_cast<int64_t>(cupti_memory_kind) - 1;
}

int64_t NsysLaunchType(uint32_t cupti_launch_type) { return static_cast<int64_t>(cupti_launch_type) + 1; }

int64_t NsysMemoryOperation(uint32_t cupti_operation) { return cupti_operation == 2 ? 1 : 0; }

OverheadType NsysOverhead(uint32_t kind) {
  // CUPTI_ACTIVITY_OVERHEAD_*: UNKNOWN 0, DRIVER_COMPILER 1, CUPTI_BUFFER_FLUSH 1<<16,
  // CUPTI_INSTRUMENTATION 2<<16, CUPTI_RESOURCE 3<<16, RUNTIME_TRIGGERED_MODULE_LOADING 4<<16,
  // LAZY_FUNCTION_LOADING 5<<16, COMMAND_BUFFER_FULL 6<<16, ACTIVITY_BUFFER_REQUEST 7<<16,
  // UVM_ACTIVITY_INIT 8<<16. The names of 4<<16 and 5<<16 are those real nsys exports store; the
  // others follow CUPTI's wording (no real sample shows them).
  switch (kind) {
    case 1: return {2, "Driver Compiler"};
    case 1u << 16: return {3, "CUPTI Buffer Flush"};
    case 2u << 16: return {4, "CUPTI Instrumentation"};
    case 3u << 16: return {5, "CUPTI Resource"};
    case 4u << 16: return {6, "Runtime Triggered Module Loading"};
    case 5u << 16: return {7, "Lazy Function Loading"};
    case 6u << 16: return {8, "Command Buffer Full"};
    case 7u << 16: return {1, "Activity Buffer Request"};
    case 8u << 16: return {1, "UVM Activity Init"};
    default: return {1, "Unknown"};
  }
}

std::string FormatUuid(std::string_view b) {
  if (b.size() != 16) return {};
  char out[37];
  const auto* u = reinterpret_cast<const unsigned char*>(b.data());
  std::snprintf(out, sizeof(out), "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0], u[1],
                u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
  return out;
}

}  // namespace gt::exporter
