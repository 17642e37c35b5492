#include "inject/cupti/cupti_callbacks.h"

#include <dlfcn.h>

#include <string>

#include "collector/clock.h"
#include "collector/schema_fields.h"
#include "collector/session.h"
#include "inject/callstack/stack_capture.h"
#include "inject/cupti/capture_window.h"
#include "inject/cupti/cuda_record.h"
#include "inject/cupti/cupti_tracer.h"
#include "inject/rawcap/capture_writer.h"

namespace gt::cupti {

void CUPTIAPI OnCallback(void*, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* data) {
  // Raw capture (GTRACE_RAW_CAPTURE_DIR, off by default): one relaxed load when off; when on, one
  // fixed-size record into the capture's bounded log (inject/rawcap/capture_writer.h).
  if (rawcap::CaptureOn()) [[unlikely]] {
    if (rawcap::CaptureWriter* w = rawcap::CaptureWriter::Instance()) w->RecordCallback(domain, cbid, data);
  }
  const bool recording = IsEnabled(kSourceCuda);  // the one relaxed load of the hot path
  if (data == nullptr) return;
  switch (domain) {
    case CUPTI_CB_DOMAIN_RUNTIME_API:
    case CUPTI_CB_DOMAIN_DRIVER_API: {
      const auto* cb = static_cast<const CUpti_CallbackData*>(data);
      const bool runtime = domain == CUPTI_CB_DOMAIN_RUNTIME_API;
      // --cudabacktrace (inject/callstack/): stack at entry, kept at exit if the call was slow.
      if (recording && TracerActive()) callstack::OnApiCallback(runtime, cbid, cb);
      // Hot: graph launches (exit site), only while recording.
      const void* exec = nullptr;
      if (runtime && (cbid == CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000 ||
                      cbid == CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_ptsz_v10000)) {
        if (!recording || cb->callbackSite != CUPTI_API_EXIT || cb->functionParams == nullptr) return;
        // Both parameter structs start with the cudaGraphExec_t.
        exec = static_cast<const cudaGraphLaunch_v10000_params*>(cb->functionParams)->graphExec;
      } else if (!runtime && (cbid == CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch ||
                              cbid == CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz)) {
        if (!recording || cb->callbackSite != CUPTI_API_EXIT || cb->functionParams == nullptr) return;
        exec = static_cast<const cuGraphLaunch_params*>(cb->functionParams)->hGraph;
      }
      if (exec != nullptr) {
        if (!TracerActive()) return;
        if (CuptiTracer* t = CuptiTracer::Instance()) t->OnGraphLaunch(cb->correlationId, exec);
        return;
      }
      // Slow paths from here on (rare calls).
      bool start = runtime ? cbid == CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStart_v4000
                           : cbid == CUPTI_DRIVER_TRACE_CBID_cuProfilerStart;
      bool stop = runtime ? cbid == CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStop_v4000
                          : cbid == CUPTI_DRIVER_TRACE_CBID_cuProfilerStop;
      if (!TracerActive()) return;
      if (start && cb->callbackSite == CUPTI_API_EXIT) {
        capture::OnCudaProfilerStart();  // takes the window mutex; CUPTI calls happen after it is released
      } else if (stop && cb->callbackSite == CUPTI_API_ENTER) {
        capture::OnCudaProfilerStop();
      } else if (cb->callbackSite == CUPTI_API_ENTER &&
                 ((runtime && cbid == CUPTI_RUNTIME_TRACE_CBID_cudaDeviceReset_v3020) ||
                  (!runtime && cbid == CUPTI_DRIVER_TRACE_CBID_cuCtxDestroy_v2))) {
        if (CuptiTracer* t = CuptiTracer::Instance()) t->FlushBeforeTeardown();
      }
      return;
    }
    case CUPTI_CB_DOMAIN_RESOURCE:
      // Graph creation: hot-path rules (one ring record), only while recording.
      if (!recording || !TracerActive()) return;
      if (cbid == CUPTI_CBID_RESOURCE_GRAPH_CREATED || cbid == CUPTI_CBID_RESOURCE_GRAPH_CLONED ||
          cbid == CUPTI_CBID_RESOURCE_GRAPHEXEC_CREATED) {
        if (CuptiTracer* t = CuptiTracer::Instance()) t->OnGraphResource(cbid, data);
      }
      return;
    case CUPTI_CB_DOMAIN_STATE:
      if (cbid == CUPTI_CBID_STATE_FATAL_ERROR) {
        if (CuptiTracer* t = CuptiTracer::Instance()) t->OnFatalError();
      }
      return;
    default:
      return;
  }
}

void CUPTIAPI BufferRequested(uint8_t** buffer, size_t* size, size_t* max_records) {
  CuptiTracer* t = CuptiTracer::Instance();
  if (t == nullptr) {
    *buffer = nullptr;
    *size = 0;
    *max_records = 0;
    return;
  }
  t->OnBufferRequested(buffer, size, max_records);
}

void CUPTIAPI BufferCompleted(CUcontext context, uint32_t stream_id, uint8_t* buffer, size_t size, size_t valid_size) {
  if (CuptiTracer* t = CuptiTracer::Instance()) t->OnBufferCompleted(buffer, size, valid_size, context, stream_id);
}

uint64_t CUPTIAPI TimestampNs() { return StreamNow(); }

}  // namespace gt::cupti

