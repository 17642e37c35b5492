// Report registry and entry points of gt::stats.
#include "tools/stats/stats.h"

#include <array>
#include <iterator>
#include <optional>
#include <ostream>

#include "tools/stats/database.h"
#include "tools/stats/reports.h"
#include "tools/stats/table.h"

namespace gt::stats {
namespace {

using Builder = gt::Status (*)(Database& db, Table* table);
using Streamer = gt::Status (*)(Database& db, Table* table, const RowSink& row);

// A report either builds its (small) table in memory or streams its rows (reports.h).
struct ReportEntry {
  ReportInfo info;
  Builder build;
  Streamer stream = nullptr;
};

// `description` is nsys's display name for the report (its table title and --help-reports line).
constexpr ReportEntry kReports[] = {
    {{"nvtx_sum", "NVTX Range Summary"}, BuildNvtxSum},
    {{"nvtx_gpu_proj_sum", "NVTX GPU Projection Summary"}, BuildNvtxGpuProjSum},
    {{"cuda_api_sum", "CUDA API Summary"}, BuildCudaApiSum},
    {{"cuda_api_trace", "CUDA API Trace"}, nullptr, StreamCudaApiTrace},
    {{"cuda_gpu_kern_sum", "CUDA GPU Kernel Summary"}, BuildCudaGpuKernSum},
    {{"cuda_gpu_mem_time_sum", "CUDA GPU MemOps Summary (by Time)"}, BuildCudaGpuMemTimeSum},
    {{"cuda_gpu_mem_size_sum", "CUDA GPU MemOps Summary (by Size)"}, BuildCudaGpuMemSizeSum},
    {{"cuda_gpu_trace", "CUDA GPU Trace"}, nullptr, StreamCudaGpuTrace},
    {{"osrt_sum", "OS Runtime Summary"}, BuildOsrtSum},
    {{"cpu_samples_bottomup", "CPU Samples Bottom-Up"}, BuildCpuSamplesBottomUp},
    {{"cpu_samples_topdown", "CPU Samples Top-Down"}, BuildCpuSamplesTopDown},
    {{"nccl_sum", "NCCL Operation Summary"}, BuildNcclSum},
    {{"cuda_api_callers", "CUDA API Callers (by Stack)"}, BuildCudaApiCallers},
    {{"gpu_metrics_sum", "GPU Metrics Summary (per NVTX range and kernel)"}, BuildGpuMetricsSum},
};

constexpr auto MakeInfos() {
  std::array<ReportInfo, std::size(kReports)> infos{};
  for (size_t i = 0; i < std::size(kReports); ++i)
    infos[i] = kReports[i].info;
  return infos;
}
constexpr auto kReportInfos = MakeInfos();

std::string ValidNames() {
  std::string names;
  for (const ReportEntry& entry : kReports) {
    if (!names.empty())
      names += ", ";
    names += entry.info.name;
  }
  return names;
}

// Prints a streaming report's rows as they come. The table format runs it twice: once to measure
// the column widths (nothing printed, so a failure then leaves `out` untouched), once to print.
gt::Status StreamReport(Database& db, const ReportEntry& entry, Format format, Table* table, std::ostream& out) {
  std::vector<int> widths;
  if (format == Format::kTable) {
    std::optional<ColumnWidths> measured;
    gt::Status status = entry.stream(db, table, [&](const std::vector<Cell>& row) {
      if (!measured)
        measured.emplace(table->columns);
      measured->Add(row);
    });
    if (!status.ok())
      return status;
    widths = measured ? measured->widths() : ColumnWidths(table->columns).widths();
  }
  RowPrinter printer(*table, format, &out);
  if (format == Format::kTable)
    printer.SetWidths(std::move(widths));
  gt::Status status = entry.stream(db, table, [&](const std::vector<Cell>& row) { printer.Row(row); });
  if (!status.ok())
    return status;
  printer.Finish();
  return gt::Status::Ok();
}

}  // namespace

std::span<const ReportInfo> Reports() {
  return kReportInfos;
}

gt::Status MissingTable(const Database& db, const Table& table, std::string_view missing, std::string_view hint) {
  return gt::Status::Error("report " + table.report + ": no " + std::string(missing) + " table in " + db.path() +
                           " \xE2\x80\x94 " + std::string(hint));
}

gt::Status ParseFormat(std::string_view text, Format* out) {
  // Our table is what nsys prints by default on a console, its "column" format; accept both names.
  if (text == "table" || text == "column") {
    *out = Format::kTable;
  } else if (text == "csv") {
    *out = Format::kCsv;
  } else if (text == "json") {
    *out = Format::kJson;
  } else {
    return gt::Status::Error("unknown format '" + std::string(text) + "'; valid formats: table (or column), csv, json");
  }
  return gt::Status::Ok();
}

gt::Status RunReport(const std::string& db_path,
                     std::string_view report,
                     const ReportOptions& options,
                     std::ostream& out) {
  const ReportEntry* entry = nullptr;
  for (const ReportEntry& candidate : kReports) {
    if (candidate.info.name == report)
      entry = &candidate;
  }
  if (entry == nullptr) {
    return gt::Status::Error("unknown report '" + std::string(report) + "'; valid reports: " + ValidNames());
  }
  std::unique_ptr<Database> db;
  gt::Status status = Database::Open(db_path, &db);
  if (!status.ok())
    return gt::Status::Error("report " + std::string(report) + ": " + status.message());
  Table table;
  table.report = std::string(entry->info.name);
  table.title = std::string(entry->info.description);
  status =
      entry->stream != nullptr ? StreamReport(*db, *entry, options.format, &table, out) : entry->build(*db, &table);
  if (!status.ok()) {
    // Builders name the report and file for a missing table; SQL errors get that context here.
    if (status.message().rfind("report ", 0) == 0)
      return status;
    return gt::Status::Error("report " + table.report + " on " + db_path + ": " + status.message());
  }
  if (entry->stream == nullptr)
    WriteTable(table, options.format, out);
  return gt::Status::Ok();
}

}  // namespace gt::stats
