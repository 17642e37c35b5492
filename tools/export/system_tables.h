// Descriptive tables written at the end of an export (system_tables.cc).
#pragma once

#include "tools/export/export_context.h"

namespace gt::exporter {

Status WriteSystemTables(ExportContext& ctx, double export_seconds);

}  // namespace gt::exporter
