// The fake profiler's replay of a GPU-metrics raw capture (a TEST DOUBLE, docs/capture.md). With
// FAKE_CUPTI_METRICS_REPLAY=<metrics-*.gtcap> the fake CUPTI's PM-sampling and range-profiler
// functions (fake_profiler.cc) deliver the recorded counter-data images instead of their own:
//  - cuptiDeviceGetChipName answers the recorded chip; the PM counter-availability image and the
//    counter-data sizes are the recorded ones;
//  - each cuptiPmSamplingDecodeData of a started device copies the next recorded image (in decode
//    order) into gtrace's buffer with the recorded result/stop reason/overflow; each
//    cuptiRangeProfilerDecodeData copies the next recorded range image;
//  - cuptiPmSamplingGetCounterDataInfo / CounterDataGetSampleInfo and cuptiRangeProfilerGetCounter-
//    DataInfo / CounterDataGetRangeInfo answer what real CUPTI answered for that image (found by its
//    bytes), sample times moved by one constant so the first recorded sample starts 100 ms after
//    the replay loaded (relative times are kept exactly);
//  - with FAKE_CUPTI_REAL_HOST=<libcupti.so> the Profiler Host API (initialize, add metrics, config
//    image, passes, EvaluateToGpuValues, metric properties) is the real library's, so NVIDIA's
//    images are evaluated by NVIDIA's code on the CPU; without it the fake's own host API evaluates
//    (only images made by the fake can be read that way).
// Threads: gtrace's metrics thread and NVTX threads; one mutex inside.
#pragma once

#include <cupti_pmsampling.h>
#include <cupti_profiler_host.h>
#include <cupti_range_profiler.h>

#include <cstdint>

namespace fake {

bool MetricsReplayOn();    // FAKE_CUPTI_METRICS_REPLAY is set (loads the capture once; exits on error)
const char* ReplayChip();  // recorded chip, or nullptr when not replaying
void* RealHostHandle();    // dlopen'ed FAKE_CUPTI_REAL_HOST, or nullptr

// Each returns true when it answered (replay on), with *result set.
bool ReplayPmAvailability(CUpti_PmSampling_GetCounterAvailability_Params* p, CUptiResult* result);
bool ReplayPmCounterDataSize(CUpti_PmSampling_GetCounterDataSize_Params* p, CUptiResult* result);
bool ReplayPmImageInitialize(CUpti_PmSampling_CounterDataImage_Initialize_Params* p, CUptiResult* result);
bool ReplayPmDecode(uint32_t device, bool started, CUpti_PmSampling_DecodeData_Params* p, CUptiResult* result);
bool ReplayPmInfo(CUpti_PmSampling_GetCounterDataInfo_Params* p, CUptiResult* result);
bool ReplayPmSampleInfo(CUpti_PmSampling_CounterData_GetSampleInfo_Params* p, CUptiResult* result);
bool ReplayRangeCounterDataSize(CUpti_RangeProfiler_GetCounterDataSize_Params* p, CUptiResult* result);
// Copies the next recorded range image into `image` (size `image_size`); *dropped = recorded.
bool ReplayRangeDecode(uint8_t* image, size_t image_size, size_t* dropped, CUptiResult* result);
bool ReplayRangeInfo(CUpti_RangeProfiler_GetCounterDataInfo_Params* p, CUptiResult* result);
bool ReplayRangeRangeInfo(CUpti_RangeProfiler_CounterData_GetRangeInfo_Params* p, CUptiResult* result);

}  // namespace fake
