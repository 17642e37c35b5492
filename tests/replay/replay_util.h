// Helpers of the replay tests (docs/capture.md): run a program traced against the fake CUPTI (a
// TEST DOUBLE), optionally with raw capture on; replay a capture through the fake into
// libgtrace.so; export; compare CUDA tables between two exports.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "tests/common/test_util.h"

namespace gt::test {

inline std::string ReplayFakeCuptiPath() {
  return BinaryDir() + "/lib/libgt_fake_cupti.so";
}

struct TracedExport {
  RunResult run;
  std::vector<std::string> streams;
  std::string db;  // "" when export failed
  std::string export_err;
};

// Runs argv traced (LD_PRELOAD=libgtrace.so, the fake CUPTI) with `env`, exports its streams into
// dir/<name>.sqlite.
inline TracedExport RunAndExport(const TempDir& dir,
                                 const std::vector<std::string>& argv,
                                 const std::map<std::string, std::string>& env,
                                 const std::string& name) {
  TracedExport r;
  RunOptions o = TracedRun(dir, name + "-%p");
  o.env["GTRACE_CUPTI_PATH"] = ReplayFakeCuptiPath();
  o.env["GTRACE_FLUSH_MS"] = "50";
  // Captures are recorded and replayed on CLOCK_MONOTONIC (docs/capture.md): the direct runs that
  // replays are compared with row for row use it too, whatever the default clock (`env` may override).
  o.env["GTRACE_CLOCK"] = "monotonic";
  for (const char* v : {"FAKE_CUPTI_SUBSCRIBE_RESULT", "FAKE_CUPTI_HOLDER", "FAKE_CUPTI_VERSION",
                        "FAKE_CUPTI_NO_TIMESTAMP_CALLBACK", "FAKE_CUPTI_LOG"}) {
    o.unset_env.push_back(v);
  }
  for (const auto& [k, v] : env)
    o.env[k] = v;
  r.run = RunProgram(argv, o);
  for (const std::string& s : dir.Find(".gtrace")) {
    if (s.find("/" + name + "-") != std::string::npos)
      r.streams.push_back(s);
  }
  if (r.streams.empty())
    return r;
  std::vector<std::string> cmd = {CliPath(), "export", "-o", dir.File(name + ".sqlite")};
  cmd.insert(cmd.end(), r.streams.begin(), r.streams.end());
  RunResult e = RunProgram(cmd);
  r.export_err = e.err;
  if (e.exit_code == 0)
    r.db = dir.File(name + ".sqlite");
  return r;
}

// Replays `capture` through the fake CUPTI into libgtrace.so (tests/replay/programs/capture_replay)
// and exports the stream. `env` adds options the recording run had (GTRACE_CAPTURE_RANGE, ...).
inline TracedExport ReplayAndExport(const TempDir& dir,
                                    const std::string& capture,
                                    const std::map<std::string, std::string>& env,
                                    const std::string& name) {
  return RunAndExport(dir, {SamplePath("capture_replay"), capture}, env, name);
}

// "key=value" lines of capture_replay's stdout.
inline std::map<std::string, uint64_t> ReplayCounts(const std::string& out) {
  std::map<std::string, uint64_t> m;
  size_t pos = 0;
  while (pos < out.size()) {
    size_t nl = out.find('\n', pos);
    if (nl == std::string::npos)
      nl = out.size();
    std::string line = out.substr(pos, nl - pos);
    size_t eq = line.find('=');
    if (eq != std::string::npos)
      m[line.substr(0, eq)] = std::stoull(line.substr(eq + 1));
    pos = nl + 1;
  }
  return m;
}

// The CUDA rows of an export that a replay must reproduce, rendered comparably: times relative to
// the first RUNTIME/DRIVER call (each export has its own time zero), thread ids without the
// process bits (a replay runs in another process), names as text.
inline std::map<std::string, std::vector<std::string>> CudaRowsForComparison(Db& db) {
  const std::string t0 = "(SELECT min(start) FROM CUPTI_ACTIVITY_KIND_RUNTIME)";
  std::map<std::string, std::string> queries = {
      {"KERNEL",
       "SELECT k.start-" + t0 +
           ", k.end-k.start, k.deviceId, k.contextId, k.streamId, k.correlationId, "
           "k.gridX, k.blockX, k.registersPerThread, k.graphId, s.value, d.value FROM CUPTI_ACTIVITY_KIND_KERNEL k "
           "JOIN StringIds s ON s.id = k.shortName JOIN StringIds d ON d.id = k.demangledName ORDER BY 1, 6"},
      {"MEMCPY", "SELECT start-" + t0 +
                     ", end-start, deviceId, contextId, streamId, correlationId, bytes, copyKind, "
                     "srcKind, dstKind, srcDeviceId, dstDeviceId FROM CUPTI_ACTIVITY_KIND_MEMCPY ORDER BY 1, 6"},
      {"MEMSET", "SELECT start-" + t0 +
                     ", end-start, streamId, correlationId, bytes, value, memKind "
                     "FROM CUPTI_ACTIVITY_KIND_MEMSET ORDER BY 1, 4"},
      {"RUNTIME", "SELECT r.start-" + t0 +
                      ", r.end-r.start, r.eventClass, r.globalTid & 16777215, r.correlationId, "
                      "s.value, r.returnValue FROM CUPTI_ACTIVITY_KIND_RUNTIME r JOIN StringIds s ON s.id = r.nameId "
                      "ORDER BY 1, 5"},
      {"SYNCHRONIZATION", "SELECT start-" + t0 +
                              ", end-start, streamId, correlationId, syncType, eventId "
                              "FROM CUPTI_ACTIVITY_KIND_SYNCHRONIZATION ORDER BY 1, 4"},
      {"CUDA_EVENT",
       "SELECT correlationId, streamId, eventId, eventSyncId FROM CUPTI_ACTIVITY_KIND_CUDA_EVENT ORDER BY 1"},
      {"GRAPH_TRACE", "SELECT start-" + t0 +
                          ", end-start, streamId, correlationId, graphId, graphExecId "
                          "FROM CUPTI_ACTIVITY_KIND_GRAPH_TRACE ORDER BY 1, 4"},
      {"OVERHEAD", "SELECT start-" + t0 +
                       ", end-start, overheadType, globalTid & 16777215, correlationId "
                       "FROM CUPTI_ACTIVITY_KIND_OVERHEAD ORDER BY 1"},
      {"GRAPH_EVENTS",
       "SELECT eventClass, nameId IS NULL, graphId, originalGraphId, graphExecId FROM CUDA_GRAPH_EVENTS ORDER BY 3, 5, "
       "1"},
      {"GPU", "SELECT id, name, totalMemory, smCount, clockRate, maxIPC, uuid FROM TARGET_INFO_GPU ORDER BY 1"},
      {"CONTEXT", "SELECT contextId, deviceId, nullStreamId FROM TARGET_INFO_CUDA_CONTEXT_INFO ORDER BY 1"},
      {"STREAM", "SELECT streamId, contextId, priority, flag FROM TARGET_INFO_CUDA_STREAM ORDER BY 1, 2"},
  };
  std::map<std::string, std::vector<std::string>> out;
  for (const auto& [table, sql] : queries) {
    out[table] = db.Rows(sql);
  }
  return out;
}

}  // namespace gt::test
