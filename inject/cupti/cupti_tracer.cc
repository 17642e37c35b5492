// CuptiTracer: set-up, capture-window switching, the drain-thread emitter, exit and fork.
//
// Lock order: the tracer holds no lock of its own. `applying_` is a try-flag (a thread that finds it
// taken leaves the work to its holder, which re-reads the window before letting go), so no gtrace
// lock is ever held across a CUPTI call. The capture window's mutex is released before the window
// hook (Reconcile) runs.
#include "inject/cupti/cupti_tracer.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstring>

#include "collector/clock.h"
#include "collector/schema_fields.h"
#include "collector/session.h"
#include "collector/thread_names.h"
#include "inject/callstack/callstack_tracer.h"
#include "inject/cupti/capture_window.h"
#include "inject/cupti/cuda_fields.h"
#include "inject/cupti/cuda_record.h"
#include "inject/cupti/cupti_callbacks.h"
#include "inject/rawcap/capture_writer.h"

namespace gt::cupti {

std::atomic<uint32_t> g_tracer_state{static_cast<uint32_t>(TracerState::kUninitialized)};

namespace {

std::atomic<CuptiTracer*> g_tracer{nullptr};

constexpr uint64_t kMinBufferBytes = 64u << 10;
constexpr uint64_t kMaxBufferBytes = 8u << 20;
// Buffers the pool is carved into at the default 64 MiB (256 KiB each): as many CUDA-calling threads
// per flush interval as a training process has (autograd, NCCL watchdogs, pin-memory, workers).
constexpr uint64_t kTargetBuffers = 256;
// CuptiClockPair rate: as the stream's own calibration pairs (drain thread, every second).
constexpr uint64_t kClockPairIntervalNs = 1000000000ull;

void SetState(TracerState s) { g_tracer_state.store(static_cast<uint32_t>(s), std::memory_order_release); }
TracerState GetState() { return static_cast<TracerState>(g_tracer_state.load(std::memory_order_acquire)); }

const char* KindName(CUpti_ActivityKind kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: return "CONCURRENT_KERNEL";
    case CUPTI_ACTIVITY_KIND_MEMCPY: return "MEMCPY";
    case CUPTI_ACTIVITY_KIND_MEMCPY2: return "MEMCPY2";
    case CUPTI_ACTIVITY_KIND_MEMSET: return "MEMSET";
    case CUPTI_ACTIVITY_KIND_RUNTIME: return "RUNTIME";
    case CUPTI_ACTIVITY_KIND_DRIVER: return "DRIVER";
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: return "SYNCHRONIZATION";
    case CUPTI_ACTIVITY_KIND_CUDA_EVENT: return "CUDA_EVENT";
    case CUPTI_ACTIVITY_KIND_GRAPH_TRACE: return "GRAPH_TRACE";
    case CUPTI_ACTIVITY_KIND_OVERHEAD: return "OVERHEAD";
    case CUPTI_ACTIVITY_KIND_MEMORY2: return "MEMORY2";
    case CUPTI_ACTIVITY_KIND_MEMORY_POOL: return "MEMORY_POOL";
    case CUPTI_ACTIVITY_KIND_DEVICE: return "DEVICE";
    case CUPTI_ACTIVITY_KIND_CONTEXT: return "CONTEXT";
    case CUPTI_ACTIVITY_KIND_STREAM: return "STREAM";
    default: return "OTHER";
  }
}

// Kinds that describe the machine (devices, contexts, streams): recorded from the start, whatever
// the window, so the TARGET_INFO tables are complete. They cost nothing per API call.
constexpr CUpti_ActivityKind kAlwaysKinds[] = {CUPTI_ACTIVITY_KIND_DEVICE, CUPTI_ACTIVITY_KIND_CONTEXT,
                                               CUPTI_ACTIVITY_KIND_STREAM};

void ReconcileHook() {
  if (CuptiTracer* t = CuptiTracer::Instance()) t->Reconcile();
}
void EmitHook(ChunkBuilder* chunk, uint64_t session_id) {
  if (CuptiTracer* t = CuptiTracer::Instance()) t->Emit(chunk, session_id);
}
void ExitHook() {
  if (CuptiTracer* t = CuptiTracer::Instance()) t->OnProcessExit();
}
void ForkChildHook() {
  if (CuptiTracer* t = CuptiTracer::Instance()) t->OnForkChild();
}

// GTRACE_CUDA_* options; a bad value keeps the default and is reported.
TracerOptions ReadOptions(std::string* warnings) {
  TracerOptions o;
  if (const char* v = getenv("GTRACE_CUDA_GRAPH_TRACE"); v != nullptr) {
    if (strcmp(v, "node") == 0) {
      o.graph_nodes = true;
    } else if (strcmp(v, "graph") != 0) {
      *warnings += std::string(warnings->empty() ? "" : "; ") + "GTRACE_CUDA_GRAPH_TRACE='" + v +
                   "' is not graph or node; using graph";
    }
  }
  if (const char* v = getenv("GTRACE_CUDA_MEMORY_USAGE"); v != nullptr && !ParseBool(v, &o.memory_usage)) {
    *warnings += std::string(warnings->empty() ? "" : "; ") + "GTRACE_CUDA_MEMORY_USAGE='" + v +
                 "' is not a boolean; using false";
  }
  if (const char* v = getenv("GTRACE_CUDA_BUFFER_MB"); v != nullptr) {
    uint64_t mb = 0;
    if (ParseUint64(v, &mb) && mb >= 1 && mb <= 4096) {
      o.pool_bytes = mb << 20;
    } else {
      *warnings += std::string(warnings->empty() ? "" : "; ") + "GTRACE_CUDA_BUFFER_MB='" + v +
                   "' is not a whole number in [1, 4096]; using 64";
    }
  }
  return o;
}

}  // namespace

