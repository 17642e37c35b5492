// gpu_metrics_sum (gtrace's own report): for every NVTX range name and every kernel name, the average
// of each GPU metric over the time they ran — device-wide PM samples attributed to regions.
//
// Attribution (docs/gpu-metrics.md):
//  - a GPU_METRICS sample at `timestamp` covers (previous sample's timestamp, timestamp] of its GPU
//    (typeId); the first sample of a GPU covers as long as the second one. PM samples are
//    back-to-back, so this is their true interval; it works on nsys's own exports too.
//  - a kernel ran on its GPU over [start, end] (GPU: TARGET_INFO_CUDA_DEVICE maps the process's
//    CUDA ordinal to TARGET_INFO_GPU.id = typeId & 0xFF, on the same host = typeId >> 56);
//  - an NVTX range ran over [start, end] on the CPU; its GPUs are the ones its process uses
//    (TARGET_INFO_CUDA_DEVICE), else the ones its process sampled (GTRACE_GPU_METRICS_DEVICES), else
//    every sampled GPU of its host. CPU time: GPU work an asynchronous range launched may run after
//    the range ends (that work is in the kernel rows).
//  - average = sum(value x overlap) / sum(overlap), over every instance of the name and every GPU;
//    values are GPU_METRICS's integers (percent, MHz, bytes/s: the unit is in the metric name).
// Memory: every GPU_METRICS sample (per GPU, timestamp and metric) and one entry per (kind, name,
// metric); NVTX ranges and kernels are attributed one at a time as they are read, never kept.
#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "tools/stats/reports.h"
#include "tools/stats/statistics.h"

namespace gt::stats {
namespace {

constexpr int64_t kTidMask = 0xFFFFFF;

struct GpuSamples {
  std::vector<int64_t> ts;                         // distinct sample timestamps, ascending
  std::map<int64_t, std::vector<int64_t>> values;  // metric rank -> value per ts (kMissing when absent)
};
constexpr int64_t kMissing = INT64_MIN;

struct Accum {
  __int128 weighted = 0;  // sum(value * overlap ns)
  int64_t time = 0;       // sum(overlap ns)
  int64_t samples = 0;
  int64_t min = INT64_MAX, max = INT64_MIN;
  int64_t instances = 0;     // regions that touched a sample
  int64_t last_region = -1;  // the last region counted: a region's samples are attributed together
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

}  // namespace

gt::Status BuildGpuMetricsSum(Database& db, Table* table) {
  if (!db.HasTable("GPU_METRICS"))
    return MissingTable(db, *table, "GPU_METRICS", "profile with --gpu-metrics-devices");
  if (!db.HasTable("TARGET_INFO_GPU_METRICS")) {
    return MissingTable(db, *table, "TARGET_INFO_GPU_METRICS", "profile with --gpu-metrics-devices");
  }
  // Metrics are reported by name: nsys numbers metrics per chip family (the same name can have
  // another metricId on another GPU), so (typeId, metricId) -> name, and names are listed in the order
  // of their smallest metricId, then by name.
  std::map<std::pair<int64_t, int64_t>, std::string> type_metric_name;
  std::map<std::string, int64_t> min_id;
  gt::Status st =
      Run(db, "SELECT DISTINCT typeId, metricId, metricName FROM TARGET_INFO_GPU_METRICS", [&](Statement& s) {
        std::string name = s.Text(2);
        type_metric_name[{s.Int(0), s.Int(1)}] = name;
        auto it = min_id.find(name);
        if (it == min_id.end() || s.Int(1) < it->second)
          min_id[name] = s.Int(1);
      });
  if (!st.ok())
    return st;
  std::vector<std::pair<int64_t, std::string>> order;
  for (const auto& [name, id] : min_id)
    order.push_back({id, name});
  std::sort(order.begin(), order.end());
  std::map<std::string, int64_t> rank_of_name;
  std::vector<std::string> metric_names;  // rank -> name
  for (const auto& [id, name] : order) {
    rank_of_name[name] = static_cast<int64_t>(metric_names.size());
    metric_names.push_back(name);
  }
  std::map<std::pair<int64_t, int64_t>, int64_t> rank_cache;
  auto metric_rank = [&](int64_t type, int64_t metric) {
    auto c = rank_cache.find({type, metric});
    if (c != rank_cache.end())
      return c->second;
    auto n = type_metric_name.find({type, metric});
    // A sample without a TARGET_INFO_GPU_METRICS row: named by its id.
    std::string name = n != type_metric_name.end() ? n->second : std::to_string(metric);
    auto r = rank_of_name.find(name);
    int64_t rank;
    if (r != rank_of_name.end()) {
      rank = r->second;
    } else {
      rank = static_cast<int64_t>(metric_names.size());
      rank_of_name[name] = rank;
      metric_names.push_back(name);
    }
    rank_cache[{type, metric}] = rank;
    return rank;
  };
  std::map<int64_t, GpuSamples> gpus;
  st = Run(db, "SELECT typeId, timestamp, metricId, value FROM GPU_METRICS ORDER BY typeId, timestamp",
           [&](Statement& s) {
             GpuSamples& g = gpus[s.Int(0)];
             int64_t ts = s.Int(1);
             if (g.ts.empty() || g.ts.back() != ts)
               g.ts.push_back(ts);
             std::vector<int64_t>& v = g.values[metric_rank(s.Int(0), s.Int(2))];
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

  // Each region is attributed as it is read (never kept): its overlap with every sample of its GPUs.
  std::map<std::tuple<int, std::string, int64_t>, Accum> groups;  // (kind, name, metric rank)
  auto attribute = [&](const Region& r) {
    if (r.end <= r.start)
      return;
    for (int64_t type : r.types) {
      auto found = gpus.find(type);
      if (found == gpus.end())
        continue;
      const GpuSamples& g = found->second;
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
          if (acc.last_region != r.id) {
            ++acc.instances;
            acc.last_region = r.id;
          }
        }
      }
    }
  };

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
               attribute(r);
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
               attribute(r);
             });
    if (!st.ok())
      return st;
  }

  table->columns = {TextColumn("Kind"),        TextColumn("Name"),        TextColumn("Metric"),
                    NumberColumn("Instances"), NumberColumn("Time (ns)"), NumberColumn("Samples"),
                    NumberColumn("Avg"),       NumberColumn("Min"),       NumberColumn("Max")};
  for (const auto& [key, acc] : groups) {
    const auto& [kind, name, metric] = key;
    table->rows.push_back({Cell::Text(kind == 0 ? "NVTX" : "Kernel"), Cell::Text(name),
                           Cell::Text(metric_names[static_cast<size_t>(metric)]), Cell::Int(acc.instances),
                           Cell::Int(acc.time), Cell::Int(acc.samples),
                           Cell::Fixed(RoundDiv(acc.weighted * 100, acc.time), 2), Cell::Int(acc.min),
                           Cell::Int(acc.max)});
  }
  return gt::Status::Ok();
}

}  // namespace gt::stats
