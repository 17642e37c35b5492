// Config: the session's settings, read once from GTRACE_* environment variables when the session
// starts (slow path). `gtrace profile` turns each CLI flag into its variable, so LD_PRELOAD alone
// behaves the same. The injected library never fails on a bad value: it keeps the default and
// reports one warning (printed as a `gtrace:` line and recorded in the stream).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gt {

using EnvGetter = const char* (*)(const char*);

struct Config {
  std::string output_pattern = "gtrace-%h-%p";  // GTRACE_OUTPUT
  std::string trace = "cuda,nvtx,nccl";          // GTRACE_TRACE, as given
  uint32_t sources = 0;                           // SourceBit mask parsed from `trace`
  uint64_t buffer_bytes = 64ull << 20;            // GTRACE_BUFFER_MB: all thread rings together
  uint64_t thread_buffer_bytes = 0;               // GTRACE_THREAD_BUFFER_KB; 0 = buffer_bytes / 128
  uint32_t flush_interval_ms = 500;               // GTRACE_FLUSH_MS: longest time data waits in memory
  std::string manifest_path;                      // GTRACE_MANIFEST: stream paths are appended here
  bool force_overwrite = false;                   // GTRACE_FORCE_OVERWRITE (CLI deletes; library never)
  // GTRACE_TRACE_FORK_BEFORE_EXEC: record in a child that was forked but has not exec'd yet
  // (DataLoader workers, multiprocessing). nsys's default is false; gtrace's is true.
  bool trace_fork_before_exec = true;

  // Every GTRACE_* variable present, as seen (recorded in the stream header).
  std::vector<std::pair<std::string, std::string>> raw;
  // Problems found while reading (unknown variables, bad values); each becomes one `gtrace:` line.
  std::vector<std::string> warnings;
};

Config LoadConfig(EnvGetter getenv_fn, char** environ_list);

// Trace list "cuda,nvtx,nccl" / "none" -> SourceBit mask. Unknown names are errors; nsys names
// gtrace does not implement (osrt, mpi, ...) are accepted with a note in *notes.
bool ParseTraceList(std::string_view text, uint32_t* mask, std::string* error, std::vector<std::string>* notes);

// Shared value parsers (also used by subsystems for their own variables).
bool ParseUint64(std::string_view text, uint64_t* out);
bool ParseBool(std::string_view text, bool* out);  // true/false/1/0/yes/no/on/off

// Names of all GTRACE_* variables the library understands (for the unknown-variable warning).
bool IsKnownVariable(std::string_view name);

}  // namespace gt