CuptiTracer* CuptiTracer::Instance() { return g_tracer.load(std::memory_order_acquire); }

int CuptiTracer::InitializeInjection() {
  uint32_t expected = static_cast<uint32_t>(TracerState::kUninitialized);
  // Once per process image: a second call (another cuInit path, a child forked after set-up) is a no-op.
  if (!g_tracer_state.compare_exchange_strong(expected, static_cast<uint32_t>(TracerState::kStarting))) return 1;
  capture::RegisterWithCollector();
  if (!EnsureSession(kSourceCuda)) {
    SetState(TracerState::kOff);  // CUDA not traced (or no session): never load CUPTI
    return 1;
  }
  capture::RegisterWithCollector();  // adopts a session another module started first
  auto* t = new CuptiTracer();
  g_tracer.store(t, std::memory_order_release);
  t->Start();
  return 1;
}

bool CuptiTracer::Fail(const std::string& why) {
  if (subscriber_ != nullptr && api_.Unsubscribe != nullptr) {
    api_.Unsubscribe(subscriber_);  // no gtrace lock held
    subscriber_ = nullptr;
  }
  SetState(TracerState::kOff);
  std::string note = capture::UsesCudaProfilerApi() ? "; --capture-range=cudaProfilerApi cannot open a window" : "";
  ReportDiagnostic(field::enums::kSeverityWarning, "cupti",
                   "CUDA tracing off: " + why + note + "; NVTX and the rest keep working");
  return false;
}

bool CuptiTracer::Subscribe() {
  CUptiResult r;
  char holder[256] = {};
  if (api_.Subscribe_v2 != nullptr) {
    CUpti_SubscriberParams params{};
    params.structSize = CUpti_SubscriberParams_STRUCT_SIZE;
    params.subscriberName = "gtrace";
    params.oldSubscriberName = holder;
    params.oldSubscriberSize = sizeof(holder);
    r = api_.Subscribe_v2(&subscriber_, &OnCallback, nullptr, &params);
  } else {
    r = api_.Subscribe(&subscriber_, &OnCallback, nullptr);
  }
  if (r == CUPTI_SUCCESS) return true;
  subscriber_ = nullptr;
  char scratch[32];
  std::string name = api_.ResultName(r, scratch, sizeof(scratch));
  if (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
    holder[sizeof(holder) - 1] = '\0';
    return Fail(std::string("another CUPTI client already holds the subscription (") +
                (holder[0] != '\0' ? holder : "unnamed: torch.profiler, nsys, ncu, a debugger, ...") + ")");
  }
  if (r == CUPTI_ERROR_UNKNOWN || r == CUPTI_ERROR_NOT_INITIALIZED) {
    return Fail("cuptiSubscribe failed with " + name + " (no usable NVIDIA driver?)");
  }
  return Fail("cuptiSubscribe failed with " + name);
}

