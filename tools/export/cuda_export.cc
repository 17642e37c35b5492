// CUDA rows, following nsys 3.25.0 (shared notes nsys-sqlite-schema.md §3-4):
//  - every GPU row's globalPid is the process's (== launching call's globalTid & 0xFFFFFFFFFF000000),
//    so nsys's join (correlationId + globalPid) finds the API call;
//  - runtime and driver calls share CUPTI_ACTIVITY_KIND_RUNTIME (eventClass 0 / 1), named by the
//    CUPTI callback name with its "_vNNNN" suffix;
//  - CUPTI enums are translated where nsys numbers differ (memory kinds, launch type, overhead,
//    memory operations); greenContextId is 0 (NULL in SYNCHRONIZATION);
//  - KERNEL, MEMCPY, MEMSET, RUNTIME and the TARGET_INFO tables exist whenever a process traced
//    CUDA, even empty (nsys omits empty ones; one known client crashes without MEMSET).
// Rows needing facts from other chunks: a sync whose context was not described yet is buffered
// until the stream's end (rare: CUPTI describes a context before its activity); graph-trace rows
// and graph launches (launch -> exec id from the callback record) go to the spill database and are
// written at the stream's end (graph_trace_spill.h).
#include "tools/export/cuda_export.h"

#include <optional>
#include <unordered_map>
#include <vector>

#include "tools/export/cuda_names.h"
#include "tools/export/cuda_target_info.h"
#include "tools/export/graph_trace_spill.h"

