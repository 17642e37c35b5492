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

std::unique_ptr<ExportModule> MakeCallStackExport();

// "cudaMalloc" for "cudaMalloc_v3020"; names without a version suffix unchanged.
std::string StripCallbackVersion(const std::string& name);

}  // namespace gt::exporter
