// The NCCL export module (nccl_export.cc, nccl_nvtx.cc): NCCL profiler-plugin events -> our
// GTRACE_NCCL_* detail tables, and NCCL's API calls as NVTX ranges in domain "NCCL" with nsys's
// payload-schema rows when the stream has no NCCL NVTX ranges of its own. docs/nccl.md has the
// tables, their columns and how the two NCCL views relate.
#pragma once

#include <memory>
#include <string_view>

#include "tools/export/export_context.h"
#include "tools/export/nccl_spill_model.h"

namespace gt::exporter {

std::unique_ptr<ExportModule> MakeNcclExport();

// Tables of ours (names start with GTRACE_ so they cannot collide with nsys tables).
inline constexpr std::string_view kNcclCommunicatorsTable = "GTRACE_NCCL_COMMUNICATORS";
inline constexpr std::string_view kNcclEventsTable = "GTRACE_NCCL_EVENTS";
inline constexpr std::string_view kNcclStatesTable = "GTRACE_NCCL_EVENT_STATES";
inline constexpr std::string_view kNcclOperationsTable = "GTRACE_NCCL_OPERATIONS";
inline constexpr std::string_view kNcclGpuClockTable = "GTRACE_NCCL_GPU_CLOCK";
inline constexpr std::string_view kNcclPoolsTable = "GTRACE_NCCL_POOLS";

// Writes NCCL's API calls of one stream as NVTX ranges (domain "NCCL", eventType 59, names in
// StringIds, payload blobs in binaryData) plus the domain row and NVTX_PAYLOAD_SCHEMAS / _ENTRIES
// rows, for a stream without NCCL NVTX ranges of its own. `domain_id` is a domain id unused in the
// stream. (nccl_nvtx.cc)
Status WriteNcclNvtxRanges(ExportContext& ctx, StreamContext& s, NcclSpillModel& model, uint32_t domain_id,
                           uint64_t* ranges_written);

}  // namespace gt::exporter
