#include "tools/stream/chunk_times.h"

namespace gt::stream {
namespace {

// 0 means "absent" in absolute fields.
uint64_t Abs(const TickClock& c, uint64_t ticks) { return ticks == 0 ? 0 : c.ToNs(ticks); }

// One repeated field's delta chain. `dur_get`/`dur_set`: a duration after the event's time
// (start + duration), or before it when `dur_before` (GpuMetricsSample: end - duration).
template <typename Msg, typename Delta, typename Dur = uint64_t>
void Chain(const TickClock& c, uint64_t base_ticks, uint64_t base_ns, google::protobuf::RepeatedPtrField<Msg>* items,
           Delta (Msg::*get)() const, void (Msg::*set)(Delta), Dur (Msg::*dur_get)() const = nullptr,
           void (Msg::*dur_set)(Dur) = nullptr, bool dur_before = false) {
  uint64_t prev_t = base_ticks, prev_ns = base_ns;
  for (Msg& m : *items) {
    uint64_t t = prev_t + static_cast<uint64_t>(static_cast<int64_t>((m.*get)()));
    uint64_t ns = c.ToNs(t);
    (m.*set)(static_cast<Delta>(static_cast<int64_t>(ns - prev_ns)));
    if (dur_get != nullptr) {
      uint64_t d = static_cast<uint64_t>((m.*dur_get)());
      if (d != 0) {
        uint64_t span = dur_before ? (d <= t ? ns - c.ToNs(t - d) : d) : c.ToNs(t + d) - ns;
        (m.*dur_set)(static_cast<Dur>(span));
      }
    }
    prev_t = t;
    prev_ns = ns;
  }
}

}  // namespace

void ConvertChunkTimes(const TickClock& c, schema::Chunk* k, const TickClock* cupti_clock) {
  using namespace schema;  // NOLINT: message names only, inside this function
  // CUPTI's activity times: on the stream clock (gtrace's timestamp callback), or on CUPTI's own.
  const TickClock& g = cupti_clock != nullptr ? *cupti_clock : c;
  uint64_t bt = k->base_ns();
  uint64_t bn = Abs(c, bt);
  k->set_base_ns(bn);
  if (k->has_clock()) {
    ClockSnapshot* s = k->mutable_clock();
    // The pair itself: its monotonic reading is the converted value by definition.
    s->set_stream_clock_ns(s->monotonic_ns() != 0 ? s->monotonic_ns() : Abs(c, s->stream_clock_ns()));
  }
  for (DropReport& d : *k->mutable_drops()) d.set_ts_ns(Abs(c, d.ts_ns()));
  if (k->has_stats()) k->mutable_stats()->set_end_ns(Abs(c, k->stats().end_ns()));
  for (Diagnostic& d : *k->mutable_diagnostics()) d.set_ts_ns(Abs(c, d.ts_ns()));
  for (ProfilerOverhead& o : *k->mutable_profiler_overheads()) {
    o.set_start_ns(Abs(c, o.start_ns()));
    o.set_end_ns(Abs(c, o.end_ns()));
  }

  Chain(c, bt, bn, k->mutable_nvtx(), &NvtxEvent::ts_delta_ns, &NvtxEvent::set_ts_delta_ns);
  for (NvtxDomain& d : *k->mutable_nvtx_domains()) d.set_create_ts_ns(Abs(c, d.create_ts_ns()));
  Chain(c, bt, bn, k->mutable_osrt_calls(), &OsrtCall::start_delta_ns, &OsrtCall::set_start_delta_ns,
        &OsrtCall::duration_ns, &OsrtCall::set_duration_ns);
  Chain(c, bt, bn, k->mutable_cpu_samples(), &CpuSample::ts_delta_ns, &CpuSample::set_ts_delta_ns);
  for (CpuSamplingLoss& l : *k->mutable_cpu_sampling_losses()) l.set_ts_ns(Abs(c, l.ts_ns()));

  Chain(g, bt, bn, k->mutable_cuda_api_calls(), &CudaApiCall::start_delta_ns, &CudaApiCall::set_start_delta_ns,
        &CudaApiCall::duration_ns, &CudaApiCall::set_duration_ns);
  Chain(g, bt, bn, k->mutable_cuda_kernels(), &CudaKernel::start_delta_ns, &CudaKernel::set_start_delta_ns,
        &CudaKernel::duration_ns, &CudaKernel::set_duration_ns);
  Chain(g, bt, bn, k->mutable_cuda_memcpys(), &CudaMemcpy::start_delta_ns, &CudaMemcpy::set_start_delta_ns,
        &CudaMemcpy::duration_ns, &CudaMemcpy::set_duration_ns);
  Chain(g, bt, bn, k->mutable_cuda_memsets(), &CudaMemset::start_delta_ns, &CudaMemset::set_start_delta_ns,
        &CudaMemset::duration_ns, &CudaMemset::set_duration_ns);
  Chain(g, bt, bn, k->mutable_cuda_syncs(), &CudaSynchronization::start_delta_ns,
        &CudaSynchronization::set_start_delta_ns, &CudaSynchronization::duration_ns,
        &CudaSynchronization::set_duration_ns);
  for (CudaEventRecord& e : *k->mutable_cuda_events()) e.set_device_timestamp_ns(Abs(g, e.device_timestamp_ns()));
  Chain(g, bt, bn, k->mutable_cuda_graph_traces(), &CudaGraphTrace::start_delta_ns,
        &CudaGraphTrace::set_start_delta_ns, &CudaGraphTrace::duration_ns, &CudaGraphTrace::set_duration_ns);
  Chain(g, bt, bn, k->mutable_cuda_overheads(), &CudaOverhead::start_delta_ns, &CudaOverhead::set_start_delta_ns,
        &CudaOverhead::duration_ns, &CudaOverhead::set_duration_ns);
  Chain(g, bt, bn, k->mutable_cuda_memory_events(), &CudaMemoryEvent::ts_delta_ns, &CudaMemoryEvent::set_ts_delta_ns);
  Chain(g, bt, bn, k->mutable_cuda_memory_pool_events(), &CudaMemoryPoolEvent::ts_delta_ns,
        &CudaMemoryPoolEvent::set_ts_delta_ns);
  Chain(c, bt, bn, k->mutable_cuda_graph_launches(), &CudaGraphLaunch::ts_delta_ns, &CudaGraphLaunch::set_ts_delta_ns);
  Chain(c, bt, bn, k->mutable_cuda_graph_events(), &CudaGraphEvent::ts_delta_ns, &CudaGraphEvent::set_ts_delta_ns);
  for (CaptureWindowEvent& e : *k->mutable_capture_windows()) e.set_ts_ns(Abs(c, e.ts_ns()));
  for (CudaRecordLoss& l : *k->mutable_cuda_record_losses()) l.set_ts_ns(Abs(c, l.ts_ns()));
  for (CuptiClockPair& p : *k->mutable_cupti_clock_pairs()) p.set_stream_clock_ns(Abs(c, p.stream_clock_ns()));

  Chain(c, bt, bn, k->mutable_nccl(), &NcclEvent::ts_delta_ns, &NcclEvent::set_ts_delta_ns);
  for (NcclComm& m : *k->mutable_nccl_comms()) m.set_init_ts_ns(Abs(c, m.init_ts_ns()));
  for (NcclPoolStats& p : *k->mutable_nccl_pools()) p.set_ts_ns(Abs(c, p.ts_ns()));

  for (GpuMetricsDevice& d : *k->mutable_gpu_metrics_devices()) d.set_ts_ns(Abs(c, d.ts_ns()));
  Chain(c, bt, bn, k->mutable_gpu_metrics_samples(), &GpuMetricsSample::end_delta_ns,
        &GpuMetricsSample::set_end_delta_ns, &GpuMetricsSample::duration_ns, &GpuMetricsSample::set_duration_ns,
        /*dur_before=*/true);
  for (GpuMetricsLoss& l : *k->mutable_gpu_metrics_losses()) l.set_ts_ns(Abs(c, l.ts_ns()));
  for (RangeMetricsResult& r : *k->mutable_range_metrics_results()) {
    r.set_pass_start_ns(Abs(c, r.pass_start_ns()));
    r.set_pass_end_ns(Abs(c, r.pass_end_ns()));
  }

  for (LoadedModule& m : *k->mutable_loaded_modules()) m.set_loaded_ts_ns(Abs(c, m.loaded_ts_ns()));
  for (ModuleUnload& m : *k->mutable_module_unloads()) m.set_ts_ns(Abs(c, m.ts_ns()));
  Chain(c, bt, bn, k->mutable_cuda_api_backtraces(), &CudaApiBacktrace::start_delta_ns,
        &CudaApiBacktrace::set_start_delta_ns, &CudaApiBacktrace::duration_ns, &CudaApiBacktrace::set_duration_ns);
  for (CallStackLoss& l : *k->mutable_callstack_losses()) l.set_ts_ns(Abs(c, l.ts_ns()));
}

}  // namespace gt::stream