namespace gt::exporter {
namespace {

constexpr uint32_t kInvalidId = 0xFFFFFFFFu;  // CUPTI_SYNCHRONIZATION_INVALID_VALUE
constexpr int64_t kClassRuntime = 0, kClassDriver = 1, kClassOverhead = 103;
constexpr int64_t kClassGraphCreation = 95, kClassGraphExecCreation = 94;

constexpr char kInsertKernel[] =
    "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, contextId, greenContextId, streamId, "
    "correlationId, globalPid, demangledName, shortName, mangledName, launchType, cacheConfig, registersPerThread, "
    "gridX, gridY, gridZ, blockX, blockY, blockZ, staticSharedMemory, dynamicSharedMemory, localMemoryPerThread, "
    "localMemoryTotal, gridId, sharedMemoryExecuted, graphNodeId, sharedMemoryLimitConfig, qmdBulkReleaseDone, "
    "qmdPreexitDone, qmdLastCtaDone, graphId, clusterX, clusterY, clusterZ, clusterSchedulingPolicy, "
    "maxPotentialClusterSize, maxActiveClusters, sharedMemoryRequestedPercentage, tensorSizeMinusOneElements) "
    "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)";
constexpr char kInsertMemcpy[] =
    "INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY (start, end, deviceId, contextId, greenContextId, streamId, "
    "correlationId, globalPid, bytes, copyKind, deprecatedSrcId, srcKind, dstKind, srcDeviceId, srcContextId, "
    "dstDeviceId, dstContextId, migrationCause, graphNodeId, virtualAddress, copyCount) "
    "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)";
constexpr char kInsertMemset[] =
    "INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET (start, end, deviceId, contextId, greenContextId, streamId, "
    "correlationId, globalPid, value, bytes, graphNodeId, memKind) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)";
constexpr char kInsertRuntime[] =
    "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME (start, end, eventClass, globalTid, correlationId, nameId, returnValue, "
    "callchainId) VALUES (?,?,?,?,?,?,?,?)";
constexpr char kInsertSync[] =
    "INSERT INTO CUPTI_ACTIVITY_KIND_SYNCHRONIZATION (start, end, deviceId, contextId, greenContextId, streamId, "
    "correlationId, globalPid, deprecatedSyncType, syncType, eventId, eventSyncId) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)";
constexpr char kInsertEvent[] =
    "INSERT INTO CUPTI_ACTIVITY_KIND_CUDA_EVENT (timestamp, deviceId, contextId, greenContextId, streamId, "
    "correlationId, globalPid, eventId, eventSyncId) VALUES (?,?,?,?,?,?,?,?,?)";
constexpr char kInsertGraphEvent[] =
    "INSERT INTO CUDA_GRAPH_EVENTS (start, end, eventClass, globalTid, nameId, graphId, originalGraphId, "
    "graphExecId) VALUES (?,?,?,?,?,?,?,?)";
constexpr char kInsertOverhead[] =
    "INSERT INTO CUPTI_ACTIVITY_KIND_OVERHEAD (start, end, eventClass, globalTid, correlationId, nameId, "
    "overheadType) VALUES (?,?,?,?,?,?,?)";
constexpr char kInsertMemory[] =
    "INSERT INTO CUDA_GPU_MEMORY_USAGE_EVENTS (start, globalPid, deviceId, contextId, address, pc, bytes, memKind, "
    "memoryOperationType, name, correlationId, streamId, localMemoryPoolAddress, localMemoryPoolReleaseThreshold, "
    "localMemoryPoolSize, localMemoryPoolUtilizedSize, importedMemoryPoolAddress, importedMemoryPoolProcessId) "
    "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)";
constexpr char kInsertPool[] =
    "INSERT INTO CUDA_GPU_MEMORY_POOL_EVENTS (start, globalPid, deviceId, address, operationType, poolType, "
    "correlationId, minBytesToKeep, localMemoryPoolReleaseThreshold, localMemoryPoolSize, "
    "localMemoryPoolUtilizedSize) VALUES (?,?,?,?,?,?,?,?,?,?,?)";
constexpr char kInsertDiagnostic[] =
    "INSERT INTO DIAGNOSTIC_EVENT (timestamp, timestampType, source, severity, text, globalPid) VALUES (?,?,?,?,?,?)";

std::optional<int64_t> NonZero(uint64_t v) {
  if (v == 0) return std::nullopt;
  return static_cast<int64_t>(v);
}

const char* WindowReason(schema::CaptureWindowReason r) {
  switch (r) {
    case schema::CAPTURE_WINDOW_REASON_START: return "start of the run";
    case schema::CAPTURE_WINDOW_REASON_DELAY: return "--delay elapsed";
    case schema::CAPTURE_WINDOW_REASON_CUDA_PROFILER_API: return "cudaProfilerStart/Stop";
    case schema::CAPTURE_WINDOW_REASON_NVTX: return "NVTX capture range";
    case schema::CAPTURE_WINDOW_REASON_DURATION: return "--duration elapsed";
    case schema::CAPTURE_WINDOW_REASON_API: return "gtrace.start/stop";
    case schema::CAPTURE_WINDOW_REASON_STEPS: return "--capture-range=steps";
    default: return "unknown";
  }
}

// Per input stream.
struct StreamState {
  bool traced = false;
  std::unordered_map<uint64_t, int64_t> name_ids;  // stream string id -> StringIds id
  struct KernelNameIds {
    int64_t demangled, short_name, mangled;
  };
  std::unordered_map<uint64_t, KernelNameIds> kernel_names;
  struct Sync {
    int64_t start, end;
    schema::CudaSynchronization r;
  };
  std::vector<Sync> syncs;  // only those whose context was not described yet
  uint64_t syncs_without_device = 0;
};

class CudaExport final : public ExportModule {
 public:
  const char* name() const override { return "cuda"; }

  Status BeginStream(ExportContext&, StreamContext&) override {
    state_ = StreamState();
    return Status::Ok();
  }

