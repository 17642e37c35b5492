// RangeMetricsSpill: the range profiler's result rows (RangeMetricsResult) of every stream, in
// bounded memory. They are written at the export's end (GpuMetricsExport::Finish: the configuration
// of their context, the GPU ids and the kernel table are only complete then), so each row goes to the
// spill database (ExportContext::AttachSpill, schema gt_spill) as it is read, with what it needs
// from its stream then (global pid and tid, session-relative pass times), and ForEach reads them
// back in read order. Memory: none per row; SQLite's 8 MiB spill page cache.
// Single-threaded (the exporter's thread); owned by the GPU-metrics export module.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "gtrace.pb.h"
#include "schema/status.h"
#include "tools/export/export_context.h"

namespace gt::exporter {

// One result row as the writer needs it at the export's end.
struct RangeRow {
  size_t stream = 0;  // StreamContext::index
  uint32_t pid = 0;
  int64_t global_pid = 0;
  std::optional<int64_t> global_tid;
  uint32_t device_id = 0;
  uint32_t context_id = 0;
  int32_t mode = 0;  // schema::RangeMetricsMode
  std::string range_name;
  uint32_t range_index = 0;
  uint64_t pass_id = 0;
  int64_t pass_start_ns = 0;  // session ns
  int64_t pass_end_ns = 0;
  std::vector<double> values;  // one per metric of its configuration
};

class RangeMetricsSpill {
 public:
  RangeMetricsSpill() = default;
  RangeMetricsSpill(const RangeMetricsSpill&) = delete;
  RangeMetricsSpill& operator=(const RangeMetricsSpill&) = delete;

  Status Add(ExportContext& ctx, const RangeRow& row);
  bool empty() const { return rows_ == 0; }
  uint64_t rows() const { return rows_; }
  uint64_t kernel_rows() const { return kernel_rows_; }  // rows in kernel mode
  // Calls `fn` with every row, in the order they were added; stops at the first error.
  Status ForEach(ExportContext& ctx, const std::function<Status(const RangeRow&)>& fn);

 private:
  bool created_ = false;
  uint64_t rows_ = 0;
  uint64_t kernel_rows_ = 0;
};

}  // namespace gt::exporter
