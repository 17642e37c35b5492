#include "tools/export/gpu_metrics_export.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "tools/export/cuda_names.h"
#include "tools/export/nsys_gpu_metrics.h"
#include "tools/export/range_metrics_spill.h"

namespace gt::exporter {
namespace {

constexpr const char* kDdl[] = {
    R"sql(CREATE TABLE GTRACE_GPU_METRICS_DEVICES (
    -- gtrace: one row per process and device it considered for PM sampling (final state).
    typeId                      INTEGER,                               -- GPU_METRICS.typeId (NULL: never sampled)
    globalPid                   INTEGER   NOT NULL,                    -- Serialized GlobalId of the process.
    gpuId                       INTEGER,                               -- TARGET_INFO_GPU.id
    cudaId                      INTEGER   NOT NULL,                    -- CUDA ordinal in that process.
    uuid                        TEXT,
    name                        TEXT,
    chipName                    TEXT,                                  -- e.g. GH100
    busLocation                 TEXT,
    state                       TEXT      NOT NULL,                    -- sampling, not-owned, unavailable, failed, stopped
    reason                      TEXT,                                  -- why not sampling, with the documented fix
    setName                     TEXT,
    samplingIntervalNs          INTEGER,
    triggerMode                 TEXT,                                  -- time or sysclk
    samples                     INTEGER   NOT NULL,                    -- samples exported
    droppedSamples              INTEGER   NOT NULL,                    -- lost: gtrace's queue was full
    hwBufferOverflows           INTEGER   NOT NULL,                    -- decodes reporting a hardware-buffer overflow
    decodeErrors                INTEGER   NOT NULL,
    clockOffsetNs               INTEGER,                               -- CUPTI clock - stream clock
    ownerRule                   TEXT                                   -- how this process chose its devices
))sql",
    R"sql(CREATE TABLE GTRACE_GPU_METRICS_CONFIG (
    -- gtrace: every metric a set asked for, per process and device: accepted (in GPU_METRICS) or not.
    typeId                      INTEGER,
    globalPid                   INTEGER   NOT NULL,
    cudaId                      INTEGER   NOT NULL,
    profiler                    TEXT      NOT NULL,                    -- pm-sampling or range-profiler
    metricKey                   TEXT      NOT NULL,                    -- gtrace catalog key, e.g. sm_active
    cuptiName                   TEXT      NOT NULL,                    -- CUPTI metric name
    metricId                    INTEGER,                               -- TARGET_INFO_GPU_METRICS.metricId (accepted)
    metricName                  TEXT,                                  -- GPU_METRICS name (accepted)
    unit                        TEXT,
    scale                       REAL,                                  -- GPU_METRICS.value = round(value * scale)
    accepted                    INTEGER   NOT NULL,
    reason                      TEXT                                   -- why it was left out
))sql",
    R"sql(CREATE TABLE GTRACE_RANGE_METRICS (
    -- gtrace: range-profiler results (--gpu-metrics-ranges), one row per profiled range and metric.
    globalPid                   INTEGER   NOT NULL,
    globalTid                   INTEGER,                               -- NVTX mode: the thread of the range
    gpuId                       INTEGER,
    cudaId                      INTEGER   NOT NULL,
    contextId                   INTEGER   NOT NULL,                    -- CUPTI context id (as in the KERNEL table)
    mode                        TEXT      NOT NULL,                    -- nvtx or kernel
    rangeName                   TEXT      NOT NULL,                    -- NVTX message, or CUPTI's auto-range name
    rangeIndex                  INTEGER   NOT NULL,
    passId                      INTEGER   NOT NULL,
    passStart                   INTEGER   NOT NULL,                    -- session ns
    passEnd                     INTEGER   NOT NULL,
    correlationId               INTEGER,                               -- kernel mode: the kernel's correlation id
    kernelStart                 INTEGER,
    kernelEnd                   INTEGER,
    kernelName                  INTEGER,                               -- StringIds: demangled kernel name
    metricName                  TEXT      NOT NULL,                    -- "<label> [<unit>]"
    cuptiName                   TEXT      NOT NULL,
    value                       REAL      NOT NULL                     -- CUPTI's value, unscaled
))sql",
};

