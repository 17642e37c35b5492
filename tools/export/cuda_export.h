// The CUDA export module: schema/cuda.proto messages -> nsys 3.25.0 tables
// (CUPTI_ACTIVITY_KIND_KERNEL/_MEMCPY/_MEMSET/_RUNTIME/_SYNCHRONIZATION/_CUDA_EVENT/_GRAPH_TRACE/
// _OVERHEAD, CUDA_GRAPH_EVENTS, CUDA_GPU_MEMORY_USAGE_EVENTS, CUDA_GPU_MEMORY_POOL_EVENTS and the
// TARGET_INFO_* tables). Field-by-field mapping and deliberate omissions: tools/export/cuda_field_map.h.
#pragma once

#include <memory>

#include "tools/export/export_context.h"

namespace gt::exporter {

std::unique_ptr<ExportModule> MakeCudaExport();

}  // namespace gt::exporter
