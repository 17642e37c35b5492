// The report builders behind RunReport. Each fills `table->columns` and `table->rows` from `db`
// (report name and title are already set) or returns an error naming the report, the file and what is
// missing. Internal to gt_stats.
#pragma once

#include <functional>
#include <string_view>
#include <vector>

#include "schema/status.h"
#include "tools/stats/database.h"
#include "tools/stats/table.h"

namespace gt::stats {

gt::Status BuildNvtxSum(Database& db, Table* table);
gt::Status BuildNvtxGpuProjSum(Database& db, Table* table);
gt::Status BuildCudaApiSum(Database& db, Table* table);
gt::Status BuildCudaGpuKernSum(Database& db, Table* table);
gt::Status BuildCudaGpuMemTimeSum(Database& db, Table* table);
gt::Status BuildCudaGpuMemSizeSum(Database& db, Table* table);
gt::Status BuildNcclSum(Database& db, Table* table);         // gtrace's own (nccl_reports.cc)
gt::Status BuildCudaApiCallers(Database& db, Table* table);  // gtrace's own (callstack_reports.cc)
gt::Status BuildGpuMetricsSum(Database& db, Table* table);   // gtrace's own (gpu_metrics_reports.cc)
gt::Status BuildOsrtSum(Database& db, Table* table);         // osrt_reports.cc
gt::Status BuildCpuSamplesBottomUp(Database& db, Table* table);  // gtrace's own (sampling_reports.cc)
gt::Status BuildCpuSamplesTopDown(Database& db, Table* table);   // gtrace's own (sampling_reports.cc)

// The trace reports print one line per row: they never collect their rows. A streaming report fills
// `table->columns`, checks every table it needs before its first row (so a missing table fails with
// nothing printed), then calls `row` with each row's cells in the report's order, as SQLite yields
// them. RunReport may run it twice (the table format measures column widths first).
using RowSink = std::function<void(const std::vector<Cell>&)>;
gt::Status StreamCudaApiTrace(Database& db, Table* table, const RowSink& row);
gt::Status StreamCudaGpuTrace(Database& db, Table* table, const RowSink& row);

// "report R: no TABLE table in FILE — HINT".
gt::Status MissingTable(const Database& db, const Table& table, std::string_view missing, std::string_view hint);

inline Column NumberColumn(const char* name) {
  return Column{name, Align::kRight};
}
inline Column TextColumn(const char* name) {
  return Column{name, Align::kLeft};
}

// The GPU activity tables, in the order their rows are listed when start times tie.
inline constexpr std::string_view kKernelTable = "CUPTI_ACTIVITY_KIND_KERNEL";
inline constexpr std::string_view kMemcpyTable = "CUPTI_ACTIVITY_KIND_MEMCPY";
inline constexpr std::string_view kMemsetTable = "CUPTI_ACTIVITY_KIND_MEMSET";
inline constexpr std::string_view kRuntimeTable = "CUPTI_ACTIVITY_KIND_RUNTIME";
inline constexpr std::string_view kNvtxTable = "NVTX_EVENTS";

}  // namespace gt::stats
