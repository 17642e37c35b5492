#include "tests/stats/nsys_test_db.h"

#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <sstream>

#include "tests/common/test_util.h"
#include "tools/stats/stats.h"

namespace gt::stats::testing {

const std::vector<std::pair<std::string, std::string>>& NsysTableDdl() {
  // Column lists as nsys 2026.2 (schema 3.25.0) writes them; comments dropped.
  static const std::vector<std::pair<std::string, std::string>> kDdl = {
      {"StringIds", "CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL)"},
      {"ThreadNames", "CREATE TABLE ThreadNames (nameId INTEGER NOT NULL, priority INTEGER, globalTid INTEGER)"},
      {"PROCESSES", "CREATE TABLE PROCESSES (globalPid INTEGER, pid INTEGER, name TEXT)"},
      {"META_DATA_EXPORT", "CREATE TABLE META_DATA_EXPORT (name TEXT NOT NULL, value TEXT)"},
      {"CUPTI_ACTIVITY_KIND_RUNTIME",
       "CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER NOT NULL, end INTEGER NOT NULL,"
       " eventClass INTEGER NOT NULL, globalTid INTEGER, correlationId INTEGER, nameId INTEGER NOT NULL,"
       " returnValue INTEGER NOT NULL, callchainId INTEGER)"},
      {"CUPTI_ACTIVITY_KIND_KERNEL",
       "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT NULL,"
       " deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, greenContextId INTEGER,"
       " streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER,"
       " demangledName INTEGER NOT NULL, shortName INTEGER NOT NULL, mangledName INTEGER,"
       " launchType INTEGER, cacheConfig INTEGER, registersPerThread INTEGER NOT NULL,"
       " gridX INTEGER NOT NULL, gridY INTEGER NOT NULL, gridZ INTEGER NOT NULL,"
       " blockX INTEGER NOT NULL, blockY INTEGER NOT NULL, blockZ INTEGER NOT NULL,"
       " staticSharedMemory INTEGER NOT NULL, dynamicSharedMemory INTEGER NOT NULL,"
       " localMemoryPerThread INTEGER NOT NULL, localMemoryTotal INTEGER NOT NULL,"
       " gridId INTEGER NOT NULL, sharedMemoryExecuted INTEGER, graphNodeId INTEGER,"
       " sharedMemoryLimitConfig INTEGER, qmdBulkReleaseDone INTEGER, qmdPreexitDone INTEGER,"
       " qmdLastCtaDone INTEGER, graphId INTEGER, clusterX INTEGER, clusterY INTEGER, clusterZ INTEGER,"
       " clusterSchedulingPolicy INTEGER, maxPotentialClusterSize INTEGER, maxActiveClusters INTEGER,"
       " sharedMemoryRequestedPercentage INTEGER, tensorSizeMinusOneElements TEXT NOT NULL)"},
      {"CUPTI_ACTIVITY_KIND_MEMCPY",
       "CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start INTEGER NOT NULL, end INTEGER NOT NULL,"
       " deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, greenContextId INTEGER,"
       " streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER, bytes INTEGER NOT NULL,"
       " copyKind INTEGER NOT NULL, deprecatedSrcId INTEGER, srcKind INTEGER, dstKind INTEGER,"
       " srcDeviceId INTEGER, srcContextId INTEGER, dstDeviceId INTEGER, dstContextId INTEGER,"
       " migrationCause INTEGER, graphNodeId INTEGER, virtualAddress INTEGER, copyCount INTEGER)"},
      {"CUPTI_ACTIVITY_KIND_MEMSET",
       "CREATE TABLE CUPTI_ACTIVITY_KIND_MEMSET (start INTEGER NOT NULL, end INTEGER NOT NULL,"
       " deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, greenContextId INTEGER,"
       " streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER, value INTEGER NOT NULL,"
       " bytes INTEGER NOT NULL, graphNodeId INTEGER, memKind INTEGER)"},
      {"NVTX_EVENTS",
       "CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL,"
       " rangeId INTEGER, category INTEGER, color INTEGER, text TEXT, globalTid INTEGER,"
       " endGlobalTid INTEGER, textId INTEGER, domainId INTEGER, uint64Value INTEGER, int64Value INTEGER,"
       " doubleValue REAL, uint32Value INTEGER, int32Value INTEGER, floatValue REAL, jsonTextId INTEGER,"
       " jsonText TEXT, binaryData TEXT)"},
      {"ENUM_CUDA_MEMCPY_OPER",
       "CREATE TABLE ENUM_CUDA_MEMCPY_OPER (id INTEGER NOT NULL PRIMARY KEY, name TEXT, label TEXT)"},
      {"ENUM_CUDA_MEM_KIND",
       "CREATE TABLE ENUM_CUDA_MEM_KIND (id INTEGER NOT NULL PRIMARY KEY, name TEXT, label TEXT)"},
      {"TARGET_INFO_GPU",
       "CREATE TABLE TARGET_INFO_GPU (vmId INTEGER NOT NULL, id INTEGER NOT NULL, name TEXT, busLocation TEXT,"
       " isDiscrete INTEGER, l2CacheSize INTEGER, totalMemory INTEGER, memoryBandwidth INTEGER,"
       " clockRate INTEGER, smCount INTEGER, pwGpuId INTEGER, uuid TEXT, luid INTEGER, chipName TEXT,"
       " cuDevice INTEGER, ctxswDevPath TEXT, ctrlDevPath TEXT, revision INTEGER, nodeMask INTEGER,"
       " constantMemory INTEGER, maxIPC INTEGER, maxRegistersPerBlock INTEGER, maxShmemPerBlock INTEGER,"
       " maxShmemPerBlockOptin INTEGER, maxShmemPerSm INTEGER, maxRegistersPerSm INTEGER,"
       " threadsPerWarp INTEGER, asyncEngines INTEGER, maxWarpsPerSm INTEGER, maxBlocksPerSm INTEGER,"
       " maxThreadsPerBlock INTEGER, maxBlockDimX INTEGER, maxBlockDimY INTEGER, maxBlockDimZ INTEGER,"
       " maxGridDimX INTEGER, maxGridDimY INTEGER, maxGridDimZ INTEGER, computeMajor INTEGER,"
       " computeMinor INTEGER, smMajor INTEGER, smMinor INTEGER)"},
      {"TARGET_INFO_CUDA_DEVICE",
       "CREATE TABLE TARGET_INFO_CUDA_DEVICE (gpuId INTEGER, cudaId INTEGER NOT NULL, pid INTEGER NOT NULL,"
       " uuid TEXT, numMultiprocessors INTEGER)"},
  };
  return kDdl;
}

namespace {

void Check(sqlite3* db, int rc, const std::string& what) {
  ASSERT_EQ(rc, SQLITE_OK) << what << ": " << sqlite3_errmsg(db);
}

}  // namespace

TestDb::TestDb(const std::string& name) {
  // The pid keeps two test processes apart (ctest -j, or several build trees on one machine: a shared
  // name let one process delete the file another was filling).
  path_ = ::testing::TempDir() + "gt_stats_" + name + "." + std::to_string(::getpid()) + ".sqlite";
  std::remove(path_.c_str());
  EXPECT_EQ(sqlite3_open(path_.c_str(), &db_), SQLITE_OK);
  Create({"StringIds"});
}

TestDb::~TestDb() {
  sqlite3_close(db_);
  std::remove(path_.c_str());
}

void TestDb::Exec(const std::string& sql) {
  char* error = nullptr;
  const int rc = sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &error);
  EXPECT_EQ(rc, SQLITE_OK) << sql << ": " << (error ? error : "");
  sqlite3_free(error);
}