  Status OnChunk(ExportContext& ctx, StreamContext& s, const schema::Chunk& chunk) override {
    Status st;
    if (chunk.has_cuda_trace_info() && !(st = TraceInfo(ctx, s, chunk.cuda_trace_info())).ok()) return st;
    for (const auto& d : chunk.cuda_devices()) target_.AddDevice(s, d);
    for (const auto& c : chunk.cuda_contexts()) target_.AddContext(s, c);
    for (const auto& x : chunk.cuda_streams()) target_.AddStream(s, x);
    // GPU rows need their device tables even when the stream never said it traced CUDA.
    if (chunk.cuda_kernels_size() + chunk.cuda_memcpys_size() + chunk.cuda_memsets_size() > 0) target_.NoteTraced(s);
    uint64_t base = chunk.base_ns();
    uint64_t ts = base;
    for (const auto& r : chunk.cuda_api_calls()) {
      ts += static_cast<uint64_t>(r.start_delta_ns());
      if (!(st = Api(ctx, s, ts, r)).ok()) return st;
    }
    ts = base;
    for (const auto& r : chunk.cuda_kernels()) {
      ts += static_cast<uint64_t>(r.start_delta_ns());
      if (!(st = Kernel(ctx, s, ts, r)).ok()) return st;
    }
    ts = base;
    for (const auto& r : chunk.cuda_memcpys()) {
      ts += static_cast<uint64_t>(r.start_delta_ns());
      if (!(st = Memcpy(ctx, s, ts, r)).ok()) return st;
    }
    ts = base;
    for (const auto& r : chunk.cuda_memsets()) {
      ts += static_cast<uint64_t>(r.start_delta_ns());
      if (!(st = Memset(ctx, s, ts, r)).ok()) return st;
    }
    ts = base;
    for (const auto& r : chunk.cuda_syncs()) {
      ts += static_cast<uint64_t>(r.start_delta_ns());
      int64_t start = s.ToSessionNs(ts);
      StreamState::Sync x{start, start + static_cast<int64_t>(r.duration_ns()), r};
      // Written now when the context's device is known (CUPTI describes a context before its
      // activity), so memory does not grow with the number of syncs; kept to the stream's end only
      // when a later chunk may still describe the context.
      if (target_.DeviceOfContext(s, r.context_id())) {
        if (!(st = Sync(ctx, s, x)).ok()) return st;
      } else {
        state_.syncs.push_back(std::move(x));
      }
    }
    for (const auto& r : chunk.cuda_events()) {
      if (!(st = Event(ctx, s, r)).ok()) return st;
    }
    ts = base;
    for (const auto& r : chunk.cuda_graph_traces()) {
      ts += static_cast<uint64_t>(r.start_delta_ns());
      int64_t start = s.ToSessionNs(ts);
      const int64_t end = start + static_cast<int64_t>(r.duration_ns());
      ctx.NoteTime(end);
      if (!(st = graphs_.AddTrace(ctx, start, end, r)).ok()) return st;
    }
    for (const auto& r : chunk.cuda_graph_launches()) {
      if (!(st = graphs_.AddLaunch(ctx, r.correlation_id(), r.graph_exec_id())).ok()) return st;
    }
    ts = base;
    for (const auto& r : chunk.cuda_graph_events()) {
      ts += static_cast<uint64_t>(r.ts_delta_ns());
      if (!(st = GraphEvent(ctx, s, chunk.tid(), ts, r)).ok()) return st;
    }
    ts = base;
    for (const auto& r : chunk.cuda_overheads()) {
      ts += static_cast<uint64_t>(r.start_delta_ns());
      if (!(st = Overhead(ctx, s, ts, r)).ok()) return st;
    }
    ts = base;
    for (const auto& r : chunk.cuda_memory_events()) {
      ts += static_cast<uint64_t>(r.ts_delta_ns());
      if (!(st = Memory(ctx, s, ts, r)).ok()) return st;
    }
    ts = base;
    for (const auto& r : chunk.cuda_memory_pool_events()) {
      ts += static_cast<uint64_t>(r.ts_delta_ns());
      if (!(st = Pool(ctx, s, ts, r)).ok()) return st;
    }
    for (const auto& w : chunk.capture_windows()) {
      std::string text = "capture window " + std::to_string(w.window_index()) + (w.open() ? " opened" : " closed") +
                         " (" + WindowReason(w.reason()) + ")" + (w.final() ? "; capture finished" : "");
      if (!(st = Diagnostic(ctx, s, s.ToSessionNs(w.ts_ns()), 1, text)).ok()) return st;
    }
    for (const auto& l : chunk.cuda_record_losses()) {
      if (l.incomplete_records() != 0) {
        s.dropped_records += l.incomplete_records();
        std::string text = "gtrace dropped " + std::to_string(l.incomplete_records()) +
                           " CUPTI records without an end (GPU work still running at the final flush)";
        if (!(st = Diagnostic(ctx, s, s.ToSessionNs(l.ts_ns()), 2, text)).ok()) return st;
      }
      if (l.unknown_kind_records() != 0) {
        std::string text = std::to_string(l.unknown_kind_records()) + " CUPTI records of kinds gtrace does not decode";
        if (!(st = Diagnostic(ctx, s, s.ToSessionNs(l.ts_ns()), 1, text)).ok()) return st;
      }
      if (l.walk_error_buffers() != 0) {
        std::string text = "gtrace lost the rest of " + std::to_string(l.walk_error_buffers()) + " CUPTI buffer(s) (" +
                           std::to_string(l.walk_error_bytes()) +
                           " bytes): cuptiActivityGetNextRecord reported an incomplete or invalid record";
        if (!(st = Diagnostic(ctx, s, s.ToSessionNs(l.ts_ns()), 2, text)).ok()) return st;
      }
    }
    return Status::Ok();
  }

