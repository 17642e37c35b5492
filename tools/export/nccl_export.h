// The NCCL export module (nccl_export.cc, nccl_nvtx.cc): NCCL profiler-plugin events -> our
// GTRACE_NCCL_* detail tables, and NCCL's API calls as NVTX ranges in domain "NCCL" with nsys's
// payload-schema rows when the stream has no NCCL NVTX ranges of its own. docs/nccl.md has the
// tables, their columns and how the two NCCL views relate.
#pragma once

#include <map>
#include <memory>
#include <set>
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
// rows, for a stream without NCCL NVTX ranges of its own: Operation for each operation in order
// (NcclSpillModel::ForEachOperation), then GroupEnd for each explicit group's ncclGroupEnd.
// `domain_id` is a domain id unused in the stream. (nccl_nvtx.cc; the export's thread, one stream.)
class NcclNvtxWriter {
 public:
  NcclNvtxWriter(ExportContext& ctx, StreamContext& s, const std::map<uint32_t, NcclComm>& comms, uint32_t domain_id);
  NcclNvtxWriter(const NcclNvtxWriter&) = delete;
  NcclNvtxWriter& operator=(const NcclNvtxWriter&) = delete;

  Status Operation(const NcclOperation& o);
  Status GroupEnd(uint64_t start_ns, uint32_t tid, uint64_t stop_ns);
  uint64_t ranges() const { return ranges_; }

 private:
  Status WriteDomain();
  Status Range(uint64_t start, uint64_t end, uint32_t tid, const std::string& name, const std::string* blob);

  ExportContext& ctx_;
  StreamContext& s_;
  const std::map<uint32_t, NcclComm>& comms_;
  uint32_t domain_id_;
  bool domain_written_ = false;
  std::set<uint64_t> schemas_written_;
  uint64_t ranges_ = 0;
};

}  // namespace gt::exporter
