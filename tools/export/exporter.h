// `gtrace export`: gtrace streams -> one SQLite database in the Nsight Systems export schema
// (3.25.0). The database is built in a temporary file next to the output and renamed into place
// when complete, so a failed export never leaves a half-written or clobbered output.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "schema/status.h"
#include "tools/export/export_context.h"

namespace gt::exporter {

struct ExportResult {
  std::string output;
  uint64_t streams = 0;
  uint64_t chunks = 0;
  uint64_t dropped_records = 0;
  uint64_t damaged_spans = 0;  // skipped damaged spans of the streams (StreamReader's summary)
  std::vector<std::string> warnings;  // cut streams, unclosed ranges, drops ...
};

Status ExportSqlite(const ExportOptions& options, ExportResult* result);

// Session-relative time base of a set of stream headers (exposed for tests).
struct TimeBase {
  int64_t session_utc_ns = 0;
  int64_t system_clock_ns = 0;
  std::vector<int64_t> offsets_ns;  // per header: session ns = stream ns + offset
  std::vector<uint32_t> host_index;
};
TimeBase ComputeTimeBase(const std::vector<const schema::StreamHeader*>& headers);
// The session of a set of stream headers without alignment: time base, one clock domain per host.
SessionPlan PlanSession(const std::vector<const schema::StreamHeader*>& headers);
// A random id shared by every database of one export (GTRACE_RANKS.sessionId).
std::string NewSessionId();

}  // namespace gt::exporter
