// A multi-rank nsys-schema database with known rows, for the viewer export tests. Tables come from
// gt::nsys::CreateTable (exact 3.25.0 DDL). The content (viewer_fixture.cc) is the same for every
// rank, shifted by rank * 100 us, and exercises: nested and unended NVTX ranges, marks, start/end
// ranges on another thread, the NCCL domain, runtime and nested driver calls, kernels on three
// streams (two overlapping), a graph launch with two kernels, a memcpy, a memset, stream and
// context synchronizations, GPU metrics, two hosts, launcher ranks given out of order, and an
// optional process without a rank.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace gt::viewers::testing {

constexpr int64_t GlobalTid(int64_t hw, int64_t pid, int64_t tid) {
  return (hw << 56) | (int64_t{1} << 48) | (pid << 24) | tid;
}
constexpr int64_t Us(int64_t us) {
  return us * 1000;
}  // fixture times are whole microseconds

struct FixtureOptions {
  int ranks = 4;
  bool extra_process = true;     // pid 5000 on host 0, no launcher rank, NVTX only
  bool metrics = true;           // GPU_METRICS + TARGET_INFO_GPU_METRICS
  bool nccl_operations = false;  // a GTRACE_NCCL_OPERATIONS table (one AllReduce per rank)
};

// What one rank holds (the tests derive their expected counts from these).
struct FixtureRank {
  static constexpr int kNvtxRanges = 3;       // step, forward (push/pop), ncclAllReduce (NCCL domain)
  static constexpr int kNvtxStartEnd = 1;     // prefetch, on the worker thread
  static constexpr int kNvtxMarks = 1;        // checkpoint
  static constexpr int kNvtxUnended = 1;      // dangling
  static constexpr int kApiCalls = 11;        // 10 runtime + 1 driver
  static constexpr int kLaunchesWithGpu = 7;  // calls that launched kernels/copies/memsets
  static constexpr int kKernels = 6;
  static constexpr int kMemcpys = 1;
  static constexpr int kMemsets = 1;
  static constexpr int kSyncs = 2;          // stream sync (stream 7), context sync (no stream)
  static constexpr int kStreams = 4;        // 7, 13, 20, and the no-stream synchronization row
  static constexpr int kThreads = 2;        // python (main), dataloader
  static constexpr int kMetricSamples = 6;  // 2 metrics x 3 samples
};

int64_t FixturePid(int rank);        // 1000 + rank
int64_t FixtureWorkerTid(int rank);  // 2000 + rank (tids are unique per host, like pids)
int64_t FixtureHw(int rank);         // host index: ranks 0-1 on node-a (0), 2-3 on node-b (1), ...
int64_t FixtureOffsetNs(int rank);   // Us(100 * rank)

// Writes the fixture to `path` (which must not exist). Aborts the test program on SQLite errors.
void WriteFixture(const std::string& path, const FixtureOptions& options = {});

// A small writer over a database file, for tests that need their own rows.
class FixtureDb {
 public:
  explicit FixtureDb(const std::string& path);
  ~FixtureDb();
  FixtureDb(const FixtureDb&) = delete;
  FixtureDb& operator=(const FixtureDb&) = delete;

  void Exec(const std::string& sql);
  void Ensure(const char* table);  // CREATE TABLE with nsys's DDL, once
  int64_t StringId(const std::string& value);
  using Value = std::variant<std::nullptr_t, int64_t, double, std::string>;
  // Runs one statement with ?-placeholders bound to `values` in order.
  void Run(const std::string& sql, const std::vector<Value>& values);

  void Runtime(int64_t start, int64_t end, int64_t gtid, int64_t corr, const std::string& name, int64_t cls = 0);
  void Kernel(int64_t start,
              int64_t end,
              int64_t gpid,
              int64_t stream,
              int64_t corr,
              const std::string& name,
              const std::string& short_name);
  void Nvtx(int64_t type,
            int64_t start,
            std::optional<int64_t> end,
            int64_t gtid,
            const std::string& text,
            bool registered,
            int64_t domain);
  sqlite3* handle() { return db_; }

 private:
  sqlite3* db_ = nullptr;
  std::string path_;
};

}  // namespace gt::viewers::testing
