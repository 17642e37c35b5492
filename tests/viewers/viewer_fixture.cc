#include "tests/viewers/viewer_fixture.h"

#include <cstdio>
#include <cstdlib>

#include "tools/nsys/nsys_schema.h"

namespace gt::viewers::testing {
namespace {

[[noreturn]] void Die(const std::string& what, sqlite3* db) {
  std::fprintf(stderr, "viewer fixture: %s: %s\n", what.c_str(), db != nullptr ? sqlite3_errmsg(db) : "");
  std::abort();
}

}  // namespace

int64_t FixturePid(int rank) {
  return 1000 + rank;
}
int64_t FixtureWorkerTid(int rank) {
  return 2000 + rank;
}
int64_t FixtureHw(int rank) {
  return rank / 2;
}
int64_t FixtureOffsetNs(int rank) {
  return Us(100 * rank);
}

FixtureDb::FixtureDb(const std::string& path) : path_(path) {
  if (sqlite3_open(path.c_str(), &db_) != SQLITE_OK)
    Die("open " + path, db_);
  Exec("PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; BEGIN");
  Ensure("StringIds");
}

FixtureDb::~FixtureDb() {
  Exec("COMMIT");
  sqlite3_close(db_);
}

void FixtureDb::Exec(const std::string& sql) {
  char* error = nullptr;
  if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &error) != SQLITE_OK) {
    Die(sql + ": " + (error != nullptr ? error : ""), nullptr);
  }
}

void FixtureDb::Ensure(const char* table) {
  sqlite3_stmt* q = nullptr;
  sqlite3_prepare_v2(db_, "SELECT 1 FROM sqlite_master WHERE name = ?1", -1, &q, nullptr);
  sqlite3_bind_text(q, 1, table, -1, SQLITE_STATIC);
  bool exists = sqlite3_step(q) == SQLITE_ROW;
  sqlite3_finalize(q);
  if (exists)
    return;
  gt::Status st = gt::nsys::CreateTable(db_, table);
  if (!st.ok())
    Die(std::string("create ") + table + ": " + st.message(), nullptr);
}

void FixtureDb::Run(const std::string& sql, const std::vector<Value>& values) {
  sqlite3_stmt* q = nullptr;
  if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &q, nullptr) != SQLITE_OK)
    Die(sql, db_);
  for (size_t i = 0; i < values.size(); ++i) {
    int index = static_cast<int>(i) + 1;
    const Value& v = values[i];
    if (std::holds_alternative<int64_t>(v)) {
      sqlite3_bind_int64(q, index, std::get<int64_t>(v));
    } else if (std::holds_alternative<double>(v)) {
      sqlite3_bind_double(q, index, std::get<double>(v));
    } else if (std::holds_alternative<std::string>(v)) {
      sqlite3_bind_text(q, index, std::get<std::string>(v).c_str(), -1, SQLITE_TRANSIENT);
    } else {
      sqlite3_bind_null(q, index);
    }
  }
  if (sqlite3_step(q) != SQLITE_DONE)
    Die(sql, db_);
  sqlite3_finalize(q);
}

int64_t FixtureDb::StringId(const std::string& value) {
  sqlite3_stmt* q = nullptr;
  sqlite3_prepare_v2(db_, "SELECT id FROM StringIds WHERE value = ?1", -1, &q, nullptr);
  sqlite3_bind_text(q, 1, value.c_str(), -1, SQLITE_TRANSIENT);
  int64_t id = -1;
  if (sqlite3_step(q) == SQLITE_ROW)
    id = sqlite3_column_int64(q, 0);
  sqlite3_finalize(q);
  if (id >= 0)
    return id;
  sqlite3_prepare_v2(db_, "SELECT coalesce(max(id) + 1, 0) FROM StringIds", -1, &q, nullptr);
  sqlite3_step(q);
  id = sqlite3_column_int64(q, 0);
  sqlite3_finalize(q);
  Run("INSERT INTO StringIds (id, value) VALUES (?, ?)", {id, value});
  return id;
}

void FixtureDb::Runtime(int64_t start, int64_t end, int64_t gtid, int64_t corr, const std::string& name, int64_t cls) {
  Ensure("CUPTI_ACTIVITY_KIND_RUNTIME");
  Run("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME (start, end, eventClass, globalTid, correlationId, nameId, "
      "returnValue) VALUES (?, ?, ?, ?, ?, ?, 0)",
      {start, end, cls, gtid, corr, StringId(name)});
}

