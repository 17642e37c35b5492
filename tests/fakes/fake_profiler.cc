// The CUPTI profiler functions of the fake CUPTI (Profiler Host API, PM sampling, range profiler,
// target helpers) and the few CUDA driver queries gtrace's GPU metrics make. A TEST DOUBLE on the
// real CUDA 13.0 headers (each definition must match its declaration, or this file does not
// compile). Its model, which proves gtrace's logic and nothing about CUPTI or a GPU:
//  - chip FAKE_CUPTI_CHIP (default "FAKE100"); the host API accepts every metric name except those
//    in FAKE_CUPTI_REJECT_METRICS (comma list); a set needs one pass unless it contains a name in
//    FAKE_CUPTI_MULTIPASS_METRICS (then 2); a refused cuptiProfilerHostConfigAddMetrics poisons its
//    host object (later calls on it return CUPTI_ERROR_UNKNOWN), as the real one does;
//  - config image = the metric names; counter data images hold samples/ranges with one double per
//    configured metric; EvaluateToGpuValues reads them back by name;
//  - PM sampling: a test program records samples (fake_PmSample) into the "hardware buffer" of a
//    started device; cuptiPmSamplingDecodeData moves them into the image (COUNTER_DATA_FULL when
//    it fills up); results of Enable / GetCounterAvailability / Start can be forced with
//    FAKE_CUPTI_PM_ENABLE_RESULT / FAKE_CUPTI_PM_AVAILABILITY_RESULT / FAKE_CUPTI_PM_START_RESULT;
//  - range profiler: user ranges (push/pop) and auto ranges (one per fake_Kernel while started),
//    each with the values set by fake_RangeSetValues; FAKE_CUPTI_RANGE_ENABLE_RESULT forces Enable.
//    Auto ranges as a real H200 gave them (31-metrics-cost kernel mode, 2026-11-26): named by a
//    count per profiler object that goes on across passes, and the kernels they profiled delivered
//    as activity records without timestamps (fake_Kernel);
//  - host library lifetime, as the real one's (replaying the H200 range-profiler capture,
//    2026-11-26: libcupti's objects made when it was loaded were freed by exit handlers while
//    gtrace's metrics thread was still selecting metrics -> SIGSEGV in libnvperf_host): the first
//    host-API call registers an exit handler that "destroys" the host library; a host call after
//    it prints "fake-cupti: VIOLATION ... after CUPTI's host library was destroyed" and fails.
//    FAKE_CUPTI_HOST_DELAY_MS slows each cuptiProfilerHostConfigAddMetrics (the real one takes
//    milliseconds), so a test can exit while a selection runs;
//  - driver: FAKE_CUDA_DEVICE_COUNT devices (default 1) answering only after fake_cuInit returned;
//    a context made by fake_ContextCreate is current on its thread and makes its device's
//    primary context "active". FAKE_CUDA_UUID_TAG (hex) sets bytes 12-14 of every UUID.
#include <cuda.h>
#include <cupti.h>
#include <cupti_pmsampling.h>
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_target.h>
#include <dlfcn.h>

#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "tests/fakes/fake_cuda.h"
#include "tests/fakes/fake_metrics_replay.h"
#include "tests/fakes/fake_state.h"

struct CUpti_Profiler_Host_Object {
  CUpti_ProfilerType type;
  std::string chip;
  std::vector<std::string> names;
  bool poisoned = false;
};
struct CUpti_PmSampling_Object {
  uint32_t device = 0;
  std::vector<std::string> names;
  bool started = false;
  uint64_t interval = 0;
  int trigger = 0;
  std::vector<std::vector<double>> hw;  // pending samples: start, end, values...
  bool overflow_next = false;
};
struct CUpti_RangeProfiler_Object {
  CUcontext ctx = nullptr;
  std::vector<std::string> names;
  CUpti_ProfilerRange range = CUPTI_Range_INVALID;
  bool started = false;
  uint8_t* image = nullptr;
  size_t image_size = 0;
  std::vector<std::string> stack;
  std::vector<std::pair<std::string, std::vector<double>>> pass;  // ranges of the current pass
  uint32_t auto_index = 0;
  size_t max_ranges = 0;
  uint64_t dropped = 0;
};

