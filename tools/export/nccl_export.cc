// NCCL plugin events -> GTRACE_NCCL_* tables (+ NVTX ranges, nccl_nvtx.cc). Every stream's events
// are collected while its chunks are read and written at the end of the stream, when the GPU clock
// can be fitted on all of the stream's kernel-channel observations.
//
// The tables (DDL below, columns documented in docs/nccl.md) are ours: nsys has no NCCL tables, it
// shows NCCL as NVTX ranges in domain "NCCL" plus NVTX_PAYLOAD_SCHEMAS/_ENTRIES rows (fact sheet,
// fact 12). Times are session ns like every nsys time column; ids are nsys globalTid/globalPid.
#include "tools/export/nccl_export.h"

#include <cinttypes>
#include <cstdio>
#include <optional>
#include <set>

namespace gt::exporter {
namespace {

constexpr const char* kDdl[] = {
    R"sql(CREATE TABLE GTRACE_NCCL_COMMUNICATORS (
    -- gtrace: one row per NCCL profiler-plugin init (a communicator in one process).
    globalPid                   INTEGER   NOT NULL,                    -- Serialized GlobalId.
    commIndex                   INTEGER   NOT NULL,                    -- Per-process plugin context index (GTRACE_NCCL_EVENTS.commIndex).
    commId                      INTEGER   NOT NULL,                    -- NCCL commHash (uint64 stored as two's complement), equal on every rank.
    commIdHex                   TEXT      NOT NULL,                    -- commHash as 0x%016x.
    commName                    TEXT,                                  -- Communicator name given to NCCL.
    nNodes                      INTEGER,
    nRanks                      INTEGER,
    rank                        INTEGER,                               -- Rank of this process in the communicator.
    pluginVersion               INTEGER,                               -- Profiler ABI NCCL used (4, 5, 6).
    activationMask              INTEGER,                               -- ncclProfile* bits gtrace asked for.
    initTime                    INTEGER,                               -- Plugin init (ns).
    finalizeTime                INTEGER,                               -- Plugin finalize (ns); NULL if not seen.
    globalTid                   INTEGER                                -- Thread that created the communicator.
))sql",
    R"sql(CREATE TABLE GTRACE_NCCL_EVENTS (
    -- gtrace: every NCCL profiler-plugin event (startEvent .. stopEvent).
    globalPid                   INTEGER   NOT NULL,                    -- Serialized GlobalId.
    eventId                     INTEGER   NOT NULL,                    -- Plugin event id, unique per process.
    eventType                   TEXT      NOT NULL,                    -- GroupApi, CollApi, P2pApi, KernelLaunch, Group, Coll, P2p, KernelCh, ProxyOp, ProxyStep, ProxyCtrl, NetPlugin, CeColl, CeSync, CeBatch.
    commIndex                   INTEGER,                               -- GTRACE_NCCL_COMMUNICATORS.commIndex (NULL: another process's proxy op).
    start                       INTEGER,                               -- startEvent on the host (ns).
    end                         INTEGER,                               -- stopEvent on the host (ns); Coll/P2p: enqueued, not completed.
    globalTid                   INTEGER,                               -- Thread of startEvent.
    endGlobalTid                INTEGER,                               -- Thread of stopEvent.
    parentId                    INTEGER,                               -- eventId of the parent (parentObj).
    groupId                     INTEGER,                               -- Coll/P2p: eventId of the Group event.
    rank                        INTEGER,                               -- Descriptor rank.
    func                        TEXT,                                  -- AllReduce, Send, ...
    datatype                    TEXT,                                  -- As NCCL reported it (Coll of AllGather/Broadcast: ncclInt8, count in bytes).
    count                       INTEGER,
    seqNumber                   INTEGER,                               -- Coll/CeColl: per communicator and function.
    root                        INTEGER,
    peer                        INTEGER,                               -- P2p/ProxyOp.
    algo                        TEXT,                                  -- Coll: RING, TREE, ...
    proto                       TEXT,                                  -- Coll: LL, LL128, SIMPLE.
    nChannels                   INTEGER,
    nWarps                      INTEGER,
    channelId                   INTEGER,                               -- KernelCh/ProxyOp.
    gpuStart                    INTEGER,                               -- KernelCh: GPU start on the session clock (ns).
    gpuEnd                      INTEGER,                               -- KernelCh: GPU end on the session clock (ns).
    gpuStartRaw                 INTEGER,                               -- KernelCh: %globaltimer as NCCL gave it (ns).
    gpuEndRaw                   INTEGER,
    graphCaptured               INTEGER,                               -- GroupApi/CollApi/P2pApi.
    groupDepth                  INTEGER,                               -- GroupApi.
    stream                      INTEGER,                               -- cudaStream_t value (CollApi/P2pApi/KernelLaunch/CeColl).
    proxyPid                    INTEGER,                               -- ProxyOp: originating process.
    nSteps                      INTEGER,                               -- ProxyOp.
    chunkSize                   INTEGER,                               -- ProxyOp (bytes).
    isSend                      INTEGER,                               -- ProxyOp.
    step                        INTEGER,                               -- ProxyStep.
    detail                      TEXT                                   -- Other descriptor fields as key=value;... (CE, net plugin).
))sql",
    R"sql(CREATE TABLE GTRACE_NCCL_EVENT_STATES (
    -- gtrace: recordEventState calls (proxy op/step/ctrl, group API).
    globalPid                   INTEGER   NOT NULL,                    -- Serialized GlobalId.
    eventId                     INTEGER   NOT NULL,                    -- GTRACE_NCCL_EVENTS.eventId.
    timestamp                   INTEGER   NOT NULL,                    -- Host time (ns).
    globalTid                   INTEGER,                               -- Calling thread.
    state                       INTEGER   NOT NULL,                    -- ncclProfilerEventState_t value.
    stateName                   TEXT      NOT NULL,
    transSize                   INTEGER,                               -- ProxyStep: bytes transferred.
    appendedProxyOps            INTEGER                                -- ProxyCtrl.
))sql",
    R"sql(CREATE TABLE GTRACE_NCCL_OPERATIONS (
    -- gtrace: one row per NCCL operation (Coll, P2p or CeColl event) with its API call and GPU time.
    globalPid                   INTEGER   NOT NULL,                    -- Serialized GlobalId.
    eventId                     INTEGER   NOT NULL,                    -- GTRACE_NCCL_EVENTS.eventId of the Coll/P2p/CeColl event.
    kind                        TEXT      NOT NULL,                    -- Coll, P2p, CeColl.
    func                        TEXT      NOT NULL,                    -- AllReduce, AllGather, ReduceScatter, Broadcast, Reduce, AlltoAll, Gather, Scatter, Send, Recv.
    commId                      INTEGER,                               -- GTRACE_NCCL_COMMUNICATORS.commId.
    rank                        INTEGER,                               -- Rank in the communicator.
    nRanks                      INTEGER,
    seqNumber                   INTEGER,
    count                       INTEGER,                               -- Elements, as the application passed them.
    datatype                    TEXT,                                  -- As the application passed it.
    typeSize                    INTEGER,                               -- Bytes per element; NULL if unknown.
    messageBytes                INTEGER,                               -- count * typeSize (NCCL's NVTX 'Message size [bytes]').
    algBytes                    INTEGER,                               -- nccl-tests size S: messageBytes * nRanks for AllGather/ReduceScatter/AlltoAll/Gather/Scatter.
    sendBytes                   INTEGER,                               -- Send buffer size (bytes).
    recvBytes                   INTEGER,                               -- Receive buffer size (bytes; Gather/Reduce: at the root).
    root                        INTEGER,
    peer                        INTEGER,                               -- Send/Recv.
    redOp                       TEXT,                                  -- sum, prod, max, min, avg, premulsum; from NCCL's NVTX payload (NULL without NVTX).
    algo                        TEXT,
    proto                       TEXT,
    nChannels                   INTEGER,
    nWarps                      INTEGER,
    apiStart                    INTEGER,                               -- CollApi/P2pApi start (ns).
    apiEnd                      INTEGER,
    apiGlobalTid                INTEGER,
    enqueueStart                INTEGER,                               -- Coll/P2p start (ns).
    enqueueEnd                  INTEGER,                               -- Coll/P2p stop: enqueued (ns).
    globalTid                   INTEGER,                               -- Thread of the Coll/P2p start.
    gpuStart                    INTEGER,                               -- First kernel-channel start, session clock (ns).
    gpuEnd                      INTEGER,                               -- Last kernel-channel end (ns); with gpuStart: the GPU time.
    kernelChannels              INTEGER   NOT NULL,                    -- KernelCh events attributed.
    proxyEnd                    INTEGER,                               -- Last ProxyOp stop (ns).
    graphCaptured               INTEGER
))sql",
    R"sql(CREATE TABLE GTRACE_NCCL_GPU_CLOCK (
    -- gtrace: how GPU %globaltimer values were put on the session clock, per window (docs/nccl.md).
    globalPid                   INTEGER   NOT NULL,                    -- Serialized GlobalId.
    windowStart                 INTEGER   NOT NULL,                    -- First sample in the window (ns).
    windowEnd                   INTEGER   NOT NULL,                    -- Last sample (ns).
    baseOffset                  INTEGER   NOT NULL,                    -- realtime - monotonic used as the base (ns).
    correction                  INTEGER   NOT NULL,                    -- Added to the base mapping (ns).
    lowerBound                  INTEGER,                               -- Largest lower bound of the correction (ns).
    upperBound                  INTEGER,                               -- Smallest upper bound (ns).
    samples                     INTEGER   NOT NULL,
    method                      TEXT      NOT NULL                     -- base, upper-bound, lower-bound, inconsistent, no-bound.
))sql",
    R"sql(CREATE TABLE GTRACE_NCCL_POOLS (
    -- gtrace: the plugin's event pools; events not tracked because a pool was exhausted.
    globalPid                   INTEGER   NOT NULL,                    -- Serialized GlobalId.
    eventType                   TEXT      NOT NULL,
    capacity                    INTEGER   NOT NULL,                    -- Events a pool holds.
    droppedEvents               INTEGER   NOT NULL
))sql",
};