// --- A second CUPTI client in the process (issue 29) -------------------------------------------------
// CUPTI's activity API is process-wide and outside the one-subscriber rule: one pair of buffer
// callbacks (cupti_activity.h 7649-7668), one timestamp callback (8136-8150), one set of enabled kinds
// (cuptiActivityDisable has no subscriber argument, 7464-7477). kineto (torch.profiler) registers its
// own callbacks and TSC clock when a profiler block starts and disables kernels, copies, memsets,
// runtime, driver, sync and overhead when it stops (libkineto CuptiActivityApi.cpp). Preloaded,
// libgtrace.so's definitions of those names come first for a client that calls libcupti by name:
// gtrace keeps CUPTI's registration and serves the client through it (its buffers, its records),
// keeps its own kinds on, and takes its clock back once the client has flushed. gtrace's own calls go
// through CuptiApi (dlsym on libcupti's handle) and never reach these.

namespace gt::cupti {

bool CuptiTracer::OnForeignRegisterCallbacks(CUpti_BuffersCallbackRequestFunc request,
                                             CUpti_BuffersCallbackCompleteFunc complete, CUptiResult* result) {
  if (!TracerActive() || request == &BufferRequested) return false;
  if (request == nullptr || complete == nullptr) {
    *result = CUPTI_ERROR_INVALID_PARAMETER;
    return true;
  }
  foreign_request_.store(request, std::memory_order_release);
  foreign_complete_.store(complete, std::memory_order_release);
  TakeOverFromForeign();
  *result = CUPTI_SUCCESS;
  return true;
}

bool CuptiTracer::OnForeignTimestampCallback(CUpti_TimestampCallbackFunc func, CUptiResult* result) {
  if (!TracerActive() || func == &TimestampNs || func == nullptr) return false;
  TakeOverFromForeign();  // gtrace's records so far leave CUPTI on gtrace's clock first
  foreign_clock_.store(true, std::memory_order_release);
  *result = api_.ActivityRegisterTimestampCallback != nullptr ? api_.ActivityRegisterTimestampCallback(func)
                                                              : CUPTI_ERROR_NOT_SUPPORTED;
  return true;
}

bool CuptiTracer::OnForeignDisable(CUpti_ActivityKind kind, CUptiResult* result) {
  if (!TracerActive()) return false;
  if (foreign_active_.load(std::memory_order_acquire) || foreign_clock_.load(std::memory_order_acquire)) {
    foreign_release_pending_.store(true, std::memory_order_release);  // the client is stopping
  }
  if (!capture::WindowOpen() || final_requested_.load(std::memory_order_acquire)) return false;
  for (int i = 0; i < window_kind_count_; ++i) {
    if (window_kinds_[i] == kind) {
      *result = CUPTI_SUCCESS;  // gtrace still records this kind: it stays on for gtrace
      return true;
    }
  }
  return false;
}

void CuptiTracer::AfterForeignFlush() {
  // kineto stops by disabling its kinds, then flushing: its last records have left CUPTI on its clock.
  if (foreign_release_pending_.load(std::memory_order_acquire)) ReleaseForeign();
}

void CuptiTracer::TakeOverFromForeign() {
  bool expected = false;
  if (foreign_active_.load(std::memory_order_acquire) || !foreign_taking_.compare_exchange_strong(expected, true)) {
    return;
  }
  foreign_since_ns_.store(StreamNow(), std::memory_order_relaxed);
  foreign_blocks_.fetch_add(1, std::memory_order_relaxed);
  foreign_active_.store(true, std::memory_order_release);  // new buffers: the client's
  // gtrace's lent buffers come back now, before the client's clock is in force (drain thread, bounded).
  flush_requested_.store(true, std::memory_order_release);
  RequestFlush(/*wait=*/true, 1000);
  foreign_taking_.store(false, std::memory_order_release);
}

void CuptiTracer::ReleaseForeign() {
  bool expected = true;
  if (!foreign_release_pending_.compare_exchange_strong(expected, false)) return;
  if (foreign_clock_.load(std::memory_order_acquire) && clock_callback_) {
    api_.ActivityRegisterTimestampCallback(&TimestampNs);  // no gtrace lock held
  }
  foreign_clock_.store(false, std::memory_order_release);
  foreign_active_.store(false, std::memory_order_release);
  foreign_until_ns_.store(StreamNow(), std::memory_order_relaxed);
}

uint64_t CuptiTracer::CountRecords(uint8_t* buffer, size_t valid_bytes, uint64_t* kernels) {
  uint64_t n = 0;
  CUpti_Activity* r = nullptr;
  while (api_.ActivityGetNextRecord(buffer, valid_bytes, &r) == CUPTI_SUCCESS) {
    ++n;
    if (r->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL || r->kind == CUPTI_ACTIVITY_KIND_KERNEL) ++*kernels;
  }
  return n;
}

void CuptiTracer::ReportForeign(uint64_t now_ns) {
  if (foreign_release_pending_.load(std::memory_order_acquire)) {
    // A client that disabled its kinds but never flushed: take the clock back one flush interval later.
    if (foreign_release_seen_ns_ == 0) foreign_release_seen_ns_ = now_ns;
    if (now_ns - foreign_release_seen_ns_ >= flush_interval_ns_) ReleaseForeign();
  }
  if (foreign_release_pending_.load(std::memory_order_acquire)) return;
  foreign_release_seen_ns_ = 0;
  uint32_t blocks = foreign_blocks_.load(std::memory_order_relaxed);
  if (blocks == foreign_reported_blocks_ || foreign_active_.load(std::memory_order_acquire)) return;
  uint64_t since = foreign_since_ns_.load(std::memory_order_relaxed);
  uint64_t until = foreign_until_ns_.load(std::memory_order_relaxed);
  std::string what = "a second CUPTI client in this process (torch.profiler/kineto?) owned CUPTI's activity API "
                     "from stream time " + std::to_string(since) + " to " + std::to_string(until) + ": " +
                     std::to_string(foreign_records_.load()) + " GPU/API records (" +
                     std::to_string(foreign_kernels_.load()) + " kernels) went to it and are missing here, " +
                     std::to_string(foreign_clock_records_.load()) +
                     " timed on its clock were left out; gtrace's CUDA tracing resumed after it";
  if (foreign_reported_blocks_ == 0) PrintLine(what);  // one line for the user; every block in the stream
  ReportDiagnostic(field::enums::kSeverityWarning, "cupti", what, /*print=*/false);
  foreign_reported_blocks_ = blocks;
}

}  // namespace gt::cupti

