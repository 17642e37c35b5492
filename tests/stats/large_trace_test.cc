// The trace reports (cuda_api_trace, cuda_gpu_trace), which now print each row as SQLite yields it,
// on a generated database of 24,000 API calls and 24,000 kernels, memcpys and memsets (ties on start
// across and within tables, NULL correlation ids, green contexts, unnamed threads, a thread named
// twice), against the reports as they were before (every row collected, sorted in C++, printed by
// the old whole-table printers, kept here verbatim but for their names): byte-identical output in
// the table, CSV and JSON formats.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "tests/stats/large_summary_util.h"
#include "tests/stats/nsys_test_db.h"
#include "tools/stats/database.h"
#include "tools/stats/reports.h"
#include "tools/stats/statistics.h"
#include "tools/stats/table.h"

namespace gt::stats::testing {
namespace {
namespace old_trace {

// The whole-table printers of table.cc before streaming.
void PadTo(std::string* line, int width, int used) {
  if (width > used)
    line->append(static_cast<size_t>(width - used), ' ');
}

void WriteText(const Table& table, std::ostream& out) {
  const size_t num_columns = table.columns.size();
  std::vector<std::vector<std::string>> shown(table.rows.size());
  std::vector<int> widths(num_columns, 0);
  for (size_t c = 0; c < num_columns; ++c)
    widths[c] = DisplayWidth(table.columns[c].name);
  for (size_t r = 0; r < table.rows.size(); ++r) {
    shown[r].reserve(num_columns);
    for (size_t c = 0; c < num_columns; ++c) {
      const Cell& cell = table.rows[r][c];
      shown[r].push_back(cell.kind() == Cell::Kind::kText ? TruncateForTable(cell.text()) : cell.ToString());
      widths[c] = std::max(widths[c], DisplayWidth(shown[r][c]));
    }
  }

  out << " ** " << table.title << " (" << table.report << "):\n\n";
  std::string line = " ";
  for (size_t c = 0; c < num_columns; ++c) {
    if (c > 0)
      line += "  ";
    const int used = DisplayWidth(table.columns[c].name);
    const int left = (widths[c] - used) / 2;
    PadTo(&line, left, 0);
    line += table.columns[c].name;
    PadTo(&line, widths[c] - left, used);
  }
  out << line << '\n';
  line = " ";
  for (size_t c = 0; c < num_columns; ++c) {
    if (c > 0)
      line += "  ";
    line.append(static_cast<size_t>(widths[c]), '-');
  }
  out << line << '\n';
  for (const auto& row : shown) {
    line = " ";
    for (size_t c = 0; c < num_columns; ++c) {
      if (c > 0)
        line += "  ";
      const int used = DisplayWidth(row[c]);
      if (table.columns[c].align == Align::kRight) {
        PadTo(&line, widths[c], used);
        line += row[c];
      } else {
        line += row[c];
        PadTo(&line, widths[c], used);
      }
    }
    out << line << '\n';
  }
  out << '\n';
}

void WriteCsv(const Table& table, std::ostream& out) {
  for (size_t c = 0; c < table.columns.size(); ++c) {
    if (c > 0)
      out << ',';
    out << CsvField(table.columns[c].name);
  }
  out << '\n';
  for (const auto& row : table.rows) {
    for (size_t c = 0; c < row.size(); ++c) {
      if (c > 0)
        out << ',';
      out << CsvField(row[c].ToString());
    }
    out << '\n';
  }
}

void WriteJson(const Table& table, std::ostream& out) {
  if (table.rows.empty()) {
    out << "[]\n";
    return;
  }
  out << "[\n";
  for (size_t r = 0; r < table.rows.size(); ++r) {
    out << "  {";
    for (size_t c = 0; c < table.columns.size(); ++c) {
      if (c > 0)
        out << ", ";
      out << JsonString(table.columns[c].name) << ": ";
      const Cell& cell = table.rows[r][c];
      switch (cell.kind()) {
        case Cell::Kind::kNull:
          out << "null";
          break;
        case Cell::Kind::kInt:
        case Cell::Kind::kFixed:
          out << cell.ToString();  // "-12", "0.000": valid JSON number literals
          break;
        case Cell::Kind::kText:
          out << JsonString(cell.text());
          break;
      }
    }
    out << (r + 1 < table.rows.size() ? "},\n" : "}\n");
  }
  out << "]\n";
}

void OldWriteTable(const Table& table, Format format, std::ostream& out) {
  switch (format) {
    case Format::kTable:
      WriteText(table, out);
      break;
    case Format::kCsv:
      WriteCsv(table, out);
      break;
    case Format::kJson:
      WriteJson(table, out);
      break;
  }
}

constexpr int64_t kBytesPerMb = 1'000'000;
constexpr char kMemcpyNameSql[] = "'[CUDA memcpy ' || coalesce(o.label, 'Unknown') || ']'";

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

struct TraceRow {
  int64_t start = 0;
  int kind = 0;  // 0 kernel, 1 memcpy, 2 memset: the order of rows that start together
  int64_t correlation_id = 0;
  std::vector<Cell> cells;
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

// Appends the rows of one GPU table: `sql` selects start, duration and correlationId first; `make`
// turns a result row into the report's cells.
template <typename MakeRow>
gt::Status AppendTraceRows(Database& db, const std::string& sql, int kind, MakeRow make, std::vector<TraceRow>* rows) {
  Statement statement;
  gt::Status status = db.Prepare(sql, &statement);
  if (!status.ok())
    return status;
  for (bool has_row = false; (status = statement.Step(&has_row)).ok() && has_row;) {
    TraceRow row;
    row.start = statement.Int(0);
    row.kind = kind;
    row.correlation_id = statement.Int(2);
    row.cells = make(statement);
    rows->push_back(std::move(row));
  }
  return status;
}

gt::Status OldCudaGpuTrace(Database& db, Table* table) {
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

  std::vector<TraceRow> rows;
  // Cells in report column order; shared tail: Device, Ctx, GreenCtx, Strm, Name.
  const auto tail = [&](const Statement& s, int first, std::vector<Cell>* cells) {
    cells->push_back(Cell::Text(devices.Name(s.OptInt(first + 5), s.Int(first))));
    cells->push_back(Cell::Int(s.Int(first + 1)));
    cells->push_back(GreenContext(s, first + 2));
    cells->push_back(Cell::Int(s.Int(first + 3)));
    cells->push_back(Cell::Text(s.Text(first + 4)));
  };
  if (have_kernel) {
    status = AppendTraceRows(
        db,
        "SELECT k.start, k.\"end\" - k.start, k.correlationId, k.gridX, k.gridY, k.gridZ, k.blockX, k.blockY,"
        " k.blockZ, k.registersPerThread, k.staticSharedMemory, k.dynamicSharedMemory,"
        " k.deviceId, k.contextId, " +
            green(kKernelTable, "k") +
            ", k.streamId, s.value, k.globalPid "
            "FROM CUPTI_ACTIVITY_KIND_KERNEL AS k LEFT JOIN StringIds AS s ON s.id = k.demangledName",
        0,
        [&](const Statement& s) {
          std::vector<Cell> cells = {Cell::Int(s.Int(0)), Cell::Int(s.Int(1)), OptionalInt(s, 2)};
          for (int column = 3; column <= 9; ++column)
            cells.push_back(Cell::Int(s.Int(column)));
          cells.push_back(ScaledValue(s.Int(10), kBytesPerMb, 3));
          cells.push_back(ScaledValue(s.Int(11), kBytesPerMb, 3));
          for (int i = 0; i < 4; ++i)
            cells.push_back(Cell::Null());  // Bytes, Throughput, Src/DstMemKd
          tail(s, 12, &cells);
          return cells;
        },
        &rows);
    if (!status.ok())
      return status;
  }
  const auto memory_row = [&](const Statement& s) {
    std::vector<Cell> cells = {Cell::Int(s.Int(0)), Cell::Int(s.Int(1)), OptionalInt(s, 2)};
    for (int i = 0; i < 9; ++i)
      cells.push_back(Cell::Null());  // grid, block, Reg/Trd, Stc/DymSMem
    cells.push_back(ScaledValue(s.Int(3), kBytesPerMb, 3));
    cells.push_back(Throughput(s.Int(3), s.Int(1)));
    cells.push_back(OptionalText(s, 4));
    cells.push_back(OptionalText(s, 5));
    tail(s, 6, &cells);
    return cells;
  };
  if (have_memcpy) {
    status = AppendTraceRows(
        db,
        "SELECT m.start, m.\"end\" - m.start, m.correlationId, m.bytes, " + kind_label("m", "srcKind") + ", " +
            kind_label("m", "dstKind") + ", m.deviceId, m.contextId, " + green(kMemcpyTable, "m") + ", m.streamId, " +
            kMemcpyNameSql +
            ", m.globalPid "
            "FROM CUPTI_ACTIVITY_KIND_MEMCPY AS m LEFT JOIN ENUM_CUDA_MEMCPY_OPER AS o ON o.id = m.copyKind",
        1, memory_row, &rows);
    if (!status.ok())
      return status;
  }
  if (have_memset) {
    status =
        AppendTraceRows(db,
                        "SELECT m.start, m.\"end\" - m.start, m.correlationId, m.bytes, " + kind_label("m", "memKind") +
                            ", NULL, m.deviceId, m.contextId, " + green(kMemsetTable, "m") +
                            ", m.streamId, '[CUDA memset]', m.globalPid FROM CUPTI_ACTIVITY_KIND_MEMSET AS m",
                        2, memory_row, &rows);
    if (!status.ok())
      return status;
  }
  std::stable_sort(rows.begin(), rows.end(), [](const TraceRow& a, const TraceRow& b) {
    return std::tie(a.start, a.kind, a.correlation_id) < std::tie(b.start, b.kind, b.correlation_id);
  });
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
  table->rows.reserve(rows.size());
  for (TraceRow& row : rows)
    table->rows.push_back(std::move(row.cells));
  return gt::Status::Ok();
}

gt::Status OldCudaApiTrace(Database& db, Table* table) {
  if (!db.HasTable(kRuntimeTable))
    return MissingTable(db, *table, kRuntimeTable, "was CUDA traced?");
  if (!db.HasTable("ThreadNames")) {
    return MissingTable(db, *table, "ThreadNames", "the export must name every traced thread");
  }
  // One ThreadNames row per thread (the last written, in case an exporter wrote a rename), so a thread
  // named twice does not duplicate its calls; unnamed threads keep their calls with an empty name.
  Statement statement;
  gt::Status status = db.Prepare(
      "WITH names AS ("
      "  SELECT globalTid, priority, nameId, max(rowid) FROM ThreadNames GROUP BY globalTid) "
      "SELECT r.start, r.\"end\" - r.start, s.value, r.returnValue, r.correlationId, r.globalTid,"
      "       n.priority, tn.value "
      "FROM CUPTI_ACTIVITY_KIND_RUNTIME AS r "
      "LEFT JOIN StringIds AS s ON s.id = r.nameId "
      "LEFT JOIN names AS n ON n.globalTid = r.globalTid "
      "LEFT JOIN StringIds AS tn ON tn.id = n.nameId "
      "WHERE r.eventClass IS NOT 67 "
      "ORDER BY r.start, r.rowid",
      &statement);
  if (!status.ok())
    return status;
  table->columns = {NumberColumn("Start (ns)"), NumberColumn("Duration (ns)"), TextColumn("Name"),
                    NumberColumn("Result"),     NumberColumn("CorrID"),        NumberColumn("Pid"),
                    NumberColumn("Tid"),        NumberColumn("T-Pri"),         TextColumn("Thread Name")};
  for (bool has_row = false; (status = statement.Step(&has_row)).ok() && has_row;) {
    const auto optional_int = [&](int column) {
      return statement.IsNull(column) ? Cell::Null() : Cell::Int(statement.Int(column));
    };
    const std::optional<int64_t> global_tid = statement.OptInt(5);
    table->rows.push_back({Cell::Int(statement.Int(0)), Cell::Int(statement.Int(1)),
                           Cell::Text(StripApiVersionSuffix(statement.Text(2))), Cell::Int(statement.Int(3)),
                           optional_int(4), global_tid ? Cell::Int(PidOf(*global_tid)) : Cell::Null(),
                           global_tid ? Cell::Int(TidOf(*global_tid)) : Cell::Null(), optional_int(6),
                           statement.IsNull(7) ? Cell::Null() : Cell::Text(statement.Text(7))});
  }
  return status;
}

}  // namespace old_trace

using ReferenceBuilder = gt::Status (*)(Database& db, Table* table);

std::string Reference(const std::string& path,
                      ReferenceBuilder build,
                      const char* report,
                      const char* title,
                      Format format) {
  std::unique_ptr<Database> db;
  EXPECT_TRUE(Database::Open(path, &db).ok());
  Table table;
  table.report = report;
  table.title = title;
  EXPECT_TRUE(build(*db, &table).ok());
  std::ostringstream out;
  old_trace::OldWriteTable(table, format, out);
  return out.str();
}

// 24,000 runtime calls on three threads (one unnamed, one named twice), and 8,000 each of kernels,
// memcpys and memsets over two processes and two GPUs, with many equal start times.
void Fill(TestDb& db) {
  db.Create({"CUPTI_ACTIVITY_KIND_RUNTIME", "ThreadNames", "CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY",
             "CUPTI_ACTIVITY_KIND_MEMSET", "TARGET_INFO_GPU", "TARGET_INFO_CUDA_DEVICE"});
  db.CreateEnums();
  db.Exec("BEGIN");
  db.AddGpu(0, "NVIDIA H100 80GB HBM3");
  db.AddGpu(1, "NVIDIA A100-SXM4-40GB");
  db.Exec(
      "INSERT INTO TARGET_INFO_CUDA_DEVICE (gpuId, cudaId, pid, uuid, numMultiprocessors) VALUES "
      "(1, 0, 200, 'u1', 108)");
  const int64_t threads[] = {GlobalTid(100, 101), GlobalTid(100, 102), GlobalTid(200, 201)};
  db.AddThreadName(threads[0], "main", 20);
  db.AddThreadName(threads[1], "worker-old", 10);
  db.AddThreadName(threads[1], "worker, \"quoted\"", 15);  // renamed: the last row counts
  Lcg rng;
  const char* api_names[] = {"cudaLaunchKernel_v7000", "cudaMemcpyAsync_v3020", "cudaGraphLaunch_v10000",
                             "cuLaunchKernel", "cudaStreamSynchronize_v3020"};
  for (int i = 0; i < 24000; ++i) {
    const int64_t start = static_cast<int64_t>(rng.Next(400000));  // many ties
    db.AddRuntime(start, start + static_cast<int64_t>(rng.Next(5000)), threads[rng.Next(3)], rng.Next(20) == 0 ? -1 : i,
                  api_names[rng.Next(5)], static_cast<int64_t>(rng.Next(3)),
                  rng.Next(30) == 0 ? 67 : (rng.Next(2) == 0 ? 1 : 0));
  }
  db.Exec("UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET correlationId = NULL WHERE correlationId = -1");
  for (int i = 0; i < 8000; ++i) {
    KernelRow k;
    k.start = static_cast<int64_t>(rng.Next(300000));
    k.end = k.start + static_cast<int64_t>(rng.Next(9000));
    k.global_pid = GlobalPid(rng.Next(2) == 0 ? 100 : 200);
    k.device_id = static_cast<int64_t>(rng.Next(2));
    k.correlation_id = static_cast<int64_t>(rng.Next(3000));
    k.green_context_id = rng.Next(10) == 0 ? 5 : 0;
    k.stream_id = 7 + static_cast<int64_t>(rng.Next(3));
    k.demangled_name = k.short_name =
        rng.Next(50) == 0 ? std::string(120, 'x') + "\xC3\xA9" : "kernel_" + std::to_string(rng.Next(40));
    k.grid[0] = 1 + static_cast<int64_t>(rng.Next(1024));
    k.block[0] = 32 * (1 + static_cast<int64_t>(rng.Next(32)));
    k.static_shared_bytes = static_cast<int64_t>(rng.Next(49152));
    k.dynamic_shared_bytes = static_cast<int64_t>(rng.Next(3)) * 1024;
    db.AddKernel(k);
    MemcpyRow m;
    m.start = static_cast<int64_t>(rng.Next(300000));
    m.end = m.start + static_cast<int64_t>(rng.Next(3) == 0 ? 0 : rng.Next(9000));  // some 0 long
    m.global_pid = GlobalPid(rng.Next(2) == 0 ? 100 : 200);
    m.correlation_id = static_cast<int64_t>(rng.Next(3000));
    m.bytes = static_cast<int64_t>(rng.Next(1 << 30));
    m.copy_kind = rng.Next(3) == 0 ? 2 : 1;
    m.src_kind = static_cast<int64_t>(rng.Next(3));
    db.AddMemcpy(m);
    MemsetRow s;
    s.start = static_cast<int64_t>(rng.Next(300000));
    s.end = s.start + static_cast<int64_t>(rng.Next(2000));
    s.global_pid = GlobalPid(100);
    s.correlation_id = static_cast<int64_t>(rng.Next(3000));
    s.bytes = static_cast<int64_t>(rng.Next(1 << 20));
    db.AddMemset(s);
  }
  db.Exec("UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET correlationId = NULL WHERE rowid % 97 = 0");
  db.Exec("UPDATE CUPTI_ACTIVITY_KIND_MEMSET SET correlationId = NULL WHERE rowid % 89 = 0");
  db.Exec("COMMIT");
}

TEST(LargeTraces, CudaApiAndGpuTracesMatchTheCollectEverythingReference) {
  TestDb db("large_traces");
  Fill(db);
  struct Case {
    const char* report;
    const char* title;
    ReferenceBuilder build;
    size_t rows;
  };
  const Case cases[] = {
      {"cuda_api_trace", "CUDA API Trace", old_trace::OldCudaApiTrace, 0},
      {"cuda_gpu_trace", "CUDA GPU Trace", old_trace::OldCudaGpuTrace, 24000},
  };
  for (const Case& c : cases) {
    for (const auto& [format, name] :
         {std::pair{Format::kCsv, "csv"}, std::pair{Format::kJson, "json"}, std::pair{Format::kTable, "table"}}) {
      SCOPED_TRACE(std::string(c.report) + " " + name);
      const std::string expected = Reference(db.path(), c.build, c.report, c.title, format);
      if (format == Format::kCsv) {
        const size_t lines = static_cast<size_t>(std::count(expected.begin(), expected.end(), '\n'));
        if (c.rows > 0)
          EXPECT_EQ(lines, c.rows + 1);
        else
          EXPECT_GT(lines, 22000u);  // every call but the backtrace rows
      }
      EXPECT_EQ(RunOk(db.path(), c.report, name), expected);
    }
  }
}

}  // namespace
}  // namespace gt::stats::testing