  Status EndStream(ExportContext& ctx, StreamContext& s) override {
    Status st;
    for (const StreamState::Sync& x : state_.syncs) {
      if (!(st = Sync(ctx, s, x)).ok()) return st;
    }
    uint64_t graphs_without_exec = 0;
    if (!(st = graphs_.WriteStream(ctx, s, &target_, &graphs_without_exec)).ok()) return st;
    if (graphs_without_exec > 0) {
      ctx.Warn(s.path + ": " + std::to_string(graphs_without_exec) +
               " CUDA graph launches had no executable-graph id (launch callback record lost); graphExecId 0");
    }
    if (state_.syncs_without_device > 0) {
      ctx.Warn(s.path + ": " + std::to_string(state_.syncs_without_device) +
               " synchronization rows name a context CUPTI never described; deviceId 0");
    }
    return Status::Ok();
  }

  Status Finish(ExportContext& ctx) override { return target_.Write(ctx); }

 private:
  Status TraceInfo(ExportContext& ctx, StreamContext& s, const schema::CudaTraceInfo& info) {
    state_.traced = true;
    target_.NoteTraced(s);
    Status st;
    for (const char* table : {"CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET",
                              "CUPTI_ACTIVITY_KIND_RUNTIME"}) {
      if (!(st = ctx.EnsureTable(table)).ok()) return st;
    }
    Statement* ins = ctx.Insert("META_DATA_CAPTURE", "INSERT INTO META_DATA_CAPTURE (name, value) VALUES (?,?)", &st);
    if (ins == nullptr) return st;
    std::string p = "PROCESS_" + std::to_string(s.index) + ":";
    std::string kinds;
    for (const std::string& k : info.activity_kinds()) kinds += (kinds.empty() ? "" : ",") + k;
    const std::pair<std::string, std::string> rows[] = {
        {"CUPTI_PATH", info.cupti_path()},
        {"CUPTI_PATH_SOURCE", info.cupti_path_source()},
        {"CUPTI_API_VERSION", std::to_string(info.cupti_api_version())},
        {"CUDA_GRAPH_TRACE", info.graph_trace_nodes() ? "node" : "graph"},
        // nsys 2025.5's own row for --cuda-graph-trace (readers such as nsys2prv key on it).
        {"CUDA_GRAPH_TRACE_OPTIONS:MODE", info.graph_trace_nodes() ? "Node" : "Graph"},
        {"CUDA_MEMORY_USAGE", info.memory_usage() ? "true" : "false"},
        {"CUPTI_CLOCK",
         info.clock_callback()      ? "gtrace timestamp callback"
         : info.cupti_clock_pairs() ? "CUPTI clock, converted through measured clock pairs"
                                    : "CUPTI clock, offset " + std::to_string(info.cupti_clock_offset_ns()) + " ns"},
        {"CUPTI_BUFFERS", std::to_string(info.buffer_count()) + " x " + std::to_string(info.buffer_size_bytes()) + " B"},
        {"CUPTI_ACTIVITY_KINDS", kinds},
    };
    for (const auto& [k, v] : rows) {
      if (!(st = ins->Text(1, p + k).Text(2, v).Run()).ok()) return st;
    }
    return Status::Ok();
  }

