#include "tools/export/cuda_target_info.h"

#include <algorithm>
#include <set>

#include "tools/export/cuda_names.h"

namespace gt::exporter {
namespace {

constexpr char kDevicesDdl[] = R"sql(CREATE TABLE GTRACE_DEVICES (
    -- gtrace: one row per process and CUDA device it used; where the process-local ordinal went.
    globalPid                   INTEGER   NOT NULL,                    -- Serialized GlobalId of the process.
    pid                         INTEGER   NOT NULL,
    cudaId                      INTEGER   NOT NULL,                    -- CUDA ordinal in that process (CUPTI's deviceId).
    deviceId                    INTEGER   NOT NULL,                    -- TARGET_INFO_GPU.id: deviceId of its rows here.
    hostName                    TEXT,
    uuid                        TEXT
))sql";

// Tables whose deviceId columns CUPTI fills with the process-local ordinal, keyed by globalPid.
constexpr const char* kDeviceTables[][2] = {
    {"CUPTI_ACTIVITY_KIND_KERNEL", "deviceId"},     {"CUPTI_ACTIVITY_KIND_MEMCPY", "deviceId"},
    {"CUPTI_ACTIVITY_KIND_MEMSET", "deviceId"},     {"CUPTI_ACTIVITY_KIND_SYNCHRONIZATION", "deviceId"},
    {"CUPTI_ACTIVITY_KIND_CUDA_EVENT", "deviceId"}, {"CUPTI_ACTIVITY_KIND_GRAPH_TRACE", "deviceId"},
    {"CUDA_GPU_MEMORY_USAGE_EVENTS", "deviceId"},   {"CUDA_GPU_MEMORY_POOL_EVENTS", "deviceId"},
};

}  // namespace

void CudaTargetInfo::AddDevice(const StreamContext& s, const schema::CudaDevice& d) {
  traced_ = true;
  for (const Device& existing : devices_) {
    if (existing.hw_id == s.hw_id && existing.pid == s.pid && existing.info.device_id() == d.device_id())
      return;
  }
  devices_.push_back({s.hw_id, s.pid, d, s.header.host_name()});
  NumberDevice(devices_.size() - 1);
}

void CudaTargetInfo::NumberDevice(size_t index) {
  const Device& d = devices_[index];
  auto key = std::make_pair(d.hw_id, d.info.uuid());
  auto it = gpu_ids_.find(key);
  if (it == gpu_ids_.end()) {
    it = gpu_ids_.emplace(key, static_cast<int64_t>(gpu_rows_.size())).first;
    gpu_rows_.push_back(index);
  }
  device_gpu_[std::make_tuple(d.hw_id, d.pid, d.info.device_id())] = it->second;
}

void CudaTargetInfo::AddContext(const StreamContext& s, const schema::CudaContext& c) {
  traced_ = true;
  auto key = std::make_tuple(s.hw_id, s.pid, c.context_id());
  if (context_device_.count(key) != 0)
    return;
  context_device_[key] = c.device_id();
  contexts_.push_back({s.hw_id, s.pid, c});
}

void CudaTargetInfo::AddStream(const StreamContext& s, const schema::CudaStream& st) {
  traced_ = true;
  for (const Stream& existing : streams_) {
    if (existing.hw_id == s.hw_id && existing.pid == s.pid && existing.info.context_id() == st.context_id() &&
        existing.info.stream_id() == st.stream_id()) {
      return;
    }
  }
  streams_.push_back({s.hw_id, s.pid, st});
}

std::optional<uint32_t> CudaTargetInfo::DeviceOfContext(const StreamContext& s, uint32_t context_id) const {
  auto it = context_device_.find(std::make_tuple(s.hw_id, s.pid, context_id));
  if (it == context_device_.end())
    return std::nullopt;
  return it->second;
}

