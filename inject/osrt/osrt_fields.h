// Field numbers of schema/osrt.proto (and of its Chunk fields in gtrace.proto), for the hand-written
// encoder in inject/osrt/. tests/osrt/osrt_unit_test.cc compares every constant with the
// protoc-generated descriptor and fails when a field has no constant here.
#pragma once

#include <cstdint>

namespace gt::field {

namespace chunk {
inline constexpr uint32_t kOsrtConfig = 140, kOsrtCalls = 141;
}
namespace osrt_config {
inline constexpr uint32_t kThresholdNs = 1, kFunctionsTraced = 2, kBacktraceThresholdNs = 3, kBacktraceDepth = 4,
                           kUnwinderPath = 5;
}
namespace osrt_call {
inline constexpr uint32_t kStartDeltaNs = 1, kDurationNs = 2, kNameId = 3, kReturnValue = 4, kStackId = 5;
}

}  // namespace gt::field