const char* StateName(int state) {
  switch (state) {
    case schema::GPU_METRICS_STATE_SAMPLING:
      return "sampling";
    case schema::GPU_METRICS_STATE_NOT_OWNED:
      return "not-owned";
    case schema::GPU_METRICS_STATE_UNAVAILABLE:
      return "unavailable";
    case schema::GPU_METRICS_STATE_FAILED:
      return "failed";
    case schema::GPU_METRICS_STATE_STOPPED:
      return "stopped";
    default:
      return "unknown";
  }
}

std::string MetricName(const schema::GpuMetric& m) {
  return m.export_unit().empty() ? m.label() : m.label() + " [" + m.export_unit() + "]";
}

struct Device {
  size_t stream = 0;
  uint32_t hw_id = 0;
  uint32_t pid = 0;
  int64_t global_pid = 0;
  schema::GpuMetricsDevice info;           // latest state
  std::vector<schema::GpuMetric> metrics;  // the set sampled (kept when a later state has none)
  std::vector<int64_t> metric_ids;         // per metric: nsys's id for the chip, or gtrace's
  std::vector<std::string> metric_names;   // per metric: TARGET_INFO_GPU_METRICS.metricName
  int64_t provisional_type = 0;            // GPU_METRICS.typeId until Finish
  int64_t clock_offset_ns = 0;
  uint64_t samples = 0, dropped = 0, overflows = 0, errors = 0;
  std::string owner_rule;
};

class GpuMetricsExport : public ExportModule {
 public:
  const char* name() const override { return "gpu-metrics"; }

  Status BeginStream(ExportContext&, StreamContext& s) override {
    owner_rule_.clear();
    return Status::Ok();
  }

  Status OnChunk(ExportContext& ctx, StreamContext& s, const schema::Chunk& chunk) override {
    Status st;
    if (chunk.has_gpu_metrics_config())
      owner_rule_ = chunk.gpu_metrics_config().owner_rule();
    for (const schema::GpuMetricsDevice& d : chunk.gpu_metrics_devices()) {
      if (!(st = OnDevice(ctx, s, d)).ok())
        return st;
    }
    uint64_t end = chunk.base_ns();
    for (const schema::GpuMetricsSample& sample : chunk.gpu_metrics_samples()) {
      end = static_cast<uint64_t>(static_cast<int64_t>(end) + sample.end_delta_ns());
      if (!(st = OnSample(ctx, s, sample, end)).ok())
        return st;
    }
    for (const schema::GpuMetricsLoss& l : chunk.gpu_metrics_losses()) {
      if (Device* d = Find(s, l.device_id())) {
        d->dropped += l.dropped_samples();
        d->overflows += l.hw_buffer_overflows();
        d->errors += l.decode_errors();
      }
    }
    for (const schema::RangeMetricsConfig& c : chunk.range_metrics_configs()) {
      range_configs_[std::make_tuple(s.index, c.device_id(), c.context_id())] = c;
      range_config_owner_[std::make_tuple(s.index, c.device_id(), c.context_id())] = {s.hw_id, s.pid, s.GlobalPid()};
    }
    for (const schema::RangeMetricsResult& r : chunk.range_metrics_results()) {
      // To the spill database, not memory: the rows are written at the export's end.
      RangeRow row;
      row.stream = s.index;
      row.pid = s.pid;
      row.global_pid = s.GlobalPid();
      if (r.tid() != 0)
        row.global_tid = s.GlobalTid(r.tid());
      row.device_id = r.device_id();
      row.context_id = r.context_id();
      row.mode = static_cast<int32_t>(r.mode());
      row.range_name = r.range_name();
      row.range_index = r.range_index();
      row.pass_id = r.pass_id();
      row.pass_start_ns = T(ctx, s, r.pass_start_ns());
      row.pass_end_ns = T(ctx, s, r.pass_end_ns());
      row.values.assign(r.values().begin(), r.values().end());
      if (!(st = ranges_.Add(ctx, row)).ok())
        return st;
    }
    return Status::Ok();
  }

  Status Finish(ExportContext& ctx) override;

 private:
  Device* Find(const StreamContext& s, uint32_t device_id) {
    auto it = index_.find({s.index, device_id});
    return it == index_.end() ? nullptr : &devices_[it->second];
  }

  int64_t T(ExportContext& ctx, StreamContext& s, uint64_t ns) {
    int64_t t = s.ToSessionNs(ns);
    ctx.NoteTime(t);
    return t;
  }