void CuptiTracer::SetUpClock() {
  // One clock for CUPTI, NVTX and NCCL: CUPTI asks gtrace for every timestamp. Registered once,
  // before any activity kind is enabled.
  if (api_.ActivityRegisterTimestampCallback != nullptr &&
      api_.ActivityRegisterTimestampCallback(&TimestampNs) == CUPTI_SUCCESS) {
    clock_callback_ = true;
    return;
  }
  clock_callback_ = false;
  if (StreamClockIsTicks()) {
    // CUPTI keeps its own ns clock (older drivers refuse the callback) while the stream counts
    // ticks: an offset cannot map one onto the other. The records keep CUPTI's times and the
    // stream gets measured (CUPTI, ticks) pairs, now and from the drain thread; the reader maps
    // CUPTI's times through them onto the ticks and then, as every tick, onto CLOCK_MONOTONIC.
    if (ReadCuptiClock(&first_pair_)) {
      clock_pairs_ = true;
      ReportDiagnostic(field::enums::kSeverityInfo, "cupti",
                       "CUPTI refused the timestamp callback: GPU times stay on CUPTI's clock and are converted "
                       "onto the TSC stream clock through measured clock pairs",
                       /*print=*/false);
      return;
    }
    ReportDiagnostic(field::enums::kSeverityWarning, "cupti",
                     "CUPTI refused the timestamp callback and cuptiGetTimestamp failed: GPU times are not on the "
                     "TSC stream clock (use GTRACE_CLOCK=monotonic)");
    return;
  }
  // A CLOCK_MONOTONIC stream: CUPTI's own clock, mapped by the offset measured now (tightest of a
  // few brackets).
  uint64_t best_width = UINT64_MAX;
  for (int i = 0; i < 5; ++i) {
    uint64_t a = NowNs(), c = 0;
    if (api_.GetTimestamp(&c) != CUPTI_SUCCESS) break;
    uint64_t b = NowNs();
    if (b - a < best_width) {
      best_width = b - a;
      clock_offset_ns_ = static_cast<int64_t>(c) - static_cast<int64_t>(a + (b - a) / 2);
    }
  }
}

bool CuptiTracer::ReadCuptiClock(CuptiClockReading* out) {
  if (api_.GetTimestamp == nullptr) return false;
  uint64_t best = UINT64_MAX;
  // Seven tries, as ReadClockPair (collector/clock.h): one preemption inside a bracket only widens
  // that bracket, and the tightest is kept.
  for (int i = 0; i < 7; ++i) {
    uint64_t c = 0;
    uint64_t a = StreamNow();
    if (api_.GetTimestamp(&c) != CUPTI_SUCCESS) break;
    uint64_t b = StreamNow();
    if (b >= a && b - a < best && c != 0) {
      best = b - a;
      out->cupti_ns = c;
      out->stream_ns = a + (b - a) / 2;
      out->uncertainty_ns = b - a;
    }
  }
  return best != UINT64_MAX;
}

void CuptiTracer::WriteClockPair(ChunkBuilder* chunk, const CuptiClockReading& pair) {
  namespace f = field::cupti_clock_pair;
  ProtoWriter& w = chunk->body();
  w.BeginNested(field::chunk::kCuptiClockPairs);
  w.Varint(f::kCuptiNs, pair.cupti_ns);
  w.Varint(f::kStreamClockNs, pair.stream_ns);
  w.Varint(f::kUncertaintyNs, pair.uncertainty_ns);
  w.EndNested();
}