const char* TypeName(uint32_t type) {
  switch (type) {
    case schema::NCCL_EVENT_TYPE_GROUP: return "Group";
    case schema::NCCL_EVENT_TYPE_COLL: return "Coll";
    case schema::NCCL_EVENT_TYPE_P2P: return "P2p";
    case schema::NCCL_EVENT_TYPE_PROXY_OP: return "ProxyOp";
    case schema::NCCL_EVENT_TYPE_PROXY_STEP: return "ProxyStep";
    case schema::NCCL_EVENT_TYPE_PROXY_CTRL: return "ProxyCtrl";
    case schema::NCCL_EVENT_TYPE_KERNEL_CH: return "KernelCh";
    case schema::NCCL_EVENT_TYPE_NET_PLUGIN: return "NetPlugin";
    case schema::NCCL_EVENT_TYPE_GROUP_API: return "GroupApi";
    case schema::NCCL_EVENT_TYPE_COLL_API: return "CollApi";
    case schema::NCCL_EVENT_TYPE_P2P_API: return "P2pApi";
    case schema::NCCL_EVENT_TYPE_KERNEL_LAUNCH: return "KernelLaunch";
    case schema::NCCL_EVENT_TYPE_CE_COLL: return "CeColl";
    case schema::NCCL_EVENT_TYPE_CE_SYNC: return "CeSync";
    case schema::NCCL_EVENT_TYPE_CE_BATCH: return "CeBatch";
    default: return "Unknown";
  }
}

