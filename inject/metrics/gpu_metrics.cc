// GPU metrics module: set-up from InitializeInjection, the metrics thread, the drain-thread
// emitter, exit and fork. See gpu_metrics.h for the threads and pm_sampler.h for the clock.
//
// Lock order: Slot::mu and config_mu_ are leaves, never held across a CUPTI call or while taking
// another gtrace lock. The metrics thread makes every PM-sampling CUPTI call; the drain thread makes
// none.
#include "inject/metrics/gpu_metrics.h"

#include <pthread.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "collector/clock.h"
#include "collector/process_info.h"
#include "collector/schema_fields.h"
#include "collector/session.h"
#include "inject/cupti/cupti_api.h"
#include "inject/cupti/cupti_tracer.h"
#include "inject/metrics/decode_trace.h"
#include "inject/metrics/metric_catalog.h"
#include "inject/metrics/metrics_fields.h"
#include "inject/metrics/metrics_options.h"
#include "inject/metrics/pm_sampler.h"
#include "inject/metrics/process_hooks.h"
#include "inject/metrics/profiler_api.h"
#include "inject/metrics/range_profiler.h"
#include "inject/metrics/sample_queue.h"
#include "inject/rawcap/metrics_capture.h"

namespace gt::metrics {
namespace {

constexpr size_t kMaxDevices = 64;
constexpr size_t kQueueSamples = 32768;    // per sampled device (~4.7 MiB)
constexpr uint64_t kPollNs = 10000000ull;  // decode every 10 ms
constexpr uint64_t kClockRemeasureNs = 1000000000ull;
constexpr size_t kMaxChunkBodyBytes = 1u << 20;
constexpr size_t kMaxSamplesPerEmit = 200000;  // per drain cycle, all devices together

enum class ModuleState : uint32_t { kOff = 0, kActive = 1, kInert = 2 };

// One device the process considered. `info`/`version` under `mu`; the queue is created before the
// slot is published and never replaced.
struct Slot {
  std::mutex mu;
  DeviceInfo info;
  uint64_t version = 0;
  std::unique_ptr<SampleQueue> queue;
  std::atomic<uint64_t> overflows{0};
  std::atomic<uint64_t> decode_errors{0};
  // Metrics thread only.
  std::unique_ptr<PmSampler> sampler;
  DecodeTrace trace;
  // Drain thread only.
  uint64_t emitted_version = 0;
  uint64_t emitted_session = 0;
  uint64_t reported_dropped = 0, reported_overflows = 0, reported_errors = 0;
};

struct ConfigText {
  int32_t local_rank = -1;
  int32_t local_world_size = -1;
  uint32_t visible = 0;
  std::vector<uint32_t> owned;
  std::string rule;
  std::string cupti_path;
};

class Module {
 public:
  bool Init();
  void ThreadMain();
  void Emit(ChunkBuilder* chunk, uint64_t session_id);
  void OnExit();
  void OnForkChild() { state_.store(static_cast<uint32_t>(ModuleState::kInert), std::memory_order_release); }
  RangeProfiler& ranges() { return ranges_; }
  bool active() const { return state_.load(std::memory_order_acquire) == static_cast<uint32_t>(ModuleState::kActive); }

 private:
  bool WaitForDriver(uint32_t* visible);
  void StartCapture();
  void SetUpDevices(uint32_t visible);
  bool InitProfiler();
  void SetState(Slot* s, uint32_t state, const std::string& reason);
  void Note(const std::string& cause, const std::string& text);
  int64_t MeasureOffset();
  void DecodeAll(bool stop);
  void WriteConfig(ChunkBuilder* chunk);
  void WriteDevice(ChunkBuilder* chunk, const DeviceInfo& info);
  void WriteRanges(ChunkBuilder* chunk);

  MetricsOptions options_;
  std::vector<MetricRequest> pm_requests_, range_requests_;
  cupti::CuptiApi own_cupti_;
  ProfilerApi api_;
  DriverApi driver_;
  RangeProfiler ranges_;
  uint32_t pid_ = 0;
  std::atomic<uint32_t> state_{static_cast<uint32_t>(ModuleState::kOff)};

  std::array<Slot*, kMaxDevices> slots_{};
  std::atomic<size_t> slot_count_{0};