void TestDb::Create(const std::vector<std::string>& tables) {
  for (const std::string& table : tables) {
    bool found = false;
    for (const auto& [name, ddl] : NsysTableDdl()) {
      if (name == table) {
        Exec(ddl);
        found = true;
      }
    }
    EXPECT_TRUE(found) << "no DDL for " << table;
  }
}

void TestDb::CreateEnums() {
  Create({"ENUM_CUDA_MEMCPY_OPER", "ENUM_CUDA_MEM_KIND"});
  Exec(
      "INSERT INTO ENUM_CUDA_MEMCPY_OPER VALUES"
      " (0,'CUDA_MEMCPY_KIND_UNKNOWN','Unknown'),(1,'CUDA_MEMCPY_KIND_HTOD','Host-to-Device'),"
      " (2,'CUDA_MEMCPY_KIND_DTOH','Device-to-Host'),(8,'CUDA_MEMCPY_KIND_DTOD','Device-to-Device'),"
      " (10,'CUDA_MEMCPY_KIND_PTOP','Peer-to-Peer')");
  Exec(
      "INSERT INTO ENUM_CUDA_MEM_KIND VALUES"
      " (0,'CUDA_MEMOPR_MEMORY_KIND_PAGEABLE','Pageable'),(1,'CUDA_MEMOPR_MEMORY_KIND_PINNED','Pinned'),"
      " (2,'CUDA_MEMOPR_MEMORY_KIND_DEVICE','Device'),(7,'CUDA_MEMOPR_MEMORY_KIND_UNKNOWN','Unknown')");
}