namespace {

constexpr uint32_t kPmMagic = 0x50434d44, kRangeMagic = 0x52434d44;
constexpr size_t kRangeNameBytes = 64;

struct ImageHeader {
  uint32_t magic;
  uint32_t capacity;
  uint32_t metrics;
  uint32_t count;
};

struct ProfState {
  std::mutex mu;
  std::map<uint32_t, CUpti_PmSampling_Object*> pm;  // device -> enabled object
  std::vector<CUpti_RangeProfiler_Object*> ranges;
  std::map<std::string, double> range_values;
  std::map<uint32_t, CUcontext> primary;  // device -> first context made on it
  std::map<CUcontext, uint32_t> context_device;
  bool initialized = false;
  bool profiler_initialized = false;  // cuptiProfilerInitialize was called (Enable needs it, as in CUPTI)
};
ProfState& P() {
  static ProfState* p = new ProfState();
  return *p;
}
thread_local CUcontext t_current = nullptr;

std::vector<std::string> Split(const char* text, char sep) {
  std::vector<std::string> out;
  if (text == nullptr)
    return out;
  std::string cur;
  for (const char* p = text;; ++p) {
    if (*p == sep || *p == '\0') {
      if (!cur.empty())
        out.push_back(cur);
      cur.clear();
      if (*p == '\0')
        break;
    } else {
      cur += *p;
    }
  }
  return out;
}

bool Listed(const char* env, const std::string& name) {
  for (const std::string& n : Split(getenv(env), ',')) {
    if (n == name)
      return true;
  }
  return false;
}

CUptiResult Forced(const char* env) {
  const char* v = getenv(env);
  return v != nullptr && atoi(v) != 0 ? static_cast<CUptiResult>(atoi(v)) : CUPTI_SUCCESS;
}

std::string Chip() {
  if (const char* replayed = fake::ReplayChip())
    return replayed;
  const char* c = getenv("FAKE_CUPTI_CHIP");
  return c != nullptr && *c != '\0' ? c : "FAKE100";
}

uint32_t DeviceCount() {
  const char* c = getenv("FAKE_CUDA_DEVICE_COUNT");
  return c != nullptr ? static_cast<uint32_t>(atoi(c)) : 1;
}

// "name=value;name=value" -> values in `names` order (missing names: 0).
std::vector<double> ParseSpec(const char* spec, const std::vector<std::string>& names) {
  std::vector<double> values(names.size(), 0.0);
  for (const std::string& item : Split(spec, ';')) {
    size_t eq = item.find('=');
    if (eq == std::string::npos)
      continue;
    std::string key = item.substr(0, eq);
    double v = strtod(item.c_str() + eq + 1, nullptr);
    for (size_t i = 0; i < names.size(); ++i) {
      if (names[i] == key)
        values[i] = v;
    }
  }
  return values;
}

std::vector<std::string> NamesOf(const uint8_t* config, size_t size) {
  std::string text(reinterpret_cast<const char*>(config), size);
  std::vector<std::string> names;
  for (const std::string& n : Split(text.c_str(), '\n')) {
    if (n != "FKCFG")
      names.push_back(n);
  }
  return names;
}

size_t PmRecordBytes(uint32_t metrics) {
  return 16 + 8 * metrics;
}
size_t RangeRecordBytes(uint32_t metrics) {
  return kRangeNameBytes + 8 * metrics;
}

template <typename P>
bool Sized(const P* p) {
  return p != nullptr && p->structSize != 0;
}

}  // namespace

namespace fake {
void FakeUuid(uint32_t device, unsigned char out[16]) {
  const unsigned char base[16] = {0xb1, 0x5c, 0x2a, 0x57, 0x42, 0xed, 0x1d, 0x24,
                                  0x2c, 0x84, 0x06, 0x70, 0x81, 0x69, 0x86, 0x40};
  std::memcpy(out, base, 16);
  if (const char* tag = getenv("FAKE_CUDA_UUID_TAG"); tag != nullptr && *tag != '\0') {
    unsigned long t = strtoul(tag, nullptr, 16) & 0xffffff;
    out[12] = static_cast<unsigned char>(t >> 16);
    out[13] = static_cast<unsigned char>(t >> 8);
    out[14] = static_cast<unsigned char>(t);
  }
  out[15] = static_cast<unsigned char>(0x40 + device);
}

// The host library's lifetime (see the top of this file). Any thread.
std::atomic<int> g_host_state{0};  // 0 never used, 1 loaded, 2 destroyed by an exit handler
void HostDestroyedAtExit() {
  g_host_state.store(2);
}
bool HostEnter(const char* function) {
  int never = 0;
  if (g_host_state.compare_exchange_strong(never, 1))
    atexit(&HostDestroyedAtExit);
  if (g_host_state.load() == 2) {
    std::fprintf(stderr, "fake-cupti: VIOLATION %s called after CUPTI's host library was destroyed at exit\n",
                 function);
    Log(std::string("VIOLATION host API after exit: ") + function);
    return false;
  }
  return true;
}
}  // namespace fake

#define FAKE_HOST_ENTER()              \
  if (!fake::HostEnter(__func__))      \
  return CUPTI_ERROR_UNKNOWN

