// GPU activity reports: cuda_gpu_kern_sum, cuda_gpu_mem_time_sum, cuda_gpu_mem_size_sum, cuda_gpu_trace.
//
// Sources matched (our SQL and C++, written from these descriptions, not from NVIDIA's scripts):
//  - Nsight Systems Post-Collection Analysis Guide, "Statistical Reports Shipped With Nsight Systems":
//    the column lists of the four reports; kernel names are the demangled ("templated") name unless
//    the :base / :mangled argument is given; cuda_gpu_trace is sorted by start time, its Device column
//    is "GPU device name and ID", SrcMemKd is the memcpy source kind or the memset memory kind.
//  - Real output of nsys 2025.3.2 and 2026.1.1/2026.3.1 quoted in public repositories:
//    cuda_gpu_kern_sum names "void at::native::vectorized_elementwise_kernel<(int)4, …>(…)" (demangled);
//    cuda_gpu_mem_time_sum operations "[CUDA memcpy Device-to-Host]" / "[CUDA memset]" with header
//    "Count" and "Operation"; cuda_gpu_mem_size_sum header "Total (MB)  Count  Avg (MB)  Med (MB)
//    Min (MB)  Max (MB)  StdDev (MB)  Operation" with 3 decimals; cuda_gpu_trace CSV header
//    "Start (ns),Duration (ns),CorrId,GrdX,GrdY,GrdZ,BlkX,BlkY,BlkZ,Reg/Trd,StcSMem (MB),DymSMem (MB),
//    Bytes (MB),Throughput (MB/s),SrcMemKd,DstMemKd,Device,Ctx,GreenCtx,Strm,Name", a 4,194,304-byte copy
//    printed as "4.194" (so MB = 10^6 bytes), kernel rows "0.000" shared memory and empty byte columns,
//    memcpy rows empty grid/block columns, Device "NVIDIA RTX 5000 Ada Generation Laptop GPU (0)",
//    GreenCtx empty for ordinary contexts (the export stores 0, fact sheet §3 fact 20).
//  - nsys's memory report treats a missing MEMCPY or MEMSET table as no rows (nsys creates tables
//    lazily) and fails only when both are absent; MEMCPY names need ENUM_CUDA_MEMCPY_OPER.
// Not confirmed: nsys's Throughput differs from bytes/duration by up to 0.06 % in the real output we
// found (it may use a timestamp we do not have); we print bytes / duration exactly.
#include <algorithm>
#include <map>
#include <optional>
#include <tuple>

#include "tools/stats/grouped_summary.h"
#include "tools/stats/reports.h"
#include "tools/stats/statistics.h"

