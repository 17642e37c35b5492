#include "tests/common/synthetic_stream.h"

#include <fstream>

#include "collector/schema_fields.h"
#include "collector/stream_header.h"
#include "inject/cupti/cuda_fields.h"
#include "inject/metrics/metrics_fields.h"
#include "inject/nccl/nccl_fields.h"

namespace gt::test {

SyntheticStream::SyntheticStream(uint32_t pid, uint64_t start_mono_ns, uint64_t start_realtime_ns, std::string host,
                                 std::string boot_id)
    : start_mono_ns_(start_mono_ns), start_realtime_ns_(start_realtime_ns), chunk_(&interner_) {
  info_.pid = pid;
  info_.ppid = 1;
  info_.host_name = std::move(host);
  info_.boot_id = std::move(boot_id);
  info_.command_line = {"synthetic", "--pid", std::to_string(pid)};
  info_.executable_path = "/opt/synthetic/bin/app";
  info_.cpu_architecture = "x86_64";
  info_.os_description = "Linux test";
  info_.cpu_cores = 4;
  config_.trace = "nvtx";
}

size_t SyntheticStream::header_bytes() const {
  return EncodeStreamPreamble(info_, config_, {start_mono_ns_, start_realtime_ns_, 10}, "test").size();
}

std::string SyntheticStream::Bytes() const {
  std::string bytes = EncodeStreamPreamble(info_, config_, {start_mono_ns_, start_realtime_ns_, 10}, "test");
  bytes += *const_cast<ChunkBuilder&>(chunk_).output();
  return bytes;
}

void SyntheticStream::WriteTo(const std::string& path) const {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << Bytes();
}

void SyntheticStream::BeginChunk(uint64_t sequence_id, uint32_t tid, uint64_t base_ns) {
  chunk_.Begin(sequence_id, tid, base_ns);
}

void SyntheticStream::EndChunk() { chunk_.End(); }

void SyntheticStream::Nvtx(const NvtxSpec& e) {
  namespace f = field::nvtx_event;
  uint64_t sid = e.text.empty() ? 0 : chunk_.Intern(e.text);
  ProtoWriter& w = chunk_.body();
  w.BeginNested(field::chunk::kNvtx);
  w.Varint(f::kKind, e.kind);
  w.SInt(f::kTsDeltaNs, chunk_.DeltaNs(field::chunk::kNvtx, e.ts_ns));
  w.VarintIfNonZero(f::kDomainId, e.domain_id);
  w.VarintIfNonZero(f::kStringId, sid);
  w.VarintIfNonZero(f::kRegisteredStringId, e.registered_string_id);
  w.VarintIfNonZero(f::kCategory, e.category);
  if (e.color) w.Fixed32(f::kColorArgb, *e.color);
  w.VarintIfNonZero(f::kRangeId, e.range_id);
  w.VarintIfNonZero(f::kNamedTid, e.named_tid);
  if (e.payload_int64) w.Int(f::kPayloadInt64, *e.payload_int64);
  if (e.payload_double) w.Double(f::kPayloadDouble, *e.payload_double);
  w.VarintIfNonZero(f::kDepth, e.depth);
  w.EndNested();
  chunk_.CountRecord();
}

void SyntheticStream::Thread(uint32_t tid, const std::string& name, int32_t nice) {
  ProtoWriter& w = chunk_.body();
  w.BeginNested(field::chunk::kThread);
  w.Varint(field::thread_info::kTid, tid);
  w.String(field::thread_info::kName, name);
  w.Int(field::thread_info::kNice, nice);
  w.EndNested();
}

void SyntheticStream::Domain(uint32_t id, const std::string& name, uint64_t ts_ns, uint32_t tid) {
  ProtoWriter& w = chunk_.body();
  w.BeginNested(field::chunk::kNvtxDomains);
  w.Varint(field::nvtx_domain::kDomainId, id);
  w.String(field::nvtx_domain::kName, name);
  w.Varint(field::nvtx_domain::kCreateTsNs, ts_ns);
  w.Varint(field::nvtx_domain::kCreateTid, tid);
  w.EndNested();
}

void SyntheticStream::RegisteredString(uint64_t id, uint32_t domain_id, const std::string& text) {
  ProtoWriter& w = chunk_.body();
  w.BeginNested(field::chunk::kNvtxStrings);
  w.Varint(field::nvtx_registered_string::kId, id);
  w.VarintIfNonZero(field::nvtx_registered_string::kDomainId, domain_id);
  w.String(field::nvtx_registered_string::kText, text);
  w.EndNested();
}

void SyntheticStream::Drops(uint32_t source, uint32_t tid, uint64_t count, uint64_t ts_ns) {
  ProtoWriter& w = chunk_.body();
  w.BeginNested(field::chunk::kDrops);
  w.Varint(field::drop_report::kSource, source);
  w.VarintIfNonZero(field::drop_report::kTid, tid);
  w.Varint(field::drop_report::kDroppedRecords, count);
  w.Varint(field::drop_report::kTsNs, ts_ns);
  w.EndNested();
}

void SyntheticStream::ClockSnapshot(uint64_t mono_ns, uint64_t realtime_ns) {
  ProtoWriter& w = chunk_.body();
  w.BeginNested(field::chunk::kClock);
  w.Varint(field::clock_snapshot::kStreamClockNs, mono_ns);
  w.Varint(field::clock_snapshot::kRealtimeNs, realtime_ns);
  w.Varint(field::clock_snapshot::kUncertaintyNs, 10);
  w.EndNested();
}

void SyntheticStream::Kernel(const KernelSpec& k) {
  namespace f = field::cuda_kernel;
  uint64_t name = chunk_.Intern(k.name);
  ProtoWriter& w = chunk_.body();
  w.BeginNested(field::chunk::kCudaKernels);
  w.SInt(f::kStartDeltaNs, chunk_.DeltaNs(field::chunk::kCudaKernels, k.start_ns));
  w.Varint(f::kDurationNs, k.duration_ns);
  w.VarintIfNonZero(f::kDeviceId, k.device_id);
  w.Varint(f::kContextId, k.context_id);
  w.Varint(f::kStreamId, k.stream_id);
  w.Varint(f::kCorrelationId, k.correlation_id);
  w.Varint(f::kNameId, name);
  w.Int(f::kGridX, 128);
  w.Int(f::kGridY, 1);
  w.Int(f::kGridZ, 1);
  w.Int(f::kBlockX, 256);
  w.Int(f::kBlockY, 1);
  w.Int(f::kBlockZ, 1);
  w.Varint(f::kRegistersPerThread, 32);
  w.EndNested();
  chunk_.CountRecord();
}

void SyntheticStream::Device(const DeviceSpec& d) {
  namespace f = field::cuda_device;
  ProtoWriter& w = chunk_.body();
  w.BeginNested(field::chunk::kCudaDevices);
  w.Varint(f::kDeviceId, d.device_id);
  w.String(f::kName, d.name);
  w.Bytes(f::kUuid, d.uuid.data(), d.uuid.size());
  w.Varint(f::kGlobalMemoryBytes, d.global_memory_bytes);
  w.Varint(f::kMultiprocessors, d.multiprocessors);
  w.Varint(f::kComputeMajor, d.compute_major);
  w.Varint(f::kComputeMinor, d.compute_minor);
  w.EndNested();
}

void SyntheticStream::Context(const ContextSpec& c) {
  namespace f = field::cuda_context;
  ProtoWriter& w = chunk_.body();
  w.BeginNested(field::chunk::kCudaContexts);
  w.Varint(f::kContextId, c.context_id);
  w.Varint(f::kDeviceId, c.device_id);
  w.Varint(f::kComputeApiKind, 1);  // CUPTI_ACTIVITY_COMPUTE_API_CUDA
  w.Varint(f::kNullStreamId, c.null_stream_id);
  w.EndNested();
}

void SyntheticStream::Stream(const StreamSpec& s) {
  namespace f = field::cuda_stream;
  ProtoWriter& w = chunk_.body();
  w.BeginNested(field::chunk::kCudaStreams);
  w.Varint(f::kContextId, s.context_id);
  w.Varint(f::kStreamId, s.stream_id);
  w.Varint(f::kFlag, s.flag);
  w.EndNested();
}

void SyntheticStream::Api(const ApiSpec& a) {
  namespace f = field::cuda_api_call;
  uint64_t name = chunk_.Intern(a.name);
  ProtoWriter& w = chunk_.body();
  w.BeginNested(field::chunk::kCudaApiCalls);
  w.Varint(f::kKind, 1);
  w.SInt(f::kStartDeltaNs, chunk_.DeltaNs(field::chunk::kCudaApiCalls, a.start_ns));
  w.Varint(f::kDurationNs, a.duration_ns);
  w.Varint(f::kTid, a.tid);
  w.Varint(f::kCorrelationId, a.correlation_id);
  w.Varint(f::kCbid, a.cbid);
  w.Varint(f::kNameId, name);
  w.EndNested();
  chunk_.CountRecord();
}

void SyntheticStream::GraphTrace(const GraphTraceSpec& g) {
  namespace f = field::cuda_graph_trace;
  ProtoWriter& w = chunk_.body();
  w.BeginNested(field::chunk::kCudaGraphTraces);
  w.SInt(f::kStartDeltaNs, chunk_.DeltaNs(field::chunk::kCudaGraphTraces, g.start_ns));
  w.Varint(f::kDurationNs, g.duration_ns);
  w.VarintIfNonZero(f::kDeviceId, g.device_id);
  w.Varint(f::kContextId, g.context_id);
  w.Varint(f::kStreamId, g.stream_id);
  w.Varint(f::kCorrelationId, g.correlation_id);
  w.Varint(f::kGraphId, g.graph_id);
  w.EndNested();
  chunk_.CountRecord();
}

void SyntheticStream::GraphLaunch(uint64_t ts_ns, uint32_t correlation_id, uint32_t exec_id) {
  namespace f = field::cuda_graph_launch;
  ProtoWriter& w = chunk_.body();
  w.BeginNested(field::chunk::kCudaGraphLaunches);
  w.SInt(f::kTsDeltaNs, chunk_.DeltaNs(field::chunk::kCudaGraphLaunches, ts_ns));
  w.Varint(f::kCorrelationId, correlation_id);
  w.Varint(f::kGraphExecId, exec_id);
  w.EndNested();
  chunk_.CountRecord();
}

void SyntheticStream::Nccl(const NcclSpec& e) {
  namespace f = nccl::field::event;
  uint64_t func = chunk_.Intern(e.func), datatype = chunk_.Intern(e.datatype), algo = chunk_.Intern(e.algo),
           proto = chunk_.Intern(e.proto);
  ProtoWriter& w = chunk_.body();
  w.BeginNested(nccl::field::chunk::kNccl);
  w.Varint(f::kKind, e.kind);
  w.SInt(f::kTsDeltaNs, chunk_.DeltaNs(nccl::field::chunk::kNccl, e.ts_ns));
  w.VarintIfNonZero(f::kEventId, e.event_id);
  w.VarintIfNonZero(f::kType, e.type);
  w.VarintIfNonZero(f::kCommIndex, e.comm_index);
  w.VarintIfNonZero(f::kParentId, e.parent_id);
  if (e.rank != 0) w.Int(f::kRank, e.rank);
  w.VarintIfNonZero(f::kFuncStringId, func);
  w.VarintIfNonZero(f::kDatatypeStringId, datatype);
  w.VarintIfNonZero(f::kAlgoStringId, algo);
  w.VarintIfNonZero(f::kProtoStringId, proto);
  w.VarintIfNonZero(f::kSeqNumber, e.seq_number);
  w.VarintIfNonZero(f::kCount, e.count);
  w.VarintIfNonZero(f::kNChannels, e.n_channels);
  w.VarintIfNonZero(f::kChannelId, e.channel_id);
  w.VarintIfNonZero(f::kGpuTimerNs, e.gpu_timer_ns);
  w.VarintIfNonZero(f::kStream, e.stream);
  w.VarintIfNonZero(f::kState, e.state);
  w.VarintIfNonZero(f::kTransSizeBytes, e.trans_size_bytes);
  w.VarintIfNonZero(f::kGroupDepth, e.group_depth);
  w.EndNested();
  chunk_.CountRecord();
}

void SyntheticStream::RangeConfig(const RangeConfigSpec& c) {
  namespace f = field::range_metrics_config;
  ProtoWriter& w = chunk_.body();
  w.BeginNested(field::chunk::kRangeMetricsConfigs);
  w.Varint(f::kDeviceId, c.device_id);
  w.Varint(f::kContextId, c.context_id);
  w.Varint(f::kMode, c.mode);
  for (size_t i = 0; i < c.metrics.size(); ++i) {
    namespace m = field::gpu_metric;
    w.BeginNested(f::kMetrics);
    w.Varint(m::kIndex, static_cast<uint32_t>(i));
    w.String(m::kKey, c.metrics[i]);
    w.String(m::kCuptiName, "c." + c.metrics[i]);
    w.String(m::kLabel, c.metrics[i]);
    w.Double(m::kExportScale, 1.0);
    w.EndNested();
  }
  w.EndNested();
}

void SyntheticStream::RangeResult(const RangeResultSpec& r) {
  namespace f = field::range_metrics_result;
  ProtoWriter& w = chunk_.body();
  w.BeginNested(field::chunk::kRangeMetricsResults);
  w.Varint(f::kDeviceId, r.device_id);
  w.Varint(f::kContextId, r.context_id);
  w.Varint(f::kMode, r.mode);
  w.String(f::kRangeName, r.range_name);
  w.Varint(f::kRangeIndex, r.range_index);
  w.Varint(f::kPassId, r.pass_id);
  w.Varint(f::kPassStartNs, r.pass_start_ns);
  w.Varint(f::kPassEndNs, r.pass_end_ns);
  w.VarintIfNonZero(f::kTid, r.tid);
  w.Bytes(f::kValues, r.values.data(), r.values.size() * sizeof(double));
  w.EndNested();
  chunk_.CountRecord();
}

void SyntheticStream::NcclComm(const NcclCommSpec& c) {
  namespace f = nccl::field::comm;
  ProtoWriter& w = chunk_.body();
  w.BeginNested(nccl::field::chunk::kNcclComms);
  w.Varint(f::kCommIndex, c.comm_index);
  w.Varint(f::kCommHash, c.comm_hash);
  if (!c.name.empty()) w.String(f::kName, c.name);
  w.Int(f::kNNodes, c.n_nodes);
  w.Int(f::kNRanks, c.n_ranks);
  w.Int(f::kRank, c.rank);
  w.Varint(f::kPluginVersion, c.plugin_version);
  w.Varint(f::kInitTsNs, c.init_ts_ns);
  w.Varint(f::kInitTid, c.init_tid);
  w.Varint(f::kActivationMask, 0x7f47);
  w.EndNested();
}

std::string SyntheticStream::Preamble() const {
  return EncodeStreamPreamble(info_, config_, {start_mono_ns_, start_realtime_ns_, 10}, "test");
}

std::string SyntheticStream::TakeChunks() {
  std::string out;
  out.swap(*chunk_.output());
  return out;
}

void SyntheticStream::Close(const std::string& reason) {
  chunk_.Begin(0, 0, 0);
  ProtoWriter& w = chunk_.body();
  w.BeginNested(field::chunk::kStats);
  w.Varint(field::stream_stats::kRecordsWritten, chunk_.records_total());
  w.String(field::stream_stats::kCloseReason, reason);
  w.EndNested();
  w.Bool(field::chunk::kEndOfStream, true);
  chunk_.End();
}

}  // namespace gt::test
