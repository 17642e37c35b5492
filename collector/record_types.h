// Record types of the per-thread rings. Each producing module (inject/nvtx, inject/cupti, ...)
// owns one or more types and registers a decoder for them with the session; the drain thread
// calls the decoder to turn ring records into stream events.
#pragma once

#include <cstdint>

namespace gt {

enum RecordType : uint8_t {
  kRecordInvalid = 0,
  kRecordNvtx = 1,
  kRecordCudaApi = 2,      // CUPTI callback-side records (issue: CUDA tracing)
  kRecordNccl = 3,         // NCCL profiler plugin
  kRecordCallStack = 4,    // captured native stacks
  kRecordPadding = 5,      // filler, skipped by the drain thread
  kRecordOsrt = 6,         // OS runtime calls above the threshold (inject/osrt)
  kRecordOsrtStack = 7,    // OS runtime calls above the backtrace threshold, with their stack
  kRecordTypeCount = 16,   // decoders table size
};

}  // namespace gt
