// Field numbers of schema/callstack.proto (and of its Chunk fields in gtrace.proto), for the
// hand-written encoder in inject/callstack/. tests/callstack/callstack_fields_test.cc compares every
// constant with the protoc-generated descriptor and fails when a field has no constant here.
#pragma once

#include <cstdint>

namespace gt::field {

namespace chunk {
inline constexpr uint32_t kCallStackConfig = 120, kLoadedModules = 121, kModuleUnloads = 122, kCallStackDefs = 123,
                          kCudaApiBacktraces = 124, kCallStackLosses = 125;
}
namespace callstack_config {
inline constexpr uint32_t kSpec = 1, kClasses = 2, kMaxFrames = 3, kUnwinderPath = 4, kRuntimeApisSelected = 5,
                          kDriverApisSelected = 6, kMaxNesting = 7, kPythonBacktrace = 8, kPythonVersion = 9;
}
namespace callstack_class_threshold {
inline constexpr uint32_t kApiClass = 1, kThresholdNs = 2;
}
namespace loaded_module {
inline constexpr uint32_t kModuleId = 1, kPath = 2, kBuildId = 3, kLoadBias = 4, kStartAddress = 5, kEndAddress = 6,
                          kLoadedTsNs = 7, kMainExecutable = 8;
}
namespace module_unload {
inline constexpr uint32_t kModuleId = 1, kTsNs = 2;
}
namespace callstack_def {
inline constexpr uint32_t kStackId = 1, kAddresses = 2, kTruncated = 3, kPythonFrames = 4, kPythonTruncated = 5;
}
namespace python_frame {
inline constexpr uint32_t kFileId = 1, kFunctionId = 2, kLine = 3;
}
namespace cuda_api_backtrace {
inline constexpr uint32_t kStartDeltaNs = 1, kDurationNs = 2, kKind = 3, kCbid = 4, kCorrelationId = 5, kStackId = 6,
                          kNameId = 7, kReturnValue = 8;
}
namespace callstack_loss {
inline constexpr uint32_t kTsNs = 1, kNestingOverflow = 2, kUnwindFailures = 3;
}

namespace enums {
// CallStackApiClass.
inline constexpr uint32_t kApiClassKernel = 1, kApiClassMemory = 2, kApiClassSync = 3, kApiClassOther = 4;
}  // namespace enums

}  // namespace gt::field
