// Reading a database to be merged (db_merge.cc): its processes (GTRACE_RANKS), time base, tables,
// GPUs and collective ends, through its own read-only connection. Internal to the exporter.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "schema/status.h"
#include "tools/export/align_session.h"
#include "tools/export/clock_align.h"

namespace gt::exporter::merge {

// Runs `sql` on `db`, calling `row` for each result row.
Status ForEach(sqlite3* db, const std::string& sql, const std::function<void(sqlite3_stmt*)>& row);
std::string Text(sqlite3_stmt* st, int i);
std::optional<int64_t> OptInt(sqlite3_stmt* st, int i);

struct Proc {
  // GTRACE_RANKS as read.
  int64_t gpid = 0, pid = 0, host_index = 0, clock_domain = 0;
  std::optional<int64_t> rank, local_rank, world_size, drift_ppb;
  std::string rank_source, host, boot, stream_file, method;
  std::string end_reason;              // GTRACE_RANKS.endReason: "exec" lets a later image of this pid follow
  std::optional<int64_t> end_mono;     // GTRACE_RANKS.endMonotonicNs
  int64_t start_mono = 0, start_real = 0, clock_offset = 0, clock_pairs = 0;
  ClockCorrection corr;
  // In the merged session.
  size_t index = 0;   // merged process index (plan.streams)
  int64_t shift = 0;  // new unaligned session ns = old ns + shift
};

struct Source {
  std::string path;
  std::vector<Proc> procs;
  std::string session;
  int64_t utc = 0, sys = 0, duration = 0;
  std::vector<std::pair<std::string, std::string>> tables;  // (name, CREATE sql), sqlite_master order
  struct Gpu {
    int64_t id, vm;
    std::string uuid;
  };
  std::vector<Gpu> gpus;
  std::vector<std::pair<int64_t, ProcessAnchors::End>> ends;  // (old globalPid, end in old session ns)
};

// Reads everything the merge needs to plan before copying. Errors name the file.
Status ReadSource(const std::string& path, Source* s);

}  // namespace gt::exporter::merge