  std::mutex config_mu_;
  ConfigText config_;
  uint64_t config_version_ = 0;          // under config_mu_
  uint64_t config_session_ = 0;          // drain thread
  uint64_t config_emitted_version_ = 0;  // drain thread

  std::mutex notes_mu_;
  std::set<std::string> printed_causes_;

  // Metrics thread control.
  std::mutex run_mu_;
  std::condition_variable run_cv_;
  bool stop_requested_ = false;          // under run_mu_
  bool thread_done_ = false;             // under run_mu_
  std::atomic<bool> exiting_{false};     // set by OnExit (exiting thread), read by the metrics thread
  int64_t clock_offset_ns_ = 0;          // metrics thread
  bool same_clock_ = false;              // set before the thread starts
  bool profiler_initialized_ = false;    // metrics thread
  uint64_t range_dropped_reported_ = 0;  // drain thread
};

std::atomic<Module*> g_module{nullptr};

const char* GetEnv(const char* name) {
  return getenv(name);
}

void EmitHook(ChunkBuilder* chunk, uint64_t session_id) {
  if (Module* m = g_module.load(std::memory_order_acquire))
    m->Emit(chunk, session_id);
}
void ExitHook() {
  if (Module* m = g_module.load(std::memory_order_acquire))
    m->OnExit();
}
void ForkChildHook() {
  if (Module* m = g_module.load(std::memory_order_acquire)) {
    m->OnForkChild();
    m->ranges().MakeInert();
  }
}
void* ThreadEntry(void* arg) {
  static_cast<Module*>(arg)->ThreadMain();
  return nullptr;
}

std::string HexUuid(const std::string& raw) {
  static const char* kHex = "0123456789abcdef";
  std::string out;
  for (unsigned char c : raw) {
    out += kHex[c >> 4];
    out += kHex[c & 15];
  }
  return out;
}

bool Module::Init() {
  std::vector<std::string> warnings;
  options_ = ReadMetricsOptions(&GetEnv, &warnings);
  for (const std::string& w : warnings)
    ReportDiagnostic(field::enums::kSeverityWarning, "gpu-metrics", w);
  if (!options_.Enabled())
    return false;
  std::string error;
  if (options_.Sampling() && !ResolveMetricSet(options_.set, ProfilerKind::kPmSampling, &pm_requests_, &error)) {
    ReportDiagnostic(field::enums::kSeverityWarning, "gpu-metrics",
                     "GTRACE_GPU_METRICS_SET: " + error + "; using default");
    ResolveMetricSet("default", ProfilerKind::kPmSampling, &pm_requests_, &error);
    options_.set = "default";
  }
  if (options_.range_mode != RangeMode::kOff) {
    ResolveMetricSet(options_.set, ProfilerKind::kRangeProfiler, &range_requests_, &error);
    if (range_requests_.empty())
      ResolveMetricSet("default", ProfilerKind::kRangeProfiler, &range_requests_, &error);
  }
  if (!EnsureSession(kSourceGpuMetrics))
    return false;
  pid_ = static_cast<uint32_t>(getpid());
  // libcupti: the one the CUDA tracer loaded, else our own load (CUDA tracing off or refused).
  void* handle = nullptr;
  std::string path;
  if (cupti::CuptiTracer* t = cupti::CuptiTracer::Instance(); t != nullptr && t->api().handle != nullptr) {
    handle = t->api().handle;
    path = t->api().path;
    // CUPTI stamps with gtrace's CLOCK_MONOTONIC callback: no conversion at all.
    same_clock_ = cupti::TracerActive() && t->clock_callback();
  } else if (cupti::LoadCupti(&own_cupti_, &error)) {
    handle = own_cupti_.handle;
    path = own_cupti_.path;
  } else {
    ReportDiagnostic(field::enums::kSeverityWarning, "gpu-metrics", "GPU metrics off: " + error);
    return false;
  }
  std::string missing;
  ResolveProfilerApi(handle, &api_, &missing);
  if (options_.Sampling() && !api_.pm_ok) {
    ReportDiagnostic(field::enums::kSeverityWarning, "gpu-metrics",
                     "GPU metrics off: " + path + " lacks " + missing + " (PM sampling needs CUDA 12.6 or newer)");
    return false;
  }
  {
    std::lock_guard<std::mutex> lock(config_mu_);
    config_.cupti_path = path;
  }
  RegisterEmitter(&EmitHook);
  state_.store(static_cast<uint32_t>(ModuleState::kActive), std::memory_order_release);
  if (options_.range_mode == RangeMode::kKernel) {
    // One line for both costs. The second is CUPTI's (seen on an H200 with CUDA 13.0): the kernels it
    // profiles come back as activity records without timestamps, which gtrace cannot repair.
    PrintLine(
        "--gpu-metrics-ranges=kernel: CUPTI's range profiler serialises every kernel launch (and replays "
        "kernels); expect the application to run slower while it is on, and the kernels it profiles to have no "
        "timestamps from CUPTI (no kernel rows: their metrics rows name the launch's correlation id)");
  }
  return true;
}

void Module::Note(const std::string& cause, const std::string& text) {
  bool print = false;
  {
    std::lock_guard<std::mutex> lock(notes_mu_);
    print = printed_causes_.insert(cause).second;
  }
  ReportDiagnostic(field::enums::kSeverityWarning, "gpu-metrics", text, print);
}

void Module::SetState(Slot* s, uint32_t state, const std::string& reason) {
  std::lock_guard<std::mutex> lock(s->mu);
  s->info.state = state;
  s->info.reason = reason;
  s->info.ts_ns = StreamNow();
  ++s->version;
}

int64_t Module::MeasureOffset() {
  if (same_clock_ || api_.GetTimestamp == nullptr)
    return 0;
  uint64_t best = UINT64_MAX;
  int64_t offset = clock_offset_ns_;
  for (int i = 0; i < 5; ++i) {
    uint64_t a = NowNs(), c = 0;
    if (api_.GetTimestamp(&c) != CUPTI_SUCCESS)
      break;
    uint64_t b = NowNs();
    if (b - a < best) {
      best = b - a;
      offset = static_cast<int64_t>(c) - static_cast<int64_t>(a + (b - a) / 2);
    }
  }
  return offset;
}

bool Module::WaitForDriver(uint32_t* visible) {
  std::string error;
  // cuInit is still running on the thread that created us: poll until the driver answers
  // (every 5 ms for 10 s, then every 500 ms for two minutes).
  uint64_t start = NowNs();
  while (true) {
    {
      std::unique_lock<std::mutex> lock(run_mu_);
      if (stop_requested_ || !active())
        return false;
    }
    if (!driver_.ok)
      ResolveDriverApi(&driver_, &error);
    int count = 0;
    if (driver_.ok && driver_.DeviceGetCount(&count) == CUDA_SUCCESS) {
      *visible = count > 0 ? static_cast<uint32_t>(count) : 0;
      return true;
    }
    uint64_t waited = NowNs() - start;
    if (waited > 130ull * 1000000000ull) {
      Note("driver", "GPU metrics off: the CUDA driver did not finish initializing" +
                         (error.empty() ? std::string() : " (" + error + ")"));
      return false;
    }
    std::unique_lock<std::mutex> lock(run_mu_);
    run_cv_.wait_for(lock, std::chrono::milliseconds(waited < 10ull * 1000000000ull ? 5 : 500));
  }
}

// cuptiProfilerInitialize, once, before any profiler call (PM sampling and the range profiler).
bool Module::InitProfiler() {
  if (profiler_initialized_)
    return true;
  CUpti_Profiler_Initialize_Params p{};
  p.structSize = CUpti_Profiler_Initialize_Params_STRUCT_SIZE;
  CUptiResult r = api_.ProfilerInitialize(&p);
  if (r != CUPTI_SUCCESS) {
    std::string why = UnavailableReason(r, "cuptiProfilerInitialize");
    Note(why.empty() ? "init" : why,
         "GPU metrics off: " + (why.empty() ? "cuptiProfilerInitialize failed with " + api_.ResultName(r) : why));
    return false;
  }
  profiler_initialized_ = true;
  return true;
}

void Module::SetUpDevices(uint32_t visible) {
  LocalRank rank = DetectLocalRank(&GetEnv);
  std::string rule;
  std::vector<uint32_t> owned = OwnedDevices(options_, rank, visible, &rule);
  {
    std::lock_guard<std::mutex> lock(config_mu_);
    config_.local_rank = rank.local_rank;
    config_.local_world_size = rank.local_world_size;
    config_.visible = visible;
    config_.owned = owned;
    config_.rule = rule;
    ++config_version_;
  }
  if (options_.range_mode != RangeMode::kOff) {
    std::vector<uint32_t> range_devices = owned;
    if (!options_.Sampling()) {
      MetricsOptions visible_only = options_;
      visible_only.devices = DeviceSelection::kCudaVisible;
      range_devices = OwnedDevices(visible_only, rank, visible, &rule);
    }
    if (!api_.range_ok) {
      Note("range-api", "range profiler off: this libcupti lacks the range profiler API (CUDA 12.6 Update 2 or newer)");
    } else if (InitProfiler()) {
      // NVTX mode profiles whichever context pushes the range: prepare every visible device's chip.
      std::vector<uint32_t> all;
      for (uint32_t d = 0; d < visible; ++d)
        all.push_back(d);
      ranges_.Prepare(&api_, &driver_, options_, range_requests_,
                      options_.range_mode == RangeMode::kNvtx ? all : range_devices, &exiting_);
    }
  }
  if (!options_.Sampling())
    return;
  std::string all_rule;
  // Every requested device this process sees (ownership is decided per device below).
  std::vector<uint32_t> candidates = OwnedDevices(options_, LocalRank{}, visible, &all_rule);
  if (options_.devices == DeviceSelection::kList) {
    for (uint32_t id : options_.device_ids) {
      if (id >= visible) {
        Note("no-device-" + std::to_string(id), "GPU metrics: device " + std::to_string(id) + " does not exist here (" +
                                                    std::to_string(visible) + " visible); skipped");
      }
    }
  }
  for (uint32_t d : candidates) {
    if (slot_count_.load(std::memory_order_relaxed) >= kMaxDevices)
      break;
    auto* s = new Slot();
    s->info.device_id = d;
    s->info.set_name = options_.set;
    s->info.interval_ns = options_.IntervalNs();
    s->info.sampler_tid = CurrentTid();
    s->info.clock_offset_ns = clock_offset_ns_;
    CUdevice dev = 0;
    if (driver_.DeviceGet(&dev, static_cast<int>(d)) == CUDA_SUCCESS) {
      char name[256] = {};
      if (driver_.DeviceGetName(name, sizeof(name) - 1, dev) == CUDA_SUCCESS)
        s->info.name = name;
      CUuuid uuid{};
      if (driver_.DeviceGetUuid(&uuid, dev) == CUDA_SUCCESS)
        s->info.uuid.assign(uuid.bytes, sizeof(uuid.bytes));
      char bus[64] = {};
      if (driver_.DeviceGetPCIBusId(bus, sizeof(bus) - 1, dev) == CUDA_SUCCESS)
        s->info.pci_bus_id = bus;
    }
    bool mine = false;
    for (uint32_t o : owned)
      mine = mine || o == d;
    std::string holder;
    if (!mine) {
      s->info.state = field::enums::kGpuMetricsNotOwned;
      s->info.reason = "owned by another local rank: " + rule;
    } else if (!TryLockGpu(HexUuid(s->info.uuid.empty() ? std::to_string(d) : s->info.uuid), &holder)) {
      s->info.state = field::enums::kGpuMetricsNotOwned;
      s->info.reason = "sampled by another process: " + holder;
    } else {
      if (!InitProfiler()) {
        delete s;
        return;
      }
      s->queue = std::make_unique<SampleQueue>(kQueueSamples);
      s->sampler = std::make_unique<PmSampler>(&api_, d);
      if (s->sampler->Setup(pm_requests_, options_.IntervalNs(), &s->info)) {
        s->info.state = field::enums::kGpuMetricsSampling;
      } else {
        s->sampler.reset();
        std::string what = "GPU metrics off on device " + std::to_string(d) +
                           (s->info.chip.empty() ? "" : " (" + s->info.chip + ")") + ": " + s->info.reason;
        // One printed line per distinct cause: eight GPUs without permission make one line.
        Note(s->info.state == field::enums::kGpuMetricsUnavailable ? s->info.reason.substr(0, 48) : what, what);
      }
    }
    s->info.ts_ns = StreamNow();
    s->version = 1;
    size_t n = slot_count_.load(std::memory_order_relaxed);
    slots_[n] = s;
    slot_count_.store(n + 1, std::memory_order_release);
  }
}

void Module::DecodeAll(bool stop) {
  size_t n = slot_count_.load(std::memory_order_acquire);
  bool want = !stop && IsEnabled(kSourceGpuMetrics);
  for (size_t i = 0; i < n; ++i) {
    Slot* s = slots_[i];
    if (s->sampler == nullptr)
      continue;
    if (want && !s->sampler->running()) {
      CUptiResult r = s->sampler->Start();
      if (r != CUPTI_SUCCESS) {
        std::string why = UnavailableReason(r, "cuptiPmSamplingStart");
        SetState(s, why.empty() ? field::enums::kGpuMetricsFailed : field::enums::kGpuMetricsUnavailable,
                 why.empty() ? "cuptiPmSamplingStart failed with " + api_.ResultName(r) : why);
        Note("start", "GPU metrics off on device " + std::to_string(s->info.device_id) + ": " +
                          (why.empty() ? "cuptiPmSamplingStart failed with " + api_.ResultName(r) : why));
        s->sampler.reset();
        continue;
      }
      s->trace.Print(s->info.device_id, "start", NowNs());
    }
    // Decode only a started sampler (an enabled but never started one has nothing to decode; a closed
    // capture window keeps it so).
    DecodeStats stats;
    bool ok = true;
    if (s->sampler->running()) {
      ok = s->sampler->Decode(clock_offset_ns_, s->queue.get(), &stats);
      if (!want) {
        s->sampler->Stop();
        ok = s->sampler->Decode(clock_offset_ns_, s->queue.get(), &stats) && ok;  // what arrived until the stop
        s->trace.Add(stats);
        s->trace.Print(s->info.device_id, "stop", NowNs());
      } else {
        s->trace.Add(stats);
        s->trace.Print(s->info.device_id, "", NowNs());
      }
    }
    if (stats.overflows != 0)
      s->overflows.fetch_add(stats.overflows, std::memory_order_relaxed);
    if (stats.decode_errors != 0)
      s->decode_errors.fetch_add(stats.decode_errors, std::memory_order_relaxed);
    if (!ok && s->decode_errors.load(std::memory_order_relaxed) > 100) {
      SetState(s, field::enums::kGpuMetricsFailed, "cuptiPmSamplingDecodeData kept failing; sampling stopped");
      s->sampler.reset();
      continue;
    }
    if (stop) {
      s->sampler->Disable();
      s->sampler.reset();
      SetState(s, field::enums::kGpuMetricsStopped, "sampling ended at process exit");
    }
  }
}

// Metrics thread, before any profiler set-up: raw capture of the counter-data images (docs/capture.md).
void Module::StartCapture() {
  std::string info = "format=gtrace-raw-capture\nkind=metrics\npid=" + std::to_string(pid_) +
                     "\nstart_ns=" + std::to_string(NowNs()) + "\ncupti_path=" + config_.cupti_path +
                     "\nset=" + options_.set + "\nfrequency_hz=" + std::to_string(options_.frequency_hz) +
                     "\nranges=" + options_.ranges_text + "\ndevices=" + options_.devices_text +
                     "\nsame_clock=" + (same_clock_ ? "1" : "0") + "\n";
  if (const char* v = getenv("GTRACE_RAW_CAPTURE_SCENARIO"))
    info += std::string("scenario=") + v + "\n";
  bool requested = false;
  std::string error;
  if (!rawcap::MetricsCapture::StartFromEnv(info, &requested, &error)) {
    Note("capture", "raw capture of GPU metrics off: " + error + "; GPU metrics go on");
  } else if (requested) {
    PrintLine("raw capture of GPU metrics input to " + rawcap::MetricsCapture::Instance()->path());
  }
}

void Module::ThreadMain() {
  t_gt_thread.internal = true;
  ::prctl(PR_SET_NAME, "gtrace-metrics", 0, 0, 0);
  uint32_t visible = 0;
  if (WaitForDriver(&visible)) {
    clock_offset_ns_ = MeasureOffset();
    StartCapture();
    // Between exit-hook registrations that run the hook before libnvperf_host's destructors.
    SetUpAfterHostLibrary(api_, options_.Sampling() || options_.range_mode != RangeMode::kOff, &ExitHook,
                          [&] { SetUpDevices(visible); });
    uint64_t last_clock = NowNs();
    while (true) {
      bool stop;
      {
        std::unique_lock<std::mutex> lock(run_mu_);
        run_cv_.wait_for(lock, std::chrono::nanoseconds(kPollNs), [&] { return stop_requested_; });
        stop = stop_requested_;
      }
      if (!active())
        break;  // forked child (cannot happen here) or switched off
      uint64_t now = NowNs();
      if (now - last_clock >= kClockRemeasureNs) {
        clock_offset_ns_ = MeasureOffset();
        last_clock = now;
        size_t n = slot_count_.load(std::memory_order_acquire);
        for (size_t i = 0; i < n; ++i) {
          std::lock_guard<std::mutex> lock(slots_[i]->mu);
          int64_t moved = slots_[i]->info.clock_offset_ns - clock_offset_ns_;
          slots_[i]->info.clock_offset_ns = clock_offset_ns_;
          if (moved > 1000 || moved < -1000)
            ++slots_[i]->version;  // NTP slewed CLOCK_REALTIME: re-send
        }
      }
      DecodeAll(stop);
      ranges_.Pump(now, stop);
      if (stop)
        break;
    }
  }
  if (rawcap::MetricsCapture* cap = rawcap::MetricsCapture::Instance())
    cap->Finish();
  std::lock_guard<std::mutex> lock(run_mu_);
  thread_done_ = true;
  run_cv_.notify_all();
}

void Module::OnExit() {
  if (!active() || static_cast<uint32_t>(getpid()) != pid_)
    return;
  exiting_.store(true, std::memory_order_release);  // cancels a metric selection in progress
  {
    std::unique_lock<std::mutex> lock(run_mu_);
    stop_requested_ = true;
    run_cv_.notify_all();
    // Bounded: a CUPTI call that hangs must not hang the application's exit.
    run_cv_.wait_for(lock, std::chrono::seconds(3), [&] { return thread_done_; });
  }
  state_.store(static_cast<uint32_t>(ModuleState::kOff), std::memory_order_release);
  RequestFlush(/*wait=*/true, 3000);
}

// --- encoding (drain thread) --------------------------------------------------------------------

void WriteMetric(ProtoWriter& w, uint32_t field_number, uint32_t index, const SelectedMetric& m) {
  namespace f = field::gpu_metric;
  w.BeginNested(field_number);
  w.Varint(f::kIndex, index);
  w.String(f::kKey, m.request.key);
  w.String(f::kCuptiName, m.cupti_name);
  w.String(f::kLabel, m.request.label);
  w.String(f::kExportUnit, m.request.export_unit);
  w.Double(f::kExportScale, m.request.export_scale);
  w.EndNested();
}

void WriteRejection(ProtoWriter& w, uint32_t field_number, const RejectedMetric& r) {
  namespace f = field::gpu_metric_rejection;
  w.BeginNested(field_number);
  w.String(f::kKey, r.key);
  w.String(f::kCuptiName, r.cupti_name);
  w.String(f::kReason, r.reason);
  w.EndNested();
}

void Module::WriteConfig(ChunkBuilder* chunk) {
  ConfigText c;
  {
    std::lock_guard<std::mutex> lock(config_mu_);
    c = config_;
  }
  namespace f = field::gpu_metrics_config;
  ProtoWriter& w = chunk->body();
  w.BeginNested(field::chunk::kGpuMetricsConfig);
  w.String(f::kDevices, options_.devices_text);
  w.Varint(f::kSamplingIntervalNs, options_.IntervalNs());
  w.String(f::kSetName, options_.set);
  w.StringIfNonEmpty(f::kRanges, options_.ranges_text);
  w.Int(f::kLocalRank, c.local_rank);
  w.Int(f::kLocalWorldSize, c.local_world_size);
  w.Varint(f::kVisibleDevices, c.visible);
  for (uint32_t d : c.owned)
    w.Varint(f::kOwnedDeviceIds, d);
  w.StringIfNonEmpty(f::kOwnerRule, c.rule);
  w.Varint(f::kFrequencyHz, options_.frequency_hz);
  w.StringIfNonEmpty(f::kCuptiPath, c.cupti_path);
  w.EndNested();
  // Chunk.gpu_metrics_config is singular: a chunk of its own.
  chunk->End();
  chunk->Begin(0, 0, 0);
}

void Module::WriteDevice(ChunkBuilder* chunk, const DeviceInfo& d) {
  namespace f = field::gpu_metrics_device;
  ProtoWriter& w = chunk->body();
  w.BeginNested(field::chunk::kGpuMetricsDevices);
  w.Varint(f::kDeviceId, d.device_id);
  if (!d.uuid.empty())
    w.Bytes(f::kUuid, d.uuid.data(), d.uuid.size());
  w.StringIfNonEmpty(f::kName, d.name);
  w.StringIfNonEmpty(f::kChipName, d.chip);
  w.StringIfNonEmpty(f::kPciBusId, d.pci_bus_id);
  w.Varint(f::kState, d.state);
  w.StringIfNonEmpty(f::kReason, d.reason);
  w.StringIfNonEmpty(f::kSetName, d.set_name);
  for (size_t i = 0; i < d.metrics.size(); ++i)
    WriteMetric(w, f::kMetrics, static_cast<uint32_t>(i), d.metrics[i]);
  for (const RejectedMetric& r : d.rejected)
    WriteRejection(w, f::kRejected, r);
  w.VarintIfNonZero(f::kSamplingIntervalNs, d.interval_ns);
  w.Varint(f::kTriggerMode, d.trigger_mode);
  w.VarintIfNonZero(f::kSamplingIntervalRaw, d.interval_raw);
  w.VarintIfNonZero(f::kHardwareBufferBytes, d.hw_buffer_bytes);
  w.VarintIfNonZero(f::kMaxSamples, d.max_samples);
  if (d.clock_offset_ns != 0)
    w.Int(f::kClockOffsetNs, d.clock_offset_ns);
  w.Varint(f::kTsNs, d.ts_ns);
  w.VarintIfNonZero(f::kPasses, d.passes);
  w.VarintIfNonZero(f::kSamplerTid, d.sampler_tid);
  w.EndNested();
}

void Module::WriteRanges(ChunkBuilder* chunk) {
  std::vector<RangeConfigInfo> configs;
  std::vector<RangeResult> results;
  uint64_t dropped = 0;
  ranges_.Take(&configs, &results, &dropped);
  ProtoWriter& w = chunk->body();
  for (const RangeConfigInfo& c : configs) {
    namespace f = field::range_metrics_config;
    w.BeginNested(field::chunk::kRangeMetricsConfigs);
    w.Varint(f::kDeviceId, c.device_id);
    w.Varint(f::kContextId, c.context_id);
    w.Varint(f::kMode, c.mode);
    w.StringIfNonEmpty(f::kNvtxMessage, c.nvtx_message);
    w.StringIfNonEmpty(f::kNvtxDomain, c.nvtx_domain);
    w.StringIfNonEmpty(f::kChipName, c.chip);
    for (size_t i = 0; i < c.metrics.size(); ++i)
      WriteMetric(w, f::kMetrics, static_cast<uint32_t>(i), c.metrics[i]);
    for (const RejectedMetric& r : c.rejected)
      WriteRejection(w, f::kRejected, r);
    w.StringIfNonEmpty(f::kReason, c.reason);
    w.VarintIfNonZero(f::kMaxRangesPerPass, c.max_ranges_per_pass);
    w.EndNested();
  }
  for (const RangeResult& r : results) {
    namespace f = field::range_metrics_result;
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
    w.VarintIfNonZero(f::kRangesDropped, r.ranges_dropped);
    w.EndNested();
    chunk->CountRecord();
    chunk->SplitIfLarger(kMaxChunkBodyBytes);
  }
  if (dropped != range_dropped_reported_) {
    ReportDiagnostic(
        field::enums::kSeverityWarning, "gpu-metrics",
        std::to_string(dropped - range_dropped_reported_) + " profiled ranges dropped (evaluation queue full)",
        /*print=*/range_dropped_reported_ == 0);
    range_dropped_reported_ = dropped;
  }
}

void Module::Emit(ChunkBuilder* chunk, uint64_t session_id) {
  if (state_.load(std::memory_order_acquire) == static_cast<uint32_t>(ModuleState::kInert))
    return;
  if (static_cast<uint32_t>(getpid()) != pid_)
    return;  // a forked child emits nothing of ours
  uint64_t config_version;
  {
    std::lock_guard<std::mutex> lock(config_mu_);
    config_version = config_version_;
  }
  // Re-sent once the metrics thread has filled in ownership (before it publishes any device).
  if (config_session_ != session_id || config_emitted_version_ != config_version) {
    WriteConfig(chunk);
    config_session_ = session_id;
    config_emitted_version_ = config_version;
  }
  size_t n = slot_count_.load(std::memory_order_acquire);
  size_t budget = kMaxSamplesPerEmit;
  uint64_t now = NowNs();
  for (size_t i = 0; i < n; ++i) {
    Slot* s = slots_[i];
    DeviceInfo info;
    bool send = false;
    {
      std::lock_guard<std::mutex> lock(s->mu);
      if (s->version != s->emitted_version || s->emitted_session != session_id) {
        info = s->info;
        s->emitted_version = s->version;
        s->emitted_session = session_id;
        send = true;
      }
    }
    if (send)
      WriteDevice(chunk, info);
    if (s->queue != nullptr) {
      namespace f = field::gpu_metrics_sample;
      ProtoWriter& w = chunk->body();
      while (budget > 0) {
        const Sample* sample = s->queue->Front();
        if (sample == nullptr)
          break;
        w.BeginNested(field::chunk::kGpuMetricsSamples);
        w.Varint(f::kDeviceId, s->info.device_id);
        w.SInt(f::kEndDeltaNs, chunk->DeltaNs(field::chunk::kGpuMetricsSamples, sample->end_ns));
        w.Varint(f::kDurationNs, sample->duration_ns);
        w.Bytes(f::kValues, sample->values, sample->value_count * sizeof(float));
        w.EndNested();
        chunk->CountRecord();
        s->queue->Pop();
        --budget;
        chunk->SplitIfLarger(kMaxChunkBodyBytes);
      }
      uint64_t dropped = s->queue->dropped();
      uint64_t overflows = s->overflows.load(std::memory_order_relaxed);
      uint64_t errors = s->decode_errors.load(std::memory_order_relaxed);
      if (dropped != s->reported_dropped || overflows != s->reported_overflows || errors != s->reported_errors) {
        namespace l = field::gpu_metrics_loss;
        w.BeginNested(field::chunk::kGpuMetricsLosses);
        w.Varint(l::kDeviceId, s->info.device_id);
        w.Varint(l::kTsNs, StreamClockIsTicks() ? ReadTicks() : now);
        w.VarintIfNonZero(l::kDroppedSamples, dropped - s->reported_dropped);
        w.VarintIfNonZero(l::kHwBufferOverflows, overflows - s->reported_overflows);
        w.VarintIfNonZero(l::kDecodeErrors, errors - s->reported_errors);
        w.EndNested();
        if (s->reported_dropped == 0 && dropped != 0) {
          PrintLine("GPU metrics: the sample queue of device " + std::to_string(s->info.device_id) +
                    " is full; samples are dropped (lower --gpu-metrics-frequency or GTRACE_FLUSH_MS)");
        }
        s->reported_dropped = dropped;
        s->reported_overflows = overflows;
        s->reported_errors = errors;
      }
    }
  }
  WriteRanges(chunk);
}

}  // namespace

void OnCudaInjection() {
  static pthread_once_t once = PTHREAD_ONCE_INIT;
  pthread_once(&once, [] {
    auto* m = new Module();
    if (!m->Init()) {
      delete m;
      return;
    }
    g_module.store(m, std::memory_order_release);
    RegisterProcessHooks(&ExitHook, &ForkChildHook);  // exit: after the CUDA tracer's, runs before it
    if (!StartMetricsThread(&ThreadEntry, m)) {
      m->OnForkChild();  // no thread: nothing will ever call CUPTI
      ReportDiagnostic(field::enums::kSeverityWarning, "gpu-metrics", "GPU metrics off: cannot start a thread");
    }
  });
}

void OnNvtxPush(const char* domain_name,
                const char* text,
                const wchar_t* wide,
                uint32_t domain_id,
                uint32_t tid,
                int depth) {
  if (!RangeProfilerArmed())
    return;
  if (Module* m = g_module.load(std::memory_order_acquire); m != nullptr && m->active()) {
    m->ranges().OnNvtxPush(domain_name, text, wide, domain_id, tid, depth);
  }
}

void OnNvtxPop(uint32_t tid, uint32_t domain_id, int depth) {
  if (!RangeProfilerArmed())
    return;
  if (Module* m = g_module.load(std::memory_order_acquire); m != nullptr && m->active()) {
    m->ranges().OnNvtxPop(tid, domain_id, depth);
  }
}

}  // namespace gt::metrics