  Status Diagnostic(ExportContext& ctx, StreamContext& s, int64_t ts, int64_t severity, const std::string& text) {
    Status st;
    Statement* ins = ctx.Insert("DIAGNOSTIC_EVENT", kInsertDiagnostic, &st);
    if (ins == nullptr) return st;
    return ins->Int(1, ts).Int(2, 1).Int(3, 1).Int(4, severity).Text(5, text).Int(6, s.GlobalPid()).Run();
  }

  // StringIds id of a stream string (cached per stream).
  Status NameId(ExportContext& ctx, StreamContext& s, uint64_t string_id, std::string_view fallback, int64_t* id) {
    auto it = state_.name_ids.find(string_id);
    if (it != state_.name_ids.end()) {
      *id = it->second;
      return Status::Ok();
    }
    std::string_view text = s.Text(string_id);
    Status st = ctx.StringId(text.empty() ? fallback : text, id);
    if (st.ok()) state_.name_ids[string_id] = *id;
    return st;
  }

  Status Api(ExportContext& ctx, StreamContext& s, uint64_t ts, const schema::CudaApiCall& r) {
    Status st;
    int64_t name_id = 0;
    std::string fallback = (r.kind() == schema::CUDA_API_KIND_DRIVER ? "driver API " : "runtime API ") +
                           std::to_string(r.cbid());
    if (!(st = NameId(ctx, s, r.name_id(), fallback, &name_id)).ok()) return st;
    Statement* ins = ctx.Insert("CUPTI_ACTIVITY_KIND_RUNTIME", kInsertRuntime, &st);
    if (ins == nullptr) return st;
    int64_t start = s.ToSessionNs(ts);
    int64_t end = start + static_cast<int64_t>(r.duration_ns());
    ctx.NoteTime(end);
    ins->Int(1, start).Int(2, end).Int(3, r.kind() == schema::CUDA_API_KIND_DRIVER ? kClassDriver : kClassRuntime);
    ins->Int(4, s.GlobalTid(r.tid())).Int(5, r.correlation_id()).Int(6, name_id).Int(7, r.return_value());
    return ins->Run();
  }

