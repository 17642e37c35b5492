// `gtrace export --type perfetto|kineto-json|paraver`: an nsys-schema SQLite export (ours, or one
// from `nsys export --type sqlite`) -> files for the timeline viewers people already use. Reads the
// database read-only and streams it in time order (docs/viewers.md has the format mappings).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "schema/status.h"

namespace gt::viewers {

enum class ViewerFormat { kPerfetto, kKinetoJson, kParaver };

// "perfetto", "kineto-json", "paraver" (also "pftrace", "kineto", "json", "prv").
bool ParseViewerFormat(std::string_view name, ViewerFormat* format);
const char* ViewerFormatName(ViewerFormat format);
// The output a format writes next to an input named <stem>: <stem>.pftrace, <stem>.kineto (a
// directory of per-rank JSON files), <stem>.prv (+ .pcf, .row).
std::string DefaultViewerOutput(ViewerFormat format, const std::string& stem);

struct ViewerOptions {
  ViewerFormat format = ViewerFormat::kPerfetto;
  std::string database;   // nsys-schema SQLite file
  std::string output;     // file (perfetto; kineto-json with one rank: *.json), directory (kineto-json), or .prv
  bool force = false;     // replace existing outputs
  bool progress = false;  // draw a progress line on stderr (the CLI sets it when stderr is a terminal)
};

struct ViewerResult {
  std::vector<std::string> outputs;
  uint64_t events = 0;     // rows read from the database
  uint64_t processes = 0;  // processes in the output
  std::vector<std::string> warnings;
};

Status ExportViewer(const ViewerOptions& options, ViewerResult* result);

// The checks ExportViewer makes on the output before writing anything (exists without force, a
// directory where a file is wanted, ...), for callers with expensive work to do first.
Status CheckViewerOutput(ViewerFormat format, const std::string& output, bool force);

}  // namespace gt::viewers
