// The *_sum reports and cuda_api_callers on larger generated databases (thousands of rows, many names, repeated and odd
// values, NULL names, open ranges, unicode) against a reference that computes them as gtrace did
// before the reports moved into SQLite (grouped_summary.h): every row loaded with its name into
// std::map<name, std::vector<int64_t>> and summarised by Summarize/SortedSummaries. The two must print
// byte-identical CSV.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <map>
#include <optional>
#include <sstream>
#include <tuple>

#include "tests/stats/large_summary_util.h"
#include "tests/stats/nsys_test_db.h"
#include "tools/stats/statistics.h"
#include "tools/stats/table.h"

namespace gt::stats::testing {
namespace {

// The old nvtx_sum: LoadRanges + std::map<(name, style), durations>.
std::string ReferenceNvtxSum(const std::string& path) {
  int64_t last = 0;
  {
    int64_t ignored = 0;
    auto max_row = LoadGroups<int>(
        path, "SELECT 0, max(coalesce(max(start), 0), coalesce(max(\"end\"), 0)) FROM NVTX_EVENTS",
        [](sqlite3_stmt*) { return 0; }, 1, &ignored);
    last = max_row[0][0];
  }
  const std::string sql =
      "WITH domain_names AS ("
      "  SELECT e.domainId AS domain_id, e.globalTid >> 24 AS process,"
      "         coalesce(e.text, s.value) AS name, min(e.start) AS first_seen"
      "  FROM NVTX_EVENTS AS e LEFT JOIN StringIds AS s ON s.id = e.textId"
      "  WHERE e.eventType = 75"
      "  GROUP BY e.domainId, e.globalTid >> 24) "
      "SELECT coalesce(d.name, '') || ':' || coalesce(r.text, s.value, ''), r.eventType, "
      "  CASE WHEN r.\"end\" IS NULL THEN max(" +
      std::to_string(last) +
      ", r.start) ELSE r.\"end\" END - r.start "
      "FROM NVTX_EVENTS AS r "
      "LEFT JOIN domain_names AS d ON d.domain_id = r.domainId AND d.process = (r.globalTid >> 24) "
      "LEFT JOIN StringIds AS s ON s.id = r.textId "
      "WHERE r.eventType IN (59, 60, 70, 71) ORDER BY r.globalTid, r.start, r.rowid";
  int64_t grand_total = 0;
  auto groups = LoadGroups<std::pair<std::string, std::string>>(
      path, sql,
      [](sqlite3_stmt* s) {
        const int64_t type = sqlite3_column_int64(s, 1);
        return std::make_pair(ColumnText(s, 0), std::string(type == 59 || type == 70 ? "PushPop" : "StartEnd"));
      },
      2, &grand_total);
  Table table;
  table.columns = Columns({"Time (%)", "Total Time (ns)", "Instances", "Avg (ns)", "Med (ns)", "Min (ns)", "Max (ns)",
                           "StdDev (ns)", "Style", "Range"});
  for (const auto& [key, s] : SortedSummaries(&groups)) {
    table.rows.push_back({Percent(s.total, grand_total), Cell::Int(s.total), Cell::Int(s.count), s.avg, s.median,
                          Cell::Int(s.min), Cell::Int(s.max), s.stddev, Cell::Text(key.second), Cell::Text(key.first)});
  }
  return Csv(table);
}

// The old cuda_api_sum / cuda_gpu_kern_sum / cuda_gpu_mem_time_sum shape: one name column.
std::string ReferenceByName(const std::string& path,
                            const std::string& sql,
                            bool strip,
                            const char* count_header,
                            const char* name_header) {
  int64_t grand_total = 0;
  auto groups = LoadGroups<std::string>(
      path, sql,
      [strip](sqlite3_stmt* s) { return strip ? StripApiVersionSuffix(ColumnText(s, 0)) : ColumnText(s, 0); }, 1,
      &grand_total);
  Table table;
  table.columns = Columns({"Time (%)", "Total Time (ns)", count_header, "Avg (ns)", "Med (ns)", "Min (ns)", "Max (ns)",
                           "StdDev (ns)", name_header});
  for (const auto& [name, s] : SortedSummaries(&groups)) {
    table.rows.push_back({Percent(s.total, grand_total), Cell::Int(s.total), Cell::Int(s.count), s.avg, s.median,
                          Cell::Int(s.min), Cell::Int(s.max), s.stddev, Cell::Text(name)});
  }
  return Csv(table);
}

const char kMemOpsSql[] =
    "SELECT '[CUDA memcpy ' || coalesce(o.label, 'Unknown') || ']', m.%s FROM CUPTI_ACTIVITY_KIND_MEMCPY AS m "
    "LEFT JOIN ENUM_CUDA_MEMCPY_OPER AS o ON o.id = m.copyKind "
    "UNION ALL SELECT '[CUDA memset]', %s FROM CUPTI_ACTIVITY_KIND_MEMSET";

std::string MemOpsSql(const char* value) {
  char buffer[512];
  std::snprintf(buffer, sizeof(buffer), kMemOpsSql, value, value);
  return buffer;
}

std::string ReferenceMemSizeSum(const std::string& path) {
  int64_t ignored = 0;
  auto groups = LoadGroups<std::string>(
      path, MemOpsSql("bytes"), [](sqlite3_stmt* s) { return ColumnText(s, 0); }, 1, &ignored);
  constexpr int64_t kMb = 1'000'000;
  Table table;
  table.columns =
      Columns({"Total (MB)", "Count", "Avg (MB)", "Med (MB)", "Min (MB)", "Max (MB)", "StdDev (MB)", "Operation"});
  for (const auto& [name, s] : SortedSummaries(&groups, kMb, 3)) {
    table.rows.push_back({ScaledValue(s.total, kMb, 3), Cell::Int(s.count), s.avg, s.median, ScaledValue(s.min, kMb, 3),
                          ScaledValue(s.max, kMb, 3), s.stddev, Cell::Text(name)});
  }
  return Csv(table);
}

TEST(LargeSummaries, NvtxSumMatchesThePerRowReference) {
  TestDb db("large_nvtx");
  db.Create({"NVTX_EVENTS"});
  db.Exec("BEGIN");
  Lcg rng;
  const int64_t thread = GlobalTid(100, 101);
  const int64_t other = GlobalTid(200, 201);
  db.AddNvtx({.start = 0, .event_type = 75, .text = "Dom", .global_tid = thread, .domain_id = 3});
  db.AddNvtx({.start = 0, .event_type = 75, .registered_text = "Reg", .global_tid = other, .domain_id = 3});
  int64_t start = 10;
  for (int i = 0; i < 20000; ++i) {
    NvtxRow row;
    row.start = start;
    start += 1 + static_cast<int64_t>(rng.Next(50));
    // Few distinct durations: ties, repeated medians, even and odd counts per name.
    const int64_t duration = static_cast<int64_t>(rng.Next(i % 3 == 0 ? 7 : 100000));
    if (rng.Next(500) != 0)
      row.end = row.start + duration;  // else still open: ends at the last timestamp
    row.event_type = rng.Next(4) == 0 ? 60 : 59;
    const uint64_t name = rng.Next(60);
    if (name == 0) {
      // no text at all: ":"
    } else if (name < 10) {
      row.registered_text = "reg-" + std::to_string(name);
    } else if (name < 12) {
      row.text = name == 10 ? "ünïcødé ✓" : "Zeta";
    } else {
      row.text = "range-" + std::to_string(name);
    }
    row.global_tid = rng.Next(2) == 0 ? thread : other;
    row.domain_id = rng.Next(3) == 0 ? 3 : 0;
    db.AddNvtx(row);
  }
  db.Exec("COMMIT");
  const std::string expected = ReferenceNvtxSum(db.path());
  EXPECT_GT(std::count(expected.begin(), expected.end(), '\n'), 150);  // many groups
  EXPECT_EQ(RunOk(db.path(), "nvtx_sum"), expected);
}

TEST(LargeSummaries, CudaApiAndKernelSumsMatchThePerRowReference) {
  TestDb db("large_cuda");
  db.Create({"CUPTI_ACTIVITY_KIND_RUNTIME", "CUPTI_ACTIVITY_KIND_KERNEL"});
  db.Exec("BEGIN");
  Lcg rng;
  // Two spellings print the same API name ("cudaMalloc_v3020" and "cudaMalloc"): one row together.
  const std::vector<std::string> apis = {"cudaMalloc_v3020",
                                         "cudaMalloc",
                                         "cudaLaunchKernel_v7000",
                                         "cudaGraphLaunch_v10000",
                                         "cudaGetDeviceProperties_v2_v12000",
                                         "cuLaunchKernel",
                                         "_v1234",
                                         "x"};
  for (int i = 0; i < 12000; ++i) {
    const int64_t start = i * 100;
    const int64_t duration = static_cast<int64_t>(rng.Next(i % 2 == 0 ? 5 : 5000));
    db.AddRuntime(start, start + duration, GlobalTid(100, 101), i, apis[rng.Next(apis.size())], 0,
                  rng.Next(20) == 0 ? 67 : 0);
  }
  for (int i = 0; i < 8000; ++i) {
    KernelRow k;
    k.start = i * 100;
    k.end = k.start + static_cast<int64_t>(rng.Next(i % 5 == 0 ? 3 : 100000));
    k.global_pid = GlobalPid(100);
    k.correlation_id = i;
    k.demangled_name = "kernel<" + std::to_string(rng.Next(40)) + ">(float*)";
    k.short_name = "kernel";
    db.AddKernel(k);
  }
  // A kernel whose name id is missing from StringIds reads as "".
  db.Exec("UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET demangledName = 999999 WHERE rowid % 97 = 0");
  db.Exec("COMMIT");
  EXPECT_EQ(RunOk(db.path(), "cuda_api_sum"),
            ReferenceByName(db.path(),
                            "SELECT s.value, r.\"end\" - r.start FROM CUPTI_ACTIVITY_KIND_RUNTIME AS r "
                            "LEFT JOIN StringIds AS s ON s.id = r.nameId WHERE r.eventClass IS NOT 67",
                            true, "Num Calls", "Name"));
  EXPECT_EQ(RunOk(db.path(), "cuda_gpu_kern_sum"),
            ReferenceByName(db.path(),
                            "SELECT s.value, k.\"end\" - k.start FROM CUPTI_ACTIVITY_KIND_KERNEL AS k "
                            "LEFT JOIN StringIds AS s ON s.id = k.demangledName",
                            false, "Instances", "Name"));
}

TEST(LargeSummaries, MemorySumsMatchThePerRowReference) {
  TestDb db("large_mem");
  db.Create({"CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET"});
  db.CreateEnums();
  db.Exec("BEGIN");
  Lcg rng;
  for (int i = 0; i < 6000; ++i) {
    MemcpyRow m;
    m.start = i * 100;
    m.end = m.start + static_cast<int64_t>(rng.Next(3000));
    m.bytes = static_cast<int64_t>(rng.Next(i % 2 == 0 ? 4 : 9000000));
    const int64_t kinds[] = {1, 2, 8, 77};  // 77: a kind the enum lacks -> "Unknown"
    m.copy_kind = kinds[rng.Next(4)];
    db.AddMemcpy(m);
  }
  for (int i = 0; i < 3001; ++i) {
    MemsetRow m;
    m.start = i * 100;
    m.end = m.start + static_cast<int64_t>(rng.Next(700));
    m.bytes = static_cast<int64_t>(rng.Next(1000000));
    db.AddMemset(m);
  }
  db.Exec("COMMIT");
  EXPECT_EQ(RunOk(db.path(), "cuda_gpu_mem_time_sum"),
            ReferenceByName(db.path(), MemOpsSql("\"end\" - start"), false, "Count", "Operation"));
  EXPECT_EQ(RunOk(db.path(), "cuda_gpu_mem_size_sum"), ReferenceMemSizeSum(db.path()));
}

// The old cuda_api_callers: every chain's frames in a std::map, every call's duration in
// std::map<(name, caller, python caller, stack), std::vector<int64_t>>.
std::string ReferenceCudaApiCallers(const std::string& path) {
  struct Frame {
    std::string symbol, module;
    bool python;
  };
  std::map<int64_t, std::vector<Frame>> chains;
  {
    int64_t ignored = 0;
    auto rows = LoadGroups<std::tuple<int64_t, int64_t, std::string, std::string, bool>>(
        path,
        "SELECT c.id, coalesce(s.value, ''), coalesce(m.value, ''), c.originalIP IS NULL, c.stackDepth "
        "FROM CUDA_CALLCHAINS AS c LEFT JOIN StringIds AS s ON s.id = c.symbol "
        "LEFT JOIN StringIds AS m ON m.id = c.module",
        [](sqlite3_stmt* s) {
          return std::make_tuple(sqlite3_column_int64(s, 0), sqlite3_column_int64(s, 4), ColumnText(s, 1),
                                 ColumnText(s, 2), sqlite3_column_int64(s, 3) != 0);
        },
        0, &ignored);
    for (const auto& [key, unused] : rows) {  // (id, depth) ascending
      const auto& [id, depth, symbol, module, original_ip_null] = key;
      const bool python = original_ip_null || (module.size() > 3 && module.compare(module.size() - 3, 3, ".py") == 0);
      chains[id].push_back({symbol, module, python});
    }
  }
  auto inside = [](const std::string& module) {
    const size_t slash = module.rfind('/');
    const std::string base = slash == std::string::npos ? module : module.substr(slash + 1);
    for (const char* prefix : {"libcuda.so", "libcudart.so", "libcupti.so", "libgtrace.so", "libcudart_static"}) {
      if (base.rfind(prefix, 0) == 0)
        return true;
    }
    return false;
  };
  int64_t grand_total = 0;
  auto groups = LoadGroups<std::tuple<std::string, std::string, std::string, std::string>>(
      path,
      "SELECT coalesce(s.value, ''), r.callchainId, r.\"end\" - r.start FROM CUPTI_ACTIVITY_KIND_RUNTIME AS r "
      "LEFT JOIN StringIds AS s ON s.id = r.nameId WHERE r.eventClass = 67 AND r.callchainId IS NOT NULL",
      [&](sqlite3_stmt* s) {
        std::string caller, python_caller, stack;
        const auto& frames = chains[sqlite3_column_int64(s, 1)];
        for (const Frame& frame : frames) {
          stack += (stack.empty() ? "" : " <- ") + frame.symbol;
          if (caller.empty() && !inside(frame.module))
            caller = frame.symbol;
          if (python_caller.empty() && frame.python)
            python_caller = frame.symbol;
        }
        if (caller.empty() && !frames.empty())
          caller = frames.front().symbol;
        return std::make_tuple(StripApiVersionSuffix(ColumnText(s, 0)), caller, python_caller, stack);
      },
      2, &grand_total);
  Table table;
  table.columns = Columns({"Time (%)", "Total Time (ns)", "Num Calls", "Avg (ns)", "Med (ns)", "Max (ns)", "Name",
                           "Caller", "Python Caller", "Stack"});
  for (const auto& [key, s] : SortedSummaries(&groups)) {
    table.rows.push_back({Percent(s.total, grand_total), Cell::Int(s.total), Cell::Int(s.count), s.avg, s.median,
                          Cell::Int(s.max), Cell::Text(std::get<0>(key)), Cell::Text(std::get<1>(key)),
                          Cell::Text(std::get<2>(key)), Cell::Text(std::get<3>(key))});
  }
  return Csv(table);
}

TEST(LargeSummaries, CudaApiCallersMatchesThePerRowReference) {
  TestDb db("large_callers");
  db.Create({"CUPTI_ACTIVITY_KIND_RUNTIME"});
  // nsys 3.25.0's CUDA_CALLCHAINS (tools/nsys/nsys_tables.cc).
  db.Exec(
      "CREATE TABLE CUDA_CALLCHAINS (id INTEGER NOT NULL, symbol INTEGER NOT NULL, module INTEGER NOT NULL, "
      "unresolved INTEGER, originalIP INTEGER, stackDepth INTEGER NOT NULL, PRIMARY KEY (id, stackDepth))");
  db.Exec("BEGIN");
  Lcg rng;
  const std::vector<std::string> symbols = {"cudaMalloc", "cuMemAlloc_v2", "main",  "train_step", "forward",
                                            "",           "ünïcødé ✓",     "worker"};
  const std::vector<std::string> modules = {
      "/usr/lib/libcuda.so.1", "/opt/libcudart.so.12", "libgtrace.so", "/app/a.out", "/app/model.py", "libtorch.so"};
  // 400 chain ids with 1..5 frames from small pools (many equal stacks under different ids); ids
  // divisible by 37 have no frames (a call pointing there reads as an empty stack).
  for (int id = 0; id < 400; ++id) {
    if (id % 37 == 0)
      continue;
    const int depth = 1 + static_cast<int>(rng.Next(5));
    for (int d = 0; d < depth; ++d) {
      const int64_t symbol = db.StringId(symbols[rng.Next(symbols.size())]);
      const int64_t module = db.StringId(modules[rng.Next(modules.size())]);
      const std::string ip = rng.Next(6) == 0 ? "NULL" : std::to_string(4096 + d);
      db.Exec("INSERT INTO CUDA_CALLCHAINS VALUES (" + std::to_string(id) + ", " + std::to_string(symbol) + ", " +
              std::to_string(module) + ", 0, " + ip + ", " + std::to_string(d) + ")");
    }
  }
  const std::vector<std::string> apis = {"cudaMalloc_v3020", "cudaMalloc", "cudaMemcpy_v3020", "cudaLaunchKernel_v7000",
                                         "cuLaunchKernel"};
  for (int i = 0; i < 15000; ++i) {
    const int64_t start = i * 100;
    const int64_t duration = static_cast<int64_t>(rng.Next(i % 3 == 0 ? 4 : 50000));
    db.AddRuntime(start, start + duration, GlobalTid(100, 101), i, apis[rng.Next(apis.size())], 0,
                  rng.Next(10) == 0 ? 0 : 67);
  }
  db.Exec(
      "UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET callchainId = CASE WHEN rowid % 53 = 0 THEN NULL "
      "ELSE (rowid * 7919) % 410 END");
  db.Exec("COMMIT");
  const std::string expected = ReferenceCudaApiCallers(db.path());
  EXPECT_GT(std::count(expected.begin(), expected.end(), '\n'), 300);  // many groups
  EXPECT_EQ(RunOk(db.path(), "cuda_api_callers"), expected);
}

// The old nccl_sum (plugin source): every operation loaded, std::map<(func, bucket, nRanks), ("all"
// group, rank -> group)> with every GPU time in a vector, summarised by Summarize.
namespace old_nccl {
bool Factors(const std::string& func, int64_t n, int64_t* multiplier, int64_t* num, int64_t* den) {
  if (n <= 0)
    return false;
  *multiplier = 1;
  *num = 1;
  *den = 1;
  if (func == "AllReduce") {
    *num = 2 * (n - 1);
    *den = n;
  } else if (func == "AllGather" || func == "ReduceScatter" || func == "AlltoAll" || func == "Gather" ||
             func == "Scatter") {
    *multiplier = n;
    *num = n - 1;
    *den = n;
  } else if (func != "Broadcast" && func != "Reduce" && func != "Send" && func != "Recv") {
    return false;
  }
  return true;
}
std::string BytesLabel(uint64_t v) {
  static const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  int u = 0;
  while (u < 6 && v >= 1024 && v % 1024 == 0) {
    v /= 1024;
    ++u;
  }
  return std::to_string(v) + " " + kUnits[u];
}
std::string BucketLabel(int bucket) {
  if (bucket < 0)
    return "unknown";
  if (bucket == 0)
    return "0 B";
  const std::string hi = bucket >= 64 ? "16 EiB" : BytesLabel(uint64_t{1} << bucket);
  return "[" + BytesLabel(uint64_t{1} << (bucket - 1)) + ", " + hi + ")";
}
struct Group {
  std::vector<int64_t> times;
  int64_t total_size = 0;
  bool size_known = true;
  int64_t untimed = 0;
};
void AppendRow(const std::string& func, int bucket, int64_t n_ranks, const std::string& rank, Group& g, Table* table) {
  std::vector<Cell> row = {Cell::Text(func), Cell::Text(BucketLabel(bucket)),
                           n_ranks > 0 ? Cell::Int(n_ranks) : Cell::Null(), Cell::Text(rank),
                           Cell::Int(static_cast<int64_t>(g.times.size()))};
  if (!g.times.empty()) {
    const Summary s = Summarize(&g.times);
    row.insert(row.end(), {Cell::Int(s.total), s.avg, s.median, Cell::Int(s.min), Cell::Int(s.max)});
    const bool sized = g.size_known && bucket >= 0;
    row.push_back(sized ? Cell::Int(g.total_size) : Cell::Null());
    int64_t multiplier = 0, num = 0, den = 0;
    if (sized && s.total > 0) {
      row.push_back(Cell::Fixed(RoundDiv(static_cast<__int128>(g.total_size) * 100, s.total), 2));
      row.push_back(
          Factors(func, n_ranks, &multiplier, &num, &den)
              ? Cell::Fixed(
                    RoundDiv(static_cast<__int128>(g.total_size) * num * 100, static_cast<__int128>(s.total) * den), 2)
              : Cell::Null());
    } else {
      row.insert(row.end(), {Cell::Null(), Cell::Null()});
    }
  } else {
    for (int i = 0; i < 8; ++i)
      row.push_back(Cell::Null());
  }
  row.push_back(Cell::Int(g.untimed));
  row.push_back(Cell::Text("plugin"));
  table->rows.push_back(std::move(row));
}
}  // namespace old_nccl

std::string ReferenceNcclSum(const std::string& path) {
  using Key = std::tuple<std::string, int, int64_t>;
  std::map<Key, std::pair<old_nccl::Group, std::map<int64_t, old_nccl::Group>>> groups;
  int64_t ignored = 0;
  // (row order, columns) of every operation; the value column is unused.
  auto ops =
      LoadGroups<std::tuple<int64_t, std::string, std::optional<int64_t>, int64_t, int64_t, std::optional<int64_t>>>(
          path, "SELECT rowid, func, algBytes, nRanks, rank, gpuStart, gpuEnd FROM GTRACE_NCCL_OPERATIONS",
          [](sqlite3_stmt* s) {
            auto opt = [s](int c) {
              return sqlite3_column_type(s, c) == SQLITE_NULL ? std::nullopt
                                                              : std::optional<int64_t>(sqlite3_column_int64(s, c));
            };
            std::optional<int64_t> time;
            if (opt(5) && opt(6))
              time = *opt(6) - *opt(5);
            return std::make_tuple(sqlite3_column_int64(s, 0), ColumnText(s, 1), opt(2), opt(3).value_or(0),
                                   opt(4).value_or(-1), time);
          },
          0, &ignored);
  for (const auto& [op, unused] : ops) {
    const auto& [rowid, func, size, n_ranks, rank, time] = op;
    const int bucket = !size ? -1 : *size <= 0 ? 0 : 64 - __builtin_clzll(static_cast<uint64_t>(*size));
    auto& entry = groups[{func, bucket, n_ranks}];
    for (old_nccl::Group* g : {&entry.first, &entry.second[rank]}) {
      if (!time) {
        ++g->untimed;
        continue;
      }
      g->times.push_back(*time);
      if (size)
        g->total_size += *size;
      else
        g->size_known = false;
    }
  }
  Table table;
  table.columns =
      Columns({"Collective", "Size Range", "Ranks", "Rank", "Count", "Total Time (ns)", "Avg (ns)", "Med (ns)",
               "Min (ns)", "Max (ns)", "Total Size (B)", "AlgBW (GB/s)", "BusBW (GB/s)", "Untimed", "Source"});
  for (auto& [key, entry] : groups) {
    const auto& [func, bucket, n_ranks] = key;
    old_nccl::AppendRow(func, bucket, n_ranks, "all", entry.first, &table);
    if (entry.second.size() < 2)
      continue;
    for (auto& [rank, g] : entry.second)
      old_nccl::AppendRow(func, bucket, n_ranks, rank >= 0 ? std::to_string(rank) : "?", g, &table);
  }
  return Csv(table);
}

TEST(LargeSummaries, NcclSumMatchesThePerRowReference) {
  TestDb db("large_nccl");
  db.Exec(
      "CREATE TABLE GTRACE_NCCL_OPERATIONS (globalPid INTEGER NOT NULL, eventId INTEGER NOT NULL, func TEXT NOT NULL, "
      "algBytes INTEGER, nRanks INTEGER, rank INTEGER, gpuStart INTEGER, gpuEnd INTEGER)");
  db.Exec("BEGIN");
  Lcg rng;
  const std::vector<std::string> funcs = {"AllReduce", "AllGather",     "Broadcast", "Send",
                                          "Recv",      "ReduceScatter", "CustomColl"};
  auto maybe = [&rng](uint64_t null_one_in, int64_t value) {
    return rng.Next(null_one_in) == 0 ? std::string("NULL") : std::to_string(value);
  };
  for (int i = 0; i < 12000; ++i) {
    const std::string func = funcs[rng.Next(funcs.size())];
    // Sizes over many buckets, some 0, some unknown; ranks 0..3 of 2- or 4-rank communicators (one
    // single-rank one), some unknown; durations with ties; some operations without GPU times.
    const int64_t size = static_cast<int64_t>(rng.Next(4) == 0 ? rng.Next(3) : uint64_t{1} << rng.Next(30)) +
                         static_cast<int64_t>(rng.Next(100));
    const int64_t n_ranks = rng.Next(3) == 0 ? 2 : rng.Next(20) == 0 ? 1 : 4;
    const int64_t rank = static_cast<int64_t>(rng.Next(static_cast<uint64_t>(n_ranks)));
    const int64_t start = i * 1000;
    const int64_t duration = static_cast<int64_t>(rng.Next(i % 2 == 0 ? 6 : 90000));
    const bool timed = rng.Next(15) != 0;
    db.Exec("INSERT INTO GTRACE_NCCL_OPERATIONS VALUES (" + std::to_string(1 + i % 3) + ", " + std::to_string(i) +
            ", '" + func + "', " + maybe(25, size) + ", " + maybe(30, n_ranks) + ", " + maybe(30, rank) + ", " +
            (timed ? std::to_string(start) : "NULL") + ", " + (timed ? std::to_string(start + duration) : "NULL") +
            ")");
  }
  db.Exec("COMMIT");
  const std::string expected = ReferenceNcclSum(db.path());
  EXPECT_GT(std::count(expected.begin(), expected.end(), '\n'), 300);  // many groups
  EXPECT_NE(expected.find(",?,"), std::string::npos);                  // an unknown rank's row
  EXPECT_NE(expected.find("unknown"), std::string::npos);              // an unknown size's bucket
  EXPECT_EQ(RunOk(db.path(), "nccl_sum"), expected);
}

// osrt_sum, now grouped in SQLite, against the per-row map of vectors it used: 30,000 calls of 40
// functions, some names missing from StringIds ("[Unknown]"), and 31/32 rows that are not counted.
TEST(LargeSummaries, OsrtSumMatchesThePerRowReference) {
  TestDb db("large_osrt");
  db.Exec(
      "CREATE TABLE OSRT_API (start INTEGER NOT NULL, end INTEGER NOT NULL, eventClass INTEGER NOT NULL, "
      "globalTid INTEGER, nameId INTEGER NOT NULL, returnValue INTEGER NOT NULL, nestingLevel INTEGER, "
      "callchainId INTEGER NOT NULL, argumentsId INTEGER NOT NULL)");
  db.Exec("BEGIN");
  Lcg rng;
  std::vector<int64_t> names;
  for (int i = 0; i < 40; ++i)
    names.push_back(db.StringId(i == 7 ? "pthread_mutex_lock" : "fn_" + std::to_string(i)));
  for (int i = 0; i < 30000; ++i) {
    const int64_t start = static_cast<int64_t>(rng.Next(1000000000));
    const uint64_t pick = rng.Next(41);
    const int64_t name = pick == 40 ? 99999 : names[pick];  // 99999: no such string
    const int64_t event_class = rng.Next(50) == 0 ? 31 + static_cast<int64_t>(rng.Next(2)) : 27;
    db.Exec("INSERT INTO OSRT_API VALUES (" + std::to_string(start) + ", " +
            std::to_string(start + static_cast<int64_t>(rng.Next(i % 4 == 0 ? 9 : 2000000))) + ", " +
            std::to_string(event_class) + ", 1, " + std::to_string(name) + ", 0, 0, 0, 0)");
  }
  db.Exec("COMMIT");
  int64_t grand_total = 0;
  auto groups = LoadGroups<std::string>(
      db.path(),
      "SELECT s.value, o.\"end\" - o.start FROM OSRT_API AS o LEFT JOIN StringIds AS s ON s.id = o.nameId "
      "WHERE o.eventClass = 27",
      [](sqlite3_stmt* s) {
        return sqlite3_column_type(s, 0) == SQLITE_NULL ? std::string("[Unknown]") : ColumnText(s, 0);
      },
      1, &grand_total);
  Table table;
  table.columns = Columns({"Time (%)", "Total Time (ns)", "Num Calls", "Avg (ns)", "Med (ns)", "Min (ns)", "Max (ns)",
                           "StdDev (ns)", "Name"});
  for (const auto& [name, summary] : SortedSummaries(&groups)) {
    table.rows.push_back({Percent(summary.total, grand_total), Cell::Int(summary.total), Cell::Int(summary.count),
                          summary.avg, summary.median, Cell::Int(summary.min), Cell::Int(summary.max), summary.stddev,
                          Cell::Text(name)});
  }
  const std::string expected = Csv(table);
  EXPECT_EQ(std::count(expected.begin(), expected.end(), '\n'), 42);  // header + 40 names + [Unknown]
  EXPECT_EQ(RunOk(db.path(), "osrt_sum"), expected);
}

}  // namespace
}  // namespace gt::stats::testing
