// Where each field of schema/sampling.proto goes in the nsys export, or why it does not. Kept honest by
// tests/sampling/sampling_unit_test.cc (a proto field missing here fails it).
#pragma once

namespace gt::exporter {

struct SamplingFieldDestination {
  const char* message;
  const char* field;
  const char* destination;  // "TABLE.column[, ...]" or "not exported: <why>"
};

inline constexpr SamplingFieldDestination kSamplingFieldMap[] = {
    {"CpuSamplingConfig", "frequency_hz", "META_DATA_CAPTURE PROCESS_n:CPU_SAMPLING"},
    {"CpuSamplingConfig", "period_ns", "not exported: 1e9 / frequency_hz (COMPOSITE_EVENTS.cpuCycles has each sample's)"},
    {"CpuSamplingConfig", "event", "META_DATA_CAPTURE PROCESS_n:CPU_SAMPLING"},
    {"CpuSamplingConfig", "sample", "META_DATA_CAPTURE PROCESS_n:CPU_SAMPLING"},
    {"CpuSamplingConfig", "python_sampling", "META_DATA_CAPTURE PROCESS_n:PYTHON_SAMPLING"},
    {"CpuSamplingConfig", "backtrace", "META_DATA_CAPTURE PROCESS_n:CPU_SAMPLING (\" backtrace=dwarf\" unless fp)"},
    {"CpuPythonSampling", "python_version", "META_DATA_CAPTURE PROCESS_n:PYTHON_SAMPLING"},
    {"CpuPythonSampling", "off_reason", "META_DATA_CAPTURE PROCESS_n:PYTHON_SAMPLING"},
    {"CpuSample", "ts_delta_ns", "COMPOSITE_EVENTS.start"},
    {"CpuSample", "tid", "COMPOSITE_EVENTS.globalTid"},
    {"CpuSample", "cpu", "COMPOSITE_EVENTS.cpu"},
    {"CpuSample", "period_ns", "COMPOSITE_EVENTS.cpuCycles"},
    {"CpuSample", "ips", "SAMPLING_CALLCHAINS (one row per address: originalIP, symbol, module, unresolved)"},
    {"CpuSample", "thread_state", "COMPOSITE_EVENTS.threadState"},
    {"CpuSample", "python_frames",
     "SAMPLING_CALLCHAINS (one row per frame, merged above CPython's eval loop: symbol FUNCTION at FILE:LINE, module "
     "FILE, originalIP NULL)"},
    {"CpuSample", "python_truncated", "not exported: no column for it (as CUDA_CALLCHAINS)"},
    {"CpuSamplingLoss", "ts_ns", "not exported: the export's warning sums the losses"},
    {"CpuSamplingLoss", "lost_samples", "export warning (no nsys table counts lost samples)"},
    {"CpuSamplingLoss", "threads_refused", "export warning"},
    {"CpuSamplingLoss", "truncated_samples", "export warning"},
    {"CpuSamplingLoss", "python_frames_dropped", "export warning"},
    {"CpuSamplingLoss", "dwarf_fallbacks", "export warning"},
};

}  // namespace gt::exporter
