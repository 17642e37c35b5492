// The process tree of an export (GTRACE_PROCESS_TREE; process_tree.cc says what it holds).
#pragma once

#include "tools/export/export_context.h"

namespace gt::exporter {

inline constexpr std::string_view kProcessTreeTable = "GTRACE_PROCESS_TREE";

// Written once, after every stream was read.
Status WriteProcessTree(ExportContext& ctx);

}  // namespace gt::exporter
