// gpu_metrics_sum on a larger generated database (two sampled GPUs, thousands of samples, kernels
// and NVTX ranges, a metric missing from some samples, a GPU never sampled, open ranges, a process
// without CUDA devices) against the report as it was before it attributed regions one at a time (and
// before it swept samples and regions in time order instead of holding every sample): byte-identical CSV.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "tests/stats/large_summary_util.h"
#include "tests/stats/nsys_test_db.h"
#include "tools/stats/database.h"
#include "tools/stats/reports.h"
#include "tools/stats/statistics.h"

namespace gt::stats::testing {
namespace {

// The old gpu_metrics_sum, verbatim but for its name: every NVTX range and kernel loaded into a
// vector of regions before attribution, a std::set of region ids per group for Instances.
namespace old_metrics {
constexpr int64_t kTidMask = 0xFFFFFF;

struct GpuSamples {
  std::vector<int64_t> ts;                         // distinct sample timestamps, ascending
  std::map<int64_t, std::vector<int64_t>> values;  // metricId -> value per ts (kMissing when absent)
};
constexpr int64_t kMissing = INT64_MIN;

struct Accum {
  __int128 weighted = 0;  // sum(value * overlap ns)
  int64_t time = 0;       // sum(overlap ns)
  int64_t samples = 0;
  int64_t min = INT64_MAX, max = INT64_MIN;
  std::set<int64_t> instances;  // region ids that touched a sample
};

struct Region {
  int kind;  // 0 NVTX, 1 kernel
  std::string name;
  int64_t id, start, end;
  std::vector<int64_t> types;
};

gt::Status Run(Database& db, const std::string& sql, const std::function<void(Statement&)>& row) {
  Statement s;
  gt::Status st = db.Prepare(sql, &s);
  if (!st.ok())
    return st;
  for (;;) {
    bool has = false;
    if (!(st = s.Step(&has)).ok())
      return st;
    if (!has)
      return gt::Status::Ok();
    row(s);
  }
}

gt::Status OldGpuMetricsSum(Database& db, Table* table) {
  if (!db.HasTable("GPU_METRICS"))
    return MissingTable(db, *table, "GPU_METRICS", "profile with --gpu-metrics-devices");
  if (!db.HasTable("TARGET_INFO_GPU_METRICS")) {
    return MissingTable(db, *table, "TARGET_INFO_GPU_METRICS", "profile with --gpu-metrics-devices");
  }
  std::map<int64_t, std::string> metric_names;
  gt::Status st = Run(db, "SELECT DISTINCT metricId, metricName FROM TARGET_INFO_GPU_METRICS ORDER BY metricId",
                      [&](Statement& s) { metric_names.emplace(s.Int(0), s.Text(1)); });
  if (!st.ok())
    return st;
  std::map<int64_t, GpuSamples> gpus;
  st = Run(db, "SELECT typeId, timestamp, metricId, value FROM GPU_METRICS ORDER BY typeId, timestamp",
           [&](Statement& s) {
             GpuSamples& g = gpus[s.Int(0)];
             int64_t ts = s.Int(1);
             if (g.ts.empty() || g.ts.back() != ts)
               g.ts.push_back(ts);
             std::vector<int64_t>& v = g.values[s.Int(2)];
             v.resize(g.ts.size(), kMissing);
             v.back() = s.Int(3);
           });
  if (!st.ok())
    return st;
  for (auto& [type, g] : gpus) {
    for (auto& [metric, v] : g.values)
      v.resize(g.ts.size(), kMissing);
  }

  // Which GPU (typeId) a process's CUDA ordinal is, and which GPUs a process uses.
  auto types_of_gpu = [&](int64_t hw, int64_t gpu_id) {
    std::vector<int64_t> out;
    for (const auto& [type, g] : gpus) {
      if (((type >> 56) & 0xff) == hw && (type & 0xff) == gpu_id)
        out.push_back(type);
    }
    return out;
  };
  std::map<std::pair<int64_t, int64_t>, int64_t> cuda_gpu;  // (pid, cudaId) -> gpuId
  std::map<int64_t, std::set<int64_t>> pid_gpus;            // pid -> gpuIds
  if (db.HasTable("TARGET_INFO_CUDA_DEVICE")) {
    st = Run(db, "SELECT pid, cudaId, gpuId FROM TARGET_INFO_CUDA_DEVICE", [&](Statement& s) {
      cuda_gpu[{s.Int(0), s.Int(1)}] = s.Int(2);
      pid_gpus[s.Int(0)].insert(s.Int(2));
    });
    if (!st.ok())
      return st;
  }
  std::map<int64_t, std::set<int64_t>> sampled_by;  // globalPid -> typeIds
  if (db.HasTable("GTRACE_GPU_METRICS_DEVICES")) {
    st = Run(db, "SELECT globalPid, typeId FROM GTRACE_GPU_METRICS_DEVICES WHERE typeId IS NOT NULL",
             [&](Statement& s) { sampled_by[s.Int(0)].insert(s.Int(1)); });
    if (!st.ok())
      return st;
  }

  std::vector<Region> regions;
  int64_t next_id = 0;
  if (db.HasTable(kNvtxTable)) {
    st = Run(db,
             "WITH domain_names AS (SELECT e.domainId AS domain_id, e.globalTid >> 24 AS process, "
             "coalesce(e.text, s.value) AS name FROM NVTX_EVENTS AS e LEFT JOIN StringIds AS s ON s.id = e.textId "
             "WHERE e.eventType = 75 GROUP BY e.domainId, e.globalTid >> 24) "
             "SELECT r.start, r.\"end\", r.globalTid, coalesce(d.name, '') || ':' || coalesce(r.text, s.value, '') "
             "FROM NVTX_EVENTS AS r LEFT JOIN domain_names AS d ON d.domain_id = r.domainId AND "
             "d.process = (r.globalTid >> 24) LEFT JOIN StringIds AS s ON s.id = r.textId "
             "WHERE r.eventType IN (59, 60, 70, 71) AND r.\"end\" IS NOT NULL",
             [&](Statement& s) {
               Region r{0, s.Text(3), next_id++, s.Int(0), s.Int(1), {}};
               const int64_t gpid = s.Int(2) & ~kTidMask;
               const int64_t hw = (gpid >> 56) & 0xff;
               const int64_t pid = (gpid >> 24) & kTidMask;
               auto used = pid_gpus.find(pid);
               if (used != pid_gpus.end()) {
                 for (int64_t gpu : used->second) {
                   for (int64_t t : types_of_gpu(hw, gpu))
                     r.types.push_back(t);
                 }
               }
               if (r.types.empty()) {
                 auto sampled = sampled_by.find(gpid);
                 if (sampled != sampled_by.end())
                   r.types.assign(sampled->second.begin(), sampled->second.end());
               }
               if (r.types.empty()) {
                 for (const auto& [type, g] : gpus) {
                   if (((type >> 56) & 0xff) == hw)
                     r.types.push_back(type);
                 }
               }
               regions.push_back(std::move(r));
             });
    if (!st.ok())
      return st;
  }
  // gtrace databases (GTRACE_DEVICES) store the GPU id in deviceId already; older ones the ordinal.
  const bool device_is_gpu = db.HasTable("GTRACE_DEVICES");
  if (db.HasTable(kKernelTable)) {
    st = Run(db,
             "SELECT k.start, k.\"end\", k.globalPid, k.deviceId, coalesce(s.value, '') FROM "
             "CUPTI_ACTIVITY_KIND_KERNEL AS k LEFT JOIN StringIds AS s ON s.id = k.demangledName",
             [&](Statement& s) {
               Region r{1, s.Text(4), next_id++, s.Int(0), s.Int(1), {}};
               const int64_t gpid = s.Int(2);
               const int64_t hw = (gpid >> 56) & 0xff;
               const int64_t pid = (gpid >> 24) & kTidMask;
               auto it = device_is_gpu ? cuda_gpu.end() : cuda_gpu.find({pid, s.Int(3)});
               r.types = types_of_gpu(hw, it != cuda_gpu.end() ? it->second : s.Int(3));
               regions.push_back(std::move(r));
             });
    if (!st.ok())
      return st;
  }

  std::map<std::tuple<int, std::string, int64_t>, Accum> groups;  // (kind, name, metricId)
  for (const Region& r : regions) {
    if (r.end <= r.start)
      continue;
    for (int64_t type : r.types) {
      const GpuSamples& g = gpus[type];
      if (g.ts.size() < 2)
        continue;
      // First sample whose interval can end after the region starts.
      size_t i = static_cast<size_t>(std::lower_bound(g.ts.begin(), g.ts.end(), r.start + 1) - g.ts.begin());
      for (; i < g.ts.size(); ++i) {
        const int64_t b = g.ts[i];
        const int64_t a = i > 0 ? g.ts[i - 1] : g.ts[0] - (g.ts[1] - g.ts[0]);
        if (a >= r.end)
          break;
        const int64_t overlap = std::min(b, r.end) - std::max(a, r.start);
        if (overlap <= 0)
          continue;
        for (const auto& [metric, values] : g.values) {
          const int64_t v = values[i];
          if (v == kMissing)
            continue;
          Accum& acc = groups[{r.kind, r.name, metric}];
          acc.weighted += static_cast<__int128>(v) * overlap;
          acc.time += overlap;
          ++acc.samples;
          acc.min = std::min(acc.min, v);
          acc.max = std::max(acc.max, v);
          acc.instances.insert(r.id);
        }
      }
    }
  }

  table->columns = {TextColumn("Kind"),        TextColumn("Name"),        TextColumn("Metric"),
                    NumberColumn("Instances"), NumberColumn("Time (ns)"), NumberColumn("Samples"),
                    NumberColumn("Avg"),       NumberColumn("Min"),       NumberColumn("Max")};
  for (const auto& [key, acc] : groups) {
    const auto& [kind, name, metric] = key;
    auto mn = metric_names.find(metric);
    table->rows.push_back({Cell::Text(kind == 0 ? "NVTX" : "Kernel"), Cell::Text(name),
                           Cell::Text(mn != metric_names.end() ? mn->second : std::to_string(metric)),
                           Cell::Int(static_cast<int64_t>(acc.instances.size())), Cell::Int(acc.time),
                           Cell::Int(acc.samples), Cell::Fixed(RoundDiv(acc.weighted * 100, acc.time), 2),
                           Cell::Int(acc.min), Cell::Int(acc.max)});
  }
  return gt::Status::Ok();
}

}  // namespace old_metrics

std::string ReferenceGpuMetricsSum(const std::string& path) {
  std::unique_ptr<Database> db;
  EXPECT_TRUE(Database::Open(path, &db).ok());
  Table table;
  EXPECT_TRUE(old_metrics::OldGpuMetricsSum(*db, &table).ok());
  return Csv(table);
}

TEST(LargeSummaries, GpuMetricsSumMatchesTheLoadEverythingReference) {
  TestDb db("large_metrics");
  db.Create({"NVTX_EVENTS", "CUPTI_ACTIVITY_KIND_KERNEL"});
  db.Exec(
      "CREATE TABLE GPU_METRICS (rawTimestamp INTEGER, timestamp INTEGER, typeId INTEGER NOT NULL, "
      "metricId INTEGER NOT NULL, value INTEGER NOT NULL)");
  db.Exec(
      "CREATE TABLE TARGET_INFO_GPU_METRICS (typeId INTEGER NOT NULL, sourceId INTEGER NOT NULL, "
      "typeName TEXT NOT NULL, metricId INTEGER NOT NULL, metricName TEXT NOT NULL)");
  db.Exec(
      "CREATE TABLE TARGET_INFO_CUDA_DEVICE (gpuId INTEGER, cudaId INTEGER, pid INTEGER, uuid TEXT, "
      "numMultiprocessors INTEGER)");
  db.Exec("BEGIN");
  Lcg rng;
  // Two sampled GPUs of host 0 (ids 0 and 1), three metrics, 2000 samples each every ~1000 ns; metric 2
  // missing from some samples.
  const int64_t types[] = {(int64_t{1} << 48) | (int64_t{1} << 32) | 0, (int64_t{1} << 48) | (int64_t{1} << 32) | 1};
  for (int64_t type : types) {
    for (int metric = 0; metric < 3; ++metric) {
      db.Exec("INSERT INTO TARGET_INFO_GPU_METRICS VALUES (" + std::to_string(type) + ", 1, 'GPU', " +
              std::to_string(metric) + ", 'metric " + std::to_string(metric) + "')");
    }
    int64_t ts = 1000;
    for (int i = 0; i < 2000; ++i) {
      ts += 900 + static_cast<int64_t>(rng.Next(200));
      for (int metric = 0; metric < 3; ++metric) {
        if (metric == 2 && rng.Next(4) == 0)
          continue;
        const int64_t value =
            metric == 1 ? static_cast<int64_t>(rng.Next(4000000000ull)) : static_cast<int64_t>(rng.Next(101));
        db.Exec("INSERT INTO GPU_METRICS VALUES (" + std::to_string(ts) + ", " + std::to_string(ts) + ", " +
                std::to_string(type) + ", " + std::to_string(metric) + ", " + std::to_string(value) + ")");
      }
    }
  }
  // Process 100 uses GPUs 0 and 1; process 200 has no CUDA device row (every sampled GPU of its host).
  db.Exec("INSERT INTO TARGET_INFO_CUDA_DEVICE VALUES (0, 0, 100, 'u0', 8), (1, 1, 100, 'u1', 8)");
  for (int i = 0; i < 3000; ++i) {
    KernelRow k;
    k.global_pid = GlobalPid(100);
    k.start = 500 + static_cast<int64_t>(rng.Next(2100000));
    k.end = k.start + static_cast<int64_t>(rng.Next(i % 4 == 0 ? 50 : 20000));  // some inside one sample
    k.device_id = static_cast<int64_t>(rng.Next(3));                            // 2: a GPU that was not sampled
    k.correlation_id = i;
    k.demangled_name = k.short_name = "kernel_" + std::to_string(rng.Next(25));
    db.AddKernel(k);
  }
  for (int i = 0; i < 3000; ++i) {
    NvtxRow r;
    r.start = static_cast<int64_t>(rng.Next(2100000));
    if (rng.Next(50) != 0)
      r.end = r.start + static_cast<int64_t>(rng.Next(100000));  // else open: not attributed
    r.text = "range_" + std::to_string(rng.Next(30));
    r.global_tid = rng.Next(2) == 0 ? GlobalTid(100, 101) : GlobalTid(200, 201);
    db.AddNvtx(r);
  }
  db.Exec("COMMIT");
  const std::string expected = ReferenceGpuMetricsSum(db.path());
  EXPECT_GT(std::count(expected.begin(), expected.end(), '\n'), 150);  // many groups
  EXPECT_EQ(RunOk(db.path(), "gpu_metrics_sum"), expected);
}

// The streaming sweep's edges at 20k+ rows: four GPUs of two hosts — one sampled throughout, one that
// stops sampling early (its regions after that must still be attributed to nothing and released),
// one that starts late, one with a single sample (never attributed); a GTRACE_DEVICES database
// (deviceId is the GPU id), a process mapped through GTRACE_GPU_METRICS_DEVICES, long ranges that
// span thousands of samples, kernels inside one sample, ranges ending exactly on a sample.
TEST(LargeSummaries, GpuMetricsSumSweepEdgesMatchTheReference) {
  TestDb db("large_metrics_edges");
  db.Create({"NVTX_EVENTS", "CUPTI_ACTIVITY_KIND_KERNEL"});
  db.Exec(
      "CREATE TABLE GPU_METRICS (rawTimestamp INTEGER, timestamp INTEGER, typeId INTEGER NOT NULL, "
      "metricId INTEGER NOT NULL, value INTEGER NOT NULL)");
  db.Exec(
      "CREATE TABLE TARGET_INFO_GPU_METRICS (typeId INTEGER NOT NULL, sourceId INTEGER NOT NULL, "
      "typeName TEXT NOT NULL, metricId INTEGER NOT NULL, metricName TEXT NOT NULL)");
  db.Exec(
      "CREATE TABLE TARGET_INFO_CUDA_DEVICE (gpuId INTEGER, cudaId INTEGER, pid INTEGER, uuid TEXT, "
      "numMultiprocessors INTEGER)");
  db.Exec("CREATE TABLE GTRACE_DEVICES (id INTEGER)");
  db.Exec("CREATE TABLE GTRACE_GPU_METRICS_DEVICES (globalPid INTEGER, typeId INTEGER)");
  db.Exec("BEGIN");
  Lcg rng;
  const auto type_of = [](int64_t host, int64_t gpu) {
    return (host << 56) | (int64_t{1} << 48) | (int64_t{1} << 32) | gpu;
  };
  struct Sampling {
    int64_t type, first_ns, count;
  };
  // Host 0: GPU 0 throughout, GPU 1 stops at 1/4, GPU 2 starts at 3/4; host 1: GPU 0 once.
  const Sampling sampled[] = {{type_of(0, 0), 1000, 4000},
                              {type_of(0, 1), 1500, 1000},
                              {type_of(0, 2), 3000000, 1000},
                              {type_of(1, 0), 5000, 1}};
  for (const Sampling& g : sampled) {
    for (int metric = 0; metric < 2; ++metric) {
      db.Exec("INSERT INTO TARGET_INFO_GPU_METRICS VALUES (" + std::to_string(g.type) + ", 1, 'GPU', " +
              std::to_string(metric) + ", 'metric " + std::to_string(metric) + "')");
    }
    int64_t ts = g.first_ns;
    for (int64_t i = 0; i < g.count; ++i) {
      ts += 900 + static_cast<int64_t>(rng.Next(200));
      for (int metric = 0; metric < 2; ++metric) {
        if (metric == 1 && rng.Next(5) == 0)
          continue;
        db.Exec("INSERT INTO GPU_METRICS VALUES (" + std::to_string(ts) + ", " + std::to_string(ts) + ", " +
                std::to_string(g.type) + ", " + std::to_string(metric) + ", " + std::to_string(rng.Next(101)) + ")");
      }
    }
  }
  // Process 100 (host 0) uses GPUs 0-2; process 300 (host 0) has no device but sampled GPU 1; process 400
  // (host 1) has none either: every sampled GPU of host 1.
  db.Exec(
      "INSERT INTO TARGET_INFO_CUDA_DEVICE VALUES (0, 0, 100, 'u0', 8), (1, 1, 100, 'u1', 8), "
      "(2, 2, 100, 'u2', 8)");
  db.Exec("INSERT INTO GTRACE_GPU_METRICS_DEVICES VALUES (" + std::to_string(GlobalPid(300)) + ", " +
          std::to_string(type_of(0, 1)) + ")");
  for (int i = 0; i < 12000; ++i) {
    KernelRow k;
    k.global_pid = GlobalPid(100);
    k.start = static_cast<int64_t>(rng.Next(4200000));
    k.end = k.start + static_cast<int64_t>(rng.Next(i % 3 == 0 ? 300 : 30000));
    k.device_id = static_cast<int64_t>(rng.Next(3));  // a GPU id (GTRACE_DEVICES)
    k.correlation_id = i;
    k.demangled_name = k.short_name = "kernel_" + std::to_string(rng.Next(20));
    db.AddKernel(k);
  }
  const int64_t tids[] = {GlobalTid(100, 101), GlobalTid(300, 301), (int64_t{1} << 56) | GlobalTid(400, 401)};
  for (int i = 0; i < 12000; ++i) {
    NvtxRow r;
    r.start = static_cast<int64_t>(rng.Next(4200000));
    const uint64_t shape = rng.Next(100);
    if (shape == 0)
      r.end = r.start + 2000000;  // spans thousands of samples
    else if (shape != 1)
      r.end = r.start + static_cast<int64_t>(rng.Next(50000));  // shape 1: open
    r.text = "range_" + std::to_string(rng.Next(25));
    r.global_tid = tids[rng.Next(3)];
    db.AddNvtx(r);
  }
  db.Exec("COMMIT");
  const std::string expected = ReferenceGpuMetricsSum(db.path());
  EXPECT_GT(std::count(expected.begin(), expected.end(), '\n'), 80);
  EXPECT_EQ(RunOk(db.path(), "gpu_metrics_sum"), expected);
}

}  // namespace
}  // namespace gt::stats::testing
