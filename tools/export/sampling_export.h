// CPU samples (--sample=process-tree, schema/sampling.proto) -> nsys's COMPOSITE_EVENTS and
// SAMPLING_CALLCHAINS (DDL: tools/nsys/nsys_tables.cc group 4), plus ENUM_SAMPLING_THREAD_STATE:
//  - COMPOSITE_EVENTS: one row per sample; id dense from 0 in the database, start = when the kernel
//    took it (session ns), cpu, threadState (1 Running: a cpu-clock sample fires only on CPU),
//    globalTid, cpuCycles = the thread's CPU time the sample stands for in ns (the cpu-clock count;
//    no PMU cycles are read — documented in docs/sampling.md);
//  - SAMPLING_CALLCHAINS: the sample's user stack, id = the sample's id, stackDepth 0 = the sampled
//    instruction, then its callers; symbol/module/unresolved/originalIP as CUDA_CALLCHAINS
//    (symbolizer.h: demangled name + " at FILE:LINE", or "<file>+0x<offset>" with unresolved 1);
//    kernelMode 0, thumbCode 0, specialEntry and unwindMethod NULL, as nsys's OSRT_CALLCHAINS rows of
//    the real 3.24.0 export;
//  - META_DATA_CAPTURE: PROCESS_<n>:CPU_SAMPLING ("process-tree cpu-clock 1000 Hz").
// Symbolization is offline, in this process, against the files on this machine.
#pragma once

#include <memory>

#include "tools/export/export_context.h"

namespace gt::exporter {

std::unique_ptr<ExportModule> MakeSamplingExport();

}  // namespace gt::exporter
