// NVTX injection: fills each NVTX instance's function table with our hooks.
//
// Called by NVTX's loader on the application thread that makes an instance's first NVTX call —
// once per instance (every DSO that includes NVTX3 has its own), possibly concurrently, so it is
// idempotent and keeps no per-call state.
#include <cstring>

#include "collector/session.h"
#include "inject/nvtx/nvtx_hooks.h"
#include "inject/nvtx/nvtx_record.h"
#include "inject/nvtx/nvtx_registry.h"

namespace gt::nvtx {
namespace {

template <typename Fn>
void Set(NvtxFunctionTable table, unsigned int size, unsigned int cbid, Fn fn) {
  // Bounds- and NULL-checked: older NVTX versions carry shorter tables.
  if (table == nullptr || cbid == 0 || cbid >= size || table[cbid] == nullptr) return;
  *table[cbid] = reinterpret_cast<NvtxFunctionPointer>(fn);
}

bool FillCore(const NvtxExportTableCallbacks* cb) {
  NvtxFunctionTable t = nullptr;
  unsigned int n = 0;
  if (cb->GetModuleFunctionTable(NVTX_CB_MODULE_CORE, &t, &n) == 0 || t == nullptr) return false;
  Set(t, n, NVTX_CBID_CORE_MarkEx, &HookMarkEx);
  Set(t, n, NVTX_CBID_CORE_MarkA, &HookMarkA);
  Set(t, n, NVTX_CBID_CORE_MarkW, &HookMarkW);
  Set(t, n, NVTX_CBID_CORE_RangeStartEx, &HookRangeStartEx);
  Set(t, n, NVTX_CBID_CORE_RangeStartA, &HookRangeStartA);
  Set(t, n, NVTX_CBID_CORE_RangeStartW, &HookRangeStartW);
  Set(t, n, NVTX_CBID_CORE_RangeEnd, &HookRangeEnd);
  Set(t, n, NVTX_CBID_CORE_RangePushEx, &HookRangePushEx);
  Set(t, n, NVTX_CBID_CORE_RangePushA, &HookRangePushA);
  Set(t, n, NVTX_CBID_CORE_RangePushW, &HookRangePushW);
  Set(t, n, NVTX_CBID_CORE_RangePop, &HookRangePop);
  Set(t, n, NVTX_CBID_CORE_NameCategoryA, &HookNameCategoryA);
  Set(t, n, NVTX_CBID_CORE_NameCategoryW, &HookNameCategoryW);
  Set(t, n, NVTX_CBID_CORE_NameOsThreadA, &HookNameOsThreadA);
  Set(t, n, NVTX_CBID_CORE_NameOsThreadW, &HookNameOsThreadW);
  return true;
}

bool FillCore2(const NvtxExportTableCallbacks* cb) {
  NvtxFunctionTable t = nullptr;
  unsigned int n = 0;
  if (cb->GetModuleFunctionTable(NVTX_CB_MODULE_CORE2, &t, &n) == 0 || t == nullptr) return false;
  Set(t, n, NVTX_CBID_CORE2_DomainMarkEx, &HookDomainMarkEx);
  Set(t, n, NVTX_CBID_CORE2_DomainRangeStartEx, &HookDomainRangeStartEx);
  Set(t, n, NVTX_CBID_CORE2_DomainRangeEnd, &HookDomainRangeEnd);
  Set(t, n, NVTX_CBID_CORE2_DomainRangePushEx, &HookDomainRangePushEx);
  Set(t, n, NVTX_CBID_CORE2_DomainRangePop, &HookDomainRangePop);
  Set(t, n, NVTX_CBID_CORE2_DomainResourceCreate, &HookDomainResourceCreate);
  Set(t, n, NVTX_CBID_CORE2_DomainResourceDestroy, &HookDomainResourceDestroy);
  Set(t, n, NVTX_CBID_CORE2_DomainNameCategoryA, &HookDomainNameCategoryA);
  Set(t, n, NVTX_CBID_CORE2_DomainNameCategoryW, &HookDomainNameCategoryW);
  Set(t, n, NVTX_CBID_CORE2_DomainRegisterStringA, &HookDomainRegisterStringA);
  Set(t, n, NVTX_CBID_CORE2_DomainRegisterStringW, &HookDomainRegisterStringW);
  Set(t, n, NVTX_CBID_CORE2_DomainCreateA, &HookDomainCreateA);
  Set(t, n, NVTX_CBID_CORE2_DomainCreateW, &HookDomainCreateW);
  Set(t, n, NVTX_CBID_CORE2_DomainDestroy, &HookDomainDestroy);
  Set(t, n, NVTX_CBID_CORE2_Initialize, &HookInitialize);
  return true;
}

}  // namespace

std::atomic<bool> g_start_pending{false};

namespace {
__thread bool t_starting __attribute__((tls_model("initial-exec"))) = false;
}  // namespace

bool StartDeferred() {
  if (t_starting) return false;  // a handler that interrupted this thread's own start
  t_starting = true;
  bool wanted = EnsureSession(kSourceNvtx);
  t_starting = false;
  g_start_pending.store(false, std::memory_order_release);
  return wanted && IsEnabled(kSourceNvtx);
}

bool OnSlow() {
  if (g_start_pending.load(std::memory_order_acquire)) return StartDeferred();
  return IsEnabled(kSourceNvtx);
}

// Registers the NVTX decoders and emitter with the collector (idempotent).
void RegisterWithCollector() {
  RegisterRecordDecoder(kRecordNvtx, &DecodeRecord);
  RegisterEmitter(&EmitNvtxRegistry);
}

int InitializeCore(NvtxGetExportTableFunc_t get_export_table) {
  if (get_export_table == nullptr) return 0;
  RegisterWithCollector();
  // Nothing slow here (nvtx_hooks.h, g_start_pending): the hooks start the session. A process whose
  // tracing is off pays two relaxed loads per NVTX call after the first.
  g_start_pending.store(true, std::memory_order_relaxed);
  const auto* cb = static_cast<const NvtxExportTableCallbacks*>(get_export_table(NVTX_ETID_CALLBACKS));
  if (cb == nullptr || cb->struct_size < sizeof(NvtxExportTableCallbacks) || cb->GetModuleFunctionTable == nullptr) {
    return 0;
  }
  if (const auto* vi = static_cast<const NvtxExportTableVersionInfo*>(get_export_table(NVTX_ETID_VERSIONINFO));
      vi != nullptr && vi->struct_size >= sizeof(NvtxExportTableVersionInfo) && vi->SetInjectionNvtxVersion != nullptr) {
    vi->SetInjectionNvtxVersion(NVTX_VERSION);
  }
  bool core = FillCore(cb);
  bool core2 = FillCore2(cb);
  return (core || core2) ? 1 : 0;
}

}  // namespace gt::nvtx