int64_t TestDb::StringId(const std::string& value) {
  sqlite3_stmt* stmt = nullptr;
  sqlite3_prepare_v2(db_, "SELECT id FROM StringIds WHERE value = ?1", -1, &stmt, nullptr);
  sqlite3_bind_text(stmt, 1, value.data(), static_cast<int>(value.size()), SQLITE_TRANSIENT);
  int64_t id = -1;
  if (sqlite3_step(stmt) == SQLITE_ROW)
    id = sqlite3_column_int64(stmt, 0);
  sqlite3_finalize(stmt);
  if (id >= 0)
    return id;
  sqlite3_prepare_v2(db_, "INSERT INTO StringIds (id, value) SELECT coalesce(max(id) + 1, 0), ?1 FROM StringIds", -1,
                     &stmt, nullptr);
  sqlite3_bind_text(stmt, 1, value.data(), static_cast<int>(value.size()), SQLITE_TRANSIENT);
  EXPECT_EQ(sqlite3_step(stmt), SQLITE_DONE) << sqlite3_errmsg(db_);
  sqlite3_finalize(stmt);
  return StringId(value);
}

namespace {

// Binds 1-based parameters from a list of optional integers/texts.
struct Value {
  Value(int64_t v) : integer(v) {}                 // NOLINT: implicit for brace lists
  Value(std::optional<int64_t> v) : integer(v) {}  // NOLINT
  Value(const std::string& v) : text(v) {}         // NOLINT
  Value(std::nullopt_t) {}                         // NOLINT
  std::optional<int64_t> integer;
  std::optional<std::string> text;
};

void Insert(sqlite3* db, const std::string& sql, const std::vector<Value>& values) {
  sqlite3_stmt* stmt = nullptr;
  Check(db, sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr), sql);
  for (size_t i = 0; i < values.size(); ++i) {
    const int index = static_cast<int>(i + 1);
    if (values[i].integer) {
      sqlite3_bind_int64(stmt, index, *values[i].integer);
    } else if (values[i].text) {
      sqlite3_bind_text(stmt, index, values[i].text->data(), static_cast<int>(values[i].text->size()),
                        SQLITE_TRANSIENT);
    } else {
      sqlite3_bind_null(stmt, index);
    }
  }
  EXPECT_EQ(sqlite3_step(stmt), SQLITE_DONE) << sql << ": " << sqlite3_errmsg(db);
  sqlite3_finalize(stmt);
}

std::string Placeholders(int count) {
  std::string result;
  for (int i = 1; i <= count; ++i)
    result += (i > 1 ? ",?" : "?") + std::to_string(i);
  return result;
}

}  // namespace

void TestDb::AddKernel(const KernelRow& r) {
  const int64_t demangled = StringId(r.demangled_name);
  const int64_t short_name = StringId(r.short_name.empty() ? r.demangled_name : r.short_name);
  Insert(db_,
         "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, contextId, greenContextId, streamId,"
         " correlationId, globalPid, demangledName, shortName, launchType, cacheConfig, registersPerThread,"
         " gridX, gridY, gridZ, blockX, blockY, blockZ, staticSharedMemory, dynamicSharedMemory,"
         " localMemoryPerThread, localMemoryTotal, gridId, tensorSizeMinusOneElements) VALUES (" +
             Placeholders(24) + ", '[]')",
         {r.start,
          r.end,
          r.device_id,
          r.context_id,
          r.green_context_id,
          r.stream_id,
          r.correlation_id,
          r.global_pid,
          demangled,
          short_name,
          int64_t{1},
          int64_t{1},
          r.registers_per_thread,
          r.grid[0],
          r.grid[1],
          r.grid[2],
          r.block[0],
          r.block[1],
          r.block[2],
          r.static_shared_bytes,
          r.dynamic_shared_bytes,
          int64_t{0},
          int64_t{0},
          r.correlation_id});
}

