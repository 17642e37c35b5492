// The fake profiler's replay of a GPU-metrics raw capture (a TEST DOUBLE). See fake_metrics_replay.h.
#include "tests/fakes/fake_metrics_replay.h"

#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>

#include "tests/fakes/fake_cuda.h"
#include "tests/fakes/fake_state.h"
#include "tests/fakes/metrics_capture_reader.h"

namespace fake {
namespace {

struct Replay {
  std::mutex mu;
  MetricsCaptureFile capture;
  std::string chip;
  size_t next_pm = 0, next_range = 0;
  int64_t shift_ns = 0;  // added to recorded sample times
  void* real_host = nullptr;
};

Replay* Load() {
  static Replay* replay = [] {
    const char* path = getenv("FAKE_CUPTI_METRICS_REPLAY");
    if (path == nullptr || *path == '\0')
      return static_cast<Replay*>(nullptr);
    auto* r = new Replay();
    std::string error;
    if (!ReadMetricsCapture(path, &r->capture, &error)) {
      std::fprintf(stderr, "fake-cupti: FAKE_CUPTI_METRICS_REPLAY: %s\n", error.c_str());
      std::exit(70);
    }
    if (!r->capture.pm_configs.empty())
      r->chip = r->capture.pm_configs[0].head.chip;
    else if (!r->capture.range_configs.empty())
      r->chip = r->capture.range_configs[0].head.chip;
    uint64_t first = 0;
    for (const PmDataFrame& d : r->capture.pm_data) {
      if (!d.samples.empty()) {
        first = d.samples[0].info.start_ns;
        break;
      }
    }
    r->shift_ns = first == 0 ? 0 : static_cast<int64_t>(Now() + 100000000ull) - static_cast<int64_t>(first);
    if (const char* host = getenv("FAKE_CUPTI_REAL_HOST"); host != nullptr && *host != '\0') {
      r->real_host = dlopen(host, RTLD_NOW | RTLD_LOCAL);
      if (r->real_host == nullptr) {
        std::fprintf(stderr, "fake-cupti: FAKE_CUPTI_REAL_HOST: %s\n", dlerror());
        std::exit(70);
      }
    }
    return r;
  }();
  return replay;
}

// The recorded frame whose image has exactly these bytes (the image gtrace hands back is its own
// copy, so it is found by content), or nullptr.
template <typename Frame>
const Frame* ByImage(const std::vector<Frame>& frames, const uint8_t* image, size_t size) {
  if (image == nullptr)
    return nullptr;
  for (const Frame& f : frames) {
    if (f.image.size() <= size && std::memcmp(f.image.data(), image, f.image.size()) == 0)
      return &f;
  }
  return nullptr;
}

}  // namespace

bool MetricsReplayOn() {
  return Load() != nullptr;
}

const char* ReplayChip() {
  Replay* r = Load();
  return r != nullptr && !r->chip.empty() ? r->chip.c_str() : nullptr;
}

void* RealHostHandle() {
  Replay* r = Load();
  return r != nullptr ? r->real_host : nullptr;
}

bool ReplayPmAvailability(CUpti_PmSampling_GetCounterAvailability_Params* p, CUptiResult* result) {
  Replay* r = Load();
  if (r == nullptr || r->capture.pm_configs.empty())
    return false;
  const std::vector<uint8_t>& a = r->capture.pm_configs[0].availability_image;
  if (p->pCounterAvailabilityImage == nullptr) {
    p->counterAvailabilityImageSize = a.size();
  } else {
    std::memcpy(p->pCounterAvailabilityImage, a.data(), std::min(a.size(), p->counterAvailabilityImageSize));
  }
  *result = CUPTI_SUCCESS;
  return true;
}

bool ReplayPmCounterDataSize(CUpti_PmSampling_GetCounterDataSize_Params* p, CUptiResult* result) {
  Replay* r = Load();
  if (r == nullptr || r->capture.pm_configs.empty())
    return false;
  p->counterDataSize = r->capture.pm_configs[0].head.counter_data_bytes;
  *result = CUPTI_SUCCESS;
  return true;
}

bool ReplayPmImageInitialize(CUpti_PmSampling_CounterDataImage_Initialize_Params* p, CUptiResult* result) {
  if (Load() == nullptr)
    return false;
  std::memset(p->pCounterData, 0, p->counterDataSize);  // an empty image: matches no recorded one
  *result = CUPTI_SUCCESS;
  return true;
}

bool ReplayPmDecode(uint32_t device, bool started, CUpti_PmSampling_DecodeData_Params* p, CUptiResult* result) {
  Replay* r = Load();
  if (r == nullptr)
    return false;
  std::lock_guard<std::mutex> lock(r->mu);
  p->overflow = 0;
  p->decodeStopReason = CUPTI_PM_SAMPLING_DECODE_STOP_REASON_END_OF_RECORDS;
  *result = CUPTI_SUCCESS;
  if (!started)
    return true;
  while (r->next_pm < r->capture.pm_data.size() && r->capture.pm_data[r->next_pm].head.device != device)
    ++r->next_pm;  // another device's image (this replay drives one device per process)
  if (r->next_pm >= r->capture.pm_data.size())
    return true;
  const PmDataFrame& d = r->capture.pm_data[r->next_pm++];
  if (d.image.size() > p->counterDataImageSize) {
    *result = CUPTI_ERROR_INVALID_PARAMETER;
    return true;
  }
  std::memcpy(p->pCounterDataImage, d.image.data(), d.image.size());
  p->overflow = static_cast<uint8_t>(d.head.overflow);
  p->decodeStopReason = static_cast<CUpti_PmSampling_DecodeStopReason>(d.head.stop_reason);
  *result = static_cast<CUptiResult>(d.head.decode_result);
  return true;
}

bool ReplayPmInfo(CUpti_PmSampling_GetCounterDataInfo_Params* p, CUptiResult* result) {
  Replay* r = Load();
  if (r == nullptr)
    return false;
  const PmDataFrame* d = ByImage(r->capture.pm_data, p->pCounterDataImage, p->counterDataImageSize);
  p->numTotalSamples = d != nullptr ? d->head.total_samples : 0;
  p->numPopulatedSamples = d != nullptr ? d->head.populated_samples : 0;
  p->numCompletedSamples = d != nullptr ? d->head.completed_samples : 0;
  *result = CUPTI_SUCCESS;
  return true;
}

bool ReplayPmSampleInfo(CUpti_PmSampling_CounterData_GetSampleInfo_Params* p, CUptiResult* result) {
  Replay* r = Load();
  if (r == nullptr)
    return false;
  const PmDataFrame* d = ByImage(r->capture.pm_data, p->pCounterDataImage, p->counterDataImageSize);
  if (d == nullptr || p->sampleIndex >= d->samples.size()) {
    *result = CUPTI_ERROR_INVALID_PARAMETER;
    return true;
  }
  const gt::rawcap::MetricsSample& s = d->samples[p->sampleIndex].info;
  p->startTimestamp = static_cast<uint64_t>(static_cast<int64_t>(s.start_ns) + r->shift_ns);
  p->endTimestamp = static_cast<uint64_t>(static_cast<int64_t>(s.end_ns) + r->shift_ns);
  *result = static_cast<CUptiResult>(s.info_result);
  return true;
}

bool ReplayRangeCounterDataSize(CUpti_RangeProfiler_GetCounterDataSize_Params* p, CUptiResult* result) {
  Replay* r = Load();
  if (r == nullptr || r->capture.range_configs.empty())
    return false;
  p->counterDataSize = r->capture.range_configs[0].head.counter_data_bytes;
  *result = CUPTI_SUCCESS;
  return true;
}

bool ReplayRangeDecode(uint8_t* image, size_t image_size, size_t* dropped, CUptiResult* result) {
  Replay* r = Load();
  if (r == nullptr)
    return false;
  std::lock_guard<std::mutex> lock(r->mu);
  *dropped = 0;
  *result = CUPTI_SUCCESS;
  if (r->next_range >= r->capture.range_data.size()) {
    std::memset(image, 0, image_size);
    return true;
  }
  const RangeDataFrame& d = r->capture.range_data[r->next_range++];
  if (d.image.size() > image_size) {
    *result = CUPTI_ERROR_INVALID_PARAMETER;
    return true;
  }
  std::memcpy(image, d.image.data(), d.image.size());
  *dropped = d.head.ranges_dropped;
  return true;
}

bool ReplayRangeInfo(CUpti_RangeProfiler_GetCounterDataInfo_Params* p, CUptiResult* result) {
  Replay* r = Load();
  if (r == nullptr)
    return false;
  const RangeDataFrame* d = ByImage(r->capture.range_data, p->pCounterDataImage, p->counterDataImageSize);
  p->numTotalRanges = d != nullptr ? d->head.total_ranges : 0;
  *result = d != nullptr ? static_cast<CUptiResult>(d->head.info_result) : CUPTI_SUCCESS;
  return true;
}

bool ReplayRangeRangeInfo(CUpti_RangeProfiler_CounterData_GetRangeInfo_Params* p, CUptiResult* result) {
  Replay* r = Load();
  if (r == nullptr)
    return false;
  const RangeDataFrame* d = ByImage(r->capture.range_data, p->pCounterDataImage, p->counterDataImageSize);
  if (d == nullptr || p->rangeIndex >= d->ranges.size()) {
    *result = CUPTI_ERROR_INVALID_PARAMETER;
    return true;
  }
  p->rangeName = d->ranges[p->rangeIndex].info.name;
  *result = static_cast<CUptiResult>(d->ranges[p->rangeIndex].info.info_result);
  return true;
}

}  // namespace fake

extern "C" {

uint32_t fake_MetricsReplayPmLeft(void) {
  fake::Replay* r = fake::Load();
  if (r == nullptr)
    return 0;
  std::lock_guard<std::mutex> lock(r->mu);
  return static_cast<uint32_t>(r->capture.pm_data.size() - r->next_pm);
}

uint32_t fake_MetricsReplayRangeLeft(void) {
  fake::Replay* r = fake::Load();
  if (r == nullptr)
    return 0;
  std::lock_guard<std::mutex> lock(r->mu);
  return static_cast<uint32_t>(r->capture.range_data.size() - r->next_range);
}

uint32_t fake_MetricsReplayRangePasses(char* nvtx_name, size_t name_bytes) {
  fake::Replay* r = fake::Load();
  if (r == nullptr || r->capture.range_data.empty())
    return 0;
  if (nvtx_name != nullptr && name_bytes > 0)
    std::snprintf(nvtx_name, name_bytes, "%s", r->capture.range_data[0].head.nvtx_name);
  return static_cast<uint32_t>(r->capture.range_data.size());
}

}  // extern "C"