std::string StateName(uint32_t state) {
  switch (state) {
    case 8: return "ProxyStepSendGPUWait";
    case 9: return "ProxyStepSendWait";
    case 10: return "ProxyStepRecvWait";
    case 11: return "ProxyStepRecvFlushWait";
    case 12: return "ProxyStepRecvGPUWait";
    case 13: return "ProxyCtrlIdle";
    case 14: return "ProxyCtrlActive";
    case 15: return "ProxyCtrlSleep";
    case 16: return "ProxyCtrlWakeup";
    case 17: return "ProxyCtrlAppend";
    case 18: return "ProxyCtrlAppendEnd";
    case 19: return "ProxyOpInProgress";
    case 20: return "ProxyStepSendPeerWait";
    case 21: return "NetPluginUpdate";
    case 22: return "KernelChStop";
    case 23: return "GroupStartApiStop";
    case 24: return "GroupEndApiStart";
    default: return state <= 7 ? "ProxyOp(deprecated)" : "State" + std::to_string(state);
  }
}

std::string RedOpName(int32_t op) {
  switch (op) {
    case 0: return "sum";
    case 1: return "prod";
    case 2: return "max";
    case 3: return "min";
    case 4: return "avg";
    default: return "premulsum";  // ncclRedOpCreatePreMulSum values start at ncclNumOps (5)
  }
}