Status CudaTargetInfo::Write(ExportContext& ctx) {
  if (!traced_)
    return Status::Ok();
  AddPlaceholders(ctx);
  Status st;
  for (const char* table :
       {"TARGET_INFO_GPU", "TARGET_INFO_CUDA_DEVICE", "TARGET_INFO_CUDA_CONTEXT_INFO", "TARGET_INFO_CUDA_STREAM"}) {
    if (!(st = ctx.EnsureTable(table)).ok())
      return st;
  }
  if (!unmapped_.empty() && !(st = RenumberUnmapped(ctx)).ok())
    return st;
  // Physical GPUs: one per (host, UUID), numbered in the order first seen (processes of one host
  // that see the same GPU share its row); a merge renumbers them across hosts.
  Statement* gpu = ctx.Insert(
      "TARGET_INFO_GPU",
      "INSERT INTO TARGET_INFO_GPU (vmId, id, name, busLocation, isDiscrete, l2CacheSize, totalMemory, "
      "memoryBandwidth, clockRate, smCount, pwGpuId, uuid, luid, chipName, cuDevice, ctxswDevPath, ctrlDevPath, "
      "revision, nodeMask, constantMemory, maxIPC, maxRegistersPerBlock, maxShmemPerBlock, maxShmemPerBlockOptin, "
      "maxShmemPerSm, maxRegistersPerSm, threadsPerWarp, asyncEngines, maxWarpsPerSm, maxBlocksPerSm, "
      "maxThreadsPerBlock, maxBlockDimX, maxBlockDimY, maxBlockDimZ, maxGridDimX, maxGridDimY, maxGridDimZ, "
      "computeMajor, computeMinor, smMajor, smMinor) VALUES "
      "(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
      &st);
  if (gpu == nullptr)
    return st;
  for (size_t id = 0; id < gpu_rows_.size(); ++id) {
    const Device* dp = &devices_[gpu_rows_[id]];
    const schema::CudaDevice& d = dp->info;
    int64_t vm = HostBits(dp->hw_id);
    // Facts CUPTI does not report (PCI location, chip name, opt-in shared memory) stay NULL.
    gpu->Int(1, vm).Int(2, static_cast<int64_t>(id)).Text(3, d.name());
    gpu->Int(6, d.l2_cache_bytes()).Int(7, static_cast<int64_t>(d.global_memory_bytes()));
    gpu->Int(8, static_cast<int64_t>(d.global_memory_bandwidth_kbps()) * 1000);
    gpu->Int(9, static_cast<int64_t>(d.core_clock_khz()) * 1000).Int(10, d.multiprocessors());
    std::string uuid = FormatUuid(d.uuid());
    if (!uuid.empty())
      gpu->Text(12, uuid);
    gpu->Int(15, d.device_id()).Int(20, d.constant_memory_bytes()).Int(21, d.max_ipc());
    gpu->Int(22, d.max_registers_per_block()).Int(23, d.max_shared_memory_per_block_bytes());
    gpu->Int(25, d.max_shared_memory_per_multiprocessor_bytes()).Int(26, d.max_registers_per_multiprocessor());
    gpu->Int(27, d.threads_per_warp()).Int(28, d.memcpy_engines()).Int(29, d.max_warps_per_multiprocessor());
    gpu->Int(30, d.max_blocks_per_multiprocessor()).Int(31, d.max_threads_per_block());
    gpu->Int(32, d.max_block_dim_x()).Int(33, d.max_block_dim_y()).Int(34, d.max_block_dim_z());
    gpu->Int(35, d.max_grid_dim_x()).Int(36, d.max_grid_dim_y()).Int(37, d.max_grid_dim_z());
    gpu->Int(38, d.compute_major()).Int(39, d.compute_minor()).Int(40, d.compute_major()).Int(41, d.compute_minor());
    if (!(st = gpu->Run()).ok())
      return st;
  }
  auto gpu_id = [&](uint32_t hw_id, uint32_t pid, uint32_t ordinal) -> int64_t {
    auto it = device_gpu_.find(std::make_tuple(hw_id, pid, ordinal));
    return it != device_gpu_.end() ? it->second : ordinal;
  };
  if (!devices_.empty()) {
    if (!(st = ctx.db().Exec(kDevicesDdl)).ok())
      return st;
    Statement* gd = ctx.db().Prepare(
        "INSERT INTO GTRACE_DEVICES (globalPid, pid, cudaId, deviceId, hostName, uuid) VALUES (?,?,?,?,?,?)", &st);
    if (gd == nullptr)
      return st;
    for (const Device& d : devices_) {
      gd->Int(1, PackGlobalTid(d.hw_id, d.pid, 0)).Int(2, d.pid).Int(3, d.info.device_id());
      gd->Int(4, gpu_id(d.hw_id, d.pid, d.info.device_id())).Text(5, d.host_name);
      std::string uuid = FormatUuid(d.info.uuid());
      if (!uuid.empty())
        gd->Text(6, uuid);
      if (!(st = gd->Run()).ok())
        return st;
    }
  }
  Statement* dev = ctx.Insert("TARGET_INFO_CUDA_DEVICE",
                              "INSERT INTO TARGET_INFO_CUDA_DEVICE (gpuId, cudaId, pid, uuid, numMultiprocessors) "
                              "VALUES (?,?,?,?,?)",
                              &st);
  if (dev == nullptr)
    return st;
  // cudaId = the deviceId of the process's rows (the GPU id), so that the joins readers make
  // (CONTEXT_INFO.deviceId = CUDA_DEVICE.cudaId, KERNEL.deviceId = cudaId) hold; the ordinal CUPTI
  // reported is GTRACE_DEVICES.cudaId.
  for (const Device& d : devices_) {
    int64_t id = gpu_id(d.hw_id, d.pid, d.info.device_id());
    dev->Int(1, id).Int(2, id);
    dev->Int(3, d.pid);
    dev->Int(5, d.info.multiprocessors());
    if (!(st = dev->Run()).ok())
      return st;
  }
  Statement* cx =
      ctx.Insert("TARGET_INFO_CUDA_CONTEXT_INFO",
                 "INSERT INTO TARGET_INFO_CUDA_CONTEXT_INFO (nullStreamId, hwId, vmId, processId, deviceId, "
                 "contextId, parentContextId, isGreenContext, numMultiprocessors) VALUES (?,?,?,?,?,?,?,?,?)",
                 &st);
  if (cx == nullptr)
    return st;
  std::set<std::tuple<uint32_t, uint32_t, uint32_t, uint32_t>> have_stream;  // (hw, pid, ctx, stream)
  for (const Stream& s : streams_)
    have_stream.insert({s.hw_id, s.pid, s.info.context_id(), s.info.stream_id()});
  for (const Context& c : contexts_) {
    cx->Int(1, c.info.null_stream_id()).Int(2, c.hw_id).Int(3, 1).Int(4, c.pid);
    cx->Int(5, gpu_id(c.hw_id, c.pid, c.info.device_id()));
    cx->Int(6, c.info.context_id()).Int(7, c.info.parent_context_id()).Int(8, c.info.green_context() ? 1 : 0);
    cx->Int(9, c.info.multiprocessors());
    if (!(st = cx->Run()).ok())
      return st;
    // The legacy NULL stream of the context, when CUPTI sent no STREAM record for it.
    if (c.info.null_stream_id() != 0 &&  // 0: unknown (a placeholder context)
        have_stream.count({c.hw_id, c.pid, c.info.context_id(), c.info.null_stream_id()}) == 0) {
      schema::CudaStream null_stream;
      null_stream.set_context_id(c.info.context_id());
      null_stream.set_stream_id(c.info.null_stream_id());
      null_stream.set_flag(3);
      streams_.push_back({c.hw_id, c.pid, null_stream});
    }
  }
  Statement* sx =
      ctx.Insert("TARGET_INFO_CUDA_STREAM",
                 "INSERT INTO TARGET_INFO_CUDA_STREAM (streamId, hwId, vmId, processId, contextId, priority, "
                 "flag) VALUES (?,?,?,?,?,?,?)",
                 &st);
  if (sx == nullptr)
    return st;
  for (const Stream& s : streams_) {
    // priority as CUPTI stores it: a uint32 (-5 -> 4294967291), as nsys writes it.
    sx->Int(1, s.info.stream_id()).Int(2, s.hw_id).Int(3, 1).Int(4, s.pid).Int(5, s.info.context_id());
    sx->Int(6, s.info.priority()).Int(7, s.info.flag());
    if (!(st = sx->Run()).ok())
      return st;
  }
  return Status::Ok();
}

