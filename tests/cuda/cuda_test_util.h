// Helpers of the CUDA integration tests: run tests/cuda/programs/fake_cuda_app under
// LD_PRELOAD=libgtrace.so with the fake CUPTI (a test double: it proves gtrace's logic, not CUPTI's
// behaviour), export its streams and query the database.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "tests/common/test_util.h"

namespace gt::test {

inline std::string FakeCuptiPath() { return BinaryDir() + "/lib/libgt_fake_cupti.so"; }
inline std::string FakeAppPath() { return SamplePath("fake_cuda_app"); }

struct CudaRun {
  RunResult run;
  std::vector<std::string> streams;
  std::string db;            // exported database ("" when export failed)
  std::string export_err;    // gtrace export's stderr
  std::string log;           // FAKE_CUPTI_LOG contents
};

// Runs `args` (the fake app's scenario) traced, with the fake CUPTI, GTRACE_FLUSH_MS=50 and `env`
// on top; exports every stream written into dir/<name>.sqlite.
inline CudaRun RunTraced(const TempDir& dir, const std::vector<std::string>& args,
                         const std::map<std::string, std::string>& env = {}, const std::string& name = "run") {
  CudaRun r;
  RunOptions o = TracedRun(dir, name + "-%p");
  o.env["GTRACE_CUPTI_PATH"] = FakeCuptiPath();
  o.env["GTRACE_FLUSH_MS"] = "50";
  o.env["FAKE_CUPTI_LOG"] = dir.File(name + ".log");
  // CLOCK_MONOTONIC unless `env` says otherwise: the fake CUPTI's GPU work has exact durations that
  // tests assert to the ns, and on a TSC stream start and end are converted to ns one by one, so a
  // duration can come back 1 ns short (3999 for 4000). The TSC path is tested by CudaStreamClock.*.
  o.env["GTRACE_CLOCK"] = "monotonic";
  for (const char* v : {"FAKE_CUPTI_SUBSCRIBE_RESULT", "FAKE_CUPTI_HOLDER", "FAKE_CUPTI_VERSION",
                        "FAKE_CUPTI_NO_TIMESTAMP_CALLBACK"}) {
    o.unset_env.push_back(v);
  }
  for (const auto& [k, v] : env) o.env[k] = v;
  std::vector<std::string> argv = {FakeAppPath()};
  argv.insert(argv.end(), args.begin(), args.end());
  r.run = RunProgram(argv, o);
  for (const std::string& s : dir.Find(".gtrace")) {
    if (s.find("/" + name + "-") != std::string::npos) r.streams.push_back(s);
  }
  r.log = ReadFile(dir.File(name + ".log"));
  if (r.streams.empty()) return r;
  std::vector<std::string> cmd = {CliPath(), "export", "-o", dir.File(name + ".sqlite")};
  cmd.insert(cmd.end(), r.streams.begin(), r.streams.end());
  RunResult e = RunProgram(cmd);
  r.export_err = e.err;
  if (e.exit_code == 0) r.db = dir.File(name + ".sqlite");
  return r;
}

// Lines of `text` that start with "gtrace:".
inline std::vector<std::string> GtraceLines(const std::string& text) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(pos, end - pos);
    if (line.rfind("gtrace:", 0) == 0) out.push_back(line);
    pos = end + 1;
  }
  return out;
}

// Kernel short names in start order, comma-separated.
inline std::string KernelNames(Db& db) {
  auto v = db.Text(
      "SELECT group_concat(name, ',') FROM (SELECT s.value AS name FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s "
      "ON s.id = k.shortName ORDER BY k.start)");
  return v.value_or("");
}

}  // namespace gt::test
