// What gtrace traces: bits of the session's enabled mask (the hot path's one relaxed load).
#pragma once

#include <cstdint>

namespace gt {

enum SourceBit : uint32_t {
  kSourceNvtx = 1u << 0,
  kSourceCuda = 1u << 1,
  kSourceNccl = 1u << 2,
  kSourceGpuMetrics = 1u << 3,
  kSourceBacktrace = 1u << 4,
  kSourceOsrt = 1u << 5,  // OS runtime calls (-t osrt, inject/osrt/)
  kSourceSampling = 1u << 6,  // CPU sampling (--sample, inject/sampling/): read by the drain thread only
};

}  // namespace gt
