// Builds small SQLite files in the Nsight Systems export schema 3.25.0 for the gt::stats tests.
// The CREATE TABLE statements (nsys_test_db.cc) carry the exact column names, order, types, NOT NULL
// and PRIMARY KEY of shared/reference/nsys-3.25.0-schema.sql (TARGET_INFO_GPU / _CUDA_DEVICE from the
// 3.24.14 export, which the 3.25.0 sample lacks); schema_test.cc checks them against the reference.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gt::stats::testing {

// Serialized ids as nsys writes them locally: VM byte 1, HW byte 0 (fact sheet §3 fact 3).
constexpr int64_t GlobalTid(int64_t pid, int64_t tid) {
  return (int64_t{1} << 48) | (pid << 24) | tid;
}
constexpr int64_t GlobalPid(int64_t pid) {
  return GlobalTid(pid, 0);
}

// Table name -> our CREATE TABLE statement.
const std::vector<std::pair<std::string, std::string>>& NsysTableDdl();

struct KernelRow {
  int64_t start = 0;
  int64_t end = 0;
  int64_t device_id = 0;
  int64_t context_id = 1;
  int64_t green_context_id = 0;
  int64_t stream_id = 7;
  int64_t correlation_id = 0;
  int64_t global_pid = 0;
  std::string demangled_name;
  std::string short_name;
  int64_t grid[3] = {1, 1, 1};
  int64_t block[3] = {1, 1, 1};
  int64_t registers_per_thread = 16;
  int64_t static_shared_bytes = 0;
  int64_t dynamic_shared_bytes = 0;
};

struct MemcpyRow {
  int64_t start = 0;
  int64_t end = 0;
  int64_t device_id = 0;
  int64_t context_id = 1;
  int64_t stream_id = 7;
  int64_t correlation_id = 0;
  int64_t global_pid = 0;
  int64_t bytes = 0;
  int64_t copy_kind = 1;  // ENUM_CUDA_MEMCPY_OPER: 1 HtoD, 2 DtoH, 8 DtoD
  int64_t src_kind = 0;   // ENUM_CUDA_MEM_KIND: 0 Pageable, 1 Pinned, 2 Device
  int64_t dst_kind = 2;
};

struct MemsetRow {
  int64_t start = 0;
  int64_t end = 0;
  int64_t device_id = 0;
  int64_t context_id = 1;
  int64_t stream_id = 7;
  int64_t correlation_id = 0;
  int64_t global_pid = 0;
  int64_t bytes = 0;
  int64_t mem_kind = 2;
};

struct NvtxRow {
  int64_t start = 0;
  std::optional<int64_t> end;
  int64_t event_type = 59;  // 59 push/pop, 60 start/end, 75 domain create
  std::optional<std::string> text;
  std::optional<std::string> registered_text;  // goes to StringIds, referenced by textId
  int64_t global_tid = 0;
  std::optional<int64_t> end_global_tid;
  int64_t domain_id = 0;
};

// A database file under the test's temp directory, removed on destruction. Tables are created on
// demand; rows go in with autocommit, so the file is complete whenever a report opens it.
class TestDb {
 public:
  explicit TestDb(const std::string& name);
  TestDb(const TestDb&) = delete;
  TestDb& operator=(const TestDb&) = delete;
  ~TestDb();

  const std::string& path() const { return path_; }

  void Create(const std::vector<std::string>& tables);
  // ENUM_CUDA_MEMCPY_OPER and ENUM_CUDA_MEM_KIND with nsys's rows (ids/labels as in the export).
  void CreateEnums();
  void Exec(const std::string& sql);
  int64_t StringId(const std::string& value);  // interns into StringIds

  void AddKernel(const KernelRow& row);
  void AddMemcpy(const MemcpyRow& row);
  void AddMemset(const MemsetRow& row);
  void AddRuntime(int64_t start,
                  int64_t end,
                  int64_t global_tid,
                  int64_t correlation_id,
                  const std::string& name,
                  int64_t return_value = 0,
                  int64_t event_class = 0);
  void AddNvtx(const NvtxRow& row);
  void AddThreadName(int64_t global_tid, const std::string& name, int64_t priority);
  void AddGpu(int64_t id, const std::string& name);

 private:
  std::string path_;
  sqlite3* db_ = nullptr;
};

// shared/reference: GT_TEST_REFERENCE_DIR from the environment when set, else the build's definition.
std::string ReferenceDir();

// Runs `report` and returns its output; fails the test when RunReport fails.
std::string RunOk(const std::string& path, std::string_view report, std::string_view format = "csv");

// Splits CSV text (RFC 4180 quoting) into rows of fields.
std::vector<std::vector<std::string>> ParseCsv(std::string_view text);

}  // namespace gt::stats::testing