void CudaTargetInfo::AddPlaceholders(ExportContext& ctx) {
  std::set<std::pair<uint32_t, uint32_t>> warned;
  for (const auto& [hw_id, pid, ordinal, context] : unmapped_) {
    if (device_gpu_.count(std::make_tuple(hw_id, pid, ordinal)) == 0) {
      // A UUID of our own, unique per (host, process, ordinal): the GPU cannot be matched with
      // another process's. The name says what is unknown; the attributes stay 0.
      std::string uuid(16, '\0');
      for (int b = 0; b < 4; ++b) {
        uuid[b] = static_cast<char>(0xFF);
        uuid[4 + b] = static_cast<char>((hw_id >> (8 * b)) & 0xFF);
        uuid[8 + b] = static_cast<char>((pid >> (8 * b)) & 0xFF);
        uuid[12 + b] = static_cast<char>((ordinal >> (8 * b)) & 0xFF);
      }
      schema::CudaDevice d;
      d.set_device_id(ordinal);
      d.set_name("Unknown GPU (no CUPTI device record)");
      d.set_uuid(uuid);
      devices_.push_back({hw_id, pid, d, ""});
      NumberDevice(devices_.size() - 1);
      if (warned.insert({hw_id, pid}).second) {
        ctx.Warn("process " + std::to_string(pid) +
                 " has GPU rows but no CUPTI device record; TARGET_INFO_GPU "
                 "has a placeholder \"Unknown GPU\" for it");
      }
    }
    auto key = std::make_tuple(hw_id, pid, context);
    if (context != 0 && context_device_.count(key) == 0) {
      schema::CudaContext c;
      c.set_context_id(context);
      c.set_device_id(ordinal);
      context_device_[key] = ordinal;
      contexts_.push_back({hw_id, pid, c});
    }
  }
}

