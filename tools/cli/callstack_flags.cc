// Call-stack flags of `gtrace profile`, nsys's spelling, each turned into its GTRACE_* twin:
//   --cudabacktrace=all|kernel|memory|sync|other|none[:THRESHOLD_NS][,...]   GTRACE_CUDABACKTRACE
//   --python-backtrace=cuda|none|false                                       GTRACE_PYTHON_BACKTRACE
// The library parses the same values (inject/callstack/backtrace_spec.cc); here the syntax is checked
// early, so a typo is a usage error instead of a warning inside the profiled process.
#include <string>

#include "tools/cli/commands.h"

namespace gt::cli {
namespace {

Status CheckBacktraceSpec(std::string_view v) {
  bool none = false;
  int items = 0;
  size_t start = 0;
  while (true) {
    size_t comma = v.find(',', start);
    std::string_view item = v.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
    ++items;
    size_t colon = item.find(':');
    std::string_view name = item.substr(0, colon);
    if (name != "all" && name != "kernel" && name != "memory" && name != "sync" && name != "other" &&
        !(name == "none" && colon == std::string_view::npos)) {
      return Status::Error("--cudabacktrace: unknown class '" + std::string(name) +
                           "' (known: all, kernel, memory, sync, other, none)");
    }
    none |= name == "none";
    if (colon != std::string_view::npos) {
      std::string_view t = item.substr(colon + 1);
      bool digits = !t.empty() && t.size() <= 15;
      for (char c : t)
        digits &= c >= '0' && c <= '9';
      if (!digits) {
        return Status::Error("--cudabacktrace: '" + std::string(item) +
                             "': the threshold after ':' must be a whole number of nanoseconds");
      }
    }
    if (comma == std::string_view::npos)
      break;
    start = comma + 1;
  }
  if (none && items > 1)
    return Status::Error("--cudabacktrace: 'none' cannot be combined with other classes");
  return Status::Ok();
}

}  // namespace

void AddCallStackFlags(ArgParser* p, std::map<std::string, std::string>* env) {
  p->Add({"cudabacktrace", 0, true, "CLASSES",
          "record the caller's stack of CUDA API calls in these classes that last at least the threshold: all, "
          "kernel, memory, sync, other or none, each with an optional :THRESHOLD in ns (default 80000), "
          "comma-separated (GTRACE_CUDABACKTRACE; default none)",
          [env](std::string_view v) {
            Status st = CheckBacktraceSpec(v);
            if (st.ok())
              (*env)["GTRACE_CUDABACKTRACE"] = std::string(v);
            return st;
          }});
  p->Add({"python-backtrace", 0, true, "cuda|none",
          "cuda: add the calling thread's Python frames (CPython 3.9-3.13) to the stacks --cudabacktrace "
          "captures (docs/callstacks.md) (GTRACE_PYTHON_BACKTRACE)",
          [env](std::string_view v) {
            if (v != "cuda" && v != "none" && v != "false") {
              return Status::Error("--python-backtrace: '" + std::string(v) + "' (known: cuda, none, false)");
            }
            (*env)["GTRACE_PYTHON_BACKTRACE"] = std::string(v);
            return Status::Ok();
          }});
}

}  // namespace gt::cli
