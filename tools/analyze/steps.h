// Iterations from the collective pattern, when no NVTX range names them: a training step issues
// the same sequence of collectives every time, and its first collective follows the longest pause
// (forward pass, optimizer) of the sequence. Pure computation; any thread.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace gt::analyze {

struct StepPattern {
  bool found = false;
  uint32_t period = 0;  // collectives per step
  uint32_t phase = 0;   // index (mod period) of a step's first collective
  std::string reason;   // why none was found
};

// `signatures[i]`: what collective i was (communicator, function, size); `times_ns[i]`: when the
// host issued it; both in issue order. A period p is accepted when the sequence repeats with
// period p (>= 90 % of positions match), and either p = 1 with even pauses (90th percentile <= 2 x
// 10th), or one phase's pauses are all longer than every other phase's (its 10th percentile above
// the others' 90th). The smallest such p wins.
StepPattern FindStepPattern(const std::vector<uint64_t>& signatures, const std::vector<int64_t>& times_ns);

}  // namespace gt::analyze