bool CuptiTracer::Start() {
  pid_ = static_cast<uint32_t>(getpid());
  std::string warnings;
  options_ = ReadOptions(&warnings);
  if (!warnings.empty()) ReportDiagnostic(field::enums::kSeverityWarning, "cupti", warnings);
  if (const Config* c = SessionConfig()) flush_interval_ns_ = uint64_t{c->flush_interval_ms} * 1000000ull;
  last_flush_ns_ = NowNs();  // first periodic flush one interval from now

  std::string error;
  if (!LoadCupti(&api_, &error)) return Fail(error);
  // CUPTI 13 lends one buffer per record-producing thread (CUPTI_ACTIVITY_ATTR_PER_THREAD_ACTIVITY_BUFFER
  // defaults to 1, cupti_activity.h) and each keeps it until full or flushed: the pool is carved for
  // many threads (kTargetBuffers), not for a few big buffers. GTRACE_CUDA_BUFFER_MB stays the cap.
  uint64_t buffer_bytes = options_.pool_bytes / kTargetBuffers;
  if (buffer_bytes < kMinBufferBytes) buffer_bytes = kMinBufferBytes;
  if (buffer_bytes > kMaxBufferBytes) buffer_bytes = kMaxBufferBytes;
  buffer_bytes &= ~uint64_t{7};
  uint64_t count = options_.pool_bytes / buffer_bytes;
  if (count > CuptiBufferPool::kMaxBuffers) count = CuptiBufferPool::kMaxBuffers;
  if (count < 2) count = 2;
  if (!pool_.Init(buffer_bytes, static_cast<uint32_t>(count))) {
    return Fail("cannot reserve " + std::to_string(buffer_bytes * count >> 20) + " MiB for CUPTI buffers");
  }
  if (!Subscribe()) return false;
  char scratch[32];
  CUptiResult r = api_.SetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM);
  if (r != CUPTI_SUCCESS) {
    return Fail(std::string("cuptiSetThreadIdType(SYSTEM) failed with ") + api_.ResultName(r, scratch, sizeof(scratch)));
  }
  SetUpClock();
  decoder_.SetClock(clock_callback_, clock_offset_ns_);
  StartRawCapture();
  SetBufferAttributes();
  r = api_.ActivityRegisterCallbacks(&BufferRequested, &BufferCompleted);
  if (r != CUPTI_SUCCESS) {
    return Fail(std::string("cuptiActivityRegisterCallbacks failed with ") + api_.ResultName(r, scratch, sizeof(scratch)));
  }
  for (size_t i = 0; i < sizeof(kAlwaysKinds) / sizeof(kAlwaysKinds[0]); ++i) {
    r = api_.ActivityEnable(kAlwaysKinds[i]);
    if (r != CUPTI_SUCCESS) {
      for (size_t j = 0; j < i; ++j) api_.ActivityDisable(kAlwaysKinds[j]);  // leave CUPTI as we found it
      return Fail(std::string("cuptiActivityEnable(") + KindName(kAlwaysKinds[i]) + ") failed with " +
                  api_.ResultName(r, scratch, sizeof(scratch)));
    }
  }
  // Kinds switched with the capture window. Never the serialising KERNEL kind.
  for (CUpti_ActivityKind kind :
       {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMCPY2,
        CUPTI_ACTIVITY_KIND_MEMSET, CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_ACTIVITY_KIND_DRIVER,
        CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, CUPTI_ACTIVITY_KIND_CUDA_EVENT, CUPTI_ACTIVITY_KIND_OVERHEAD}) {
    window_kinds_[window_kind_count_++] = kind;
  }
  if (!options_.graph_nodes) {
    const Config* config = SessionConfig();
    if (config != nullptr && config->capture.StartsPaused()) {
      // Capture windows: GRAPH_TRACE on from now to the end, filtered per window by correlation id
      // (graph_window_filter.h says why: switching it on mid-run crashed a real GPU's application).
      r = api_.ActivityEnable(CUPTI_ACTIVITY_KIND_GRAPH_TRACE);
      if (r == CUPTI_SUCCESS) {
        graph_trace_whole_run_ = true;
        decoder_.SetGraphTraceFilter(&graph_filter_);
      } else {
        ReportDiagnostic(field::enums::kSeverityWarning, "cupti",
                         std::string("cuptiActivityEnable(GRAPH_TRACE) failed with ") +
                             api_.ResultName(r, scratch, sizeof(scratch)) + "; graph launches have no GPU times");
      }
    } else {
      window_kinds_[window_kind_count_++] = CUPTI_ACTIVITY_KIND_GRAPH_TRACE;
    }
  }
  if (options_.memory_usage) {
    window_kinds_[window_kind_count_++] = CUPTI_ACTIVITY_KIND_MEMORY2;
    window_kinds_[window_kind_count_++] = CUPTI_ACTIVITY_KIND_MEMORY_POOL;
  }
  for (const CallbackId& c : kLifetimeCallbacks) api_.EnableCallback(1, subscriber_, c.domain, c.cbid);
  if (capture::UsesCudaProfilerApi()) {
    for (const CallbackId& c : kProfilerApiCallbacks) api_.EnableCallback(1, subscriber_, c.domain, c.cbid);
  }
  RegisterRecordDecoder(kRecordCudaApi, &DecodeCudaRecord);
  RegisterEmitter(&EmitHook);
  callstack::SetUpBacktraces(&api_, subscriber_);  // --cudabacktrace; its callbacks follow the window
  static pthread_once_t once = PTHREAD_ONCE_INIT;
  pthread_once(&once, [] {
    atexit(&ExitHook);  // runs before the CUDA runtime's own exit teardown (registered earlier)
    pthread_atfork(nullptr, nullptr, &ForkChildHook);
  });
  SetState(TracerState::kActive);
  capture::SetCudaWindowHook(&ReconcileHook);
  Reconcile();
  return true;
}