std::string Hex(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof(buf), "0x%016" PRIx64, v);
  return buf;
}

class NcclExport final : public ExportModule {
 public:
  const char* name() const override { return "nccl"; }

  Status BeginStream(ExportContext& ctx, StreamContext& s) override {
    nccl_nvtx_domain_ = false;
    max_domain_id_ = 0;
    Status st = model_.BeginStream(ctx);
    if (!st.ok()) return st;
    const schema::ClockSnapshot& c = s.header.start_clock();
    model_.AddClockSnapshot(c.stream_clock_ns(), c.realtime_ns());
    return Status::Ok();
  }

  Status OnChunk(ExportContext& ctx, StreamContext& s, const schema::Chunk& chunk) override {
    if (chunk.has_clock()) model_.AddClockSnapshot(chunk.clock().stream_clock_ns(), chunk.clock().realtime_ns());
    for (const schema::NvtxDomain& d : chunk.nvtx_domains()) {
      if (d.domain_id() > max_domain_id_) max_domain_id_ = d.domain_id();
      if (d.name() == "NCCL") nccl_nvtx_domain_ = true;
    }
    for (const schema::NvtxEvent& e : chunk.nvtx()) {
      if (e.domain_id() > max_domain_id_) max_domain_id_ = e.domain_id();
    }
    Status st;
    if (chunk.nvtx_size() > 0 || chunk.nvtx_domains_size() > 0) {
      if (!(st = model_.AddNvtx(ctx, chunk)).ok()) return st;
    }
    if (chunk.nccl_size() == 0 && chunk.nccl_comms_size() == 0 && chunk.nccl_pools_size() == 0) return Status::Ok();
    return model_.AddChunk(ctx, chunk, [&s](uint64_t id) { return s.Text(id); });
  }

  Status EndStream(ExportContext& ctx, StreamContext& s) override {
    Status st = WriteStream(ctx, s);
    if (!st.ok()) return st;
    return model_.Clear(ctx);
  }

 private:
  Status WriteStream(ExportContext& ctx, StreamContext& s) {
    if (model_.empty()) return Status::Ok();
    Status st;
    if (!(st = model_.Finish(ctx)).ok()) return st;
    if (!(st = CreateTables(ctx)).ok()) return st;
    if (!(st = WriteComms(ctx, s)).ok()) return st;
    if (!(st = WriteEvents(ctx, s)).ok()) return st;
    {
      // NCCL's API calls as NVTX ranges when the stream has none of its own: in the same pass over
      // the operations (other tables than the ones below; each table's rows in the same order).
      std::optional<NcclNvtxWriter> nvtx;
      if (!nccl_nvtx_domain_) nvtx.emplace(ctx, s, model_.comms(), max_domain_id_ + 1);
      if (!(st = WriteOperations(ctx, s, nvtx ? &*nvtx : nullptr)).ok()) return st;
    }
    if (!(st = WriteClockAndPools(ctx, s)).ok()) return st;
    if (model_.orphan_records() > 0) {
      ctx.Warn(s.path + ": " + std::to_string(model_.orphan_records()) +
               " NCCL stop/state records had no start (dropped); skipped");
    }
    if (model_.unattributed_channels() > 0) {
      ctx.Warn(s.path + ": " + std::to_string(model_.unattributed_channels()) +
               " NCCL kernel-channel events have no recorded operation (pool exhausted or not traced)");
    }
    if (model_.clock().inconsistent_windows() > 0) {
      ctx.Warn(s.path + ": the NCCL GPU clock bounds disagree in " +
               std::to_string(model_.clock().inconsistent_windows()) + " window(s); see GTRACE_NCCL_GPU_CLOCK");
    }
    return Status::Ok();
  }

