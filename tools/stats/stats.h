// gt::stats — `gtrace stats`: nsys-style reports over an SQLite file in the Nsight Systems export schema
// (ours from `gtrace export`, or a real `nsys export --type sqlite` file), printed like
// `nsys stats --report <name> --format table|csv|json file.sqlite`.
//
// Called by the CLI (tools/cli) on its main thread; every call opens the database read-only. The summary
// reports build their (per-group) table in memory and write it only when it succeeded; the trace
// reports (cuda_api_trace, cuda_gpu_trace: one line per row) write each row as SQLite yields it, after
// every check that can fail on a missing table, so a failed report leaves `out` untouched unless SQLite
// itself fails in the middle of the rows (a damaged file): then the lines before stay written and the
// error comes back.
#pragma once

#include <iosfwd>
#include <span>
#include <string>
#include <string_view>

#include "schema/status.h"

namespace gt::stats {

enum class Format { kTable, kCsv, kJson };

struct ReportOptions {
  Format format = Format::kTable;
  // Room for filters (time range, NVTX range, process) later.
};

struct ReportInfo {
  std::string_view name;         // e.g. "cuda_gpu_kern_sum"
  std::string_view description;  // nsys's display name, e.g. "CUDA GPU Kernel Summary"
};

// Every report RunReport knows, in the order `gtrace stats --help-reports` lists them.
std::span<const ReportInfo> Reports();

// Runs `report` on the SQLite file at `db_path` (opened read-only, never written) and writes the result
// to `out` in `options.format`. Errors (unknown report, missing/unreadable/non-nsys file, a table the
// report needs is absent) come back as a Status whose message names the report and the file; nothing is
// written to `out` then (but see above for an SQLite error in the middle of a trace) — the caller prints
// the message (stderr).
gt::Status RunReport(const std::string& db_path,
                     std::string_view report,
                     const ReportOptions& options,
                     std::ostream& out);

// "table", "csv" or "json" (case-sensitive, as nsys's --format). Our table layout is the one nsys calls
// "column" (its console default), so "column" is accepted for kTable too.
gt::Status ParseFormat(std::string_view text, Format* out);

}  // namespace gt::stats
