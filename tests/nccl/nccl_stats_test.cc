// nccl_sum on hand-built databases: bucket edges, the nccl-tests bus-bandwidth factors per
// collective, per-rank rows, untimed operations, unknown sizes, and the NVTX fallback reading NCCL's
// payload blobs (`nsys export --include-blobs=true` layout).
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <cstring>
#include <sstream>
#include <string>

#include "tests/common/test_util.h"
#include "tools/stats/stats.h"

namespace {

using gt::test::TempDir;

// The columns nccl_sum reads (the full DDL is in tools/export/nccl_export.cc).
constexpr char kOpsDdl[] =
    "CREATE TABLE GTRACE_NCCL_OPERATIONS (globalPid INTEGER NOT NULL, eventId INTEGER NOT NULL, func TEXT NOT NULL, "
    "algBytes INTEGER, nRanks INTEGER, rank INTEGER, gpuStart INTEGER, gpuEnd INTEGER)";
constexpr char kBase[] =
    "CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL);"
    "CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL, rangeId INTEGER, "
    "category INTEGER, color INTEGER, text TEXT, globalTid INTEGER, endGlobalTid INTEGER, textId INTEGER, "
    "domainId INTEGER, uint64Value INTEGER, int64Value INTEGER, doubleValue REAL, uint32Value INTEGER, "
    "int32Value INTEGER, floatValue REAL, jsonTextId INTEGER, jsonText TEXT, binaryData TEXT);";

class Db {
 public:
  explicit Db(const TempDir& dir) : path_(dir.File("t.sqlite")) {
    sqlite3_open(path_.c_str(), &db_);
    Exec(kBase);
  }
  ~Db() { sqlite3_close(db_); }
  void Exec(const std::string& sql) {
    char* err = nullptr;
    ASSERT_EQ(sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err), SQLITE_OK) << (err ? err : "") << "\n" << sql;
  }
  void Op(const std::string& func, int64_t bytes, int n, int rank, int64_t t0, int64_t ns, int pid = 1) {
    static int id = 0;
    std::string gpu = ns < 0 ? "NULL, NULL" : std::to_string(t0) + ", " + std::to_string(t0 + ns);
    Exec("INSERT INTO GTRACE_NCCL_OPERATIONS VALUES (" + std::to_string(pid) + ", " + std::to_string(++id) + ", '" +
         func + "', " + (bytes < 0 ? "NULL" : std::to_string(bytes)) + ", " + std::to_string(n) + ", " +
         std::to_string(rank) + ", " + gpu + ")");
  }
  void Blob(int64_t start, int64_t end, const std::string& name, uint64_t schema, const std::string& payload) {
    std::string blob(32, '\0');
    uint64_t h[4] = {1, schema, payload.size(), 32};
    std::memcpy(blob.data(), h, 32);
    blob += payload;
    sqlite3_stmt* st = nullptr;
    sqlite3_prepare_v2(db_,
                       "INSERT INTO NVTX_EVENTS (start, end, eventType, globalTid, textId, domainId, binaryData) "
                       "VALUES (?, ?, 59, 281474993487873, (SELECT id FROM StringIds WHERE value = ?), 1, ?)",
                       -1, &st, nullptr);
    Exec("INSERT OR IGNORE INTO StringIds (value) SELECT '" + name + "' WHERE NOT EXISTS (SELECT 1 FROM StringIds "
         "WHERE value = '" + name + "')");
    sqlite3_bind_int64(st, 1, start);
    sqlite3_bind_int64(st, 2, end);
    sqlite3_bind_text(st, 3, name.c_str(), -1, SQLITE_TRANSIENT);
    sqlite3_bind_blob(st, 4, blob.data(), static_cast<int>(blob.size()), SQLITE_TRANSIENT);
    EXPECT_EQ(sqlite3_step(st), SQLITE_DONE);
    sqlite3_finalize(st);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  sqlite3* db_ = nullptr;
};

std::string Report(const std::string& path) {
  std::ostringstream out;
  gt::stats::ReportOptions o;
  o.format = gt::stats::Format::kCsv;
  gt::Status st = gt::stats::RunReport(path, "nccl_sum", o, out);
  EXPECT_TRUE(st.ok()) << st.message();
  return out.str();
}

const std::string kHeader =
    "Collective,Size Range,Ranks,Rank,Count,Total Time (ns),Avg (ns),Med (ns),Min (ns),Max (ns),Total Size (B),"
    "AlgBW (GB/s),BusBW (GB/s),Untimed,Source\n";

TEST(NcclSum, BucketsFactorsPerRankRowsAndUntimed) {
  TempDir dir;
  Db db(dir);
  db.Exec(kOpsDdl);
  // AllReduce of 1 MiB on 8 ranks, two ranks, two ops each; one op without GPU time.
  db.Op("AllReduce", 1048576, 8, 0, 1000, 100000);
  db.Op("AllReduce", 1048576, 8, 0, 2000, 200000);
  db.Op("AllReduce", 1048576, 8, 5, 1000, 300000);
  db.Op("AllReduce", 1048576, 8, 5, 9000, -1);
  // Bucket edges: 2 MiB - 1 is still [1 MiB, 2 MiB); 2 MiB starts the next bucket; 0 bytes.
  db.Op("AllGather", 2097151, 4, 1, 0, 1000000);
  db.Op("AllGather", 2097152, 4, 1, 0, 1000000);
  db.Op("Broadcast", 0, 2, 0, 0, 500);
  db.Op("Send", 3, 2, 0, 0, 7);
  db.Op("AlltoAll", 1000, 4, 0, 0, 1000);
  db.Op("Gather", 4096, 4, 0, 0, 4096);
  db.Op("Unknown", -1, 4, 0, 0, 10);
  db.Op("ReduceScatter", 65536, 1, 0, 0, 65536);  // a 1-rank communicator: busbw factor 0
  EXPECT_EQ(Report(db.path()),
            kHeader +
                "AllGather,\"[1 MiB, 2 MiB)\",4,all,1,1000000,1000000.0,1000000.0,1000000,1000000,2097151,2.10,1.57,0,"
                "plugin\n"
                "AllGather,\"[2 MiB, 4 MiB)\",4,all,1,1000000,1000000.0,1000000.0,1000000,1000000,2097152,2.10,1.57,0,"
                "plugin\n"
                // 2 * 1 MiB (rank 0) + 1 MiB (rank 5) in 600 us: 5.24 GB/s, x 14/8 = 9.18.
                "AllReduce,\"[1 MiB, 2 MiB)\",8,all,3,600000,200000.0,200000.0,100000,300000,3145728,5.24,9.18,1,"
                "plugin\n"
                "AllReduce,\"[1 MiB, 2 MiB)\",8,0,2,300000,150000.0,150000.0,100000,200000,2097152,6.99,12.23,0,plugin\n"
                "AllReduce,\"[1 MiB, 2 MiB)\",8,5,1,300000,300000.0,300000.0,300000,300000,1048576,3.50,6.12,1,plugin\n"
                "AlltoAll,\"[512 B, 1 KiB)\",4,all,1,1000,1000.0,1000.0,1000,1000,1000,1.00,0.75,0,plugin\n"
                "Broadcast,0 B,2,all,1,500,500.0,500.0,500,500,0,0.00,0.00,0,plugin\n"
                "Gather,\"[4 KiB, 8 KiB)\",4,all,1,4096,4096.0,4096.0,4096,4096,4096,1.00,0.75,0,plugin\n"
                "ReduceScatter,\"[64 KiB, 128 KiB)\",1,all,1,65536,65536.0,65536.0,65536,65536,65536,1.00,0.00,0,"
                "plugin\n"
                "Send,\"[2 B, 4 B)\",2,all,1,7,7.0,7.0,7,7,3,0.43,0.43,0,plugin\n"
                "Unknown,unknown,4,all,1,10,10.0,10.0,10,10,,,,0,plugin\n");
}

TEST(NcclSum, FallsBackToNcclsNvtxRangesAndTheirPayloads) {
  TempDir dir;
  Db db(dir);
  // Domain "NCCL" (id 1) of process 1; a comm-init payload (commId 0xabc, 4 ranks, rank 2), two
  // AllReduce calls of 1 MiB and one AllGather of 256 KiB per rank; one range of another domain.
  db.Exec("INSERT INTO NVTX_EVENTS (start, eventType, text, globalTid, domainId) VALUES (0, 75, 'NCCL', "
          "281474993487873, 1)");
  auto payload = [](uint64_t comm, uint64_t a, int32_t b = 0, int32_t c = 0) {
    std::string p(24, '\0');
    std::memcpy(p.data(), &comm, 8);
    std::memcpy(p.data() + 8, &a, 8);
    std::memcpy(p.data() + 16, &b, 4);
    std::memcpy(p.data() + 20, &c, 4);
    return p;
  };
  std::string init(24, '\0');
  uint64_t comm = 0xabc;
  int32_t ranks = 4, rank = 2;
  std::memcpy(init.data(), &comm, 8);
  std::memcpy(init.data() + 8, &ranks, 4);
  std::memcpy(init.data() + 12, &rank, 4);
  db.Blob(10, 20, "ncclCommInitRank", (uint64_t{1} << 24) + 0, init);
  db.Blob(100, 1100, "ncclAllReduce", (uint64_t{1} << 24) + 5, payload(0xabc, 1048576));
  db.Blob(2000, 5000, "ncclAllReduce", (uint64_t{1} << 24) + 5, payload(0xabc, 1048576));
  db.Blob(6000, 6100, "ncclAllGather", (uint64_t{1} << 24) + 4, payload(0xabc, 262144).substr(0, 16));
  db.Exec("INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, domainId) VALUES (0, 99, 59, "
          "'ncclAllReduce', 281474993487873, 7)");
  EXPECT_EQ(Report(db.path()),
            kHeader +
                "AllGather,\"[1 MiB, 2 MiB)\",4,all,1,100,100.0,100.0,100,100,1048576,10485.76,7864.32,0,nvtx\n"
                "AllReduce,\"[1 MiB, 2 MiB)\",4,all,2,4000,2000.0,2000.0,1000,3000,2097152,524.29,786.43,0,nvtx\n");
}

TEST(NcclSum, NvtxRangesWithoutPayloadsHaveNoSizes) {
  TempDir dir;
  Db db(dir);
  db.Exec(kOpsDdl);  // present but empty: a single-rank run, whose collectives bypass the plugin
  db.Exec("INSERT INTO StringIds (id, value) VALUES (0, 'ncclAllReduce')");
  db.Exec("INSERT INTO NVTX_EVENTS (start, eventType, text, globalTid, domainId) VALUES (0, 75, 'NCCL', "
          "281474993487873, 1)");
  db.Exec("INSERT INTO NVTX_EVENTS (start, end, eventType, textId, globalTid, domainId) VALUES (10, 60, 59, 0, "
          "281474993487873, 1)");
  EXPECT_EQ(Report(db.path()), kHeader + "AllReduce,unknown,,all,1,50,50.0,50.0,50,50,,,,0,nvtx\n");
}

TEST(NcclSum, ExplainsAMissingTable) {
  TempDir dir;
  sqlite3* raw = nullptr;
  std::string path = dir.File("empty.sqlite");
  sqlite3_open(path.c_str(), &raw);
  sqlite3_exec(raw, "CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL)", nullptr, nullptr, nullptr);
  sqlite3_close(raw);
  std::ostringstream out;
  gt::Status st = gt::stats::RunReport(path, "nccl_sum", {}, out);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("no GTRACE_NCCL_OPERATIONS or NVTX_EVENTS table"), std::string::npos) << st.message();
  EXPECT_EQ(out.str(), "");
}

}  // namespace