namespace gt::stats {
namespace {

constexpr int64_t kBytesPerMb = 1'000'000;

// "[CUDA memcpy Host-to-Device]" from the copy kind's label (`o` = ENUM_CUDA_MEMCPY_OPER). A kind the
// enum table lacks is named "Unknown" rather than dropped.
constexpr char kMemcpyNameSql[] = "'[CUDA memcpy ' || coalesce(o.label, 'Unknown') || ']'";

gt::Status RequireMemTables(Database& db, const Table& table, bool* have_memcpy, bool* have_memset) {
  *have_memcpy = db.HasTable(kMemcpyTable);
  *have_memset = db.HasTable(kMemsetTable);
  if (!*have_memcpy && !*have_memset) {
    return MissingTable(db, table, "CUPTI_ACTIVITY_KIND_MEMCPY or _MEMSET",
                        "was CUDA traced, and did the program copy or set memory?");
  }
  if (*have_memcpy && !db.HasTable("ENUM_CUDA_MEMCPY_OPER")) {
    return MissingTable(db, table, "ENUM_CUDA_MEMCPY_OPER", "memcpy rows cannot be named without it");
  }
  return gt::Status::Ok();
}

// The memcpy and memset rows of the memory reports as one SELECT (k0 = operation name, v = `value`,
// over columns both tables have and the enum table lacks: the duration expression or "bytes"), for SummarizeByKey.
gt::Status MemOpsSql(Database& db, const Table& table, const std::string& value, std::string* sql) {
  bool have_memcpy = false;
  bool have_memset = false;
  gt::Status status = RequireMemTables(db, table, &have_memcpy, &have_memset);
  if (!status.ok())
    return status;
  std::vector<std::string> queries;
  if (have_memcpy) {
    queries.push_back(std::string("SELECT ") + kMemcpyNameSql + " AS k0, " + value +
                      " AS v FROM CUPTI_ACTIVITY_KIND_MEMCPY AS m "
                      "LEFT JOIN ENUM_CUDA_MEMCPY_OPER AS o ON o.id = m.copyKind");
  }
  if (have_memset)
    queries.push_back("SELECT '[CUDA memset]' AS k0, " + value + " AS v FROM CUPTI_ACTIVITY_KIND_MEMSET");
  *sql = queries[0];
  for (size_t i = 1; i < queries.size(); ++i)
    *sql += " UNION ALL " + queries[i];
  return gt::Status::Ok();
}

// "<name> (<deviceId>)" for a GPU row. The device id is the CUDA ordinal inside the process; it maps to
// a GPU through TARGET_INFO_CUDA_DEVICE (pid, cudaId -> gpuId) when present, else TARGET_INFO_GPU.id.
class DeviceNames {
 public:
  gt::Status Load(Database& db) {
    Statement statement;
    gt::Status status = db.Prepare("SELECT id, name FROM TARGET_INFO_GPU", &statement);
    if (!status.ok())
      return status;
    for (bool has_row = false; (status = statement.Step(&has_row)).ok() && has_row;) {
      by_gpu_id_[statement.Int(0)] = statement.Text(1);
    }
    if (!status.ok())
      return status;
    if (!db.HasTable("TARGET_INFO_CUDA_DEVICE"))
      return gt::Status::Ok();
    status = db.Prepare("SELECT pid, cudaId, gpuId FROM TARGET_INFO_CUDA_DEVICE WHERE gpuId IS NOT NULL", &statement);
    if (!status.ok())
      return status;
    for (bool has_row = false; (status = statement.Step(&has_row)).ok() && has_row;) {
      gpu_of_device_[{statement.Int(0), statement.Int(1)}] = statement.Int(2);
    }
    if (!status.ok())
      return status;
    return gt::Status::Ok();
  }

  std::string Name(std::optional<int64_t> global_pid, int64_t device_id) const {
    int64_t gpu_id = device_id;
    if (global_pid) {
      auto mapped = gpu_of_device_.find({PidOf(*global_pid), device_id});
      if (mapped != gpu_of_device_.end())
        gpu_id = mapped->second;
    }
    auto gpu = by_gpu_id_.find(gpu_id);
    const std::string name = gpu != by_gpu_id_.end() ? gpu->second : "GPU";
    return name + " (" + std::to_string(device_id) + ")";
  }