// The interposed names (exported: inject/gtrace.map). Until gtrace's tracer is active, and for calls
// it does not handle, they forward to the CUPTI that defines them next.
namespace {
template <typename Fn>
Fn NextCupti(const char* name, Fn gtrace_table) {
  if (gtrace_table != nullptr) return gtrace_table;
  return reinterpret_cast<Fn>(dlsym(RTLD_NEXT, name));
}
}  // namespace

extern "C" {

__attribute__((visibility("default"))) CUptiResult CUPTIAPI cuptiActivityRegisterCallbacks(
    CUpti_BuffersCallbackRequestFunc request, CUpti_BuffersCallbackCompleteFunc complete) {
  gt::cupti::CuptiTracer* t = gt::cupti::CuptiTracer::Instance();
  CUptiResult r = CUPTI_SUCCESS;
  if (t != nullptr && t->OnForeignRegisterCallbacks(request, complete, &r)) return r;
  auto fn = NextCupti("cuptiActivityRegisterCallbacks", t != nullptr ? t->api().ActivityRegisterCallbacks : nullptr);
  return fn != nullptr ? fn(request, complete) : CUPTI_ERROR_NOT_INITIALIZED;
}

__attribute__((visibility("default"))) CUptiResult CUPTIAPI
cuptiActivityRegisterTimestampCallback(CUpti_TimestampCallbackFunc func) {
  gt::cupti::CuptiTracer* t = gt::cupti::CuptiTracer::Instance();
  CUptiResult r = CUPTI_SUCCESS;
  if (t != nullptr && t->OnForeignTimestampCallback(func, &r)) return r;
  auto fn = NextCupti("cuptiActivityRegisterTimestampCallback",
                      t != nullptr ? t->api().ActivityRegisterTimestampCallback : nullptr);
  return fn != nullptr ? fn(func) : CUPTI_ERROR_NOT_INITIALIZED;
}

__attribute__((visibility("default"))) CUptiResult CUPTIAPI cuptiActivityDisable(CUpti_ActivityKind kind) {
  gt::cupti::CuptiTracer* t = gt::cupti::CuptiTracer::Instance();
  CUptiResult r = CUPTI_SUCCESS;
  if (t != nullptr && t->OnForeignDisable(kind, &r)) return r;
  auto fn = NextCupti("cuptiActivityDisable", t != nullptr ? t->api().ActivityDisable : nullptr);
  return fn != nullptr ? fn(kind) : CUPTI_ERROR_NOT_INITIALIZED;
}

__attribute__((visibility("default"))) CUptiResult CUPTIAPI cuptiActivityFlushAll(uint32_t flag) {
  gt::cupti::CuptiTracer* t = gt::cupti::CuptiTracer::Instance();
  auto fn = NextCupti("cuptiActivityFlushAll", t != nullptr ? t->api().ActivityFlushAll : nullptr);
  CUptiResult r = fn != nullptr ? fn(flag) : CUPTI_ERROR_NOT_INITIALIZED;
  if (t != nullptr) t->AfterForeignFlush();
  return r;
}

}  // extern "C"