  Status OnDevice(ExportContext& ctx, StreamContext& s, const schema::GpuMetricsDevice& d) {
    Device* dev = Find(s, d.device_id());
    if (dev == nullptr) {
      index_[{s.index, d.device_id()}] = devices_.size();
      devices_.emplace_back();
      dev = &devices_.back();
      dev->stream = s.index;
      dev->hw_id = s.hw_id;
      dev->pid = s.pid;
      dev->global_pid = s.GlobalPid();
    }
    dev->info = d;
    dev->owner_rule = owner_rule_;
    if (d.clock_offset_ns() != 0)
      dev->clock_offset_ns = d.clock_offset_ns();
    if (d.metrics_size() > 0 && dev->metrics.empty()) {
      dev->metrics.assign(d.metrics().begin(), d.metrics().end());
      std::sort(dev->metrics.begin(), dev->metrics.end(),
                [](const schema::GpuMetric& a, const schema::GpuMetric& b) { return a.index() < b.index(); });
      for (const schema::GpuMetric& m : dev->metrics) {
        ExportedMetric e = ExportedMetricFor(d.chip_name(), m.cupti_name(), MetricName(m));
        dev->metric_ids.push_back(e.metric_id >= 0 ? e.metric_id : CustomMetricId(e.name));
        dev->metric_names.push_back(e.name);
      }
      dev->provisional_type = static_cast<int64_t>(devices_.size());  // 1, 2, ...: never a real typeId
    }
    return Status::Ok();
  }

  // A metric outside nsys's sets and gtrace's catalog (a `metrics:` list): one id per distinct name
  // across the export, in order of first appearance, from kCustomMetricIdBase.
  int64_t CustomMetricId(const std::string& name) {
    auto it = custom_metric_ids_.find(name);
    if (it != custom_metric_ids_.end())
      return it->second;
    int64_t id = kCustomMetricIdBase + static_cast<int64_t>(custom_metric_ids_.size());
    custom_metric_ids_.emplace(name, id);
    return id;
  }

  Status OnSample(ExportContext& ctx, StreamContext& s, const schema::GpuMetricsSample& sample, uint64_t end_ns) {
    Device* d = Find(s, sample.device_id());
    if (d == nullptr || d->metrics.empty()) {
      ++orphan_samples_;
      return Status::Ok();
    }
    Status st = ctx.EnsureTable("GPU_METRICS");
    if (!st.ok())
      return st;
    Statement* ins = ctx.Insert("GPU_METRICS",
                                "INSERT INTO GPU_METRICS (rawTimestamp, timestamp, typeId, metricId, value) "
                                "VALUES (?,?,?,?,?)",
                                &st);
    if (ins == nullptr)
      return st;
    const int64_t ts = T(ctx, s, end_ns);
    const int64_t raw = static_cast<int64_t>(end_ns) + d->clock_offset_ns;
    const int n = std::min<int>(sample.values_size(), static_cast<int>(d->metrics.size()));
    for (int i = 0; i < n; ++i) {
      double v = static_cast<double>(sample.values(i)) * d->metrics[static_cast<size_t>(i)].export_scale();
      ins->Int(1, raw).Int(2, ts).Int(3, d->provisional_type).Int(4, d->metric_ids[static_cast<size_t>(i)]);
      ins->Int(5, std::isfinite(v) ? static_cast<int64_t>(std::llround(v)) : 0);
      if (!(st = ins->Run()).ok())
        return st;
    }
    ++d->samples;
    return Status::Ok();
  }

  Status CreateOwnTables(ExportContext& ctx) {
    if (own_tables_)
      return Status::Ok();
    for (const char* ddl : kDdl) {
      Status st = ctx.db().Exec(ddl);
      if (!st.ok())
        return st;
    }
    own_tables_ = true;
    return Status::Ok();
  }

  Status AssignGpuIds(ExportContext& ctx, std::map<std::pair<uint32_t, std::string>, int64_t>* ids);
  Status WriteRanges(ExportContext& ctx, const std::map<std::pair<uint32_t, std::string>, int64_t>& gpu_ids);

  std::vector<Device> devices_;
  std::map<std::pair<size_t, uint32_t>, size_t> index_;
  std::map<std::string, int64_t> custom_metric_ids_;
  std::map<std::tuple<size_t, uint32_t, uint32_t>, schema::RangeMetricsConfig> range_configs_;
  std::map<std::tuple<size_t, uint32_t, uint32_t>, std::tuple<uint32_t, uint32_t, int64_t>> range_config_owner_;
  RangeMetricsSpill ranges_;  // result rows, spilled as they are read
  std::string owner_rule_;
  uint64_t orphan_samples_ = 0;
  bool own_tables_ = false;
};

