// The NVTX export module (nvtx_export.cc).
#pragma once

#include <memory>

#include "tools/export/export_context.h"

namespace gt::exporter {

std::unique_ptr<ExportModule> MakeNvtxExport();

}  // namespace gt::exporter
