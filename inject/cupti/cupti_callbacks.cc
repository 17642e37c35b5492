#include "inject/cupti/cupti_callbacks.h"


#include "collector/clock.h"
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

void CUPTIAPI BufferCompleted(CUcontext context, uint32_t stream_id, uint8_t* buffer, size_t, size_t valid_size) {
  if (CuptiTracer* t = CuptiTracer::Instance()) t->OnBufferCompleted(buffer, valid_size, context, stream_id);
}

uint64_t CUPTIAPI TimestampNs() { return StreamNow(); }

}  // namespace gt::cupti