// gpuId per (host, UUID): the CUDA module's TARGET_INFO_GPU numbering where it has the GPU (with
// the chip name and PCI location GPU metrics know added where CUPTI's device record had none), the
// next free ids, in (host, UUID) order, for GPUs only GPU metrics saw (with a row of their own).
Status GpuMetricsExport::AssignGpuIds(ExportContext& ctx, std::map<std::pair<uint32_t, std::string>, int64_t>* ids) {
  Status st;
  int64_t next = 0;
  if (ctx.HasTable("TARGET_INFO_GPU")) {
    Statement* q = ctx.db().Prepare("SELECT vmId, id, uuid FROM TARGET_INFO_GPU", &st);
    if (q == nullptr)
      return st;
    while (q->Step()) {
      uint32_t hw = static_cast<uint32_t>((static_cast<uint64_t>(q->ColumnInt(0)) >> 56) & 0xff);
      (*ids)[{hw, q->ColumnText(2)}] = q->ColumnInt(1);
      next = std::max(next, q->ColumnInt(1) + 1);
    }
    q->Reset();
  }
  std::vector<const Device*> order;
  for (const Device& d : devices_) {
    if (!d.info.uuid().empty())
      order.push_back(&d);
  }
  std::stable_sort(order.begin(), order.end(), [](const Device* a, const Device* b) {
    return std::make_tuple(a->hw_id, a->info.uuid()) < std::make_tuple(b->hw_id, b->info.uuid());
  });
  for (const Device* d : order) {
    auto key = std::make_pair(d->hw_id, FormatUuid(d->info.uuid()));
    auto it = ids->find(key);
    if (it != ids->end()) {
      // Facts CUPTI's DEVICE record lacks; only fill what is empty.
      Statement* up = ctx.db().Prepare(
          "UPDATE TARGET_INFO_GPU SET chipName = coalesce(chipName, ?), busLocation = coalesce(busLocation, ?) "
          "WHERE id = ? AND (vmId >> 56) = ?",
          &st);
      if (up == nullptr)
        return st;
      up->Text(1, d->info.chip_name()).Text(2, d->info.pci_bus_id()).Int(3, it->second).Int(4, d->hw_id);
      if (!(st = up->Run()).ok())
        return st;
      continue;
    }
    int64_t id = next++;
    (*ids)[key] = id;
    if (!(st = ctx.EnsureTable("TARGET_INFO_GPU")).ok())
      return st;
    Statement* ins = ctx.Insert("TARGET_INFO_GPU",
                                "INSERT INTO TARGET_INFO_GPU (vmId, id, name, busLocation, uuid, chipName, cuDevice) "
                                "VALUES (?,?,?,?,?,?,?)",
                                &st);
    if (ins == nullptr)
      return st;
    ins->Int(1, (static_cast<int64_t>(d->hw_id) << 56) | kVmIdLocal).Int(2, id).Text(3, d->info.name());
    ins->Text(4, d->info.pci_bus_id()).Text(5, key.second).Text(6, d->info.chip_name()).Int(7, d->info.device_id());
    if (!(st = ins->Run()).ok())
      return st;
  }
  return Status::Ok();
}

