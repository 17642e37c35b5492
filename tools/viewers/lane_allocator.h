// LaneAllocator: spreads the slices of one logical track over lanes so that every lane nests
// properly (what Perfetto's slice tracks require). Slices must arrive in start order. Lane 0 is the
// track itself; the others become sibling tracks. Holds the ends of open slices only.
//
// Used by one thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace gt::viewers {

class LaneAllocator {
 public:
  // The lowest lane where [start_ns, end_ns] closes no later than the innermost open slice.
  size_t Place(int64_t start_ns, int64_t end_ns) {
    for (size_t i = 0; i < lanes_.size(); ++i) {
      std::vector<int64_t>& open = lanes_[i];
      while (!open.empty() && open.back() <= start_ns)
        open.pop_back();
      // An open slice that ends before start_ns was popped; a zero-length one at start_ns too.
      if (open.empty() || end_ns <= open.back()) {
        open.push_back(end_ns);
        return i;
      }
    }
    lanes_.push_back({end_ns});
    return lanes_.size() - 1;
  }
  size_t lanes() const { return lanes_.size(); }

 private:
  std::vector<std::vector<int64_t>> lanes_;  // per lane: ends of the open slices, innermost last
};

}  // namespace gt::viewers