  Status CreateTables(ExportContext& ctx) {
    if (tables_created_) return Status::Ok();
    for (const char* ddl : kDdl) {
      Status st = ctx.db().Exec(ddl);
      if (!st.ok()) return st;
    }
    tables_created_ = true;
    return Status::Ok();
  }

  Statement* Prepare(ExportContext& ctx, const char* sql, Status* st) { return ctx.db().Prepare(sql, st); }

  // Session time of a stream-clock time (and note it for the capture length).
  int64_t T(ExportContext& ctx, StreamContext& s, uint64_t ns) {
    int64_t t = s.ToSessionNs(ns);
    ctx.NoteTime(t);
    return t;
  }
  int64_t TG(ExportContext& ctx, StreamContext& s, int64_t ns) { return T(ctx, s, ns < 0 ? 0 : static_cast<uint64_t>(ns)); }

  Status WriteComms(ExportContext& ctx, StreamContext& s) {
    Status st;
    Statement* ins = Prepare(ctx,
                             "INSERT INTO GTRACE_NCCL_COMMUNICATORS (globalPid, commIndex, commId, commIdHex, commName, "
                             "nNodes, nRanks, rank, pluginVersion, activationMask, initTime, finalizeTime, globalTid) "
                             "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
                             &st);
    if (ins == nullptr) return st;
    for (const auto& [index, c] : model_.comms()) {
      const schema::NcclComm& i = c.info;
      ins->Int(1, s.GlobalPid()).Int(2, index).Int(3, static_cast<int64_t>(i.comm_hash())).Text(4, Hex(i.comm_hash()));
      if (!i.name().empty()) ins->Text(5, i.name());
      ins->Int(6, i.n_nodes()).Int(7, i.n_ranks()).Int(8, i.rank()).Int(9, i.plugin_version());
      ins->Int(10, i.activation_mask()).Int(11, T(ctx, s, i.init_ts_ns()));
      if (c.finalize_ns) ins->Int(12, T(ctx, s, *c.finalize_ns));
      ins->Int(13, s.GlobalTid(i.init_tid()));
      if (!(st = ins->Run()).ok()) return st;
    }
    return Status::Ok();
  }

