// Declarations of the NVTX hooks (nvtx_hooks.cc, nvtx_payload_hooks.cc) and of the injection
// entry points' implementation (nvtx_injection.cc).
#pragma once

#include <atomic>

#include <cstdint>

#include "inject/nvtx/nvtx_api.h"

namespace gt::nvtx {

// CORE
void HookMarkEx(const nvtxEventAttributes_t* attr);
void HookMarkA(const char* message);
void HookMarkW(const wchar_t* message);
nvtxRangeId_t HookRangeStartEx(const nvtxEventAttributes_t* attr);
nvtxRangeId_t HookRangeStartA(const char* message);
nvtxRangeId_t HookRangeStartW(const wchar_t* message);
void HookRangeEnd(nvtxRangeId_t id);
int HookRangePushEx(const nvtxEventAttributes_t* attr);
int HookRangePushA(const char* message);
int HookRangePushW(const wchar_t* message);
int HookRangePop();
void HookNameCategoryA(uint32_t category, const char* name);
void HookNameCategoryW(uint32_t category, const wchar_t* name);
void HookNameOsThreadA(uint32_t tid, const char* name);
void HookNameOsThreadW(uint32_t tid, const wchar_t* name);
// CORE2
void HookDomainMarkEx(nvtxDomainHandle_t domain, const nvtxEventAttributes_t* attr);
nvtxRangeId_t HookDomainRangeStartEx(nvtxDomainHandle_t domain, const nvtxEventAttributes_t* attr);
void HookDomainRangeEnd(nvtxDomainHandle_t domain, nvtxRangeId_t id);
int HookDomainRangePushEx(nvtxDomainHandle_t domain, const nvtxEventAttributes_t* attr);
int HookDomainRangePop(nvtxDomainHandle_t domain);
nvtxResourceHandle_t HookDomainResourceCreate(nvtxDomainHandle_t domain, nvtxResourceAttributes_t* attr);
void HookDomainResourceDestroy(nvtxResourceHandle_t resource);
void HookDomainNameCategoryA(nvtxDomainHandle_t domain, uint32_t category, const char* name);
void HookDomainNameCategoryW(nvtxDomainHandle_t domain, uint32_t category, const wchar_t* name);
nvtxStringHandle_t HookDomainRegisterStringA(nvtxDomainHandle_t domain, const char* text);
nvtxStringHandle_t HookDomainRegisterStringW(nvtxDomainHandle_t domain, const wchar_t* text);
nvtxDomainHandle_t HookDomainCreateA(const char* name);
nvtxDomainHandle_t HookDomainCreateW(const wchar_t* name);
void HookDomainDestroy(nvtxDomainHandle_t domain);
void HookInitialize(const void* reserved);

uint32_t CurrentThreadTid();

// Registers the NVTX record decoder and registry emitter with the collector (idempotent).
void RegisterWithCollector();

// The session starts on the first NVTX call that reaches a hook, not inside the injection init
// (issue 28, item 2): NVTX runs InitializeInjectionNvtx2 inside nvtxInitOnce, where every other NVTX
// call spins until it returns, a signal handler's on the same thread for ever. Starting a session
// takes over a millisecond (config, file, thread); filling the function table takes microseconds.
// g_start_pending: set by the init, cleared once the start was tried. StartDeferred: application
// threads, from a hook; a hook re-entered on the thread that is starting (a signal handler) records
// nothing rather than wait.
// OnSlow: a hook found NVTX off. Starts the session if that is pending; otherwise looks again,
// since another thread may have finished the start between the two loads (it enables the sources
// before it clears g_start_pending, with release; read here with acquire).
extern std::atomic<bool> g_start_pending;
bool StartDeferred();
bool OnSlow();
inline void StartIfPending() {
  if (g_start_pending.load(std::memory_order_acquire)) StartDeferred();
}

// Entry points (exported by inject/entry.cc under their NVTX names).
int InitializeCore(NvtxGetExportTableFunc_t get_export_table);
int InitializeExtension(nvtxExtModuleInfo_t* module_info);

}  // namespace gt::nvtx