void CuptiTracer::SetBufferAttributes() {
  // cupti_activity.h, CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER (default 0): "CUPTI will zero out
  // the buffer in the main thread" at every request; set to 1, "user should provide a zero value
  // buffer". The pool hands out zeroed buffers (fresh pages, or zeroed by the drain thread on Release),
  // so the application thread never pays for it. Set before the buffer callbacks are registered.
  if (api_.ActivitySetAttribute == nullptr) return;
  uint8_t on = 1;
  size_t size = sizeof(on);
  if (api_.ActivitySetAttribute(CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER, &size, &on) == CUPTI_SUCCESS) {
    pool_.set_zero_on_release(true);
  }
}

void CuptiTracer::EnableKind(CUpti_ActivityKind kind, bool on) {
  CUptiResult r = on ? api_.ActivityEnable(kind) : api_.ActivityDisable(kind);
  if (r != CUPTI_SUCCESS && on) {
    for (int i = 0; i < window_kind_count_; ++i) {
      if (window_kinds_[i] != kind || (kind_failures_ & (1u << i))) continue;
      kind_failures_ |= 1u << i;
      char scratch[32];
      ReportDiagnostic(field::enums::kSeverityWarning, "cupti",
                       std::string("cuptiActivityEnable(") + KindName(kind) + ") failed with " +
                           api_.ResultName(r, scratch, sizeof(scratch)) + "; those records are missing");
    }
  }
}

void CuptiTracer::EnableWindowCallbacks(bool on) {
  for (const CallbackId& c : kWindowCallbacks) api_.EnableCallback(on ? 1 : 0, subscriber_, c.domain, c.cbid);
  callstack::EnableBacktraceCallbacks(on);
}

void CuptiTracer::ApplyWindow(bool open) {
  if (open) {
    if (graph_trace_whole_run_) graph_filter_.NextWindow();
    for (int i = 0; i < window_kind_count_; ++i) EnableKind(window_kinds_[i], true);
    EnableWindowCallbacks(true);
  } else {
    EnableWindowCallbacks(false);
    for (int i = 0; i < window_kind_count_; ++i) EnableKind(window_kinds_[i], false);
    // Records of the window still in CUPTI's buffers: the drain thread flushes them next cycle.
    flush_requested_.store(true, std::memory_order_release);
    if (capture::CaptureFinished()) {
      for (const CallbackId& c : kProfilerApiCallbacks) api_.EnableCallback(0, subscriber_, c.domain, c.cbid);
    }
  }
}

void CuptiTracer::Reconcile() {
  while (true) {
    bool expected = false;
    if (!applying_.compare_exchange_strong(expected, true, std::memory_order_acquire)) return;  // the holder re-checks
    bool want = capture::WindowOpen() && TracerActive() && !final_requested_.load(std::memory_order_acquire);
    if (want != applied_open_ && TracerActive()) {
      ApplyWindow(want);
      applied_open_ = want;
    }
    applying_.store(false, std::memory_order_release);
    bool again = capture::WindowOpen() && TracerActive() && !final_requested_.load(std::memory_order_acquire);
    if (again == applied_open_ || !TracerActive()) return;
  }
}

void CuptiTracer::OnBufferRequested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *max_records = 0;  // as many as fit
  // CUPTI 13 asks per application thread: note its name now, in case it exits before its records
  // reach the drain thread (a CUDA-only thread has no ring that would name it).
  NoteCurrentThreadName();
  // Buffers only while tracing (or flushing at exit); otherwise CUPTI drops whatever it still makes.
  TracerState state = GetState();
  if (foreign_active_.load(std::memory_order_acquire)) {
    if (CUpti_BuffersCallbackRequestFunc req = foreign_request_.load(std::memory_order_acquire)) {
      req(buffer, size, max_records);  // the second client's block: its buffers, its records
      // gtrace promised CUPTI zeroed buffers (SetBufferAttributes) for the whole process; the client
      // never made that promise and hands over what its allocator gives (kineto: aligned_alloc). Zero
      // it here, on the requesting thread, as CUPTI itself would without the attribute.
      if (pool_.zero_on_release() && *buffer != nullptr && *size > 0) std::memset(*buffer, 0, *size);
      return;
    }
  }
  uint8_t* b = state == TracerState::kActive || state == TracerState::kStopped ? pool_.Acquire() : nullptr;
  *buffer = b;
  *size = b != nullptr ? pool_.buffer_bytes() : 0;
}