extern "C" {

// --- Profiler Host API ---------------------------------------------------------------------------

CUptiResult CUPTIAPI cuptiProfilerHostInitialize(CUpti_Profiler_Host_Initialize_Params* p) {
  FAKE_HOST_ENTER();
  if (void* real = fake::RealHostHandle())
    return reinterpret_cast<decltype(&::cuptiProfilerHostInitialize)>(dlsym(real, "cuptiProfilerHostInitialize"))(p);
  if (!Sized(p) || p->pChipName == nullptr)
    return CUPTI_ERROR_INVALID_PARAMETER;
  if (Chip() != p->pChipName)
    return CUPTI_ERROR_INVALID_CHIP_NAME;
  p->pHostObject = new CUpti_Profiler_Host_Object{p->profilerType, p->pChipName, {}, false};
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiProfilerHostDeinitialize(CUpti_Profiler_Host_Deinitialize_Params* p) {
  FAKE_HOST_ENTER();
  if (void* real = fake::RealHostHandle())
    return reinterpret_cast<decltype(&::cuptiProfilerHostDeinitialize)>(dlsym(real, "cuptiProfilerHostDeinitialize"))(
        p);
  if (!Sized(p))
    return CUPTI_ERROR_INVALID_PARAMETER;
  delete p->pHostObject;
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiProfilerHostGetSupportedChips(CUpti_Profiler_Host_GetSupportedChips_Params* p) {
  FAKE_HOST_ENTER();
  if (void* real = fake::RealHostHandle())
    return reinterpret_cast<decltype(&::cuptiProfilerHostGetSupportedChips)>(
        dlsym(real, "cuptiProfilerHostGetSupportedChips"))(p);
  static std::string chip;  // FAKE_CUPTI_CHIP: the one chip this fake knows
  static const char* chips[1];
  chip = Chip();
  chips[0] = chip.c_str();
  p->numChips = 1;
  p->ppChipNames = chips;
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiProfilerHostConfigAddMetrics(CUpti_Profiler_Host_ConfigAddMetrics_Params* p) {
  FAKE_HOST_ENTER();
  if (const char* delay = getenv("FAKE_CUPTI_HOST_DELAY_MS"))
    usleep(static_cast<useconds_t>(atoi(delay)) * 1000);
  if (void* real = fake::RealHostHandle())
    return reinterpret_cast<decltype(&::cuptiProfilerHostConfigAddMetrics)>(
        dlsym(real, "cuptiProfilerHostConfigAddMetrics"))(p);
  if (!Sized(p) || p->pHostObject == nullptr)
    return CUPTI_ERROR_INVALID_PARAMETER;
  if (p->pHostObject->poisoned)
    return CUPTI_ERROR_UNKNOWN;
  for (size_t i = 0; i < p->numMetrics; ++i) {
    if (Listed("FAKE_CUPTI_REJECT_METRICS", p->ppMetricNames[i])) {
      p->pHostObject->poisoned = true;
      return CUPTI_ERROR_INVALID_PARAMETER;
    }
  }
  for (size_t i = 0; i < p->numMetrics; ++i)
    p->pHostObject->names.push_back(p->ppMetricNames[i]);
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiProfilerHostGetConfigImageSize(CUpti_Profiler_Host_GetConfigImageSize_Params* p) {
  FAKE_HOST_ENTER();
  if (void* real = fake::RealHostHandle())
    return reinterpret_cast<decltype(&::cuptiProfilerHostGetConfigImageSize)>(
        dlsym(real, "cuptiProfilerHostGetConfigImageSize"))(p);
  if (p->pHostObject->poisoned)
    return CUPTI_ERROR_UNKNOWN;
  size_t n = 6;
  for (const std::string& s : p->pHostObject->names)
    n += s.size() + 1;
  p->configImageSize = n;
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiProfilerHostGetConfigImage(CUpti_Profiler_Host_GetConfigImage_Params* p) {
  FAKE_HOST_ENTER();
  if (void* real = fake::RealHostHandle())
    return reinterpret_cast<decltype(&::cuptiProfilerHostGetConfigImage)>(
        dlsym(real, "cuptiProfilerHostGetConfigImage"))(p);
  if (p->pHostObject->poisoned)
    return CUPTI_ERROR_UNKNOWN;
  std::string text = "FKCFG\n";
  for (const std::string& s : p->pHostObject->names)
    text += s + "\n";
  if (p->configImageSize < text.size())
    return CUPTI_ERROR_PARAMETER_SIZE_NOT_SUFFICIENT;
  std::memcpy(p->pConfigImage, text.data(), text.size());
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiProfilerHostGetNumOfPasses(CUpti_Profiler_Host_GetNumOfPasses_Params* p) {
  FAKE_HOST_ENTER();
  if (void* real = fake::RealHostHandle())
    return reinterpret_cast<decltype(&::cuptiProfilerHostGetNumOfPasses)>(
        dlsym(real, "cuptiProfilerHostGetNumOfPasses"))(p);
  p->numOfPasses = 1;
  for (const std::string& n : NamesOf(p->pConfigImage, p->configImageSize)) {
    if (Listed("FAKE_CUPTI_MULTIPASS_METRICS", n))
      p->numOfPasses = 2;
  }
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiProfilerHostEvaluateToGpuValues(CUpti_Profiler_Host_EvaluateToGpuValues_Params* p) {
  FAKE_HOST_ENTER();
  if (void* real = fake::RealHostHandle())
    return reinterpret_cast<decltype(&::cuptiProfilerHostEvaluateToGpuValues)>(
        dlsym(real, "cuptiProfilerHostEvaluateToGpuValues"))(p);
  if (!Sized(p) || p->pHostObject == nullptr || p->pHostObject->poisoned)
    return CUPTI_ERROR_INVALID_PARAMETER;
  const auto* h = reinterpret_cast<const ImageHeader*>(p->pCounterDataImage);
  if (p->rangeIndex >= h->count)
    return CUPTI_ERROR_INVALID_PARAMETER;
  const std::vector<std::string>& names = p->pHostObject->names;
  const uint8_t* rec =
      p->pCounterDataImage + sizeof(ImageHeader) +
      p->rangeIndex * (h->magic == kPmMagic ? PmRecordBytes(h->metrics) : RangeRecordBytes(h->metrics));
  const double* values = reinterpret_cast<const double*>(rec + (h->magic == kPmMagic ? 16 : kRangeNameBytes));
  for (size_t i = 0; i < p->numMetrics; ++i) {
    p->pMetricValues[i] = 0;
    for (size_t k = 0; k < names.size() && k < h->metrics; ++k) {
      if (names[k] == p->ppMetricNames[i])
        p->pMetricValues[i] = values[k];
    }
  }
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiProfilerHostGetMetricProperties(CUpti_Profiler_Host_GetMetricProperties_Params* p) {
  FAKE_HOST_ENTER();
  if (void* real = fake::RealHostHandle())
    return reinterpret_cast<decltype(&::cuptiProfilerHostGetMetricProperties)>(
        dlsym(real, "cuptiProfilerHostGetMetricProperties"))(p);
  p->pDescription = "fake";
  p->pHwUnit = "fake";
  p->pDimUnit = strstr(p->pMetricName, "pct") != nullptr ? "percent" : "fake_unit";
  p->metricType = CUPTI_METRIC_TYPE_COUNTER;
  return CUPTI_SUCCESS;
}

// --- target helpers ------------------------------------------------------------------------------

CUptiResult CUPTIAPI cuptiProfilerInitialize(CUpti_Profiler_Initialize_Params*) {
  fake::Log("profiler initialize");
  if (CUptiResult r = Forced("FAKE_CUPTI_PROFILER_INIT_RESULT"); r != CUPTI_SUCCESS)
    return r;
  std::lock_guard<std::mutex> lock(P().mu);
  P().profiler_initialized = true;
  return CUPTI_SUCCESS;
}
CUptiResult CUPTIAPI cuptiProfilerDeInitialize(CUpti_Profiler_DeInitialize_Params*) {
  return CUPTI_SUCCESS;
}
CUptiResult CUPTIAPI cuptiProfilerDeviceSupported(CUpti_Profiler_DeviceSupported_Params* p) {
  p->isSupported = CUPTI_PROFILER_CONFIGURATION_SUPPORTED;
  return CUPTI_SUCCESS;
}
CUptiResult CUPTIAPI cuptiDeviceGetChipName(CUpti_Device_GetChipName_Params* p) {
  static std::string chip;
  chip = Chip();
  if (p->deviceIndex >= DeviceCount())
    return CUPTI_ERROR_INVALID_DEVICE;
  p->pChipName = chip.c_str();
  return CUPTI_SUCCESS;
}
CUptiResult CUPTIAPI cuptiProfilerGetCounterAvailability(CUpti_Profiler_GetCounterAvailability_Params* p) {
  if (p->pCounterAvailabilityImage == nullptr) {
    p->counterAvailabilityImageSize = 8;
  } else {
    std::memset(p->pCounterAvailabilityImage, 0xff, p->counterAvailabilityImageSize);
  }
  return CUPTI_SUCCESS;
}
CUptiResult CUPTIAPI cuptiGetContextId(CUcontext context, uint32_t* id) {
  if (id == nullptr || context == nullptr)
    return CUPTI_ERROR_INVALID_PARAMETER;
  *id = static_cast<uint32_t>(reinterpret_cast<uintptr_t>(context) - 0x1000);
  return CUPTI_SUCCESS;
}

// --- PM sampling ---------------------------------------------------------------------------------

CUptiResult CUPTIAPI cuptiPmSamplingGetCounterAvailability(CUpti_PmSampling_GetCounterAvailability_Params* p) {
  if (CUptiResult r; fake::ReplayPmAvailability(p, &r))
    return r;
  if (CUptiResult r = Forced("FAKE_CUPTI_PM_AVAILABILITY_RESULT"); r != CUPTI_SUCCESS)
    return r;
  if (p->deviceIndex >= DeviceCount())
    return CUPTI_ERROR_INVALID_DEVICE;
  if (p->pCounterAvailabilityImage == nullptr) {
    p->counterAvailabilityImageSize = 8;
  } else {
    std::memset(p->pCounterAvailabilityImage, 0xff, p->counterAvailabilityImageSize);
  }
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiPmSamplingEnable(CUpti_PmSampling_Enable_Params* p) {
  fake::Log("pm enable " + std::to_string(p->deviceIndex));
  if (CUptiResult r = Forced("FAKE_CUPTI_PM_ENABLE_RESULT"); r != CUPTI_SUCCESS)
    return r;
  std::lock_guard<std::mutex> lock(P().mu);
  if (!P().profiler_initialized)
    return CUPTI_ERROR_NOT_INITIALIZED;
  if (P().pm.count(static_cast<uint32_t>(p->deviceIndex)) != 0)
    return CUPTI_ERROR_INVALID_OPERATION;
  auto* o = new CUpti_PmSampling_Object();
  o->device = static_cast<uint32_t>(p->deviceIndex);
  P().pm[o->device] = o;
  p->pPmSamplingObject = o;
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiPmSamplingDisable(CUpti_PmSampling_Disable_Params* p) {
  fake::Log("pm disable " + std::to_string(p->pPmSamplingObject->device));
  std::lock_guard<std::mutex> lock(P().mu);
  P().pm.erase(p->pPmSamplingObject->device);
  delete p->pPmSamplingObject;
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiPmSamplingSetConfig(CUpti_PmSampling_SetConfig_Params* p) {
  std::lock_guard<std::mutex> lock(P().mu);
  CUpti_PmSampling_Object* o = p->pPmSamplingObject;
  o->names = NamesOf(p->pConfig, p->configSize);
  o->interval = p->samplingInterval;
  o->trigger = p->triggerMode;
  fake::Log("pm config " + std::to_string(o->device) + " interval " + std::to_string(o->interval) + " trigger " +
            std::to_string(o->trigger) + " metrics " + std::to_string(o->names.size()));
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiPmSamplingStart(CUpti_PmSampling_Start_Params* p) {
  if (CUptiResult r = Forced("FAKE_CUPTI_PM_START_RESULT"); r != CUPTI_SUCCESS)
    return r;
  std::lock_guard<std::mutex> lock(P().mu);
  p->pPmSamplingObject->started = true;
  fake::Log("pm start " + std::to_string(p->pPmSamplingObject->device));
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiPmSamplingStop(CUpti_PmSampling_Stop_Params* p) {
  std::lock_guard<std::mutex> lock(P().mu);
  p->pPmSamplingObject->started = false;
  fake::Log("pm stop " + std::to_string(p->pPmSamplingObject->device));
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiPmSamplingGetCounterDataSize(CUpti_PmSampling_GetCounterDataSize_Params* p) {
  if (CUptiResult r; fake::ReplayPmCounterDataSize(p, &r))
    return r;
  p->counterDataSize = sizeof(ImageHeader) + p->maxSamples * PmRecordBytes(static_cast<uint32_t>(p->numMetrics));
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiPmSamplingCounterDataImageInitialize(CUpti_PmSampling_CounterDataImage_Initialize_Params* p) {
  if (CUptiResult r; fake::ReplayPmImageInitialize(p, &r))
    return r;
  std::lock_guard<std::mutex> lock(P().mu);
  auto* h = reinterpret_cast<ImageHeader*>(p->pCounterData);
  uint32_t metrics = static_cast<uint32_t>(p->pPmSamplingObject->names.size());
  h->magic = kPmMagic;
  h->metrics = metrics;
  h->capacity = static_cast<uint32_t>((p->counterDataSize - sizeof(ImageHeader)) / PmRecordBytes(metrics));
  h->count = 0;
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiPmSamplingDecodeData(CUpti_PmSampling_DecodeData_Params* p) {
  std::lock_guard<std::mutex> lock(P().mu);
  CUpti_PmSampling_Object* o = p->pPmSamplingObject;
  if (CUptiResult r; fake::ReplayPmDecode(o->device, o->started, p, &r))
    return r;
  auto* h = reinterpret_cast<ImageHeader*>(p->pCounterDataImage);
  size_t moved = 0;
  while (moved < o->hw.size() && h->count < h->capacity) {
    const std::vector<double>& s = o->hw[moved];
    uint8_t* rec = p->pCounterDataImage + sizeof(ImageHeader) + h->count * PmRecordBytes(h->metrics);
    uint64_t start = static_cast<uint64_t>(s[0]), end = static_cast<uint64_t>(s[1]);
    std::memcpy(rec, &start, 8);
    std::memcpy(rec + 8, &end, 8);
    for (uint32_t k = 0; k < h->metrics; ++k) {
      double v = 2 + k < s.size() ? s[2 + k] : 0.0;
      std::memcpy(rec + 16 + 8 * k, &v, 8);
    }
    ++h->count;
    ++moved;
  }
  o->hw.erase(o->hw.begin(), o->hw.begin() + static_cast<long>(moved));
  p->decodeStopReason = o->hw.empty() ? CUPTI_PM_SAMPLING_DECODE_STOP_REASON_END_OF_RECORDS
                                      : CUPTI_PM_SAMPLING_DECODE_STOP_REASON_COUNTER_DATA_FULL;
  p->overflow = o->overflow_next ? 1 : 0;
  o->overflow_next = false;
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiPmSamplingGetCounterDataInfo(CUpti_PmSampling_GetCounterDataInfo_Params* p) {
  if (CUptiResult r; fake::ReplayPmInfo(p, &r))
    return r;
  const auto* h = reinterpret_cast<const ImageHeader*>(p->pCounterDataImage);
  p->numTotalSamples = h->capacity;
  p->numPopulatedSamples = h->count;
  p->numCompletedSamples = h->count;
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiPmSamplingCounterDataGetSampleInfo(CUpti_PmSampling_CounterData_GetSampleInfo_Params* p) {
  if (CUptiResult r; fake::ReplayPmSampleInfo(p, &r))
    return r;
  const auto* h = reinterpret_cast<const ImageHeader*>(p->pCounterDataImage);
  if (p->sampleIndex >= h->count)
    return CUPTI_ERROR_INVALID_PARAMETER;
  const uint8_t* rec = p->pCounterDataImage + sizeof(ImageHeader) + p->sampleIndex * PmRecordBytes(h->metrics);
  std::memcpy(&p->startTimestamp, rec, 8);
  std::memcpy(&p->endTimestamp, rec + 8, 8);
  return CUPTI_SUCCESS;
}

// --- range profiler ------------------------------------------------------------------------------

CUptiResult CUPTIAPI cuptiRangeProfilerEnable(CUpti_RangeProfiler_Enable_Params* p) {
  fake::Log("range enable");
  if (CUptiResult r = Forced("FAKE_CUPTI_RANGE_ENABLE_RESULT"); r != CUPTI_SUCCESS)
    return r;
  std::lock_guard<std::mutex> lock(P().mu);
  if (!P().profiler_initialized)
    return CUPTI_ERROR_NOT_INITIALIZED;
  auto* o = new CUpti_RangeProfiler_Object();
  o->ctx = p->ctx;
  P().ranges.push_back(o);
  p->pRangeProfilerObject = o;
  return CUPTI_SUCCESS;
}
CUptiResult CUPTIAPI cuptiRangeProfilerDisable(CUpti_RangeProfiler_Disable_Params*) {
  return CUPTI_SUCCESS;
}
CUptiResult CUPTIAPI cuptiRangeProfilerGetCounterDataSize(CUpti_RangeProfiler_GetCounterDataSize_Params* p) {
  if (CUptiResult r; fake::ReplayRangeCounterDataSize(p, &r))
    return r;
  p->counterDataSize = sizeof(ImageHeader) + p->maxNumOfRanges * RangeRecordBytes(static_cast<uint32_t>(p->numMetrics));
  return CUPTI_SUCCESS;
}
CUptiResult CUPTIAPI
cuptiRangeProfilerCounterDataImageInitialize(CUpti_RangeProfiler_CounterDataImage_Initialize_Params* p) {
  std::memset(p->pCounterData, 0, sizeof(ImageHeader));
  return CUPTI_SUCCESS;
}
CUptiResult CUPTIAPI cuptiRangeProfilerSetConfig(CUpti_RangeProfiler_SetConfig_Params* p) {
  std::lock_guard<std::mutex> lock(P().mu);
  CUpti_RangeProfiler_Object* o = p->pRangeProfilerObject;
  o->names = NamesOf(p->pConfig, p->configSize);
  o->range = p->range;
  o->image = p->pCounterDataImage;
  o->image_size = p->counterDataImageSize;
  o->max_ranges = p->maxRangesPerPass;
  fake::Log(std::string("range config ") + (p->range == CUPTI_AutoRange ? "auto" : "user") + " replay " +
            std::to_string(p->replayMode));
  return CUPTI_SUCCESS;
}
CUptiResult CUPTIAPI cuptiRangeProfilerStart(CUpti_RangeProfiler_Start_Params* p) {
  std::lock_guard<std::mutex> lock(P().mu);
  p->pRangeProfilerObject->started = true;
  p->pRangeProfilerObject->pass.clear();
  // auto_index is not reset: CUPTI names auto ranges by a count kept per profiler object since
  // Enable, not per pass (H200, CUDA 13.0, 2026-11-26: a second pass's 7 ranges were named "3"
  // to "9", their indices in the image 0 to 6).
  p->pRangeProfilerObject->dropped = 0;
  return CUPTI_SUCCESS;
}
CUptiResult CUPTIAPI cuptiRangeProfilerStop(CUpti_RangeProfiler_Stop_Params* p) {
  std::lock_guard<std::mutex> lock(P().mu);
  p->pRangeProfilerObject->started = false;
  p->isAllPassSubmitted = 1;
  return CUPTI_SUCCESS;
}
CUptiResult CUPTIAPI cuptiRangeProfilerPushRange(CUpti_RangeProfiler_PushRange_Params* p) {
  std::lock_guard<std::mutex> lock(P().mu);
  if (!p->pRangeProfilerObject->started)
    return CUPTI_ERROR_INVALID_OPERATION;
  p->pRangeProfilerObject->stack.push_back(p->pRangeName != nullptr ? p->pRangeName : "");
  fake::Log(std::string("range push ") + (p->pRangeName != nullptr ? p->pRangeName : ""));
  return CUPTI_SUCCESS;
}
CUptiResult CUPTIAPI cuptiRangeProfilerPopRange(CUpti_RangeProfiler_PopRange_Params* p) {
  std::lock_guard<std::mutex> lock(P().mu);
  CUpti_RangeProfiler_Object* o = p->pRangeProfilerObject;
  if (o->stack.empty())
    return CUPTI_ERROR_INVALID_OPERATION;
  std::vector<double> values(o->names.size(), 0.0);
  for (size_t i = 0; i < o->names.size(); ++i) {
    auto it = P().range_values.find(o->names[i]);
    if (it != P().range_values.end())
      values[i] = it->second;
  }
  o->pass.emplace_back(o->stack.back(), values);
  o->stack.pop_back();
  fake::Log("range pop");
  return CUPTI_SUCCESS;
}
CUptiResult CUPTIAPI cuptiRangeProfilerDecodeData(CUpti_RangeProfiler_DecodeData_Params* p) {
  std::lock_guard<std::mutex> lock(P().mu);
  CUpti_RangeProfiler_Object* o = p->pRangeProfilerObject;
  if (CUptiResult r; fake::ReplayRangeDecode(o->image, o->image_size, &p->numOfRangeDropped, &r)) {
    o->pass.clear();
    return r;
  }
  auto* h = reinterpret_cast<ImageHeader*>(o->image);
  uint32_t metrics = static_cast<uint32_t>(o->names.size());
  h->magic = kRangeMagic;
  h->metrics = metrics;
  h->capacity = static_cast<uint32_t>((o->image_size - sizeof(ImageHeader)) / RangeRecordBytes(metrics));
  h->count = 0;
  for (const auto& [name, values] : o->pass) {
    if (h->count >= h->capacity) {
      ++o->dropped;
      continue;
    }
    uint8_t* rec = o->image + sizeof(ImageHeader) + h->count * RangeRecordBytes(metrics);
    std::memset(rec, 0, kRangeNameBytes);
    std::memcpy(rec, name.data(), name.size() < kRangeNameBytes - 1 ? name.size() : kRangeNameBytes - 1);
    for (uint32_t k = 0; k < metrics; ++k)
      std::memcpy(rec + kRangeNameBytes + 8 * k, &values[k], 8);
    ++h->count;
  }
  p->numOfRangeDropped = o->dropped;
  o->pass.clear();
  fake::Log("range decode " + std::to_string(h->count));
  return CUPTI_SUCCESS;
}
CUptiResult CUPTIAPI cuptiRangeProfilerGetCounterDataInfo(CUpti_RangeProfiler_GetCounterDataInfo_Params* p) {
  if (CUptiResult r; fake::ReplayRangeInfo(p, &r))
    return r;
  p->numTotalRanges = reinterpret_cast<const ImageHeader*>(p->pCounterDataImage)->count;
  return CUPTI_SUCCESS;
}
CUptiResult CUPTIAPI cuptiRangeProfilerCounterDataGetRangeInfo(CUpti_RangeProfiler_CounterData_GetRangeInfo_Params* p) {
  if (CUptiResult r; fake::ReplayRangeRangeInfo(p, &r))
    return r;
  const auto* h = reinterpret_cast<const ImageHeader*>(p->pCounterDataImage);
  if (p->rangeIndex >= h->count)
    return CUPTI_ERROR_INVALID_PARAMETER;
  p->rangeName = reinterpret_cast<const char*>(p->pCounterDataImage + sizeof(ImageHeader) +
                                               p->rangeIndex * RangeRecordBytes(h->metrics));
  return CUPTI_SUCCESS;
}

// --- CUDA driver queries -------------------------------------------------------------------------

CUresult CUDAAPI cuDeviceGetCount(int* count) {
  std::lock_guard<std::mutex> lock(P().mu);
  if (!P().initialized)
    return CUDA_ERROR_NOT_INITIALIZED;
  *count = static_cast<int>(DeviceCount());
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuDeviceGet(CUdevice* device, int ordinal) {
  if (ordinal < 0 || static_cast<uint32_t>(ordinal) >= DeviceCount())
    return CUDA_ERROR_INVALID_DEVICE;
  *device = ordinal;
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuDeviceGetName(char* name, int len, CUdevice dev) {
  snprintf(name, static_cast<size_t>(len), "Fake GPU %d", dev);
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuDeviceGetUuid_v2(CUuuid* uuid, CUdevice dev) {
  unsigned char bytes[16];
  fake::FakeUuid(static_cast<uint32_t>(dev), bytes);  // the same bytes as the DEVICE activity record
  std::memcpy(uuid->bytes, bytes, 16);
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuDeviceGetPCIBusId(char* bus, int len, CUdevice dev) {
  snprintf(bus, static_cast<size_t>(len), "0000:%02x:00.0", 0x19 + dev);
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuDevicePrimaryCtxGetState(CUdevice dev, unsigned int* flags, int* active) {
  std::lock_guard<std::mutex> lock(P().mu);
  *flags = 0;
  *active = P().primary.count(static_cast<uint32_t>(dev)) != 0 ? 1 : 0;
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuDevicePrimaryCtxRetain(CUcontext* ctx, CUdevice dev) {
  std::lock_guard<std::mutex> lock(P().mu);
  auto it = P().primary.find(static_cast<uint32_t>(dev));
  if (it == P().primary.end())
    return CUDA_ERROR_INVALID_CONTEXT;
  *ctx = it->second;
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuDevicePrimaryCtxRelease_v2(CUdevice) {
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuCtxGetCurrent(CUcontext* ctx) {
  *ctx = t_current;
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuCtxGetDevice(CUdevice* device) {
  std::lock_guard<std::mutex> lock(P().mu);
  auto it = P().context_device.find(t_current);
  if (it == P().context_device.end())
    return CUDA_ERROR_INVALID_CONTEXT;
  *device = static_cast<CUdevice>(it->second);
  return CUDA_SUCCESS;
}

// --- fake driver API (fake_cuda.h) ---------------------------------------------------------------

uint64_t fake_CuptiNow(void) {
  return fake::Now();
}

int fake_PmRunning(uint32_t device) {
  std::lock_guard<std::mutex> lock(P().mu);
  auto it = P().pm.find(device);
  return it != P().pm.end() && it->second->started ? 1 : 0;
}

uint32_t fake_PmMetricCount(uint32_t device) {
  std::lock_guard<std::mutex> lock(P().mu);
  auto it = P().pm.find(device);
  return it != P().pm.end() ? static_cast<uint32_t>(it->second->names.size()) : 0;
}

void fake_PmSample(uint32_t device, uint64_t start, uint64_t end, const char* spec) {
  std::lock_guard<std::mutex> lock(P().mu);
  auto it = P().pm.find(device);
  if (it == P().pm.end() || !it->second->started)
    return;  // not sampling: the hardware records nothing
  std::vector<double> s = {static_cast<double>(start), static_cast<double>(end)};
  for (double v : ParseSpec(spec, it->second->names))
    s.push_back(v);
  it->second->hw.push_back(std::move(s));
}

void fake_PmOverflowNext(uint32_t device) {
  std::lock_guard<std::mutex> lock(P().mu);
  auto it = P().pm.find(device);
  if (it != P().pm.end())
    it->second->overflow_next = true;
}

void fake_RangeSetValues(const char* spec) {
  std::lock_guard<std::mutex> lock(P().mu);
  P().range_values.clear();
  for (const std::string& item : Split(spec, ';')) {
    size_t eq = item.find('=');
    if (eq != std::string::npos)
      P().range_values[item.substr(0, eq)] = strtod(item.c_str() + eq + 1, nullptr);
  }
}

void fake_SetCurrentContext(uint32_t device_id, uint32_t context_id) {
  CUcontext ctx = reinterpret_cast<CUcontext>(static_cast<uintptr_t>(0x1000 + context_id));
  t_current = ctx;
  std::lock_guard<std::mutex> lock(P().mu);
  P().context_device[ctx] = device_id;
  P().primary.emplace(device_id, ctx);
}

void fake_MarkDriverInitialized(void) {
  std::lock_guard<std::mutex> lock(P().mu);
  P().initialized = true;
}

// Returns 1 when an auto-range pass on the kernel's context profiled it.
int fake_RangeOnKernel(uint32_t context_id) {
  CUcontext ctx = reinterpret_cast<CUcontext>(static_cast<uintptr_t>(0x1000 + context_id));
  std::lock_guard<std::mutex> lock(P().mu);
  int profiled = 0;
  for (CUpti_RangeProfiler_Object* o : P().ranges) {
    if (o->ctx != ctx || !o->started || o->range != CUPTI_AutoRange)
      continue;
    std::vector<double> values(o->names.size(), 0.0);
    for (size_t i = 0; i < o->names.size(); ++i) {
      auto it = P().range_values.find(o->names[i]);
      if (it != P().range_values.end())
        values[i] = it->second + o->auto_index;  // distinct per kernel
    }
    o->pass.emplace_back(std::to_string(o->auto_index++), values);
    profiled = 1;
  }
  return profiled;
}

}  // extern "C"
