// `gtrace export` of many ranks: streams -> one database per rank (--per-rank) or one merged
// database, converted in parallel. docs/multi-rank.md has the design and the numbers.
//
//   1. Headers of every input -> SessionPlan (time zero, host numbering).
//   2. Alignment pass (when more than one clock domain and alignment is on): each stream's NCCL
//      collective ends, in parallel -> per-domain corrections in the plan.
//   3. Conversion, in parallel (`jobs` threads, one stream per task, each with its own SQLite
//      writer): the ordinary single-writer exporter, placed by the plan. --per-rank: the outputs.
//      Merged: parts in a temporary directory beside the output, sharing one string table.
//   4. Merged: the parts are copied into the output by one writer (db_merge.h; the parts share the
//      session, so most tables copy with SQLite's transfer optimisation, row images unchanged).
// Memory: the alignment pass holds at most align_max_ops operations per stream being scanned and
// the collective ends of every stream (at most align_max_ops each) until the plan is made;
// conversion tasks each hold one stream's state; the writer streams rows. Disk: the merged output
// briefly needs its parts beside it.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "schema/status.h"
#include "tools/export/anchor_scan.h"
#include "tools/export/session_plan.h"

namespace gt::exporter {

struct MultiExportOptions {
  std::vector<std::string> inputs;  // streams
  std::string output;               // the database, or with per_rank a directory
  bool per_rank = false;
  bool force = false;
  bool strict = false;  // ExportOptions::strict
  bool align = true;
  std::string align_domain = "host";                 // "host" or "rank"
  uint64_t align_max_ops = kAnchorScanMaxOps;        // per stream in the alignment pass; 0: no cap
  unsigned jobs = 0;                                 // 0: one per core
  std::function<void(const std::string&)> progress;  // optional, called from the calling thread
};

struct MultiExportResult {
  std::vector<std::string> outputs;
  uint64_t streams = 0;
  uint64_t chunks = 0;
  uint64_t dropped_records = 0;
  uint64_t damaged_spans = 0;    // damaged spans skipped inside the converted streams
  uint64_t skipped_streams = 0;  // inputs left out: header damaged, empty or cut (not with strict)
  std::vector<std::string> warnings;
  SessionPlan plan;
  double scan_seconds = 0, convert_seconds = 0, merge_seconds = 0;
  unsigned jobs = 0;
};

Status ExportMany(const MultiExportOptions& options, MultiExportResult* result);

// "rank-3.gtrace" -> "rank-3.sqlite" inside `dir` (names made unique when two inputs share one).
std::vector<std::string> PerRankOutputs(const std::vector<std::string>& inputs, const std::string& dir);

}  // namespace gt::exporter
