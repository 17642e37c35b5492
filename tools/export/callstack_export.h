// Call stacks of CUDA API calls (--cudabacktrace) -> CUDA_CALLCHAINS and eventClass-67
// CUPTI_ACTIVITY_KIND_RUNTIME rows, as nsys writes them (shared notes nsys-sqlite-schema.md §4.10 and
// fact 8; checked against a real nsys export with backtraces, see docs/callstacks.md):
//  - each backtraced call gets one RUNTIME row with eventClass 67 (TRACE_PROCESS_EVENT_CUDABACKTRACE),
//    the same correlationId and globalTid as its eventClass 0/1 row, nameId = the API name without
//    CUPTI's "_vNNNN" suffix, start/end as gtrace's callbacks measured them, and callchainId; the
//    eventClass 0/1 row keeps callchainId NULL (as in nsys);
//  - CUDA_CALLCHAINS: one id per distinct stack in the database (ids from 0), stackDepth 0 = the
//    innermost frame; symbol = demangled function name, followed by " at FILE:LINE" when DWARF line
//    information exists; module = the module's path; unresolved = 1 (else NULL) when no symbol was
//    found, and then symbol = "<module file name>+0x<offset>"; originalIP = the recorded address.
// Symbolization is offline (symbolizer.h), in this process, against the files on this machine.
#pragma once

#include <memory>

#include "tools/export/export_context.h"

namespace gt::exporter {

inline constexpr int64_t kEventClassCudaBacktrace = 67;

// OSRT_CALLCHAINS for the stacks of OS runtime calls (--osrt-backtrace-threshold). The call-stack
// export owns the stream's modules, stacks and the symbolizer, so the OS runtime export asks it
// (exporter thread; the call-stack module must come first in MakeModules, so the CallStackDefs of a
// chunk are read before that chunk's OsrtCalls). Layout as in nsys's real 3.24.0 export: ids from 1
// (0: no stack), stackDepth 0 innermost, kernelMode 0, thumbCode 0, unresolved 0/1, specialEntry and
// unwindMethod NULL, originalIP the return address. One id per distinct stack in the database.
class OsrtChains {
 public:
  virtual ~OsrtChains() = default;
  // The OSRT_CALLCHAINS id of the current stream's stack `stack_id` (its rows are written when new);
  // 0 when the stream defines no such stack (counted, one warning at the end).
  virtual Status OsrtChainId(ExportContext& ctx, uint64_t stack_id, uint64_t ts_ns, int64_t* id) = 0;
};

// `osrt_chains` (optional) receives the module's OsrtChains, owned by the module.
std::unique_ptr<ExportModule> MakeCallStackExport(OsrtChains** osrt_chains = nullptr);

// "cudaMalloc" for "cudaMalloc_v3020"; names without a version suffix unchanged.
std::string StripCallbackVersion(const std::string& name);

}  // namespace gt::exporter
