// The functions CUPTI calls: the subscriber callback, the activity-buffer callbacks and the
// timestamp callback; and the callback ids gtrace enables.
//
// Threads: any application thread (inside CUDA API calls), CUPTI's worker thread, or the thread
// calling cuptiActivityFlushAll. Hot path rules apply: the subscriber callback's first statement is
// one relaxed load of the enabled mask; the hot branches then write one fixed-size ring record;
// no locks, allocation, syscalls, logging or protobuf. Rare branches (profiler start/stop, context
// teardown, CUPTI fatal errors) are slow paths, noted where they are.
#pragma once

#include <cupti.h>

#include <cstdint>

namespace gt::cupti {

void CUPTIAPI OnCallback(void* userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* data);
void CUPTIAPI BufferRequested(uint8_t** buffer, size_t* size, size_t* max_records);
void CUPTIAPI BufferCompleted(CUcontext context, uint32_t stream_id, uint8_t* buffer, size_t size, size_t valid_size);
uint64_t CUPTIAPI TimestampNs();

struct CallbackId {
  CUpti_CallbackDomain domain;
  CUpti_CallbackId cbid;
};

// Enabled while a capture window is open (graph launches carry the exec id CUPTI's GRAPH_TRACE
// record lacks; graph creation feeds CUDA_GRAPH_EVENTS).
inline constexpr CallbackId kWindowCallbacks[] = {
    {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000},
    {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_ptsz_v10000},
    {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch},
    {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz},
    {CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_GRAPH_CREATED},
    {CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_GRAPH_CLONED},
    {CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_GRAPHEXEC_CREATED},
};
// Enabled for --capture-range=cudaProfilerApi until capture has finished.
inline constexpr CallbackId kProfilerApiCallbacks[] = {
    {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStart_v4000},
    {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStop_v4000},
    {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuProfilerStart},
    {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuProfilerStop},
};
// Always enabled while tracing (rare calls): flush before a context goes away; CUPTI fatal errors.
inline constexpr CallbackId kLifetimeCallbacks[] = {
    {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaDeviceReset_v3020},
    {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuCtxDestroy_v2},
    {CUPTI_CB_DOMAIN_STATE, CUPTI_CBID_STATE_FATAL_ERROR},
};

}  // namespace gt::cupti