void FixtureDb::Kernel(int64_t start,
                       int64_t end,
                       int64_t gpid,
                       int64_t stream,
                       int64_t corr,
                       const std::string& name,
                       const std::string& short_name) {
  Ensure("CUPTI_ACTIVITY_KIND_KERNEL");
  Run("INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, contextId, greenContextId, streamId, "
      "correlationId, globalPid, demangledName, shortName, mangledName, launchType, cacheConfig, registersPerThread, "
      "gridX, gridY, gridZ, blockX, blockY, blockZ, staticSharedMemory, dynamicSharedMemory, localMemoryPerThread, "
      "localMemoryTotal, gridId, sharedMemoryExecuted, sharedMemoryLimitConfig, tensorSizeMinusOneElements) "
      "VALUES (?, ?, 0, 1, 0, ?, ?, ?, ?, ?, NULL, 1, 1, 32, 128, 1, 1, 256, 1, 1, 0, 1024, 0, 0, 1, 0, 0, '[]')",
      {start, end, stream, corr, gpid, StringId(name), StringId(short_name)});
}

void FixtureDb::Nvtx(int64_t type,
                     int64_t start,
                     std::optional<int64_t> end,
                     int64_t gtid,
                     const std::string& text,
                     bool registered,
                     int64_t domain) {
  Ensure("NVTX_EVENTS");
  const std::string sql =
      std::string("INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, textId, domainId) VALUES (?, ") +
      (end ? std::to_string(*end) : "NULL") + ", ?, ?, ?, ?, ?)";
  if (registered) {
    Run(sql, {start, type, nullptr, gtid, StringId(text), domain});
  } else {
    Run(sql, {start, type, text, gtid, nullptr, domain});
  }
}

