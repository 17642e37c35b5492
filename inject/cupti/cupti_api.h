// CuptiApi: the CUPTI functions gtrace calls, resolved with dlsym from a libcupti loaded at run time
// (gtrace never links libcupti, so a process without CUDA never loads it). Every member has the
// exact type of its prototype in the CUDA 13.0 headers (decltype of the declaration), so a changed
// signature fails the build instead of corrupting the stack at run time.
//
// LoadCupti runs once, on the thread inside the first cuInit (InitializeInjection). Afterwards the
// table is read-only and any thread may call through it. The object is trivially constructible and
// lives in static storage (no global constructor).
#pragma once

#include <cupti.h>

#include <cstddef>
#include <cstdint>
#include <string>

namespace gt::cupti {

struct CuptiApi {
  void* handle = nullptr;
  char path[1024] = {};        // the libcupti that was loaded
  char path_source[64] = {};   // how it was found ("GTRACE_CUPTI_PATH", "beside libcudart", ...)
  uint32_t api_version = 0;    // cuptiGetVersion

  // Required.
  decltype(&::cuptiGetVersion) GetVersion = nullptr;
  decltype(&::cuptiGetResultString) GetResultString = nullptr;
  decltype(&::cuptiSubscribe) Subscribe = nullptr;
  decltype(&::cuptiUnsubscribe) Unsubscribe = nullptr;
  decltype(&::cuptiEnableCallback) EnableCallback = nullptr;
  decltype(&::cuptiGetCallbackName) GetCallbackName = nullptr;
  decltype(&::cuptiActivityRegisterCallbacks) ActivityRegisterCallbacks = nullptr;
  decltype(&::cuptiActivityEnable) ActivityEnable = nullptr;
  decltype(&::cuptiActivityDisable) ActivityDisable = nullptr;
  decltype(&::cuptiActivityFlushAll) ActivityFlushAll = nullptr;
  decltype(&::cuptiActivityGetNextRecord) ActivityGetNextRecord = nullptr;
  decltype(&::cuptiActivityGetNumDroppedRecords) ActivityGetNumDroppedRecords = nullptr;
  decltype(&::cuptiSetThreadIdType) SetThreadIdType = nullptr;
  decltype(&::cuptiGetTimestamp) GetTimestamp = nullptr;
  // Optional (older or trimmed libraries may lack them; gtrace degrades).
  decltype(&::cuptiSubscribe_v2) Subscribe_v2 = nullptr;
  decltype(&::cuptiActivityRegisterTimestampCallback) ActivityRegisterTimestampCallback = nullptr;
  decltype(&::cuptiActivitySetAttribute) ActivitySetAttribute = nullptr;
  decltype(&::cuptiGetGraphExecId) GetGraphExecId = nullptr;
  decltype(&::cuptiGetGraphId) GetGraphId = nullptr;
  decltype(&::cuptiEnableDomain) EnableDomain = nullptr;  // raw capture only (inject/rawcap/)

  // "CUPTI_ERROR_UNKNOWN" for a result code (falls back to the number).
  const char* ResultName(CUptiResult result, char* scratch, size_t scratch_size) const;
};

// Oldest and newest (exclusive) CUPTI API versions whose activity records match the CUDA 13.0
// structs gtrace decodes.
inline constexpr uint32_t kMinCuptiApiVersion = 130000;
inline constexpr uint32_t kMaxCuptiApiVersion = 140000;

// Finds and loads libcupti into *api, in this order: $GTRACE_CUPTI_PATH; a libcupti already loaded
// in the process; the one beside the CUDA runtime already loaded (PyTorch/pip wheel layouts, the
// toolkit's extras/CUPTI); the CUDA toolkit ($CUDA_HOME, $CUDA_PATH, /usr/local/cuda); the loader's
// search path. Then resolves the table and checks the version. False with a one-line reason in
// `error` (naming what was tried) when no usable libcupti was found.
bool LoadCupti(CuptiApi* api, std::string* error);

}  // namespace gt::cupti