  Status Kernel(ExportContext& ctx, StreamContext& s, uint64_t ts, const schema::CudaKernel& r) {
    Status st;
    auto it = state_.kernel_names.find(r.name_id());
    if (it == state_.kernel_names.end()) {
      KernelNames n = MakeKernelNames(s.Text(r.name_id()));
      if (n.mangled.empty()) n = MakeKernelNames("<unknown kernel>");
      StreamState::KernelNameIds ids{};
      if (!(st = ctx.StringId(n.demangled, &ids.demangled)).ok()) return st;
      if (!(st = ctx.StringId(n.short_name, &ids.short_name)).ok()) return st;
      if (!(st = ctx.StringId(n.mangled, &ids.mangled)).ok()) return st;
      it = state_.kernel_names.emplace(r.name_id(), ids).first;
    }
    Statement* ins = ctx.Insert("CUPTI_ACTIVITY_KIND_KERNEL", kInsertKernel, &st);
    if (ins == nullptr) return st;
    int64_t start = s.ToSessionNs(ts);
    int64_t end = start + static_cast<int64_t>(r.duration_ns());
    ctx.NoteTime(end);
    ins->Int(1, start).Int(2, end).Int(3, target_.DeviceColumn(s, r.device_id(), r.context_id()));
    ins->Int(4, r.context_id()).Int(5, 0).Int(6, r.stream_id());
    ins->Int(7, r.correlation_id()).Int(8, s.GlobalPid());
    ins->Int(9, it->second.demangled).Int(10, it->second.short_name).Int(11, it->second.mangled);
    ins->Int(12, NsysLaunchType(r.launch_type())).Int(13, r.cache_config_executed()).Int(14, r.registers_per_thread());
    ins->Int(15, r.grid_x()).Int(16, r.grid_y()).Int(17, r.grid_z());
    ins->Int(18, r.block_x()).Int(19, r.block_y()).Int(20, r.block_z());
    ins->Int(21, r.static_shared_memory_bytes()).Int(22, r.dynamic_shared_memory_bytes());
    ins->Int(23, r.local_memory_per_thread_bytes()).Int(24, static_cast<int64_t>(r.local_memory_total_bytes()));
    ins->Int(25, r.grid_id()).Int(26, r.shared_memory_executed_bytes());
    ins->OptInt(27, r.graph_id() != 0 ? NonZero(r.graph_node_id()) : std::nullopt);
    ins->Int(28, r.shared_memory_limit_config());
    ins->OptInt(32, NonZero(r.graph_id()));
    ins->Int(33, r.cluster_x()).Int(34, r.cluster_y()).Int(35, r.cluster_z()).Int(36, r.cluster_scheduling_policy());
    ins->Int(37, r.max_potential_cluster_size()).Int(38, r.max_active_clusters());
    if (r.has_shared_memory_carveout_requested_percent()) ins->Int(39, r.shared_memory_carveout_requested_percent());
    ins->Text(40, "[]");
    return ins->Run();
  }

  Status Memcpy(ExportContext& ctx, StreamContext& s, uint64_t ts, const schema::CudaMemcpy& r) {
    Status st;
    Statement* ins = ctx.Insert("CUPTI_ACTIVITY_KIND_MEMCPY", kInsertMemcpy, &st);
    if (ins == nullptr) return st;
    int64_t start = s.ToSessionNs(ts);
    int64_t end = start + static_cast<int64_t>(r.duration_ns());
    ctx.NoteTime(end);
    ins->Int(1, start).Int(2, end).Int(3, target_.DeviceColumn(s, r.device_id(), r.context_id()));
    ins->Int(4, r.context_id()).Int(5, 0).Int(6, r.stream_id());
    ins->Int(7, r.correlation_id()).Int(8, s.GlobalPid()).Int(9, static_cast<int64_t>(r.size_bytes()));
    ins->Int(10, r.copy_kind()).Int(12, NsysMemKind(r.src_kind())).Int(13, NsysMemKind(r.dst_kind()));
    if (r.peer()) {
      ins->Int(14, target_.PeerDeviceColumn(s, r.src_device_id())).Int(15, r.src_context_id());
      ins->Int(16, target_.PeerDeviceColumn(s, r.dst_device_id())).Int(17, r.dst_context_id());
    }
    ins->OptInt(19, r.graph_id() != 0 ? NonZero(r.graph_node_id()) : std::nullopt);
    ins->Int(21, r.copy_count() != 0 ? static_cast<int64_t>(r.copy_count()) : 1);
    return ins->Run();
  }

