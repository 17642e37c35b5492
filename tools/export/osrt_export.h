// OS runtime calls (-t osrt, schema/osrt.proto) -> nsys's OSRT_API table, as nsys writes it (shape
// from a real 3.24.0 export, tools/nsys/nsys_tables.cc; docs/osrt.md):
//  - one row per recorded call, eventClass 27 (TRACE_PROCESS_EVENT_OS_RUNTIME), globalTid of the
//    calling thread, nameId = the libc function's name in StringIds ("pthread_mutex_lock"), start/end
//    on the session clock;
//  - returnValue = the call's result (nsys's sample has 0 in every row; gtrace keeps the result);
//  - callchainId: the OSRT_CALLCHAINS id of the call's stack (--osrt-backtrace-threshold; written by
//    the call-stack export, callstack_export.h), 0 for a call without one, as nsys writes it;
//  - nestingLevel 0 and argumentsId 0: gtrace records no nesting and no arguments, which is what nsys
//    writes for a call without them.
// The process's threshold goes to META_DATA_CAPTURE (PROCESS_<n>:OSRT_THRESHOLD). Exporter thread.
#pragma once

#include <memory>

#include "tools/export/callstack_export.h"
#include "tools/export/export_context.h"

namespace gt::exporter {

inline constexpr int kEventClassOsRuntime = 27;

// `chains` (borrowed; the call-stack module, which must come before this one) gives the callchain ids.
std::unique_ptr<ExportModule> MakeOsrtExport(OsrtChains* chains = nullptr);

}  // namespace gt::exporter
