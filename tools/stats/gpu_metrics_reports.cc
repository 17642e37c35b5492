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
// Memory (issue 20): one entry per (kind, name, metric), per GPU a few timestamps, and the regions
// open at the sweep's time — never a sample or a row. One sweep in time order: the samples of every
// GPU by timestamp and the regions by start come from SQLite (its sorter spills to temporary files
// past its cache); a region joins the open set when a sample ends after its start and leaves it once
// every GPU it maps to has sampled past its end (or has no sample left). The old per-GPU sample
// arrays (O(samples)) are kept as the test's reference (tests/stats/large_metrics_test.cc).
// Where two GPU_METRICS rows give the same (GPU, timestamp, metric), the later row (rowid) counts.
#include <algorithm>
#include <cstdint>
#include <functional>
#include <list>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "tools/stats/reports.h"
#include "tools/stats/statistics.h"

namespace gt::stats {
namespace {

constexpr int64_t kTidMask = 0xFFFFFF;

struct Accum {
  __int128 weighted = 0;  // sum(value * overlap ns)
  int64_t time = 0;       // sum(overlap ns)
  int64_t samples = 0;
  int64_t min = INT64_MAX, max = INT64_MIN;
  int64_t instances = 0;  // regions that touched a sample
};
using Groups = std::map<std::tuple<int, std::string, int64_t>, Accum>;  // (kind, name, metricId)

// One sampled GPU (typeId), from a first unsorted pass over GPU_METRICS.
struct GpuTimes {
  int64_t first_ns = INT64_MAX;   // earliest timestamp
  int64_t second_ns = INT64_MAX;  // the next distinct one (INT64_MAX: only one: never attributed)
  int64_t last_ns = INT64_MIN;    // latest timestamp
  // Sweep state: where the next sample's interval starts (its previous sample's timestamp).
  bool started = false;
  int64_t previous_ns = 0;

  bool attributable() const { return second_ns != INT64_MAX; }
  // The start of the interval of the next sample not yet swept; INT64_MAX after the last one.
  int64_t NextIntervalStart() const {
    if (!started)
      return first_ns - (second_ns - first_ns);  // the first sample covers as long as the second
    return previous_ns >= last_ns ? INT64_MAX : previous_ns;
  }
};

// An NVTX range or a kernel between the sample that first ends after its start and the moment no
// sample of its GPUs can overlap it any more.
struct OpenRegion {
  int kind;  // 0 NVTX, 1 kernel
  std::string name;
  int64_t start, end;
  std::vector<GpuTimes*> gpus;                   // the attributable GPUs it maps to
  std::vector<int64_t> types;                    // their typeIds (same order)
  std::vector<std::pair<int64_t, Accum*>> accs;  // metricId -> its group, once touched (counts the instance)

  Accum* AccumFor(int64_t metric, Groups* groups) {
    for (auto& [m, acc] : accs) {
      if (m == metric)
        return acc;
    }
    Accum* acc = &(*groups)[{kind, name, metric}];
    ++acc->instances;
    accs.emplace_back(metric, acc);
    return acc;
  }
  bool Done() const {
    for (const GpuTimes* gpu : gpus) {
      if (gpu->NextIntervalStart() < end)
        return false;
    }
    return true;
  }
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
  // Pass 1 (unsorted): each GPU's first two distinct timestamps and its last one.
  std::map<int64_t, GpuTimes> gpus;
  st = Run(db, "SELECT typeId, timestamp FROM GPU_METRICS", [&](Statement& s) {
    GpuTimes& g = gpus[s.Int(0)];
    const int64_t ts = s.Int(1);
    if (ts < g.first_ns) {
      g.second_ns = g.first_ns;
      g.first_ns = ts;
    } else if (ts > g.first_ns && ts < g.second_ns) {
      g.second_ns = ts;
    }
    g.last_ns = std::max(g.last_ns, ts);
  });
  if (!st.ok())
    return st;

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
  // The typeIds of a region (the rules of the file comment), from its row in the regions query.
  const bool device_is_gpu = db.HasTable("GTRACE_DEVICES");  // gtrace stores the GPU id in deviceId
  auto region_types = [&](const Statement& s) {
    std::vector<int64_t> types;
    if (s.Int(0) == 0) {  // NVTX: the process's GPUs, else the ones it sampled, else its host's
      const int64_t gpid = s.Int(3) & ~kTidMask;
      const int64_t hw = (gpid >> 56) & 0xff;
      const int64_t pid = (gpid >> 24) & kTidMask;
      auto used = pid_gpus.find(pid);
      if (used != pid_gpus.end()) {
        for (int64_t gpu : used->second) {
          for (int64_t t : types_of_gpu(hw, gpu))
            types.push_back(t);
        }
      }
      if (types.empty()) {
        auto sampled = sampled_by.find(gpid);
        if (sampled != sampled_by.end())
          types.assign(sampled->second.begin(), sampled->second.end());
      }
      if (types.empty()) {
        for (const auto& [type, g] : gpus) {
          if (((type >> 56) & 0xff) == hw)
            types.push_back(type);
        }
      }
    } else {  // kernel: the GPU it ran on
      const int64_t gpid = s.Int(3);
      const int64_t hw = (gpid >> 56) & 0xff;
      const int64_t pid = (gpid >> 24) & kTidMask;
      auto it = device_is_gpu ? cuda_gpu.end() : cuda_gpu.find({pid, s.Int(4)});
      types = types_of_gpu(hw, it != cuda_gpu.end() ? it->second : s.Int(4));
    }
    return types;
  };

