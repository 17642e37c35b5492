// A fake NVTX instance for in-process NVTX tests (a test double, not NVTX): the export table and
// function slots NVTX's loader would give an injection library. nvtx::InitializeCore(&GetExportTable)
// writes gtrace's hooks into the slots; Core<Fn>(cbid) / Core2<Fn>(cbid) call them as an
// application's nvtx* calls would. One instance per test binary (the slots are globals).
#pragma once

#include "inject/nvtx/nvtx_hooks.h"

namespace gt::test {

inline NvtxFunctionPointer g_core_slots[NVTX_CBID_CORE_SIZE];
inline NvtxFunctionPointer* g_core_table[NVTX_CBID_CORE_SIZE + 1];
inline NvtxFunctionPointer g_core2_slots[NVTX_CBID_CORE2_SIZE];
inline NvtxFunctionPointer* g_core2_table[NVTX_CBID_CORE2_SIZE + 1];

inline int GetModuleFunctionTable(NvtxCallbackModule module, NvtxFunctionTable* out_table, unsigned int* out_size) {
  if (module == NVTX_CB_MODULE_CORE) {
    for (int i = 1; i < NVTX_CBID_CORE_SIZE; ++i)
      g_core_table[i] = &g_core_slots[i];
    *out_table = g_core_table;
    *out_size = NVTX_CBID_CORE_SIZE;
    return 1;
  }
  if (module == NVTX_CB_MODULE_CORE2) {
    for (int i = 1; i < NVTX_CBID_CORE2_SIZE; ++i)
      g_core2_table[i] = &g_core2_slots[i];
    *out_table = g_core2_table;
    *out_size = NVTX_CBID_CORE2_SIZE;
    return 1;
  }
  return 0;
}

inline const NvtxExportTableCallbacks kFakeNvtxCallbacks = {sizeof(NvtxExportTableCallbacks), &GetModuleFunctionTable};
inline const void* GetExportTable(uint32_t id) {
  return id == NVTX_ETID_CALLBACKS ? &kFakeNvtxCallbacks : nullptr;
}

template <typename Fn>
Fn Core(int cbid) {
  return reinterpret_cast<Fn>(g_core_slots[cbid]);
}
template <typename Fn>
Fn Core2(int cbid) {
  return reinterpret_cast<Fn>(g_core2_slots[cbid]);
}

}  // namespace gt::test