void CuptiTracer::OnBufferCompleted(uint8_t* buffer, size_t size, size_t valid_bytes, CUcontext context,
                                    uint32_t stream_id) {
  if (GetState() == TracerState::kInert) return;
  if (!pool_.Owns(buffer)) {
    // Not gtrace's: a buffer the second client lent. Its records are gtrace's gap (counted), then it
    // goes to the client that owns it.
    uint64_t kernels = 0;
    foreign_records_.fetch_add(CountRecords(buffer, valid_bytes, &kernels), std::memory_order_relaxed);
    foreign_kernels_.fetch_add(kernels, std::memory_order_relaxed);
    if (CUpti_BuffersCallbackCompleteFunc done = foreign_complete_.load(std::memory_order_acquire)) {
      done(context, stream_id, buffer, size, valid_bytes);
    }
    return;
  }
  BufferTag tag;
  tag.foreign_clock = foreign_clock_.load(std::memory_order_acquire);
  if (rawcap::CaptureOn() && valid_bytes > 0) {  // its place among the captured callbacks
    if (rawcap::CaptureWriter* w = rawcap::CaptureWriter::Instance()) {
      tag.context = reinterpret_cast<uintptr_t>(context);
      tag.stream_id = stream_id;
      tag.seq = w->NextSeq();
    }
  }
  pool_.Complete(buffer, valid_bytes, tag);
}

void CuptiTracer::StartRawCapture() {
  // Thread inside cuInit, before any callback or activity kind is enabled: the driver call below
  // (cuDriverGetVersion, resolved from the libcuda already loaded) is neither traced nor captured.
  std::string info = "format=gtrace-raw-capture\n";
  info += "pid=" + std::to_string(pid_) + "\n";
  info += "start_ns=" + std::to_string(NowNs()) + "\n";
  info += "cupti_api_version=" + std::to_string(api_.api_version) + "\n";
  info += std::string("cupti_path=") + api_.path + "\n";
  info += std::string("cupti_path_source=") + api_.path_source + "\n";
  using DriverVersionFn = int (*)(int*);
  if (auto fn = reinterpret_cast<DriverVersionFn>(dlsym(RTLD_DEFAULT, "cuDriverGetVersion")); fn != nullptr) {
    int v = 0;
    if (fn(&v) == 0) info += "driver_version=" + std::to_string(v) + "\n";
  }
  info += std::string("clock_callback=") + (clock_callback_ ? "1" : "0") + "\n";
  info += "cupti_clock_offset_ns=" + std::to_string(clock_offset_ns_) + "\n";
  info += std::string("graph_trace=") + (options_.graph_nodes ? "node" : "graph") + "\n";
  info += std::string("memory_usage=") + (options_.memory_usage ? "1" : "0") + "\n";
  info += "buffer_bytes=" + std::to_string(pool_.buffer_bytes()) + "\n";
  if (const char* v = getenv("GTRACE_CAPTURE_RANGE")) info += std::string("capture_range=") + v + "\n";
  if (const char* v = getenv("GTRACE_RAW_CAPTURE_SCENARIO")) info += std::string("scenario=") + v + "\n";
  bool requested = false;
  std::string error;
  if (!rawcap::CaptureWriter::StartFromEnv(&api_, info, &requested, &error)) {
    ReportDiagnostic(field::enums::kSeverityWarning, "cupti", "raw capture off: " + error + "; tracing goes on");
    return;
  }
  if (!requested) return;
  // Every API and resource callback CUPTI makes, for the capture's callback sequence (capture
  // mode only: it costs a callback per CUDA call).
  char scratch[32];
  for (CUpti_CallbackDomain d : {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_CB_DOMAIN_RESOURCE}) {
    CUptiResult r = api_.EnableDomain != nullptr ? api_.EnableDomain(1, subscriber_, d) : CUPTI_ERROR_NOT_SUPPORTED;
    if (r != CUPTI_SUCCESS) {
      ReportDiagnostic(field::enums::kSeverityWarning, "cupti",
                       "raw capture: cuptiEnableDomain(" + std::to_string(static_cast<int>(d)) + ") failed with " +
                           api_.ResultName(r, scratch, sizeof(scratch)) + "; that domain's callbacks are missing");
    }
  }
  PrintLine("raw capture of CUPTI input to " + rawcap::CaptureWriter::Instance()->path());
}

void CuptiTracer::OnGraphLaunch(uint32_t correlation_id, const void* graph_exec) {
  if (graph_trace_whole_run_) graph_filter_.NoteLaunch(correlation_id);
  uint32_t exec_id = 0;
  if (api_.GetGraphExecId != nullptr) {
    api_.GetGraphExecId(static_cast<CUgraphExec>(const_cast<void*>(graph_exec)), &exec_id);
  }
  WriteCudaRecord(kCudaRecordGraphLaunch, correlation_id, exec_id);
}