Status GpuMetricsExport::Finish(ExportContext& ctx) {
  if (devices_.empty() && ranges_.empty() && range_configs_.empty())
    return Status::Ok();
  if (orphan_samples_ != 0) {
    ctx.Warn(std::to_string(orphan_samples_) + " GPU metrics samples had no device description; not exported");
  }
  Status st = CreateOwnTables(ctx);
  if (!st.ok())
    return st;
  std::map<std::pair<uint32_t, std::string>, int64_t> gpu_ids;
  if (!(st = AssignGpuIds(ctx, &gpu_ids)).ok())
    return st;

  std::set<std::pair<int64_t, int64_t>> target_rows;  // (typeId, metricId) written
  for (Device& d : devices_) {
    std::optional<int64_t> gpu_id, type_id;
    if (!d.info.uuid().empty()) {
      auto it = gpu_ids.find({d.hw_id, FormatUuid(d.info.uuid())});
      if (it != gpu_ids.end())
        gpu_id = it->second;
    }
    if (gpu_id && d.provisional_type != 0) {
      type_id = GpuMetricsTypeId(d.hw_id, *gpu_id);
      if (d.samples != 0) {
        Statement* up = ctx.db().Prepare("UPDATE GPU_METRICS SET typeId = ? WHERE typeId = ?", &st);
        if (up == nullptr)
          return st;
        if (!(st = up->Int(1, *type_id).Int(2, d.provisional_type).Run()).ok())
          return st;
      }
      if (!(st = ctx.EnsureTable("TARGET_INFO_GPU_METRICS")).ok())
        return st;
      Statement* ti =
          ctx.Insert("TARGET_INFO_GPU_METRICS",
                     "INSERT INTO TARGET_INFO_GPU_METRICS (typeId, sourceId, typeName, metricId, metricName) "
                     "VALUES (?,?,?,?,?)",
                     &st);
      if (ti == nullptr)
        return st;
      std::string type_name = "GPU " + std::to_string(*gpu_id) + " PM sampling: " + d.info.name() +
                              (d.info.chip_name().empty() ? "" : " (" + d.info.chip_name() + ")");
      for (size_t i = 0; i < d.metrics.size(); ++i) {
        if (!target_rows.insert({*type_id, d.metric_ids[i]}).second)
          continue;
        ti->Int(1, *type_id).Int(2, kGpuMetricsSourceId).Text(3, type_name).Int(4, d.metric_ids[i]);
        ti->Text(5, d.metric_names[i]);
        if (!(st = ti->Run()).ok())
          return st;
      }
    } else if (d.samples != 0) {
      ctx.Warn("GPU metrics of device " + std::to_string(d.info.device_id()) + " of pid " + std::to_string(d.pid) +
               " have no UUID; their GPU_METRICS rows keep the provisional typeId " +
               std::to_string(d.provisional_type));
    }
    Statement* dev = ctx.db().Prepare(
        "INSERT INTO GTRACE_GPU_METRICS_DEVICES (typeId, globalPid, gpuId, cudaId, uuid, name, chipName, busLocation, "
        "state, reason, setName, samplingIntervalNs, triggerMode, samples, droppedSamples, hwBufferOverflows, "
        "decodeErrors, clockOffsetNs, ownerRule) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
        &st);
    if (dev == nullptr)
      return st;
    const schema::GpuMetricsDevice& i = d.info;
    dev->OptInt(1, type_id).Int(2, d.global_pid).OptInt(3, gpu_id).Int(4, i.device_id());
    if (i.uuid().empty()) {
      dev->Null(5);
    } else {
      dev->Text(5, FormatUuid(i.uuid()));
    }
    dev->Text(6, i.name()).Text(7, i.chip_name()).Text(8, i.pci_bus_id()).Text(9, StateName(i.state()));
    if (i.reason().empty()) {
      dev->Null(10);
    } else {
      dev->Text(10, i.reason());
    }
    dev->Text(11, i.set_name());
    if (i.sampling_interval_ns() != 0) {
      dev->Int(12, static_cast<int64_t>(i.sampling_interval_ns()));
    } else {
      dev->Null(12);
    }
    if (d.metrics.empty()) {
      dev->Null(13);
    } else {
      dev->Text(13, i.trigger_mode() == 1 ? "time" : "sysclk");
    }
    dev->Int(14, static_cast<int64_t>(d.samples)).Int(15, static_cast<int64_t>(d.dropped));
    dev->Int(16, static_cast<int64_t>(d.overflows)).Int(17, static_cast<int64_t>(d.errors)).Int(18, d.clock_offset_ns);
    if (d.owner_rule.empty()) {
      dev->Null(19);
    } else {
      dev->Text(19, d.owner_rule);
    }
    if (!(st = dev->Run()).ok())
      return st;
    Statement* cfg = ctx.db().Prepare(
        "INSERT INTO GTRACE_GPU_METRICS_CONFIG (typeId, globalPid, cudaId, profiler, metricKey, cuptiName, metricId, "
        "metricName, unit, scale, accepted, reason) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
        &st);
    if (cfg == nullptr)
      return st;
    for (size_t k = 0; k < d.metrics.size(); ++k) {
      const schema::GpuMetric& m = d.metrics[k];
      cfg->OptInt(1, type_id).Int(2, d.global_pid).Int(3, i.device_id()).Text(4, "pm-sampling").Text(5, m.key());
      cfg->Text(6, m.cupti_name()).Int(7, d.metric_ids[k]).Text(8, d.metric_names[k]).Text(9, m.export_unit());
      cfg->Real(10, m.export_scale()).Int(11, 1).Null(12);
      if (!(st = cfg->Run()).ok())
        return st;
    }
    for (const schema::GpuMetricRejection& r : i.rejected()) {
      cfg->OptInt(1, type_id).Int(2, d.global_pid).Int(3, i.device_id()).Text(4, "pm-sampling").Text(5, r.key());
      cfg->Text(6, r.cupti_name()).Null(7).Null(8).Null(9).Null(10).Int(11, 0).Text(12, r.reason());
      if (!(st = cfg->Run()).ok())
        return st;
    }
  }
  return WriteRanges(ctx, gpu_ids);
}

