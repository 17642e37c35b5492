// Merged databases of many hosts (issue 15): each physical GPU (host + UUID) has its own deviceId,
// the process-local CUDA ordinal stays in GTRACE_DEVICES, (deviceId,
// streamId) names one stream of one process, and a deviceId-keyed utilisation query gives, rank by
// rank, what the per-rank databases give. Also: the exact tables of a merged 4-rank/2-host export
// (tables only when nsys writes them). Streams from the rank simulator (one GPU per local rank).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/common/rank_simulator.h"
#include "tests/common/test_util.h"
#include "tools/export/db_merge.h"
#include "tools/export/exporter.h"
#include "tools/export/multi_export.h"

namespace gt {
namespace {

using Rows = std::vector<std::string>;

test::SimConfig FourRanksTwoHosts() {
  test::SimConfig c;
  c.ranks = 4;
  c.ranks_per_host = 2;
  c.steps = 6;
  c.compute_ns = 4000000;
  c.kernels_per_step = 5;
  c.ntp_offset_ns = {0, 1500000};  // no drift: session times differ from the per-rank ones by a shift
  c.imbalance = {1.0, 1.1, 1.2, 1.3};
  return c;
}

// Per GPU: rank, kernel time ns, kernels and kernel time / span in parts per million (over 1e6 where
// NCCL kernels overlap compute) — keyed on deviceId only,
// as a tool that knows nothing of processes computes it.
const char kUtilisation[] =
    "SELECT r.rank, u.busy, u.n, u.busy * 1000000 / u.span FROM (SELECT deviceId, sum(end - start) AS busy, count(*) "
    "AS "
    "n, max(end) - min(start) AS span FROM CUPTI_ACTIVITY_KIND_KERNEL GROUP BY deviceId) u JOIN GTRACE_DEVICES d ON "
    "d.deviceId = u.deviceId JOIN GTRACE_RANKS r ON r.globalPid = d.globalPid ORDER BY r.rank";

void ExpectUniqueGpus(test::Db& db, const std::string& what) {
  SCOPED_TRACE(what);
  // Four GPUs, ids 0..3, one per (host, UUID); a rank's kernels all on its own GPU.
  EXPECT_EQ(db.Rows("SELECT id FROM TARGET_INFO_GPU ORDER BY id"), (Rows{"0", "1", "2", "3"}));
  EXPECT_EQ(db.Int("SELECT count(DISTINCT (vmId >> 48) || ':' || uuid) FROM TARGET_INFO_GPU"), 4);
  EXPECT_EQ(db.Rows("SELECT r.rank, r.hostName, d.cudaId, d.deviceId FROM GTRACE_DEVICES d JOIN GTRACE_RANKS r ON "
                    "r.globalPid = d.globalPid ORDER BY r.rank"),
            (Rows{"0|node0|0|0", "1|node0|1|1", "2|node1|0|2", "3|node1|1|3"}));
  EXPECT_EQ(db.Int("SELECT count(*) FROM (SELECT globalPid FROM CUPTI_ACTIVITY_KIND_KERNEL GROUP BY globalPid "
                   "HAVING count(DISTINCT deviceId) != 1)"),
            0);
  EXPECT_EQ(db.Int("SELECT count(DISTINCT deviceId) FROM CUPTI_ACTIVITY_KIND_KERNEL"), 4);
  // TARGET_INFO_CUDA_DEVICE.cudaId is the deviceId of the process's rows (joins on it hold); the
  // ordinal is in GTRACE_DEVICES (above).
  EXPECT_EQ(db.Rows("SELECT cudaId, gpuId FROM TARGET_INFO_CUDA_DEVICE ORDER BY gpuId"),
            (Rows{"0|0", "1|1", "2|2", "3|3"}));
  EXPECT_EQ(db.Int("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL k WHERE NOT EXISTS (SELECT 1 FROM "
                   "TARGET_INFO_CUDA_DEVICE d WHERE d.pid = (k.globalPid >> 24) & 16777215 AND d.cudaId = k.deviceId)"),
            0);
  // (deviceId, streamId) is one stream of one process; contexts name their GPU.
  EXPECT_EQ(db.Int("SELECT count(*) FROM (SELECT deviceId, streamId FROM CUPTI_ACTIVITY_KIND_KERNEL GROUP BY "
                   "deviceId, streamId HAVING count(DISTINCT globalPid) != 1)"),
            0);
  EXPECT_EQ(db.Int("SELECT count(DISTINCT deviceId || ':' || streamId) FROM CUPTI_ACTIVITY_KIND_KERNEL"), 8);
  EXPECT_EQ(db.Rows("SELECT deviceId, contextId, nullStreamId FROM TARGET_INFO_CUDA_CONTEXT_INFO ORDER BY deviceId"),
            (Rows{"0|1|7", "1|1|7", "2|1|7", "3|1|7"}));
  EXPECT_EQ(db.Int("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL k WHERE NOT EXISTS (SELECT 1 FROM "
                   "TARGET_INFO_CUDA_CONTEXT_INFO c WHERE c.deviceId = k.deviceId AND c.contextId = k.contextId)"),
            0);
}

TEST(MergedDevices, EachGpuItsOwnDeviceIdAndPerRankAnswers) {
  test::TempDir dir;
  test::SimConfig c = FourRanksTwoHosts();
  test::SimTruth truth;
  test::SimulateRanks(c, dir.path(), &truth);

  // Per-rank databases (each converted alone): one GPU, deviceId 0 there.
  Rows per_rank;
  std::vector<std::string> dbs;
  for (uint32_t r = 0; r < c.ranks; ++r) {
    exporter::ExportOptions eo;
    eo.inputs = {truth.paths[r]};
    eo.output = dir.File("rank-" + std::to_string(r) + ".sqlite");
    exporter::ExportResult er;
    Status st = exporter::ExportSqlite(eo, &er);
    ASSERT_TRUE(st.ok()) << st.message();
    dbs.push_back(eo.output);
    test::Db db(eo.output);
    EXPECT_EQ(db.Rows("SELECT DISTINCT deviceId FROM CUPTI_ACTIVITY_KIND_KERNEL"), (Rows{"0"}));
    // The kernels planted: per step 5 compute kernels and 5 NCCL ones (4 buckets + the final one).
    EXPECT_EQ(db.Int("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL"), 60);
    EXPECT_EQ(db.Rows("SELECT cudaId, deviceId FROM GTRACE_DEVICES"), (Rows{std::to_string(r % 2) + "|0"}));
    Rows one = db.Rows(kUtilisation);
    ASSERT_EQ(one.size(), 1u);
    per_rank.push_back(one[0]);
  }

  // Merged from the streams (parallel parts + merge) and from the per-rank databases.
  exporter::MultiExportOptions o;
  o.inputs = truth.paths;
  o.output = dir.File("merged.sqlite");
  o.jobs = 2;
  exporter::MultiExportResult mr;
  Status st = exporter::ExportMany(o, &mr);
  ASSERT_TRUE(st.ok()) << st.message();
  exporter::MergeOptions mo;
  mo.inputs = dbs;
  mo.output = dir.File("merged-dbs.sqlite");
  exporter::MergeResult mres;
  st = exporter::MergeDatabases(mo, &mres);
  ASSERT_TRUE(st.ok()) << st.message();
  exporter::ExportOptions one_pass;
  one_pass.inputs = truth.paths;
  one_pass.output = dir.File("one-pass.sqlite");
  exporter::ExportResult er;
  st = exporter::ExportSqlite(one_pass, &er);
  ASSERT_TRUE(st.ok()) << st.message();

  for (const std::string& path : {o.output, mo.output, one_pass.output}) {
    test::Db db(path);
    ExpectUniqueGpus(db, path);
    EXPECT_EQ(db.Rows(kUtilisation), per_rank) << path;
  }

  // Per-rank databases of gtrace before GTRACE_DEVICES (deviceId columns = the CUDA ordinal) merge
  // to the same GPUs: made here from the per-rank ones by writing the ordinal back.
  std::vector<std::string> old_dbs;
  for (uint32_t r = 0; r < c.ranks; ++r) {
    std::string old = dir.File("old-" + std::to_string(r) + ".sqlite");
    ASSERT_EQ(test::RunProgram({"cp", dbs[r], old}).exit_code, 0);
    std::string ordinal = std::to_string(r % 2);
    for (const std::string& sql :
         {"UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET deviceId = " + ordinal,
          "UPDATE TARGET_INFO_CUDA_CONTEXT_INFO SET deviceId = " + ordinal,
          "UPDATE TARGET_INFO_CUDA_DEVICE SET cudaId = " + ordinal, std::string("DROP TABLE GTRACE_DEVICES"),
          // ... and before GTRACE_RANKS had the end-reason columns (issue 14).
          std::string("ALTER TABLE GTRACE_RANKS DROP COLUMN endReason"),
          std::string("ALTER TABLE GTRACE_RANKS DROP COLUMN endMonotonicNs")}) {
      ASSERT_EQ(test::RunProgram({"sqlite3", old, sql}).exit_code, 0) << sql;
    }
    old_dbs.push_back(old);
  }
  exporter::MergeOptions old_mo;
  old_mo.inputs = old_dbs;
  old_mo.output = dir.File("merged-old.sqlite");
  st = exporter::MergeDatabases(old_mo, &mres);
  ASSERT_TRUE(st.ok()) << st.message();
  test::Db merged_old(old_mo.output);
  EXPECT_EQ(merged_old.Rows("SELECT r.rank, k.deviceId, count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN GTRACE_RANKS r "
                            "ON r.globalPid = k.globalPid GROUP BY r.rank, k.deviceId ORDER BY r.rank"),
            (Rows{"0|0|60", "1|1|60", "2|2|60", "3|3|60"}));
  EXPECT_EQ(merged_old.Rows("SELECT DISTINCT endReason, endMonotonicNs IS NULL FROM GTRACE_RANKS"), (Rows{"unknown|1"}));

  // Tables only when nsys writes them: no empty table in the merged database.
  test::Db merged(o.output);
  EXPECT_EQ(merged.Rows("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'ENUM_%' ORDER BY "
                        "name"),
            (Rows{"ANALYSIS_DETAILS",
                  "CUPTI_ACTIVITY_KIND_KERNEL",
                  "GTRACE_CLOCK_ALIGNMENT",
                  "GTRACE_DEVICES",
                  "GTRACE_NCCL_COMMUNICATORS",
                  "GTRACE_NCCL_EVENTS",
                  "GTRACE_NCCL_GPU_CLOCK",
                  "GTRACE_NCCL_OPERATIONS",
                  "GTRACE_PROCESS_TREE",
                  "GTRACE_RANKS",
                  "META_DATA_CAPTURE",
                  "META_DATA_EXPORT",
                  "MPI_RANKS",
                  "NVTX_EVENTS",
                  "NVTX_PAYLOAD_SCHEMAS",
                  "NVTX_PAYLOAD_SCHEMA_ENTRIES",
                  "PROCESSES",
                  "StringIds",
                  "TARGET_INFO_CUDA_CONTEXT_INFO",
                  "TARGET_INFO_CUDA_DEVICE",
                  "TARGET_INFO_CUDA_STREAM",
                  "TARGET_INFO_GPU",
                  "TARGET_INFO_SESSION_START_TIME",
                  "TARGET_INFO_SYSTEM_ENV",
                  "ThreadNames"}));
  EXPECT_EQ(merged.Int("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name LIKE 'ENUM_%'"), 24);
}

}  // namespace
}  // namespace gt