void TestDb::AddMemcpy(const MemcpyRow& r) {
  Insert(db_,
         "INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY (start, end, deviceId, contextId, greenContextId, streamId,"
         " correlationId, globalPid, bytes, copyKind, srcKind, dstKind, copyCount) VALUES (" +
             Placeholders(12) + ", 1)",
         {r.start, r.end, r.device_id, r.context_id, int64_t{0}, r.stream_id, r.correlation_id, r.global_pid, r.bytes,
          r.copy_kind, r.src_kind, r.dst_kind});
}

void TestDb::AddMemset(const MemsetRow& r) {
  Insert(db_,
         "INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET (start, end, deviceId, contextId, greenContextId, streamId,"
         " correlationId, globalPid, value, bytes, memKind) VALUES (" +
             Placeholders(11) + ")",
         {r.start, r.end, r.device_id, r.context_id, int64_t{0}, r.stream_id, r.correlation_id, r.global_pid,
          int64_t{0}, r.bytes, r.mem_kind});
}

void TestDb::AddRuntime(int64_t start,
                        int64_t end,
                        int64_t global_tid,
                        int64_t correlation_id,
                        const std::string& name,
                        int64_t return_value,
                        int64_t event_class) {
  Insert(db_,
         "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME (start, end, eventClass, globalTid, correlationId, nameId,"
         " returnValue) VALUES (" +
             Placeholders(7) + ")",
         {start, end, event_class, global_tid, correlation_id, StringId(name), return_value});
}

void TestDb::AddNvtx(const NvtxRow& r) {
  std::optional<int64_t> text_id;
  if (r.registered_text)
    text_id = StringId(*r.registered_text);
  Insert(db_,
         "INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, endGlobalTid, textId, domainId)"
         " VALUES (" +
             Placeholders(8) + ")",
         {r.start, r.end, r.event_type, r.text ? Value(*r.text) : Value(std::nullopt), r.global_tid, r.end_global_tid,
          text_id, r.domain_id});
}

void TestDb::AddThreadName(int64_t global_tid, const std::string& name, int64_t priority) {
  Insert(db_, "INSERT INTO ThreadNames (nameId, priority, globalTid) VALUES (?1, ?2, ?3)",
         {StringId(name), priority, global_tid});
}

void TestDb::AddGpu(int64_t id, const std::string& name) {
  Insert(db_, "INSERT INTO TARGET_INFO_GPU (vmId, id, name, cuDevice) VALUES (?1, ?2, ?3, ?2)",
         {int64_t{1} << 48, id, name});
}

std::string ReferenceDir() { return gt::test::ConfiguredReferenceDir(); }

std::string RunOk(const std::string& path, std::string_view report, std::string_view format) {
  Format parsed = Format::kCsv;
  EXPECT_TRUE(ParseFormat(format, &parsed).ok());
  std::ostringstream out;
  const gt::Status status = RunReport(path, report, ReportOptions{parsed}, out);
  EXPECT_TRUE(status.ok()) << report << ": " << status.message();
  return out.str();
}

std::vector<std::vector<std::string>> ParseCsv(std::string_view text) {
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> row;
  std::string field;
  bool quoted = false;
  bool row_open = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    row_open = true;
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        field += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        field += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      row.push_back(std::move(field));
      field.clear();
    } else if (c == '\n') {
      row.push_back(std::move(field));
      field.clear();
      rows.push_back(std::move(row));
      row.clear();
      row_open = false;
    } else {
      field += c;
    }
  }
  if (row_open) {
    row.push_back(std::move(field));
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace gt::stats::testing
