// Where each field of schema/callstack.proto goes in the nsys export, or why it does not. Kept honest
// by tests/callstack/callstack_fields_test.cc (a proto field missing here fails it).
#pragma once

namespace gt::exporter {

struct CallStackFieldDestination {
  const char* message;
  const char* field;
  const char* destination;  // "TABLE.column[, ...]" or "not exported: <why>"
};

inline constexpr CallStackFieldDestination kCallStackFieldMap[] = {
    {"CallStackConfig", "spec", "META_DATA_CAPTURE PROCESS_n:CUDA_BACKTRACE"},
    {"CallStackConfig", "classes", "META_DATA_CAPTURE PROCESS_n:CUDA_BACKTRACE_CLASSES"},
    {"CallStackConfig", "max_frames", "META_DATA_CAPTURE PROCESS_n:CUDA_BACKTRACE_MAX_FRAMES"},
    {"CallStackConfig", "unwinder_path", "META_DATA_CAPTURE PROCESS_n:CUDA_BACKTRACE_UNWINDER"},
    {"CallStackConfig", "runtime_apis_selected", "META_DATA_CAPTURE PROCESS_n:CUDA_BACKTRACE_APIS"},
    {"CallStackConfig", "driver_apis_selected", "META_DATA_CAPTURE PROCESS_n:CUDA_BACKTRACE_APIS"},
    {"CallStackConfig", "max_nesting", "not exported: a constant of the library, documented in docs/callstacks.md"},
    {"CallStackConfig", "python_backtrace", "META_DATA_CAPTURE PROCESS_n:PYTHON_BACKTRACE"},
    {"CallStackConfig", "python_version", "META_DATA_CAPTURE PROCESS_n:PYTHON_BACKTRACE (the version read)"},
    {"CallStackClassThreshold", "api_class", "META_DATA_CAPTURE PROCESS_n:CUDA_BACKTRACE_CLASSES"},
    {"CallStackClassThreshold", "threshold_ns", "META_DATA_CAPTURE PROCESS_n:CUDA_BACKTRACE_CLASSES"},

    {"LoadedModule", "module_id", "not exported: joins backtraces to modules inside one stream"},
    {"LoadedModule", "path", "CUDA_CALLCHAINS.module; the file symbolized"},
    {"LoadedModule", "build_id", "not exported: checks that the file symbolized is the one that ran"},
    {"LoadedModule", "load_bias", "CUDA_CALLCHAINS.symbol (address - bias = module offset)"},
    {"LoadedModule", "start_address", "not exported: which module holds an address"},
    {"LoadedModule", "end_address", "not exported: which module holds an address"},
    {"LoadedModule", "loaded_ts_ns", "not exported: which module held an address at the capture time"},
    {"LoadedModule", "main_executable", "not exported: informational"},
    {"ModuleUnload", "module_id", "not exported: which module held an address at the capture time"},
    {"ModuleUnload", "ts_ns", "not exported: which module held an address at the capture time"},

    {"CallStackDef", "stack_id", "CUDA_CALLCHAINS.id (one id per distinct stack in the database)"},
    {"CallStackDef", "addresses", "CUDA_CALLCHAINS.originalIP, symbol, module, unresolved, stackDepth"},
    {"CallStackDef", "truncated", "not exported: CUDA_CALLCHAINS has no column for it (documented limit)"},
    {"CallStackDef", "python_frames", "CUDA_CALLCHAINS rows of the Python frames (symbol, module; docs/callstacks.md)"},
    {"CallStackDef", "python_truncated", "not exported: CUDA_CALLCHAINS has no column for it (documented limit)"},
    {"PythonFrame", "file_id", "CUDA_CALLCHAINS.module and the ' at FILE:LINE' of CUDA_CALLCHAINS.symbol"},
    {"PythonFrame", "function_id", "CUDA_CALLCHAINS.symbol"},
    {"PythonFrame", "line", "CUDA_CALLCHAINS.symbol (' at FILE:LINE')"},

    {"CudaApiBacktrace", "start_delta_ns", "CUPTI_ACTIVITY_KIND_RUNTIME.start (eventClass 67)"},
    {"CudaApiBacktrace", "duration_ns", "CUPTI_ACTIVITY_KIND_RUNTIME.end (eventClass 67)"},
    {"CudaApiBacktrace", "kind", "CUPTI_ACTIVITY_KIND_RUNTIME.nameId fallback (eventClass is 67 for both kinds)"},
    {"CudaApiBacktrace", "cbid", "CUPTI_ACTIVITY_KIND_RUNTIME.nameId fallback"},
    {"CudaApiBacktrace", "correlation_id", "CUPTI_ACTIVITY_KIND_RUNTIME.correlationId (eventClass 67)"},
    {"CudaApiBacktrace", "stack_id", "CUPTI_ACTIVITY_KIND_RUNTIME.callchainId (eventClass 67)"},
    {"CudaApiBacktrace", "name_id", "CUPTI_ACTIVITY_KIND_RUNTIME.nameId (eventClass 67, version suffix stripped)"},
    {"CudaApiBacktrace", "return_value", "CUPTI_ACTIVITY_KIND_RUNTIME.returnValue (eventClass 67)"},

    {"CallStackLoss", "ts_ns", "not exported"},
    {"CallStackLoss", "nesting_overflow", "export warning (call stacks: ... nested too deep)"},
    {"CallStackLoss", "unwind_failures", "export warning (call stacks: ... unwinder failures)"},
};

}  // namespace gt::exporter