Status GpuMetricsExport::WriteRanges(ExportContext& ctx,
                                     const std::map<std::pair<uint32_t, std::string>, int64_t>& gpu_ids) {
  Status st;
  // Range-profiler configuration rows (metrics accepted and rejected).
  for (const auto& [key, c] : range_configs_) {
    const auto& [hw, pid, gpid] = range_config_owner_[key];
    (void)hw;
    (void)pid;
    Statement* cfg = ctx.db().Prepare(
        "INSERT INTO GTRACE_GPU_METRICS_CONFIG (typeId, globalPid, cudaId, profiler, metricKey, cuptiName, metricId, "
        "metricName, unit, scale, accepted, reason) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
        &st);
    if (cfg == nullptr)
      return st;
    for (const schema::GpuMetric& m : c.metrics()) {
      cfg->Null(1)
          .Int(2, gpid)
          .Int(3, c.device_id())
          .Text(4, "range-profiler")
          .Text(5, m.key())
          .Text(6, m.cupti_name());
      cfg->Null(7).Text(8, MetricName(m)).Text(9, m.export_unit()).Real(10, 1.0).Int(11, 1).Null(12);
      if (!(st = cfg->Run()).ok())
        return st;
    }
    for (const schema::GpuMetricRejection& r : c.rejected()) {
      cfg->Null(1)
          .Int(2, gpid)
          .Int(3, c.device_id())
          .Text(4, "range-profiler")
          .Text(5, r.key())
          .Text(6, r.cupti_name());
      cfg->Null(7).Null(8).Null(9).Null(10).Int(11, 0).Text(12, r.reason());
      if (!(st = cfg->Run()).ok())
        return st;
    }
    if (!c.reason().empty() && c.metrics_size() == 0) {
      cfg->Null(1).Int(2, gpid).Int(3, c.device_id()).Text(4, "range-profiler").Text(5, "").Text(6, "");
      cfg->Null(7).Null(8).Null(9).Null(10).Int(11, 0).Text(12, c.reason());
      if (!(st = cfg->Run()).ok())
        return st;
    }
  }
  if (ranges_.empty())
    return Status::Ok();
  // Kernel mode. CUPTI serialises the launches it profiles (kernel replay: each launch call returns
  // after its kernel ran) and numbers a pass's ranges in launch order, so range i of a pass (its
  // index in the pass's image; CUPTI's range *names* count on across passes) is the i-th kernel-
  // launch call of the process that started inside the pass. The launch calls, not the kernel rows,
  // because CUPTI delivers the activity records of the kernels it profiled without timestamps (an
  // H200 with CUDA 13.0, 2026-11-26: every profiled kernel was a record "without an end", none had a
  // kernel row); a complete kernel record with that correlation id, where there is one, adds the
  // kernel's name and times. Mapped only when the pass's launch count equals its range count (two
  // devices in kernel mode, or graph launches, make it ambiguous: left NULL). Without API rows:
  // the context's kernel rows starting inside the pass, in start order.
  // Bounded memory: only the current pass's kernels are held (a pass's results are read together, so
  // the rows of one pass follow each other; a pass met again is looked up again, with the same
  // answer). The lookups read indexed copies in the spill database: the output tables have no index,
  // and a scan per pass would cost passes x rows.
  struct Kernel {
    std::optional<int64_t> start, end, name;
    int64_t correlation = 0;
  };
  std::optional<std::tuple<int64_t, uint32_t, uint64_t>> pass_key;  // (gpid, ctx, pass) of pass_kernels
  std::vector<Kernel> pass_kernels;
  bool have_kernels = ctx.HasTable("CUPTI_ACTIVITY_KIND_KERNEL");
  bool have_launches = ctx.HasTable("CUPTI_ACTIVITY_KIND_RUNTIME") && ctx.HasTable("StringIds");
  uint64_t untimed_kernels = 0;  // mapped to a launch whose kernel has no complete record
  if (ranges_.kernel_rows() > 0) {
    std::string sql = "CREATE TABLE gt_spill.kernel_pass_ranges AS SELECT globalPid, contextId, passId, count(*) AS n "
                      "FROM gt_spill.range_rows WHERE mode = " +
                      std::to_string(static_cast<int>(schema::RANGE_METRICS_MODE_KERNEL)) +
                      " GROUP BY globalPid, contextId, passId;"
                      "CREATE INDEX gt_spill.kernel_pass_ranges_key ON kernel_pass_ranges (globalPid, contextId, passId);";
    if (have_kernels) {
      sql +=
          "CREATE TABLE gt_spill.range_kernels (globalPid INTEGER, contextId INTEGER, start INTEGER, "
          "correlationId INTEGER, end INTEGER, demangledName INTEGER);"
          "INSERT INTO gt_spill.range_kernels SELECT globalPid, contextId, start, correlationId, end, demangledName "
          "FROM main.CUPTI_ACTIVITY_KIND_KERNEL;"
          "CREATE INDEX gt_spill.range_kernels_start ON range_kernels (globalPid, contextId, start, correlationId);"
          "CREATE INDEX gt_spill.range_kernels_corr ON range_kernels (globalPid, correlationId);";
    }
    if (have_launches) {
      sql +=
          "CREATE TABLE gt_spill.range_launches (globalPid INTEGER, start INTEGER, correlationId INTEGER);"
          "INSERT INTO gt_spill.range_launches SELECT (r.globalTid / 16777216) * 16777216, r.start, r.correlationId "
          "FROM main.CUPTI_ACTIVITY_KIND_RUNTIME r JOIN main.StringIds s ON s.id = r.nameId WHERE (s.value LIKE "
          "'cudaLaunch%' OR s.value LIKE 'cuLaunch%') AND s.value LIKE '%Kernel%';"
          "CREATE INDEX gt_spill.range_launches_start ON range_launches (globalPid, start, correlationId);";
    }
    if (!(st = ctx.db().Exec(sql)).ok())
      return st;
  }
  auto kernels_of_pass = [&](const RangeRow& row, std::vector<Kernel>* ks) -> Status {
    Status qs;
    if (have_launches) {
      Statement* q = ctx.db().Prepare(
          "SELECT correlationId FROM gt_spill.range_launches WHERE globalPid = ? AND start >= ? AND start <= ? "
          "ORDER BY start, correlationId",
          &qs);
      if (q == nullptr)
        return qs;
      q->Int(1, row.global_pid).Int(2, row.pass_start_ns).Int(3, row.pass_end_ns);
      while (q->Step()) {
        Kernel k;
        k.correlation = q->ColumnInt(0);
        ks->push_back(k);
      }
      q->Reset();
      if (have_kernels) {
        Statement* kq = ctx.db().Prepare(
            "SELECT start, end, demangledName FROM gt_spill.range_kernels WHERE globalPid = ? AND correlationId = ?",
            &qs);
        if (kq == nullptr)
          return qs;
        for (Kernel& k : *ks) {
          kq->Int(1, row.global_pid).Int(2, k.correlation);
          if (kq->Step()) {
            k.start = kq->ColumnInt(0);
            k.end = kq->ColumnInt(1);
            k.name = kq->ColumnInt(2);
          }
          kq->Reset();
        }
      }
      return Status::Ok();
    }
    if (!have_kernels)
      return Status::Ok();
    Statement* q = ctx.db().Prepare(
        "SELECT start, end, correlationId, demangledName FROM gt_spill.range_kernels WHERE globalPid = ? AND "
        "contextId = ? AND start >= ? AND start <= ? ORDER BY start, correlationId",
        &qs);
    if (q == nullptr)
      return qs;
    q->Int(1, row.global_pid).Int(2, row.context_id).Int(3, row.pass_start_ns).Int(4, row.pass_end_ns);
    while (q->Step()) {
      Kernel k;
      k.start = q->ColumnInt(0);
      k.end = q->ColumnInt(1);
      k.correlation = q->ColumnInt(2);
      k.name = q->ColumnInt(3);
      ks->push_back(k);
    }
    q->Reset();
    return Status::Ok();
  };
  auto ranges_of_pass = [&](const RangeRow& row, int64_t* n) -> Status {
    Status qs;
    Statement* q = ctx.db().Prepare(
        "SELECT n FROM gt_spill.kernel_pass_ranges WHERE globalPid = ? AND contextId = ? AND passId = ?", &qs);
    if (q == nullptr)
      return qs;
    q->Int(1, row.global_pid).Int(2, row.context_id).Int(3, static_cast<int64_t>(row.pass_id));
    *n = q->Step() ? q->ColumnInt(0) : 0;
    q->Reset();
    return Status::Ok();
  };
  bool have_devices = ctx.HasTable("TARGET_INFO_CUDA_DEVICE");
  Statement* ins = ctx.db().Prepare(
      "INSERT INTO GTRACE_RANGE_METRICS (globalPid, globalTid, gpuId, cudaId, contextId, mode, rangeName, rangeIndex, "
      "passId, passStart, passEnd, correlationId, kernelStart, kernelEnd, kernelName, metricName, cuptiName, value) "
      "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
      &st);
  if (ins == nullptr)
    return st;
  (void)gpu_ids;
  st = ranges_.ForEach(ctx, [&](const RangeRow& row) -> Status {
    Status st;
    auto cfg_it = range_configs_.find(std::make_tuple(row.stream, row.device_id, row.context_id));
    if (cfg_it == range_configs_.end())
      return Status::Ok();
    const schema::RangeMetricsConfig& cfg = cfg_it->second;
    std::optional<int64_t> gpu_id;
    if (have_devices) {
      Statement* q = ctx.db().Prepare("SELECT gpuId FROM TARGET_INFO_CUDA_DEVICE WHERE pid = ? AND cudaId = ?", &st);
      if (q == nullptr)
        return st;
      q->Int(1, row.pid).Int(2, row.device_id);
      if (q->Step())
        gpu_id = q->ColumnInt(0);
      q->Reset();
    }
    std::optional<Kernel> kernel;
    if (row.mode == schema::RANGE_METRICS_MODE_KERNEL) {
      auto key = std::make_tuple(row.global_pid, row.context_id, row.pass_id);
      if (!pass_key || *pass_key != key) {
        pass_kernels.clear();
        if (!(st = kernels_of_pass(row, &pass_kernels)).ok())
          return st;
        int64_t ranges = 0;
        if (!(st = ranges_of_pass(row, &ranges)).ok())
          return st;
        if (static_cast<int64_t>(pass_kernels.size()) != ranges)
          pass_kernels.clear();  // ambiguous: map nothing rather than the wrong kernels
        pass_key = key;
      }
      if (row.range_index < pass_kernels.size()) {
        kernel = pass_kernels[row.range_index];
        if (!kernel->start)
          ++untimed_kernels;
      }
    }
    for (int k = 0; k < cfg.metrics_size() && k < static_cast<int>(row.values.size()); ++k) {
      const schema::GpuMetric& m = cfg.metrics(k);
      ins->Int(1, row.global_pid).OptInt(2, row.global_tid).OptInt(3, gpu_id).Int(4, row.device_id);
      ins->Int(5, row.context_id).Text(6, row.mode == schema::RANGE_METRICS_MODE_KERNEL ? "kernel" : "nvtx");
      ins->Text(7, row.range_name).Int(8, row.range_index).Int(9, static_cast<int64_t>(row.pass_id));
      ins->Int(10, row.pass_start_ns).Int(11, row.pass_end_ns);
      if (kernel) {
        ins->Int(12, kernel->correlation).OptInt(13, kernel->start).OptInt(14, kernel->end).OptInt(15, kernel->name);
      } else {
        ins->Null(12).Null(13).Null(14).Null(15);
      }
      ins->Text(16, MetricName(m)).Text(17, m.cupti_name()).Real(18, row.values[k]);
      if (!(st = ins->Run()).ok())
        return st;
    }
    return Status::Ok();
  });
  if (!st.ok())
    return st;
  if (untimed_kernels > 0) {
    ctx.Warn(std::to_string(untimed_kernels) +
             " kernel-mode ranges are mapped to their launch only (correlationId): CUPTI delivered the profiled "
             "kernels' activity records without timestamps, so kernelName/kernelStart/kernelEnd are NULL "
             "(docs/gpu-metrics.md)");
  }
  return Status::Ok();
}

}  // namespace

std::unique_ptr<ExportModule> MakeGpuMetricsExport() {
  return std::make_unique<GpuMetricsExport>();
}

}  // namespace gt::exporter
