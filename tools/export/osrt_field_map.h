// Where each field of schema/osrt.proto goes in the nsys export, or why it does not. Kept honest by
// tests/osrt/osrt_unit_test.cc (a proto field missing here fails it).
#pragma once

namespace gt::exporter {

struct OsrtFieldDestination {
  const char* message;
  const char* field;
  const char* destination;  // "TABLE.column[, ...]" or "not exported: <why>"
};

inline constexpr OsrtFieldDestination kOsrtFieldMap[] = {
    {"OsrtConfig", "threshold_ns", "META_DATA_CAPTURE PROCESS_n:OSRT_THRESHOLD"},
    {"OsrtConfig", "functions_traced", "META_DATA_CAPTURE PROCESS_n:OSRT_FUNCTIONS"},
    {"OsrtCall", "start_delta_ns", "OSRT_API.start"},
    {"OsrtCall", "duration_ns", "OSRT_API.end (start + duration)"},
    {"OsrtCall", "name_id", "OSRT_API.nameId"},
    {"OsrtCall", "return_value", "OSRT_API.returnValue"},
    {"OsrtCall", "stack_id", "OSRT_API.callchainId -> OSRT_CALLCHAINS (symbolized, tools/export/callstack_export.cc)"},
    {"OsrtConfig", "backtrace_threshold_ns", "META_DATA_CAPTURE PROCESS_n:OSRT_BACKTRACE_THRESHOLD"},
    {"OsrtConfig", "backtrace_depth", "META_DATA_CAPTURE PROCESS_n:OSRT_BACKTRACE_DEPTH"},
    {"OsrtConfig", "unwinder_path", "META_DATA_CAPTURE PROCESS_n:OSRT_BACKTRACE_UNWINDER"},
};

}  // namespace gt::exporter