  // The regions in start order: NVTX ranges with an end, then kernels (kind breaks ties), each
  // non-empty one; columns kind, start, end, globalTid/globalPid, deviceId, name.
  std::vector<std::string> selects;
  if (db.HasTable(kNvtxTable)) {
    selects.push_back(
        "SELECT 0 AS kind, r.start AS start, r.\"end\" AS stop, r.globalTid AS gid, NULL AS device, "
        "coalesce(d.name, '') || ':' || coalesce(r.text, s.value, '') AS name "
        "FROM NVTX_EVENTS AS r LEFT JOIN domain_names AS d ON d.domain_id = r.domainId AND "
        "d.process = (r.globalTid >> 24) LEFT JOIN StringIds AS s ON s.id = r.textId "
        "WHERE r.eventType IN (59, 60, 70, 71) AND r.\"end\" IS NOT NULL AND r.\"end\" > r.start");
  }
  if (db.HasTable(kKernelTable)) {
    selects.push_back(
        "SELECT 1 AS kind, k.start AS start, k.\"end\" AS stop, k.globalPid AS gid, k.deviceId AS device, "
        "coalesce(s.value, '') AS name FROM CUPTI_ACTIVITY_KIND_KERNEL AS k "
        "LEFT JOIN StringIds AS s ON s.id = k.demangledName WHERE k.\"end\" > k.start");
  }
  Groups groups;
  if (!selects.empty()) {
    std::string regions_sql =
        db.HasTable(kNvtxTable)
            ? "WITH domain_names AS (SELECT e.domainId AS domain_id, e.globalTid >> 24 AS process, "
              "coalesce(e.text, s.value) AS name FROM NVTX_EVENTS AS e LEFT JOIN StringIds AS s ON s.id = e.textId "
              "WHERE e.eventType = 75 GROUP BY e.domainId, e.globalTid >> 24) "
            : "";
    for (size_t i = 0; i < selects.size(); ++i)
      regions_sql += (i > 0 ? " UNION ALL " : "") + selects[i];
    regions_sql += " ORDER BY start";
    Statement regions;
    st = db.Prepare(regions_sql, &regions);
    if (!st.ok())
      return st;
    bool region_ready = false;  // `regions` holds a row not yet opened
    bool regions_done = false;
    std::list<OpenRegion> open;
    // Opens every region that starts before `sample_end_ns` (a sample ending there overlaps it).
    auto open_regions = [&](int64_t sample_end_ns) -> gt::Status {
      while (!regions_done) {
        if (!region_ready) {
          gt::Status step = regions.Step(&region_ready);
          if (!step.ok())
            return step;
          if (!region_ready) {
            regions_done = true;
            break;
          }
        }
        if (regions.Int(1) >= sample_end_ns)
          break;
        region_ready = false;
        OpenRegion region{static_cast<int>(regions.Int(0)), std::string(), regions.Int(1), regions.Int(2), {}, {}, {}};
        for (int64_t type : region_types(regions)) {
          auto found = gpus.find(type);
          if (found != gpus.end() && found->second.attributable()) {
            region.gpus.push_back(&found->second);
            region.types.push_back(type);
          }
        }
        if (region.gpus.empty())
          continue;
        region.name = regions.Text(5);
        open.push_back(std::move(region));
      }
      return gt::Status::Ok();
    };

    // One sample = the rows of one (timestamp, GPU); its interval is (previous timestamp, timestamp].
    std::vector<std::pair<int64_t, int64_t>> values;  // metricId, value
    auto sweep_sample = [&](int64_t type, int64_t ts) -> gt::Status {
      GpuTimes& gpu = gpus[type];
      if (gpu.attributable()) {
        const int64_t a = gpu.NextIntervalStart();
        gt::Status opened = open_regions(ts);
        if (!opened.ok())
          return opened;
        for (OpenRegion& r : open) {
          if (std::find(r.types.begin(), r.types.end(), type) == r.types.end())
            continue;
          const int64_t overlap = std::min(ts, r.end) - std::max(a, r.start);
          if (overlap <= 0)
            continue;
          for (const auto& [metric, v] : values) {
            Accum* acc = r.AccumFor(metric, &groups);
            acc->weighted += static_cast<__int128>(v) * overlap;
            acc->time += overlap;
            ++acc->samples;
            acc->min = std::min(acc->min, v);
            acc->max = std::max(acc->max, v);
          }
        }
      }
      gpu.started = true;
      gpu.previous_ns = ts;
      open.remove_if([](const OpenRegion& r) { return r.Done(); });
      return gt::Status::Ok();
    };

    Statement samples;
    st = db.Prepare("SELECT typeId, timestamp, metricId, value FROM GPU_METRICS ORDER BY timestamp, typeId, rowid",
                    &samples);
    if (!st.ok())
      return st;
    bool have_sample = false;
    int64_t sample_type = 0;
    int64_t sample_ts = 0;
    for (bool has_row = false; (st = samples.Step(&has_row)).ok() && has_row;) {
      const int64_t type = samples.Int(0);
      const int64_t ts = samples.Int(1);
      if (have_sample && (type != sample_type || ts != sample_ts)) {
        if (!(st = sweep_sample(sample_type, sample_ts)).ok())
          return st;
        values.clear();
      }
      have_sample = true;
      sample_type = type;
      sample_ts = ts;
      const int64_t metric = metric_rank(type, samples.Int(2));  // metrics are grouped by name
      auto same = std::find_if(values.begin(), values.end(), [&](const auto& mv) { return mv.first == metric; });
      if (same != values.end())
        same->second = samples.Int(3);
      else
        values.emplace_back(metric, samples.Int(3));
    }
    if (!st.ok())
      return st;
    if (have_sample && !(st = sweep_sample(sample_type, sample_ts)).ok())
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
