// ProfilerApi: the CUPTI profiler functions GPU metrics use (Profiler Host API, PM sampling, range
// profiler, the target helpers), resolved with dlsym from the libcupti handle the CUDA tracer's
// loader found (inject/cupti/cupti_api.h: gtrace never links libcupti). DriverApi: the few CUDA
// driver calls the sampler makes, resolved from the libcuda already loaded in the process.
//
// Like CuptiApi, every member has the exact type of its CUDA 13.0 prototype (decltype of the
// declaration), so a changed signature fails the build. A separate table rather than more members
// of CuptiApi: the tracer's table stays as it is, and the profiler functions are optional (an older
// or trimmed libcupti without them only switches GPU metrics off).
//
// Resolve* run once, on the thread that sets GPU metrics up; afterwards the tables are read-only and
// any thread may call through them. Trivially constructible (no global constructor).
#pragma once

#include <cuda.h>
#include <cupti_activity.h>
#include <cupti_pmsampling.h>
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_target.h>

#include <cstddef>
#include <string>

namespace gt::metrics {

struct ProfilerApi {
  void* handle = nullptr;

  // Profiler Host API (works without a driver or GPU).
  decltype(&::cuptiProfilerHostInitialize) HostInitialize = nullptr;
  decltype(&::cuptiProfilerHostDeinitialize) HostDeinitialize = nullptr;
  decltype(&::cuptiProfilerHostGetSupportedChips) HostGetSupportedChips = nullptr;
  decltype(&::cuptiProfilerHostConfigAddMetrics) HostConfigAddMetrics = nullptr;
  decltype(&::cuptiProfilerHostGetConfigImageSize) HostGetConfigImageSize = nullptr;
  decltype(&::cuptiProfilerHostGetConfigImage) HostGetConfigImage = nullptr;
  decltype(&::cuptiProfilerHostGetNumOfPasses) HostGetNumOfPasses = nullptr;
  decltype(&::cuptiProfilerHostEvaluateToGpuValues) HostEvaluateToGpuValues = nullptr;
  decltype(&::cuptiProfilerHostGetMaxNumHardwareMetricsPerPass) HostGetMaxNumHardwareMetricsPerPass = nullptr;
  decltype(&::cuptiProfilerHostGetMetricProperties) HostGetMetricProperties = nullptr;

  // Target helpers (need the driver).
  decltype(&::cuptiProfilerInitialize) ProfilerInitialize = nullptr;
  decltype(&::cuptiProfilerDeInitialize) ProfilerDeInitialize = nullptr;
  decltype(&::cuptiProfilerDeviceSupported) DeviceSupported = nullptr;
  decltype(&::cuptiDeviceGetChipName) DeviceGetChipName = nullptr;
  decltype(&::cuptiProfilerGetCounterAvailability) ProfilerGetCounterAvailability = nullptr;

  // PM sampling.
  decltype(&::cuptiPmSamplingEnable) PmEnable = nullptr;
  decltype(&::cuptiPmSamplingDisable) PmDisable = nullptr;
  decltype(&::cuptiPmSamplingSetConfig) PmSetConfig = nullptr;
  decltype(&::cuptiPmSamplingStart) PmStart = nullptr;
  decltype(&::cuptiPmSamplingStop) PmStop = nullptr;
  decltype(&::cuptiPmSamplingDecodeData) PmDecodeData = nullptr;
  decltype(&::cuptiPmSamplingGetCounterAvailability) PmGetCounterAvailability = nullptr;
  decltype(&::cuptiPmSamplingGetCounterDataSize) PmGetCounterDataSize = nullptr;
  decltype(&::cuptiPmSamplingCounterDataImageInitialize) PmCounterDataImageInitialize = nullptr;
  decltype(&::cuptiPmSamplingGetCounterDataInfo) PmGetCounterDataInfo = nullptr;
  decltype(&::cuptiPmSamplingCounterDataGetSampleInfo) PmGetSampleInfo = nullptr;

  // Range profiler.
  decltype(&::cuptiRangeProfilerEnable) RangeEnable = nullptr;
  decltype(&::cuptiRangeProfilerDisable) RangeDisable = nullptr;
  decltype(&::cuptiRangeProfilerSetConfig) RangeSetConfig = nullptr;
  decltype(&::cuptiRangeProfilerStart) RangeStart = nullptr;
  decltype(&::cuptiRangeProfilerStop) RangeStop = nullptr;
  decltype(&::cuptiRangeProfilerPushRange) RangePushRange = nullptr;
  decltype(&::cuptiRangeProfilerPopRange) RangePopRange = nullptr;
  decltype(&::cuptiRangeProfilerDecodeData) RangeDecodeData = nullptr;
  decltype(&::cuptiRangeProfilerGetCounterDataSize) RangeGetCounterDataSize = nullptr;
  decltype(&::cuptiRangeProfilerCounterDataImageInitialize) RangeCounterDataImageInitialize = nullptr;
  decltype(&::cuptiRangeProfilerGetCounterDataInfo) RangeGetCounterDataInfo = nullptr;
  decltype(&::cuptiRangeProfilerCounterDataGetRangeInfo) RangeGetRangeInfo = nullptr;

  // Shared with the tracer's table, resolved here too so the sampler needs only this one.
  decltype(&::cuptiGetResultString) GetResultString = nullptr;
  decltype(&::cuptiGetTimestamp) GetTimestamp = nullptr;
  decltype(&::cuptiGetContextId) GetContextId = nullptr;

  bool host_ok = false;   // every Host API member resolved
  bool pm_ok = false;     // host + target + PM sampling
  bool range_ok = false;  // host + target + range profiler

  // "CUPTI_ERROR_INSUFFICIENT_PRIVILEGES" (falls back to "CUPTI error 35").
  std::string ResultName(CUptiResult result) const;
};

// Resolves every member from `handle` (a dlopen'ed libcupti). Never fails as a whole: the *_ok flags
// say what is usable; `missing` names the first missing function of the PM-sampling group ("" when
// none is missing).
void ResolveProfilerApi(void* handle, ProfilerApi* api, std::string* missing);

struct DriverApi {
  decltype(&::cuDeviceGetCount) DeviceGetCount = nullptr;
  decltype(&::cuDeviceGet) DeviceGet = nullptr;
  decltype(&::cuDeviceGetName) DeviceGetName = nullptr;
  decltype(&::cuDeviceGetUuid) DeviceGetUuid = nullptr;
  decltype(&::cuDeviceGetPCIBusId) DeviceGetPCIBusId = nullptr;
  decltype(&::cuDevicePrimaryCtxGetState) DevicePrimaryCtxGetState = nullptr;
  decltype(&::cuCtxGetCurrent) CtxGetCurrent = nullptr;
  decltype(&::cuCtxGetDevice) CtxGetDevice = nullptr;
  // Optional (range profiler, kernel mode).
  decltype(&::cuDevicePrimaryCtxRetain) DevicePrimaryCtxRetain = nullptr;
  decltype(&::cuDevicePrimaryCtxRelease) DevicePrimaryCtxRelease = nullptr;
  bool ok = false;
};

// The driver the process already loaded (libcuda.so.1, RTLD_NOLOAD: gtrace never loads a driver
// itself); then the global scope (a test program that links the fake driver). False with `error`.
bool ResolveDriverApi(DriverApi* api, std::string* error);

}  // namespace gt::metrics
