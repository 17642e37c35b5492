// Merging gtrace databases into one (`gtrace export A.sqlite B.sqlite ... -o merged.sqlite`):
// the per-rank databases converted inside a job (docs/multi-rank.md), or the parts of a parallel
// export (multi_export.h).
//
// Two cases, told apart by GTRACE_RANKS.sessionId:
//  * One session (parts, or `--per-rank` outputs of one export): the databases already share time
//    zero, host numbering and alignment. Rows are copied; only StringIds ids (when the databases
//    numbered their strings separately), GPU ids and per-database ids are translated.
//  * Several sessions (each database exported on its own): a new time base from the clock pairs
//    in GTRACE_RANKS (as if the streams had been exported together), hosts renumbered, and the
//    clocks aligned from the GTRACE_NCCL_OPERATIONS collective ends unless `align` is off. Every
//    time column is shifted per process, in SQL (merge_catalog.h says which columns are times).
//    Databases whose clocks were already aligned in their own export are refused here (their
//    corrections belong to another session): merge their streams instead.
// One writer; each source is attached and copied table by table (INSERT ... SELECT), so memory
// stays bounded whatever the row counts.
#pragma once

#include <string>
#include <vector>

#include "schema/status.h"
#include "tools/export/session_plan.h"

namespace gt::exporter {

struct MergeOptions {
  std::vector<std::string> inputs;
  std::string output;
  bool force = false;
  bool align = true;
  std::string align_domain = "host";
  // The streams the inputs came from (META_DATA_EXPORT input rows); default: the inputs.
  std::vector<std::string> input_names;
};

struct MergeResult {
  uint64_t processes = 0;
  bool same_session = false;
  std::vector<std::string> warnings;
  SessionPlan plan;  // the merged session (several sessions: the new time base and alignment)
};

Status MergeDatabases(const MergeOptions& options, MergeResult* result);

}  // namespace gt::exporter
