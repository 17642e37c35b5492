// Helpers of the call-stack and process integration tests: run tests/callstack/programs/callstack_app
// under LD_PRELOAD=libgtrace.so with the fake CUPTI (a test double: it proves gtrace's logic, not
// CUPTI's), export what it wrote, and find the source lines the call chains must show.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "tests/common/test_util.h"

namespace gt::test {

inline std::string AppPath() {
  return SamplePath("callstack_app");
}
inline std::string AppSource() {
  return SourceDir() + "/tests/callstack/programs/callstack_app.cc";
}
inline std::string FakeCupti() {
  return BinaryDir() + "/lib/libgt_fake_cupti.so";
}

// Line number of the `// LINE: <marker>` comment in callstack_app.cc (0 when absent).
inline int MarkerLine(const std::string& marker) {
  std::string text = ReadFile(AppSource());
  std::string needle = "// LINE: " + marker;
  int line = 1;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text.compare(i, needle.size(), needle) == 0) {
      size_t end = i + needle.size();
      if (end == text.size() || text[end] == '\n')
        return line;
    }
    if (text[i] == '\n')
      ++line;
  }
  return 0;
}

struct AppRun {
  RunResult run;
  std::vector<std::string> streams;
  std::string db;          // exported database ("" when export failed)
  std::string export_err;  // gtrace export's stderr
  std::string log;         // FAKE_CUPTI_LOG
};

inline RunOptions AppOptions(const TempDir& dir,
                             const std::string& name,
                             const std::map<std::string, std::string>& env) {
  RunOptions o = TracedRun(dir, name + "-%p");
  o.env["GTRACE_CUPTI_PATH"] = FakeCupti();
  o.env["GTRACE_FLUSH_MS"] = "50";
  o.env["FAKE_CUPTI_LOG"] = dir.File(name + ".log");
  // CLOCK_MONOTONIC: the fake CUPTI's GPU work has exact durations that
  // tests assert to the ns, and on a TSC stream start and end are converted to ns one by one, so a
  // duration can come back 1 ns short (3999 for 4000). The TSC path is tested by CudaStreamClock.*.
  o.env["GTRACE_CLOCK"] = "monotonic";
  o.unset_env.push_back("DEBUGINFOD_URLS");  // symbolization stays offline
  o.unset_env.push_back("GTRACE_SYMBOL_PATH");
  for (const auto& [k, v] : env)
    o.env[k] = v;
  return o;
}

// (Re-)exports every stream `name` wrote into dir/<name>.sqlite (replacing an earlier export).
inline AppRun ExportStreams(const TempDir& dir,
                            const std::string& name,
                            AppRun r,
                            const std::map<std::string, std::string>& export_env = {}) {
  r.streams.clear();
  r.db.clear();
  for (const std::string& s : dir.Find(".gtrace")) {
    if (s.find("/" + name + "-") != std::string::npos)
      r.streams.push_back(s);
  }
  r.log = ReadFile(dir.File(name + ".log"));
  if (r.streams.empty())
    return r;
  std::vector<std::string> cmd = {CliPath(), "export", "--force-overwrite", "-o", dir.File(name + ".sqlite")};
  cmd.insert(cmd.end(), r.streams.begin(), r.streams.end());
  RunOptions eo;
  eo.unset_env = {"DEBUGINFOD_URLS", "GTRACE_SYMBOL_PATH"};
  for (const auto& [k, v] : export_env)
    eo.env[k] = v;
  RunResult e = RunProgram(cmd, eo);
  r.export_err = e.err;
  if (e.exit_code == 0)
    r.db = dir.File(name + ".sqlite");
  return r;
}

// Runs callstack_app `args` traced with `env` on top, and exports its streams.
inline AppRun RunApp(const TempDir& dir,
                     const std::vector<std::string>& args,
                     const std::map<std::string, std::string>& env = {},
                     const std::string& name = "run",
                     const std::string& program = "") {
  AppRun r;
  std::vector<std::string> argv = {program.empty() ? AppPath() : program};
  argv.insert(argv.end(), args.begin(), args.end());
  r.run = RunProgram(argv, AppOptions(dir, name, env));
  return ExportStreams(dir, name, r);
}

// Lines of `text` that start with "gtrace:".
inline std::vector<std::string> GtraceLinesOf(const std::string& text) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos)
      end = text.size();
    std::string line = text.substr(pos, end - pos);
    if (line.rfind("gtrace:", 0) == 0)
      out.push_back(line);
    pos = end + 1;
  }
  return out;
}

// The frames of callchain `id`, innermost first, as "symbol|module|unresolved".
inline std::vector<std::string> Frames(Db& db, int64_t id) {
  return db.Rows(
      "SELECT s.value, m.value, coalesce(c.unresolved, 0) FROM CUDA_CALLCHAINS c JOIN StringIds s ON s.id = c.symbol "
      "JOIN StringIds m ON m.id = c.module WHERE c.id = " +
      std::to_string(id) + " ORDER BY c.stackDepth");
}

}  // namespace gt::test