  Status WriteEvents(ExportContext& ctx, StreamContext& s) {
    Status st;
    Statement* ins = Prepare(
        ctx,
        "INSERT INTO GTRACE_NCCL_EVENTS (globalPid, eventId, eventType, commIndex, start, end, globalTid, endGlobalTid, "
        "parentId, groupId, rank, func, datatype, count, seqNumber, root, peer, algo, proto, nChannels, nWarps, "
        "channelId, gpuStart, gpuEnd, gpuStartRaw, gpuEndRaw, graphCaptured, groupDepth, stream, proxyPid, nSteps, "
        "chunkSize, isSend, step, detail) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
        &st);
    if (ins == nullptr) return st;
    Statement* state = Prepare(ctx,
                               "INSERT INTO GTRACE_NCCL_EVENT_STATES (globalPid, eventId, timestamp, globalTid, state, "
                               "stateName, transSize, appendedProxyOps) VALUES (?,?,?,?,?,?,?,?)",
                               &st);
    if (state == nullptr) return st;
    auto on_event = [&](const NcclEvent& e) -> Status {
      const schema::NcclEvent& d = e.start;
      uint32_t t = e.type;
      ins->Int(1, s.GlobalPid()).Int(2, static_cast<int64_t>(e.id)).Text(3, TypeName(t));
      if (e.comm_index != 0) ins->Int(4, e.comm_index);
      if (e.start_ns) ins->Int(5, T(ctx, s, *e.start_ns)).Int(7, s.GlobalTid(e.start_tid));
      if (e.stop_ns) ins->Int(6, T(ctx, s, *e.stop_ns)).Int(8, s.GlobalTid(e.stop_tid));
      if (e.parent_id != 0) ins->Int(9, static_cast<int64_t>(e.parent_id));
      if (e.group_id != 0) ins->Int(10, static_cast<int64_t>(e.group_id));
      ins->Int(11, d.rank());
      bool op = t == schema::NCCL_EVENT_TYPE_COLL || t == schema::NCCL_EVENT_TYPE_P2P ||
                t == schema::NCCL_EVENT_TYPE_CE_COLL || t == schema::NCCL_EVENT_TYPE_COLL_API ||
                t == schema::NCCL_EVENT_TYPE_P2P_API;
      if (op) {
        ins->Text(12, e.func).Text(13, e.datatype).Int(14, static_cast<int64_t>(d.count()));
      }
      if (t == schema::NCCL_EVENT_TYPE_COLL || t == schema::NCCL_EVENT_TYPE_CE_COLL) ins->Int(15, static_cast<int64_t>(d.seq_number()));
      if (t == schema::NCCL_EVENT_TYPE_COLL || t == schema::NCCL_EVENT_TYPE_COLL_API || t == schema::NCCL_EVENT_TYPE_CE_COLL) {
        ins->Int(16, d.root());
      }
      if (t == schema::NCCL_EVENT_TYPE_P2P || t == schema::NCCL_EVENT_TYPE_PROXY_OP) ins->Int(17, d.peer());
      if (t == schema::NCCL_EVENT_TYPE_COLL) ins->Text(18, e.algo).Text(19, e.proto).Int(21, d.n_warps());
      if (t == schema::NCCL_EVENT_TYPE_COLL || t == schema::NCCL_EVENT_TYPE_P2P) ins->Int(20, d.n_channels());
      if (t == schema::NCCL_EVENT_TYPE_KERNEL_CH || t == schema::NCCL_EVENT_TYPE_PROXY_OP) ins->Int(22, d.channel_id());
      if (e.gpu_start_ns) ins->Int(23, TG(ctx, s, *e.gpu_start_ns));
      if (e.gpu_stop_ns) ins->Int(24, TG(ctx, s, *e.gpu_stop_ns));
      if (t == schema::NCCL_EVENT_TYPE_KERNEL_CH) {
        if (d.gpu_timer_ns() != 0) ins->Int(25, static_cast<int64_t>(d.gpu_timer_ns()));
        if (e.gpu_stop_raw_ns != 0) ins->Int(26, static_cast<int64_t>(e.gpu_stop_raw_ns));
      }
      if (t == schema::NCCL_EVENT_TYPE_GROUP_API || t == schema::NCCL_EVENT_TYPE_COLL_API ||
          t == schema::NCCL_EVENT_TYPE_P2P_API) {
        ins->Int(27, d.graph_captured() ? 1 : 0);
      }
      if (t == schema::NCCL_EVENT_TYPE_GROUP_API) ins->Int(28, d.group_depth());
      if (d.stream() != 0) ins->Int(29, static_cast<int64_t>(d.stream()));
      if (t == schema::NCCL_EVENT_TYPE_PROXY_OP) {
        ins->Int(30, d.proxy_pid()).Int(31, d.n_steps()).Int(32, d.chunk_size_bytes()).Int(33, d.is_send() ? 1 : 0);
      }
      if (t == schema::NCCL_EVENT_TYPE_PROXY_STEP) ins->Int(34, d.step());
      std::string detail = Detail(e);
      if (!detail.empty()) ins->Text(35, detail);
      return ins->Run();
    };
    auto on_state = [&](const NcclEvent& e, const NcclEvent::State& x) -> Status {
      uint32_t t = e.type;
      state->Int(1, s.GlobalPid()).Int(2, static_cast<int64_t>(e.id)).Int(3, T(ctx, s, x.ts_ns));
      state->Int(4, s.GlobalTid(x.tid)).Int(5, x.state).Text(6, StateName(x.state));
      if (t == schema::NCCL_EVENT_TYPE_PROXY_STEP) state->Int(7, static_cast<int64_t>(x.trans_size_bytes));
      if (t == schema::NCCL_EVENT_TYPE_PROXY_CTRL) state->Int(8, x.appended_proxy_ops);
      return state->Run();
    };
    return model_.ForEachEvent(ctx, on_event, on_state);
  }