 private:
  std::map<int64_t, std::string> by_gpu_id_;
  std::map<std::pair<int64_t, int64_t>, int64_t> gpu_of_device_;
};

Cell OptionalInt(const Statement& statement, int column) {
  return statement.IsNull(column) ? Cell::Null() : Cell::Int(statement.Int(column));
}

Cell OptionalText(const Statement& statement, int column) {
  return statement.IsNull(column) ? Cell::Null() : Cell::Text(statement.Text(column));
}

// 0 means "not a green context" in the export; nsys prints it empty.
Cell GreenContext(const Statement& statement, int column) {
  return statement.IsNull(column) || statement.Int(column) == 0 ? Cell::Null() : Cell::Int(statement.Int(column));
}

Cell Throughput(int64_t bytes, int64_t duration) {
  if (duration <= 0)
    return Cell::Null();
  // MB/s = (bytes / 1e6) / (duration / 1e9), three decimals.
  return Cell::Fixed(RoundDiv(static_cast<__int128>(bytes) * 1'000'000, duration), 3);
}

}  // namespace

gt::Status BuildCudaGpuKernSum(Database& db, Table* table) {
  if (!db.HasTable(kKernelTable))
    return MissingTable(db, *table, kKernelTable, "was CUDA traced?");
  std::vector<KeyedSummary> groups;
  int64_t grand_total = 0;
  gt::Status status =
      SummarizeByKey(db,
                     "SELECT s.value AS k0, k.\"end\" - k.start AS v FROM CUPTI_ACTIVITY_KIND_KERNEL AS k "
                     "LEFT JOIN StringIds AS s ON s.id = k.demangledName",
                     1, 1, 1, &groups, &grand_total);
  if (!status.ok())
    return status;
  table->columns = {NumberColumn("Time (%)"), NumberColumn("Total Time (ns)"), NumberColumn("Instances"),
                    NumberColumn("Avg (ns)"), NumberColumn("Med (ns)"),        NumberColumn("Min (ns)"),
                    NumberColumn("Max (ns)"), NumberColumn("StdDev (ns)"),     TextColumn("Name")};
  for (const KeyedSummary& group : groups) {
    const Summary& summary = group.summary;
    table->rows.push_back({Percent(summary.total, grand_total), Cell::Int(summary.total), Cell::Int(summary.count),
                           summary.avg, summary.median, Cell::Int(summary.min), Cell::Int(summary.max), summary.stddev,
                           Cell::Text(group.key[0])});
  }
  return gt::Status::Ok();
}

gt::Status BuildCudaGpuMemTimeSum(Database& db, Table* table) {
  std::string rows_sql;
  gt::Status status = MemOpsSql(db, *table, "\"end\" - start", &rows_sql);
  if (!status.ok())
    return status;
  std::vector<KeyedSummary> groups;
  int64_t grand_total = 0;
  status = SummarizeByKey(db, rows_sql, 1, 1, 1, &groups, &grand_total);
  if (!status.ok())
    return status;
  table->columns = {NumberColumn("Time (%)"), NumberColumn("Total Time (ns)"), NumberColumn("Count"),
                    NumberColumn("Avg (ns)"), NumberColumn("Med (ns)"),        NumberColumn("Min (ns)"),
                    NumberColumn("Max (ns)"), NumberColumn("StdDev (ns)"),     TextColumn("Operation")};
  for (const KeyedSummary& group : groups) {
    const Summary& summary = group.summary;
    table->rows.push_back({Percent(summary.total, grand_total), Cell::Int(summary.total), Cell::Int(summary.count),
                           summary.avg, summary.median, Cell::Int(summary.min), Cell::Int(summary.max), summary.stddev,
                           Cell::Text(group.key[0])});
  }
  return gt::Status::Ok();
}

gt::Status BuildCudaGpuMemSizeSum(Database& db, Table* table) {
  std::string rows_sql;
  gt::Status status = MemOpsSql(db, *table, "bytes", &rows_sql);
  if (!status.ok())
    return status;
  std::vector<KeyedSummary> groups;
  status = SummarizeByKey(db, rows_sql, 1, kBytesPerMb, 3, &groups);
  if (!status.ok())
    return status;
  table->columns = {NumberColumn("Total (MB)"),  NumberColumn("Count"),    NumberColumn("Avg (MB)"),
                    NumberColumn("Med (MB)"),    NumberColumn("Min (MB)"), NumberColumn("Max (MB)"),
                    NumberColumn("StdDev (MB)"), TextColumn("Operation")};
  for (const KeyedSummary& group : groups) {
    const Summary& summary = group.summary;
    table->rows.push_back({ScaledValue(summary.total, kBytesPerMb, 3), Cell::Int(summary.count), summary.avg,
                           summary.median, ScaledValue(summary.min, kBytesPerMb, 3),
                           ScaledValue(summary.max, kBytesPerMb, 3), summary.stddev, Cell::Text(group.key[0])});
  }
  return gt::Status::Ok();
}

gt::Status StreamCudaGpuTrace(Database& db, Table* table, const RowSink& row) {
  const bool have_kernel = db.HasTable(kKernelTable);
  const bool have_memcpy = db.HasTable(kMemcpyTable);
  const bool have_memset = db.HasTable(kMemsetTable);
  if (!have_kernel && !have_memcpy && !have_memset) {
    return MissingTable(db, *table, "CUPTI_ACTIVITY_KIND_KERNEL, _MEMCPY or _MEMSET", "was CUDA traced?");
  }
  if (!db.HasTable("TARGET_INFO_GPU")) {
    return MissingTable(db, *table, "TARGET_INFO_GPU", "the Device column needs the GPU list (nsys requires it too)");
  }
  if (have_memcpy && !db.HasTable("ENUM_CUDA_MEMCPY_OPER")) {
    return MissingTable(db, *table, "ENUM_CUDA_MEMCPY_OPER", "memcpy rows cannot be named without it");
  }
  DeviceNames devices;
  gt::Status status = devices.Load(db);
  if (!status.ok())
    return status;
  const bool have_mem_kinds = db.HasTable("ENUM_CUDA_MEM_KIND");
  // Exports older than schema 3.13 lack greenContextId; print it empty rather than refuse the file.
  const auto green = [&](std::string_view gpu_table, const char* alias) {
    return db.HasColumn(gpu_table, "greenContextId") ? std::string(alias) + ".greenContextId" : std::string("NULL");
  };
  const auto kind_label = [&](const char* alias, const char* column) {
    return have_mem_kinds
               ? std::string("(SELECT label FROM ENUM_CUDA_MEM_KIND WHERE id = ") + alias + "." + column + ")"
               : std::string("NULL");
  };

  // The three tables as one result in the report's order: by start, then kernel/memcpy/memset, then
  // correlation id (NULL as 0), then each table's own row order — SQLite merges the three sorted
  // selects, and every row is printed as it comes (memory O(1) in the rows; the sorter spills to
  // temporary files past its cache). Columns, the same in each select (names from every select, as
  // the first one present names a compound's columns):
  //   0 start, 1 duration, 2 correlationId, 3-8 grid/block, 9 registers, 10-11 static/dynamic shared
  //   memory, 12 bytes, 13-14 source/destination memory kind, 15 device, 16 context, 17 green context,
  //   18 stream, 19 name, 20 globalPid, 21 kind (0 kernel, 1 memcpy, 2 memset), 22 sort id, 23 rowid.
  const char* kTail = " AS name, m.globalPid AS gpid, ";
  std::vector<std::string> selects;
  if (have_kernel) {
    selects.push_back(
        "SELECT k.start AS start, k.\"end\" - k.start AS duration, k.correlationId AS corr, k.gridX, k.gridY, "
        "k.gridZ, k.blockX, k.blockY, k.blockZ, k.registersPerThread, k.staticSharedMemory, "
        "k.dynamicSharedMemory, NULL AS bytes, NULL AS src, NULL AS dst, k.deviceId, k.contextId, " +
        green(kKernelTable, "k") +
        " AS green, k.streamId, s.value AS name, k.globalPid AS gpid, 0 AS kind, coalesce(k.correlationId, 0) AS "
        "corr0, k.rowid AS rid FROM CUPTI_ACTIVITY_KIND_KERNEL AS k LEFT JOIN StringIds AS s ON s.id = "
        "k.demangledName");
  }
  const std::string no_launch = "NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, ";
  if (have_memcpy) {
    selects.push_back("SELECT m.start AS start, m.\"end\" - m.start AS duration, m.correlationId AS corr, " +
                      no_launch + "m.bytes AS bytes, " + kind_label("m", "srcKind") + " AS src, " +
                      kind_label("m", "dstKind") + " AS dst, m.deviceId, m.contextId, " + green(kMemcpyTable, "m") +
                      " AS green, m.streamId, " + kMemcpyNameSql + kTail +
                      "1 AS kind, coalesce(m.correlationId, 0) AS corr0, m.rowid AS rid "
                      "FROM CUPTI_ACTIVITY_KIND_MEMCPY AS m LEFT JOIN ENUM_CUDA_MEMCPY_OPER AS o ON o.id = "
                      "m.copyKind");
  }
  if (have_memset) {
    selects.push_back("SELECT m.start AS start, m.\"end\" - m.start AS duration, m.correlationId AS corr, " +
                      no_launch + "m.bytes AS bytes, " + kind_label("m", "memKind") +
                      " AS src, NULL AS dst, m.deviceId, m.contextId, " + green(kMemsetTable, "m") +
                      " AS green, m.streamId, '[CUDA memset]'" + kTail +
                      "2 AS kind, coalesce(m.correlationId, 0) AS corr0, m.rowid AS rid "
                      "FROM CUPTI_ACTIVITY_KIND_MEMSET AS m");
  }
  std::string sql;
  for (const std::string& select : selects)
    sql += (sql.empty() ? "" : " UNION ALL ") + select;
  sql += " ORDER BY start, kind, corr0, rid";
  Statement s;
  status = db.Prepare(sql, &s);
  if (!status.ok())
    return status;

  table->columns = {NumberColumn("Start (ns)"),
                    NumberColumn("Duration (ns)"),
                    NumberColumn("CorrId"),
                    NumberColumn("GrdX"),
                    NumberColumn("GrdY"),
                    NumberColumn("GrdZ"),
                    NumberColumn("BlkX"),
                    NumberColumn("BlkY"),
                    NumberColumn("BlkZ"),
                    NumberColumn("Reg/Trd"),
                    NumberColumn("StcSMem (MB)"),
                    NumberColumn("DymSMem (MB)"),
                    NumberColumn("Bytes (MB)"),
                    NumberColumn("Throughput (MB/s)"),
                    TextColumn("SrcMemKd"),
                    TextColumn("DstMemKd"),
                    TextColumn("Device"),
                    NumberColumn("Ctx"),
                    NumberColumn("GreenCtx"),
                    NumberColumn("Strm"),
                    TextColumn("Name")};
  std::vector<Cell> cells;
  for (bool has_row = false; (status = s.Step(&has_row)).ok() && has_row;) {
    cells.clear();
    cells.push_back(Cell::Int(s.Int(0)));
    cells.push_back(Cell::Int(s.Int(1)));
    cells.push_back(OptionalInt(s, 2));
    if (s.Int(21) == 0) {  // kernel
      for (int column = 3; column <= 9; ++column)
        cells.push_back(Cell::Int(s.Int(column)));
      cells.push_back(ScaledValue(s.Int(10), kBytesPerMb, 3));
      cells.push_back(ScaledValue(s.Int(11), kBytesPerMb, 3));
      for (int i = 0; i < 4; ++i)
        cells.push_back(Cell::Null());  // Bytes, Throughput, Src/DstMemKd
    } else {
      for (int i = 0; i < 9; ++i)
        cells.push_back(Cell::Null());  // grid, block, Reg/Trd, Stc/DymSMem
      cells.push_back(ScaledValue(s.Int(12), kBytesPerMb, 3));
      cells.push_back(Throughput(s.Int(12), s.Int(1)));
      cells.push_back(OptionalText(s, 13));
      cells.push_back(OptionalText(s, 14));
    }
    cells.push_back(Cell::Text(devices.Name(s.OptInt(20), s.Int(15))));
    cells.push_back(Cell::Int(s.Int(16)));
    cells.push_back(GreenContext(s, 17));
    cells.push_back(Cell::Int(s.Int(18)));
    cells.push_back(Cell::Text(s.Text(19)));
    row(cells);
  }
  return status;
}

}  // namespace gt::stats
