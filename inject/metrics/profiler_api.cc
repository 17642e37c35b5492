// Resolving the CUPTI profiler functions and the driver calls of GPU metrics (slow path, once).
#include "inject/metrics/profiler_api.h"

#include <dlfcn.h>

#include <cstdio>

namespace gt::metrics {
namespace {

// The symbol a prototype name stands for after cuda.h's versioning macros (cuDeviceGetUuid ->
// cuDeviceGetUuid_v2).
#define GT_SYMBOL_TEXT(x) #x
#define GT_SYMBOL(x) GT_SYMBOL_TEXT(x)

template <typename Fn>
bool Resolve(void* handle, const char* name, Fn* out) {
  *out = reinterpret_cast<Fn>(dlsym(handle, name));
  return *out != nullptr;
}

}  // namespace

std::string ProfilerApi::ResultName(CUptiResult result) const {
  const char* text = nullptr;
  if (GetResultString != nullptr && GetResultString(result, &text) == CUPTI_SUCCESS && text != nullptr)
    return text;
  char buf[32];
  snprintf(buf, sizeof(buf), "CUPTI error %d", static_cast<int>(result));
  return buf;
}

void ResolveProfilerApi(void* h, ProfilerApi* api, std::string* missing) {
  *api = ProfilerApi();
  api->handle = h;
  missing->clear();
  bool host = true, target = true, pm = true, range = true;
  auto need = [&](bool* group, const char* name, auto* fn) {
    if (!Resolve(h, name, fn)) {
      if (missing->empty() && group != &range)
        *missing = name;
      *group = false;
    }
  };
  need(&host, "cuptiProfilerHostInitialize", &api->HostInitialize);
  need(&host, "cuptiProfilerHostDeinitialize", &api->HostDeinitialize);
  need(&host, "cuptiProfilerHostGetSupportedChips", &api->HostGetSupportedChips);
  need(&host, "cuptiProfilerHostConfigAddMetrics", &api->HostConfigAddMetrics);
  need(&host, "cuptiProfilerHostGetConfigImageSize", &api->HostGetConfigImageSize);
  need(&host, "cuptiProfilerHostGetConfigImage", &api->HostGetConfigImage);
  need(&host, "cuptiProfilerHostGetNumOfPasses", &api->HostGetNumOfPasses);
  need(&host, "cuptiProfilerHostEvaluateToGpuValues", &api->HostEvaluateToGpuValues);
  Resolve(h, "cuptiProfilerHostGetMaxNumHardwareMetricsPerPass", &api->HostGetMaxNumHardwareMetricsPerPass);
  Resolve(h, "cuptiProfilerHostGetMetricProperties", &api->HostGetMetricProperties);
  need(&target, "cuptiProfilerInitialize", &api->ProfilerInitialize);
  need(&target, "cuptiProfilerDeInitialize", &api->ProfilerDeInitialize);
  need(&target, "cuptiProfilerDeviceSupported", &api->DeviceSupported);
  need(&target, "cuptiDeviceGetChipName", &api->DeviceGetChipName);
  need(&pm, "cuptiPmSamplingEnable", &api->PmEnable);
  need(&pm, "cuptiPmSamplingDisable", &api->PmDisable);
  need(&pm, "cuptiPmSamplingSetConfig", &api->PmSetConfig);
  need(&pm, "cuptiPmSamplingStart", &api->PmStart);
  need(&pm, "cuptiPmSamplingStop", &api->PmStop);
  need(&pm, "cuptiPmSamplingDecodeData", &api->PmDecodeData);
  need(&pm, "cuptiPmSamplingGetCounterAvailability", &api->PmGetCounterAvailability);
  need(&pm, "cuptiPmSamplingGetCounterDataSize", &api->PmGetCounterDataSize);
  need(&pm, "cuptiPmSamplingCounterDataImageInitialize", &api->PmCounterDataImageInitialize);
  need(&pm, "cuptiPmSamplingGetCounterDataInfo", &api->PmGetCounterDataInfo);
  need(&pm, "cuptiPmSamplingCounterDataGetSampleInfo", &api->PmGetSampleInfo);
  need(&pm, "cuptiGetTimestamp", &api->GetTimestamp);
  need(&range, "cuptiProfilerGetCounterAvailability", &api->ProfilerGetCounterAvailability);
  need(&range, "cuptiRangeProfilerEnable", &api->RangeEnable);
  need(&range, "cuptiRangeProfilerDisable", &api->RangeDisable);
  need(&range, "cuptiRangeProfilerSetConfig", &api->RangeSetConfig);
  need(&range, "cuptiRangeProfilerStart", &api->RangeStart);
  need(&range, "cuptiRangeProfilerStop", &api->RangeStop);
  need(&range, "cuptiRangeProfilerPushRange", &api->RangePushRange);
  need(&range, "cuptiRangeProfilerPopRange", &api->RangePopRange);
  need(&range, "cuptiRangeProfilerDecodeData", &api->RangeDecodeData);
  need(&range, "cuptiRangeProfilerGetCounterDataSize", &api->RangeGetCounterDataSize);
  need(&range, "cuptiRangeProfilerCounterDataImageInitialize", &api->RangeCounterDataImageInitialize);
  need(&range, "cuptiRangeProfilerGetCounterDataInfo", &api->RangeGetCounterDataInfo);
  need(&range, "cuptiRangeProfilerCounterDataGetRangeInfo", &api->RangeGetRangeInfo);
  need(&range, "cuptiGetContextId", &api->GetContextId);
  Resolve(h, "cuptiGetResultString", &api->GetResultString);
  api->host_ok = host;
  api->pm_ok = host && target && pm;
  api->range_ok = host && target && range && api->GetTimestamp != nullptr;
}

bool ResolveDriverApi(DriverApi* api, std::string* error) {
  *api = DriverApi();
  void* h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD | RTLD_LOCAL);
  if (h == nullptr)
    h = RTLD_DEFAULT;  // the fake driver of the tests, linked into the program
  bool ok = Resolve(h, GT_SYMBOL(cuDeviceGetCount), &api->DeviceGetCount) &&
            Resolve(h, GT_SYMBOL(cuDeviceGet), &api->DeviceGet) &&
            Resolve(h, GT_SYMBOL(cuDeviceGetName), &api->DeviceGetName) &&
            Resolve(h, GT_SYMBOL(cuDeviceGetUuid), &api->DeviceGetUuid) &&
            Resolve(h, GT_SYMBOL(cuDeviceGetPCIBusId), &api->DeviceGetPCIBusId) &&
            Resolve(h, GT_SYMBOL(cuDevicePrimaryCtxGetState), &api->DevicePrimaryCtxGetState) &&
            Resolve(h, GT_SYMBOL(cuCtxGetCurrent), &api->CtxGetCurrent) &&
            Resolve(h, GT_SYMBOL(cuCtxGetDevice), &api->CtxGetDevice);
  if (!ok) {
    *api = DriverApi();
    *error = "the CUDA driver (libcuda.so.1) is not loaded in this process or lacks a device query";
    return false;
  }
  Resolve(h, GT_SYMBOL(cuDevicePrimaryCtxRetain), &api->DevicePrimaryCtxRetain);
  Resolve(h, GT_SYMBOL(cuDevicePrimaryCtxRelease), &api->DevicePrimaryCtxRelease);
  api->ok = true;
  return true;
}

}  // namespace gt::metrics