  static std::string Detail(const NcclEvent& e) {
    const schema::NcclEvent& d = e.start;
    std::string out;
    auto add = [&out](const std::string& kv) { out += (out.empty() ? "" : ";") + kv; };
    switch (e.type) {
      case schema::NCCL_EVENT_TYPE_CE_COLL:
        add("syncStrategy=" + e.sync_strategy);
        add("intraBatchSync=" + std::to_string(d.intra_batch_sync() ? 1 : 0));
        add("batchSize=" + std::to_string(d.batch_size()));
        add("numBatches=" + std::to_string(d.num_batches()));
        add("ceSeqNum=" + std::to_string(d.ce_seq_number()));
        break;
      case schema::NCCL_EVENT_TYPE_CE_SYNC:
        add("isComplete=" + std::to_string(d.sync_complete() ? 1 : 0));
        add("nRanks=" + std::to_string(d.n_ranks()));
        break;
      case schema::NCCL_EVENT_TYPE_CE_BATCH:
        add("numOps=" + std::to_string(d.count()));
        add("totalBytes=" + std::to_string(d.total_bytes()));
        add("useIntraSync=" + std::to_string(d.intra_batch_sync() ? 1 : 0));
        break;
      case schema::NCCL_EVENT_TYPE_NET_PLUGIN:
        add("pluginId=" + Hex(static_cast<uint64_t>(d.net_plugin_id())));
        break;
      default:
        break;
    }
    return out;
  }

  Status WriteOperations(ExportContext& ctx, StreamContext& s, NcclNvtxWriter* nvtx) {
    Status st;
    Statement* ins = Prepare(
        ctx,
        "INSERT INTO GTRACE_NCCL_OPERATIONS (globalPid, eventId, kind, func, commId, rank, nRanks, seqNumber, count, "
        "datatype, typeSize, messageBytes, algBytes, root, peer, algo, proto, nChannels, nWarps, apiStart, apiEnd, "
        "apiGlobalTid, enqueueStart, enqueueEnd, globalTid, gpuStart, gpuEnd, kernelChannels, proxyEnd, graphCaptured, "
        "sendBytes, recvBytes, redOp) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
        &st);
    if (ins == nullptr) return st;
    st = model_.ForEachOperation(ctx, [&](const NcclOperation& o) -> Status {
      Status st;
      const NcclEvent& e = *o.op;
      const schema::NcclEvent& d = e.start;
      ins->Int(1, s.GlobalPid()).Int(2, static_cast<int64_t>(e.id)).Text(3, TypeName(e.type)).Text(4, o.func);
      if (o.comm != nullptr) {
        ins->Int(5, static_cast<int64_t>(o.comm->info.comm_hash())).Int(6, o.comm->info.rank()).Int(7, o.comm->info.n_ranks());
      }
      if (e.type != schema::NCCL_EVENT_TYPE_P2P) ins->Int(8, static_cast<int64_t>(d.seq_number()));
      ins->Int(9, static_cast<int64_t>(o.count)).Text(10, o.datatype);
      if (o.type_size_bytes != 0) ins->Int(11, o.type_size_bytes);
      if (o.message_bytes) ins->Int(12, static_cast<int64_t>(*o.message_bytes));
      if (o.alg_bytes) ins->Int(13, static_cast<int64_t>(*o.alg_bytes));
      if (e.type != schema::NCCL_EVENT_TYPE_P2P) ins->Int(14, d.root());
      if (e.type == schema::NCCL_EVENT_TYPE_P2P) ins->Int(15, o.peer);
      if (e.type == schema::NCCL_EVENT_TYPE_COLL) ins->Text(16, e.algo).Text(17, e.proto).Int(19, d.n_warps());
      if (e.type != schema::NCCL_EVENT_TYPE_CE_COLL) ins->Int(18, d.n_channels());
      if (o.api != nullptr) {
        if (o.api->start_ns) ins->Int(20, T(ctx, s, *o.api->start_ns)).Int(22, s.GlobalTid(o.api->start_tid));
        if (o.api->stop_ns) ins->Int(21, T(ctx, s, *o.api->stop_ns));
      }
      if (e.start_ns) ins->Int(23, T(ctx, s, *e.start_ns)).Int(25, s.GlobalTid(e.start_tid));
      if (e.stop_ns) ins->Int(24, T(ctx, s, *e.stop_ns));
      if (o.gpu_start_ns) ins->Int(26, TG(ctx, s, *o.gpu_start_ns));
      if (o.gpu_stop_ns) ins->Int(27, TG(ctx, s, *o.gpu_stop_ns));
      ins->Int(28, o.kernel_channels);
      if (o.proxy_stop_ns) ins->Int(29, T(ctx, s, *o.proxy_stop_ns));
      if (o.api != nullptr) ins->Int(30, o.api->start.graph_captured() ? 1 : 0);
      if (o.send_bytes) ins->Int(31, static_cast<int64_t>(*o.send_bytes));
      if (o.recv_bytes) ins->Int(32, static_cast<int64_t>(*o.recv_bytes));
      if (o.red_op) ins->Text(33, RedOpName(*o.red_op));
      if (!(st = ins->Run()).ok()) return st;
      return nvtx != nullptr ? nvtx->Operation(o) : Status::Ok();
    });
    if (!st.ok() || nvtx == nullptr) return st;
    // ncclGroupEnd of explicit groups (GroupApi depth > 1): from its start (state 24) to the stop.
    return model_.ForEachGroupEnd(ctx, [nvtx](uint64_t start_ns, uint32_t tid, uint64_t stop_ns) {
      return nvtx->GroupEnd(start_ns, tid, stop_ns);
    });
  }

