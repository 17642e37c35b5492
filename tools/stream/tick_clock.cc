#include "tools/stream/tick_clock.h"

#include <algorithm>

namespace gt::stream {

bool TickClock::Build(std::vector<TickPair> pairs) {
  std::sort(pairs.begin(), pairs.end(), [](const TickPair& a, const TickPair& b) { return a.ticks < b.ticks; });
  pairs_.clear();
  for (const TickPair& p : pairs) {
    if (p.ticks == 0 || p.monotonic_ns == 0) continue;
    if (!pairs_.empty() && (p.ticks <= pairs_.back().ticks || p.monotonic_ns <= pairs_.back().monotonic_ns)) continue;
    pairs_.push_back(p);
  }
  hint_ = 0;
  if (pairs_.size() >= 2) {
    span_ticks_ = pairs_.back().ticks - pairs_.front().ticks;
    span_ns_ = pairs_.back().monotonic_ns - pairs_.front().monotonic_ns;
  } else {
    span_ticks_ = span_ns_ = 1;
  }
  return !pairs_.empty();
}

double TickClock::ticks_per_second() const {
  if (pairs_.size() < 2) return 0;
  return static_cast<double>(span_ticks_) * 1e9 / static_cast<double>(span_ns_);
}

uint64_t TickClock::Extrapolate(const TickPair& from, uint64_t ticks) const {
  // Integer arithmetic in 128 bits: ticks of a day times ns of a day still fit.
  if (ticks >= from.ticks) {
    unsigned __int128 d = static_cast<unsigned __int128>(ticks - from.ticks) * span_ns_ / span_ticks_;
    return from.monotonic_ns + static_cast<uint64_t>(d);
  }
  unsigned __int128 d = static_cast<unsigned __int128>(from.ticks - ticks) * span_ns_ / span_ticks_;
  return from.monotonic_ns > d ? from.monotonic_ns - static_cast<uint64_t>(d) : 0;
}

uint64_t TickClock::ToNs(uint64_t ticks) const {
  if (pairs_.empty()) return ticks;
  if (ticks <= pairs_.front().ticks) return Extrapolate(pairs_.front(), ticks);
  if (ticks >= pairs_.back().ticks) return Extrapolate(pairs_.back(), ticks);
  // Segment i: pairs_[i].ticks <= ticks < pairs_[i + 1].ticks.
  size_t i = hint_;
  if (i + 1 >= pairs_.size() || ticks < pairs_[i].ticks || ticks >= pairs_[i + 1].ticks) {
    auto it = std::upper_bound(pairs_.begin(), pairs_.end(), ticks,
                               [](uint64_t t, const TickPair& p) { return t < p.ticks; });
    i = static_cast<size_t>(it - pairs_.begin()) - 1;
    hint_ = i;
  }
  const TickPair& a = pairs_[i];
  const TickPair& b = pairs_[i + 1];
  unsigned __int128 d = static_cast<unsigned __int128>(ticks - a.ticks) * (b.monotonic_ns - a.monotonic_ns) /
                        (b.ticks - a.ticks);
  return a.monotonic_ns + static_cast<uint64_t>(d);
}

}  // namespace gt::stream