  Status Memset(ExportContext& ctx, StreamContext& s, uint64_t ts, const schema::CudaMemset& r) {
    Status st;
    Statement* ins = ctx.Insert("CUPTI_ACTIVITY_KIND_MEMSET", kInsertMemset, &st);
    if (ins == nullptr) return st;
    int64_t start = s.ToSessionNs(ts);
    int64_t end = start + static_cast<int64_t>(r.duration_ns());
    ctx.NoteTime(end);
    ins->Int(1, start).Int(2, end).Int(3, target_.DeviceColumn(s, r.device_id(), r.context_id()));
    ins->Int(4, r.context_id()).Int(5, 0).Int(6, r.stream_id());
    ins->Int(7, r.correlation_id()).Int(8, s.GlobalPid()).Int(9, r.value()).Int(10, static_cast<int64_t>(r.size_bytes()));
    ins->OptInt(11, r.graph_id() != 0 ? NonZero(r.graph_node_id()) : std::nullopt);
    ins->Int(12, NsysMemKind(r.memory_kind()));
    return ins->Run();
  }

  Status Sync(ExportContext& ctx, StreamContext& s, const StreamState::Sync& x) {
    Status st;
    Statement* ins = ctx.Insert("CUPTI_ACTIVITY_KIND_SYNCHRONIZATION", kInsertSync, &st);
    if (ins == nullptr) return st;
    const schema::CudaSynchronization& r = x.r;
    std::optional<uint32_t> device = target_.DeviceOfContext(s, r.context_id());
    if (!device) ++state_.syncs_without_device;
    ctx.NoteTime(x.end);
    bool on_event = r.cuda_event_id() != kInvalidId;
    ins->Int(1, x.start).Int(2, x.end).Int(3, device ? target_.DeviceColumn(s, *device, r.context_id()) : 0);
    ins->Int(4, r.context_id()).Int(6, r.stream_id());
    ins->Int(7, r.correlation_id()).Int(8, s.GlobalPid()).Int(10, r.type()).Int(11, r.cuda_event_id());
    ins->Int(12, on_event ? static_cast<int64_t>(r.cuda_event_sync_id()) : 0);  // 3.25.0: 0 when not on an event
    return ins->Run();
  }

  Status Event(ExportContext& ctx, StreamContext& s, const schema::CudaEventRecord& r) {
    Status st;
    Statement* ins = ctx.Insert("CUPTI_ACTIVITY_KIND_CUDA_EVENT", kInsertEvent, &st);
    if (ins == nullptr) return st;
    int64_t timestamp = r.device_timestamp_ns() != 0 ? s.ToSessionNs(r.device_timestamp_ns()) : 0;
    ins->Int(1, timestamp).Int(2, target_.DeviceColumn(s, r.device_id(), r.context_id())).Int(3, r.context_id());
    ins->Int(4, 0).Int(5, r.stream_id());
    ins->Int(6, r.correlation_id()).Int(7, s.GlobalPid()).Int(8, r.event_id());
    ins->Int(9, static_cast<int64_t>(r.cuda_event_sync_id()));
    return ins->Run();
  }

  Status GraphEvent(ExportContext& ctx, StreamContext& s, uint32_t tid, uint64_t ts, const schema::CudaGraphEvent& r) {
    Status st;
    bool exec = r.kind() == schema::CUDA_GRAPH_EVENT_KIND_EXEC_CREATED;
    int64_t name_id = 0;
    if (!(st = ctx.StringId(exec ? "GraphExec Creation" : "Graph Creation", &name_id)).ok()) return st;
    Statement* ins = ctx.Insert("CUDA_GRAPH_EVENTS", kInsertGraphEvent, &st);
    if (ins == nullptr) return st;
    int64_t t = s.ToSessionNs(ts);
    ctx.NoteTime(t);
    ins->Int(1, t).Int(2, t).Int(3, exec ? kClassGraphExecCreation : kClassGraphCreation).Int(4, s.GlobalTid(tid));
    ins->Int(5, name_id).Int(6, r.graph_id());
    if (r.kind() == schema::CUDA_GRAPH_EVENT_KIND_GRAPH_CLONED) ins->Int(7, r.original_graph_id());
    if (exec) ins->Int(8, r.graph_exec_id());
    return ins->Run();
  }