void WriteFixture(const std::string& path, const FixtureOptions& options) {
  FixtureDb db(path);
  for (const char* t :
       {"TARGET_INFO_SESSION_START_TIME", "ANALYSIS_DETAILS", "PROCESSES", "ThreadNames", "MPI_RANKS",
        "TARGET_INFO_SYSTEM_ENV", "TARGET_INFO_GPU", "TARGET_INFO_CUDA_DEVICE", "CUPTI_ACTIVITY_KIND_MEMCPY",
        "CUPTI_ACTIVITY_KIND_MEMSET", "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION"}) {
    db.Ensure(t);
  }
  const int n = options.ranks;
  db.Run(
      "INSERT INTO TARGET_INFO_SESSION_START_TIME (utcEpochNs, utcTime, localTime, systemClockNs) "
      "VALUES (1700000000000000000, '2023-11-14T22:13:20', '2023-11-14T22:13:20', 5000000000)",
      {});
  db.Run("INSERT INTO ANALYSIS_DETAILS (globalVid, duration, startTime, stopTime) VALUES (?, ?, 5000000000, ?)",
         {int64_t{1} << 48, Us(10000 + 100 * n), 5000000000 + Us(10000 + 100 * n)});
  for (int64_t hw = 0; hw <= FixtureHw(n - 1); ++hw) {
    db.Run(
        "INSERT INTO TARGET_INFO_SYSTEM_ENV (globalVid, devStateName, name, nameEnum, value) "
        "VALUES (?, 'Local (CLI)', 'Hostname', 619, ?)",
        {(hw << 56) | (int64_t{1} << 48), std::string("node-") + static_cast<char>('a' + hw)});
  }
  // Launcher ranks, written in reverse order: the export must sort by rank, not by row.
  for (int r = n - 1; r >= 0; --r) {
    db.Run("INSERT INTO MPI_RANKS (globalTid, rank) VALUES (?, ?)",
           {GlobalTid(FixtureHw(r), FixturePid(r), FixturePid(r)), int64_t{r}});
  }
  for (int r = 0; r < n; ++r) {
    const int64_t hw = FixtureHw(r), pid = FixturePid(r), o = FixtureOffsetNs(r);
    const int64_t gpid = GlobalTid(hw, pid, 0), main = GlobalTid(hw, pid, pid),
                  worker = GlobalTid(hw, pid, FixtureWorkerTid(r));
    db.Run("INSERT INTO PROCESSES (globalPid, pid, name) VALUES (?, ?, '/usr/bin/python3')", {gpid, pid});
    db.Run("INSERT INTO ThreadNames (nameId, priority, globalTid) VALUES (?, 20, ?)", {db.StringId("python"), main});
    db.Run("INSERT INTO ThreadNames (nameId, priority, globalTid) VALUES (?, 20, ?)",
           {db.StringId("dataloader"), worker});
    db.Run(
        "INSERT INTO TARGET_INFO_GPU (vmId, id, name, busLocation, totalMemory, smCount, cuDevice, "
        "maxThreadsPerBlock, maxShmemPerBlock, maxShmemPerBlockOptin, maxShmemPerSm, maxRegistersPerBlock, "
        "maxRegistersPerSm, threadsPerWarp, maxWarpsPerSm, computeMajor, computeMinor) "
        "VALUES (?, ?, 'NVIDIA H100 80GB HBM3', ?, 85045460992, 132, ?, 1024, 49152, 232448, 233472, 65536, 65536, "
        "32, 64, 9, 0)",
        {int64_t{1} << 48, int64_t{r}, "0000:0" + std::to_string(r) + ":00.0", int64_t{r % 2}});
    db.Run(
        "INSERT INTO TARGET_INFO_CUDA_DEVICE (gpuId, cudaId, pid, uuid, numMultiprocessors) VALUES (?, 0, ?, '', 132)",
        {int64_t{r}, pid});

    // NVTX: domain 1 is "NCCL" in every process.
    db.Ensure("NVTX_EVENTS");
    db.Run("INSERT INTO NVTX_EVENTS (start, eventType, text, globalTid, domainId) VALUES (?, 75, 'NCCL', ?, 1)",
           {Us(10) + o, main});
    db.Nvtx(59, Us(1000) + o, Us(9000) + o, main, "step", false, 0);
    db.Nvtx(59, Us(2000) + o, Us(5000) + o, main, "forward", true, 0);
    db.Nvtx(34, Us(6000) + o, std::nullopt, main, "checkpoint", false, 0);
    db.Nvtx(60, Us(1500) + o, Us(7000) + o, worker, "prefetch", false, 0);
    db.Nvtx(59, Us(5500) + o, Us(6500) + o, main, "ncclAllReduce", true, 1);
    db.Nvtx(59, Us(8000) + o, std::nullopt, main, "dangling", false, 0);

    // CUDA API calls and what they launched.
    db.Runtime(Us(1100) + o, Us(1200) + o, main, 9, "cudaMalloc_v3020");
    db.Runtime(Us(2100) + o, Us(2300) + o, main, 10, "cudaLaunchKernel_v7000");
    db.Runtime(Us(2150) + o, Us(2250) + o, main, 20, "cuLaunchKernel", 1);
    db.Runtime(Us(2400) + o, Us(2500) + o, main, 11, "cudaMemcpyAsync_v3020");
    db.Runtime(Us(2600) + o, Us(2650) + o, main, 14, "cudaMemsetAsync_v3020");
    db.Runtime(Us(2700) + o, Us(2800) + o, main, 15, "cudaGraphLaunch_v10000");
    db.Runtime(Us(5600) + o, Us(5700) + o, main, 12, "cudaLaunchKernel_v7000");
    db.Runtime(Us(7000) + o, Us(8500) + o, main, 13, "cudaStreamSynchronize_v3020");
    db.Runtime(Us(8550) + o, Us(8750) + o, main, 18, "cudaDeviceSynchronize_v3020");
    db.Runtime(Us(3000) + o, Us(3100) + o, worker, 16, "cudaLaunchKernel_v7000");
    db.Runtime(Us(3200) + o, Us(3300) + o, worker, 17, "cudaLaunchKernel_v7000");

    const std::string compute = "void compute_kernel<float>(float *, int)";
    db.Kernel(Us(3000) + o, Us(4000) + o, gpid, 7, 10, compute, "compute_kernel");
    db.Kernel(Us(4400) + o, Us(4500) + o, gpid, 7, 15, "graph_node_a(float *)", "graph_node_a");
    db.Kernel(Us(4500) + o, Us(4600) + o, gpid, 7, 15, "graph_node_b(float *)", "graph_node_b");
    db.Kernel(Us(5800) + o, Us(6800) + o, gpid, 13, 12,
              "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
              "ncclDevKernel_AllReduce_Sum_f32_RING_LL");
    db.Kernel(Us(6000) + o, Us(6500) + o, gpid, 20, 16, compute, "compute_kernel");
    db.Kernel(Us(6200) + o, Us(6900) + o, gpid, 20, 17, "void other_kernel(int)", "other_kernel");
    db.Run(
        "INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY (start, end, deviceId, contextId, greenContextId, streamId, "
        "correlationId, globalPid, bytes, copyKind, srcKind, dstKind, copyCount) VALUES (?, ?, 0, 1, 0, 7, 11, ?, "
        "4096, 1, 0, 2, 1)",
        {Us(4100) + o, Us(4200) + o, gpid});
    db.Run(
        "INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET (start, end, deviceId, contextId, greenContextId, streamId, "
        "correlationId, globalPid, value, bytes, memKind) VALUES (?, ?, 0, 1, 0, 7, 14, ?, 0, 1024, 2)",
        {Us(4300) + o, Us(4350) + o, gpid});
    db.Run(
        "INSERT INTO CUPTI_ACTIVITY_KIND_SYNCHRONIZATION (start, end, deviceId, contextId, streamId, "
        "correlationId, globalPid, syncType, eventId) VALUES (?, ?, 0, 1, 7, 13, ?, 3, 4294967295)",
        {Us(7100) + o, Us(8400) + o, gpid});
    db.Run(
        "INSERT INTO CUPTI_ACTIVITY_KIND_SYNCHRONIZATION (start, end, deviceId, contextId, streamId, "
        "correlationId, globalPid, syncType, eventId) VALUES (?, ?, 0, 1, 4294967295, 18, ?, 4, 4294967295)",
        {Us(8600) + o, Us(8700) + o, gpid});

    if (options.metrics) {
      db.Ensure("GPU_METRICS");
      db.Ensure("TARGET_INFO_GPU_METRICS");
      const int64_t type_id = (hw << 56) | (int64_t{1} << 48) | r;  // GPU index in the low byte
      for (int64_t m = 1; m <= 2; ++m) {
        db.Run(
            "INSERT INTO TARGET_INFO_GPU_METRICS (typeId, sourceId, typeName, metricId, metricName) "
            "VALUES (?, 0, 'GH100', ?, ?)",
            {type_id, m, std::string(m == 1 ? "SM Active [Throughput %]" : "DRAM Read Bandwidth [Throughput %]")});
        for (int64_t k = 0; k < 3; ++k) {
          db.Run("INSERT INTO GPU_METRICS (rawTimestamp, timestamp, typeId, metricId, value) VALUES (?, ?, ?, ?, ?)",
                 {Us(1000 + 2000 * k) + o, Us(1000 + 2000 * k) + o, type_id, m, 10 * m + k + r});
        }
      }
    }
    if (options.nccl_operations) {
      db.Exec(
          "CREATE TABLE IF NOT EXISTS GTRACE_NCCL_OPERATIONS (globalPid INTEGER NOT NULL, eventId INTEGER NOT NULL, "
          "kind TEXT NOT NULL, func TEXT NOT NULL, commId INTEGER, rank INTEGER, nRanks INTEGER, seqNumber INTEGER, "
          "messageBytes INTEGER, algo TEXT, proto TEXT, apiStart INTEGER, apiEnd INTEGER, apiGlobalTid INTEGER, "
          "enqueueStart INTEGER, enqueueEnd INTEGER, globalTid INTEGER, gpuStart INTEGER, gpuEnd INTEGER, "
          "kernelChannels INTEGER NOT NULL)");
      db.Run(
          "INSERT INTO GTRACE_NCCL_OPERATIONS VALUES (?, 1, 'Coll', 'AllReduce', 77, ?, ?, 0, 4096, 'RING', 'LL', "
          "?, ?, ?, ?, ?, ?, ?, ?, 2)",
          {gpid, int64_t{r}, int64_t{n}, Us(5600) + o, Us(5700) + o, main, Us(5610) + o, Us(5690) + o, main,
           Us(5800) + o, Us(6800) + o});
    }
  }
  if (options.extra_process) {
    const int64_t gpid = GlobalTid(0, 5000, 0), t = GlobalTid(0, 5000, 5000);
    db.Run("INSERT INTO PROCESSES (globalPid, pid, name) VALUES (?, 5000, '/usr/bin/python3')", {gpid});
    db.Run("INSERT INTO ThreadNames (nameId, priority, globalTid) VALUES (?, 20, ?)",
           {db.StringId("pt_data_worker"), t});
    db.Nvtx(59, Us(3000), Us(3600), t, "load", false, 0);
    db.Nvtx(34, Us(3500), std::nullopt, t, "batch", false, 0);
  }
}

}  // namespace gt::viewers::testing
