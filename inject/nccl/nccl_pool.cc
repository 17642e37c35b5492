#include "inject/nccl/nccl_pool.h"

#include <new>

namespace gt::nccl {
namespace {

uint32_t RoundUpPow2(uint64_t n) {
  uint64_t p = 1;
  while (p < n) p <<= 1;
  return static_cast<uint32_t>(p);
}

}  // namespace

bool EventPools::Create(uint32_t tracked_mask, uint32_t pool_events) {
  if (slots_ != nullptr) return true;
  uint32_t caps[abi::kEventTypeCount] = {};
  uint64_t total = 0;
  const uint32_t big = abi::kKernelCh | abi::kProxyOp | abi::kProxyStep | abi::kNetPlugin;
  for (uint32_t t = 0; t < abi::kEventTypeCount; ++t) {
    uint32_t bit = 1u << t;
    if (!(tracked_mask & bit)) continue;
    uint64_t n = pool_events;
    if (bit & big) n *= kBigPoolFactor;
    caps[t] = RoundUpPow2(n);
    total += caps[t];
  }
  if (total == 0) return true;  // nothing tracked: every Acquire returns nullptr
  EventSlot* slots = new (std::nothrow) EventSlot[total]();
  if (slots == nullptr) return false;
  uint64_t at = 0;
  for (uint32_t t = 0; t < abi::kEventTypeCount; ++t) {
    pools_[t].capacity = caps[t];
    pools_[t].first = caps[t] != 0 ? &slots[at] : nullptr;
    at += caps[t];
  }
  total_ = total;
  slots_ = slots;
  return true;
}

}  // namespace gt::nccl
