// Field numbers of schema/sampling.proto (and of its Chunk fields in gtrace.proto), for the hand-written
// encoder in inject/sampling/. tests/sampling/sampling_unit_test.cc compares every constant with the
// protoc-generated descriptor and fails when a field has no constant here.
#pragma once

#include <cstdint>

namespace gt::field {

namespace chunk {
inline constexpr uint32_t kCpuSamplingConfig = 160, kCpuSamples = 161, kCpuSamplingLosses = 162, kCpuPythonSampling = 163;
}
namespace cpu_sampling_config {
inline constexpr uint32_t kFrequencyHz = 1, kPeriodNs = 2, kEvent = 3, kSample = 4, kPythonSampling = 5, kBacktrace = 6;
}
namespace cpu_sample {
inline constexpr uint32_t kTsDeltaNs = 1, kTid = 2, kCpu = 3, kPeriodNs = 4, kIps = 5, kThreadState = 6, kPythonFrames = 7,
                           kPythonTruncated = 8;
}
namespace cpu_sampling_loss {
inline constexpr uint32_t kTsNs = 1, kLostSamples = 2, kThreadsRefused = 3, kTruncatedSamples = 4, kPythonFramesDropped = 5,
                           kDwarfFallbacks = 6;
}
namespace cpu_python_sampling {
inline constexpr uint32_t kPythonVersion = 1, kOffReason = 2;
}

}  // namespace gt::field