void CuptiTracer::OnGraphResource(uint32_t cbid, const void* data) {
  const auto* rd = static_cast<const CUpti_ResourceData*>(data);
  const auto* gd = static_cast<const CUpti_GraphData*>(rd->resourceDescriptor);
  if (gd == nullptr || api_.GetGraphId == nullptr) return;
  uint32_t graph_id = 0, other = 0;
  if (gd->graph != nullptr) api_.GetGraphId(gd->graph, &graph_id);
  if (cbid == CUPTI_CBID_RESOURCE_GRAPH_CREATED) {
    WriteCudaRecord(kCudaRecordGraphCreated, graph_id, 0);
  } else if (cbid == CUPTI_CBID_RESOURCE_GRAPH_CLONED) {
    if (gd->originalGraph != nullptr) api_.GetGraphId(gd->originalGraph, &other);
    WriteCudaRecord(kCudaRecordGraphCloned, graph_id, other);
  } else if (cbid == CUPTI_CBID_RESOURCE_GRAPHEXEC_CREATED) {
    if (gd->graphExec != nullptr && api_.GetGraphExecId != nullptr) api_.GetGraphExecId(gd->graphExec, &other);
    WriteCudaRecord(kCudaRecordGraphExecCreated, graph_id, other);
  }
}

void CuptiTracer::FlushBeforeTeardown() {
  // Slow path: the context's records must leave CUPTI before it goes away. This thread did GPU
  // work (it is tearing a context down), and no gtrace lock is held.
  if (!TracerActive() || static_cast<uint32_t>(getpid()) != pid_) return;
  api_.ActivityFlushAll(0);
}

void CuptiTracer::OnFatalError() {
  // CUPTI finalizes itself after a fatal error. Only note it here; the drain thread reports it.
  fatal_error_.store(true, std::memory_order_release);
  SetState(TracerState::kOff);
}

void CuptiTracer::WriteTraceInfo(ChunkBuilder* chunk) {
  namespace f = field::cuda_trace_info;
  ProtoWriter& w = chunk->body();
  w.BeginNested(field::chunk::kCudaTraceInfo);
  w.String(f::kCuptiPath, api_.path);
  w.Varint(f::kCuptiApiVersion, api_.api_version);
  if (options_.graph_nodes) w.Bool(f::kGraphTraceNodes, true);
  if (options_.memory_usage) w.Bool(f::kMemoryUsage, true);
  if (clock_callback_) w.Bool(f::kClockCallback, true);
  if (clock_offset_ns_ != 0) w.Int(f::kCuptiClockOffsetNs, clock_offset_ns_);
  if (clock_pairs_) w.Bool(f::kCuptiClockPairs, true);
  w.Varint(f::kBufferSizeBytes, pool_.buffer_bytes());
  w.Varint(f::kBufferCount, pool_.count());
  for (int i = 0; i < window_kind_count_; ++i) w.String(f::kActivityKinds, KindName(window_kinds_[i]));
  w.String(f::kCuptiPathSource, api_.path_source);
  w.EndNested();
  // Separate chunk: Chunk.cuda_trace_info is singular.
  chunk->End();
  chunk->Begin(0, 0, 0);
}

void CuptiTracer::ReportDrops(ChunkBuilder* chunk, uint64_t now_ns) {
  size_t dropped = 0;
  // Global queue; no gtrace lock held (kineto#1347: never under a lock).
  if (api_.ActivityGetNumDroppedRecords(nullptr, 0, &dropped) == CUPTI_SUCCESS && dropped > 0) {
    if (rawcap::CaptureWriter* w = rawcap::CaptureWriter::Instance()) w->WriteDroppedRecords(dropped);
    ProtoWriter& w = chunk->body();
    w.BeginNested(field::chunk::kDrops);
    w.Varint(field::drop_report::kSource, field::enums::kDropCupti);
    w.Varint(field::drop_report::kDroppedRecords, dropped);
    w.Varint(field::drop_report::kTsNs, now_ns);
    w.EndNested();
  }
}