Status CudaTargetInfo::RenumberUnmapped(ExportContext& ctx) {
  Status st = ctx.db().Exec(
      "CREATE TEMP TABLE IF NOT EXISTS gt_device_gpu (globalPid INTEGER, cudaId INTEGER, gpuId INTEGER, "
      "PRIMARY KEY (globalPid, cudaId)); DELETE FROM temp.gt_device_gpu");
  if (!st.ok())
    return st;
  Statement* ins = ctx.db().Prepare("INSERT INTO temp.gt_device_gpu (globalPid, cudaId, gpuId) VALUES (?,?,?)", &st);
  if (ins == nullptr)
    return st;
  for (const auto& [key, id] : device_gpu_) {
    const auto& [hw_id, pid, ordinal] = key;
    if (!(st = ins->Int(1, PackGlobalTid(hw_id, pid, 0)).Int(2, ordinal).Int(3, id).Run()).ok())
      return st;
  }
  const std::string base = std::to_string(kUnmappedBase);
  for (const auto& [table, column] : kDeviceTables) {
    Statement* has = ctx.db().Prepare("SELECT count(*) FROM main.sqlite_master WHERE type = 'table' AND name = ?", &st);
    if (has == nullptr)
      return st;
    has->Text(1, table);
    bool exists = has->Step() && has->ColumnInt(0) > 0;
    has->Reset();
    if (!exists)
      continue;
    std::string c = std::string("\"") + column + "\"";
    st = ctx.db().Exec(std::string("UPDATE main.") + table + " SET " + c +
                       " = coalesce((SELECT m.gpuId FROM temp.gt_device_gpu m WHERE m.globalPid = " + table +
                       ".globalPid AND m.cudaId = " + table + "." + c + " - " + base + "), " + c + " - " + base +
                       ") WHERE " + c + " >= " + base);
    if (!st.ok())
      return st;
  }
  return Status::Ok();
}

}  // namespace gt::exporter