  Status WriteClockAndPools(ExportContext& ctx, StreamContext& s) {
    Status st;
    Statement* ins = Prepare(ctx,
                             "INSERT INTO GTRACE_NCCL_GPU_CLOCK (globalPid, windowStart, windowEnd, baseOffset, "
                             "correction, lowerBound, upperBound, samples, method) VALUES (?,?,?,?,?,?,?,?,?)",
                             &st);
    if (ins == nullptr) return st;
    for (const GpuClockMap::Window& w : model_.clock().windows()) {
      ins->Int(1, s.GlobalPid()).Int(2, TG(ctx, s, w.start_ns)).Int(3, TG(ctx, s, w.end_ns)).Int(4, w.base_offset_ns);
      ins->Int(5, w.correction_ns).OptInt(6, w.lower_ns).OptInt(7, w.upper_ns).Int(8, w.samples).Text(9, w.method);
      if (!(st = ins->Run()).ok()) return st;
    }
    Statement* pool = Prepare(ctx,
                              "INSERT INTO GTRACE_NCCL_POOLS (globalPid, eventType, capacity, droppedEvents) "
                              "VALUES (?,?,?,?)",
                              &st);
    if (pool == nullptr) return st;
    for (const auto& [type, p] : model_.pools()) {
      pool->Int(1, s.GlobalPid()).Text(2, TypeName(type)).Int(3, p.first).Int(4, static_cast<int64_t>(p.second));
      if (!(st = pool->Run()).ok()) return st;
      if (p.second > 0) {
        ctx.Warn(s.path + ": " + std::to_string(p.second) + " NCCL " + TypeName(type) +
                 " events were not tracked: the pool of " + std::to_string(p.first) +
                 " was exhausted (raise GTRACE_NCCL_POOL_EVENTS)");
      }
    }
    return Status::Ok();
  }

  NcclSpillModel model_;  // the current stream's events (open ones in memory, the rest spilled)
  bool nccl_nvtx_domain_ = false;
  uint32_t max_domain_id_ = 0;
  bool tables_created_ = false;
};

}  // namespace

std::unique_ptr<ExportModule> MakeNcclExport() { return std::make_unique<NcclExport>(); }

}  // namespace gt::exporter