void CuptiTracer::Emit(ChunkBuilder* chunk, uint64_t session_id) {
  TracerState state = GetState();
  if (state == TracerState::kInert || state == TracerState::kUninitialized || state == TracerState::kStarting) return;
  if (static_cast<uint32_t>(getpid()) != pid_) return;  // never touch CUPTI outside the process that set it up
  decoder_.BeginSession(session_id);
  if (info_session_ != session_id && (state == TracerState::kActive || state == TracerState::kStopped)) {
    WriteTraceInfo(chunk);
    info_session_ = session_id;
  }
  if (clock_pairs_ && pair_session_ != session_id && state == TracerState::kActive) {
    WriteClockPair(chunk, first_pair_);  // every stream of this process starts with the set-up pair
    pair_session_ = session_id;
    last_pair_ns_ = 0;  // and gets a fresh one below
  }
  uint64_t now = NowNs();
  bool final = false;
  bool flushed = false;
  if (state == TracerState::kActive) {
    final = final_requested_.load(std::memory_order_acquire);
    if (final) {
      // Exit: stop new records, then hand over everything, incomplete records included.
      EnableWindowCallbacks(false);
      for (int i = 0; i < window_kind_count_; ++i) EnableKind(window_kinds_[i], false);
      api_.ActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
      flushed = true;
    } else if (flush_requested_.exchange(false, std::memory_order_acq_rel) || now - last_flush_ns_ >= flush_interval_ns_) {
      api_.ActivityFlushAll(0);
      last_flush_ns_ = now;
      flushed = true;
    }
  }
  size_t valid = 0;
  BufferTag tag;
  rawcap::CaptureWriter* capture = rawcap::CaptureWriter::Instance();
  while (uint8_t* buffer = pool_.NextCompleted(&valid, &tag)) {
    if (capture != nullptr && tag.seq != 0) {  // written before decoding: exactly as CUPTI left it
      capture->WriteBuffer(buffer, valid, {tag.context, tag.stream_id, pool_.buffer_bytes(), tag.seq});
    }
    if (tag.foreign_clock) {
      // Timed on the second client's clock (TSC ticks for kineto): never read as gtrace's. Counted.
      uint64_t kernels = 0;
      foreign_clock_records_.fetch_add(CountRecords(buffer, valid, &kernels), std::memory_order_relaxed);
    } else {
      decoder_.DecodeBuffer(buffer, valid, chunk);
    }
    pool_.Release(buffer);
  }
  // Stream fields take the stream clock (ticks on a TSC stream); `now` (CLOCK_MONOTONIC) times the
  // flushes and pairs only.
  const uint64_t stream_now = StreamNow();
  if (flushed) ReportDrops(chunk, stream_now);  // once per flush: CUPTI calls stay rare on this thread
  // After the records just decoded, so that each of them lies before a pair: the last one comes
  // with the final flush. Every second otherwise (the drain thread's calibration rate, clock.h).
  if (clock_pairs_ && state == TracerState::kActive && (final || now - last_pair_ns_ >= kClockPairIntervalNs)) {
    CuptiClockReading pair;
    if (ReadCuptiClock(&pair)) WriteClockPair(chunk, pair);
    last_pair_ns_ = now;
  }
  if (capture != nullptr) {
    capture->DrainCallbacks();
    if (final) capture->Finish();  // after the last buffers and drop count of the forced flush
  }
  decoder_.EmitPending(chunk, stream_now);
  ReportForeign(now);
  uint64_t declined = pool_.declined();
  if (declined != declined_reported_) {
    if (declined_reported_ == 0) {  // one line for the user; the counts go to the stream
      PrintLine("CUPTI buffer pool exhausted: all " + std::to_string(pool_.count()) + " buffers of " +
                std::to_string(pool_.buffer_bytes() >> 10) +
                " KiB in use; CUPTI drops records until buffers come back (raise GTRACE_CUDA_BUFFER_MB)");
    }
    ReportDiagnostic(field::enums::kSeverityWarning, "cupti",
                     std::to_string(declined - declined_reported_) +
                         " CUPTI buffer requests declined (pool exhausted); CUPTI counts the records it dropped",
                     /*print=*/false);
    declined_reported_ = declined;
  }
  if (fatal_error_.exchange(false, std::memory_order_acq_rel)) {
    ReportDiagnostic(field::enums::kSeverityError, "cupti",
                     "CUPTI reported a fatal error and stopped; CUDA tracing off, NVTX and the rest keep working");
  }
  if (final) {
    SetState(TracerState::kStopped);
    final_requested_.store(false, std::memory_order_release);
  }
}

void CuptiTracer::OnProcessExit() {
  if (GetState() != TracerState::kActive || static_cast<uint32_t>(getpid()) != pid_) return;
  // The drain thread makes the final forced flush (all CUPTI flushes happen there); bounded wait.
  final_requested_.store(true, std::memory_order_release);
  RequestFlush(/*wait=*/true, 3000);
  // Whatever happened, no CUPTI call after this point: CUDA's own teardown comes next.
  SetState(TracerState::kStopped);
}

void CuptiTracer::OnForkChild() {
  rawcap::CaptureWriter::StopInChild();
  TracerState s = GetState();
  if (s == TracerState::kActive || s == TracerState::kStopped || s == TracerState::kOff) SetState(TracerState::kInert);
}

}  // namespace gt::cupti