  Status Overhead(ExportContext& ctx, StreamContext& s, uint64_t ts, const schema::CudaOverhead& r) {
    Status st;
    OverheadType type = NsysOverhead(r.overhead_kind());
    int64_t name_id = 0;
    if (!(st = ctx.StringId(type.name, &name_id)).ok()) return st;
    Statement* ins = ctx.Insert("CUPTI_ACTIVITY_KIND_OVERHEAD", kInsertOverhead, &st);
    if (ins == nullptr) return st;
    int64_t start = s.ToSessionNs(ts);
    int64_t end = start + static_cast<int64_t>(r.duration_ns());
    ctx.NoteTime(end);
    ins->Int(1, start).Int(2, end).Int(3, kClassOverhead);
    if (r.object_tid() != 0) ins->Int(4, s.GlobalTid(r.object_tid()));
    ins->OptInt(5, NonZero(r.correlation_id())).Int(6, name_id).Int(7, type.type);
    return ins->Run();
  }

  Status Memory(ExportContext& ctx, StreamContext& s, uint64_t ts, const schema::CudaMemoryEvent& r) {
    Status st;
    Statement* ins = ctx.Insert("CUDA_GPU_MEMORY_USAGE_EVENTS", kInsertMemory, &st);
    if (ins == nullptr) return st;
    int64_t t = s.ToSessionNs(ts);
    ctx.NoteTime(t);
    ins->Int(1, t).Int(2, s.GlobalPid()).Int(3, target_.DeviceColumn(s, r.device_id(), r.context_id()));
    ins->Int(4, r.context_id());
    ins->Int(5, static_cast<int64_t>(r.address())).Int(6, static_cast<int64_t>(r.pc()));
    ins->Int(7, static_cast<int64_t>(r.size_bytes())).Int(8, NsysMemKind(r.memory_kind()));
    ins->Int(9, NsysMemoryOperation(r.operation_type()));
    if (r.name_id() != 0) ins->Text(10, s.Text(r.name_id()));
    ins->OptInt(11, NonZero(r.correlation_id())).Int(12, r.stream_id());
    if (r.pool_type() == 1) {  // local pool
      ins->Int(13, static_cast<int64_t>(r.pool_address())).Int(14, static_cast<int64_t>(r.pool_release_threshold_bytes()));
      ins->Int(15, static_cast<int64_t>(r.pool_size_bytes())).Int(16, static_cast<int64_t>(r.pool_utilized_bytes()));
    } else if (r.pool_type() == 2) {  // imported pool
      ins->Int(17, static_cast<int64_t>(r.pool_address())).Int(18, r.pool_process_id());
    }
    return ins->Run();
  }

  Status Pool(ExportContext& ctx, StreamContext& s, uint64_t ts, const schema::CudaMemoryPoolEvent& r) {
    Status st;
    Statement* ins = ctx.Insert("CUDA_GPU_MEMORY_POOL_EVENTS", kInsertPool, &st);
    if (ins == nullptr) return st;
    int64_t t = s.ToSessionNs(ts);
    ctx.NoteTime(t);
    ins->Int(1, t).Int(2, s.GlobalPid()).Int(3, target_.DeviceColumn(s, r.device_id(), 0));
    ins->Int(4, static_cast<int64_t>(r.address()));
    ins->Int(5, r.operation_type()).Int(6, r.pool_type()).OptInt(7, NonZero(r.correlation_id()));
    ins->Int(8, static_cast<int64_t>(r.min_bytes_to_keep())).Int(9, static_cast<int64_t>(r.release_threshold_bytes()));
    ins->Int(10, static_cast<int64_t>(r.size_bytes())).Int(11, static_cast<int64_t>(r.utilized_bytes()));
    return ins->Run();
  }

  StreamState state_;
  CudaTargetInfo target_;
  GraphTraceSpill graphs_;  // the current stream's graph-trace rows and launches
};

}  // namespace

std::unique_ptr<ExportModule> MakeCudaExport() { return std::make_unique<CudaExport>(); }

}  // namespace gt::exporter
