#include "tools/export/nccl_clock.h"

#include <algorithm>
#include <cstdlib>

namespace gt::exporter {

void GpuClockMap::AddSnapshot(uint64_t monotonic_ns, uint64_t realtime_ns) {
  snapshots_.push_back({static_cast<int64_t>(monotonic_ns), static_cast<int64_t>(realtime_ns)});
  sorted_ = false;
}

void GpuClockMap::AddUpperBound(uint64_t gpu_ns, uint64_t host_ns) {
  samples_.push_back({static_cast<int64_t>(gpu_ns), static_cast<int64_t>(host_ns), true});
}

void GpuClockMap::AddLowerBound(uint64_t gpu_ns, uint64_t host_ns) {
  samples_.push_back({static_cast<int64_t>(gpu_ns), static_cast<int64_t>(host_ns), false});
}

int64_t GpuClockMap::OffsetFor(uint64_t gpu_ns) const {
  if (snapshots_.empty()) return 0;
  // The snapshot whose realtime is nearest the GPU time (the GPU time is realtime-like).
  auto g = static_cast<int64_t>(gpu_ns);
  auto it = std::lower_bound(snapshots_.begin(), snapshots_.end(), g,
                             [](const Snapshot& s, int64_t v) { return s.realtime_ns < v; });
  const Snapshot* best = nullptr;
  if (it != snapshots_.end()) best = &*it;
  if (it != snapshots_.begin()) {
    const Snapshot* prev = &*(it - 1);
    if (best == nullptr || std::llabs(g - prev->realtime_ns) <= std::llabs(best->realtime_ns - g)) best = prev;
  }
  return best->realtime_ns - best->monotonic_ns;
}

int64_t GpuClockMap::BaseNs(uint64_t gpu_ns) const {
  if (!sorted_) {
    auto* self = const_cast<GpuClockMap*>(this);
    std::sort(self->snapshots_.begin(), self->snapshots_.end(),
              [](const Snapshot& a, const Snapshot& b) { return a.realtime_ns < b.realtime_ns; });
    self->sorted_ = true;
  }
  return static_cast<int64_t>(gpu_ns) - OffsetFor(gpu_ns);
}

void GpuClockMap::Fit() {
  windows_.clear();
  inconsistent_ = 0;
  if (samples_.empty()) return;
  struct Mapped {
    int64_t base_ns;
    int64_t bound_ns;
    bool upper;
    int64_t offset_ns;
  };
  std::vector<Mapped> mapped;
  mapped.reserve(samples_.size());
  for (const Sample& s : samples_) {
    int64_t base = BaseNs(static_cast<uint64_t>(s.gpu_ns));
    mapped.push_back({base, s.host_ns - base, s.upper, s.gpu_ns - base});
  }
  std::sort(mapped.begin(), mapped.end(), [](const Mapped& a, const Mapped& b) { return a.base_ns < b.base_ns; });
  int64_t origin = mapped.front().base_ns;
  for (const Mapped& m : mapped) {
    int64_t index = (m.base_ns - origin) / kWindowNs;
    if (windows_.empty() || (windows_.back().start_ns - origin) / kWindowNs != index) {
      Window w;
      w.start_ns = m.base_ns;
      w.base_offset_ns = m.offset_ns;
      windows_.push_back(w);
    }
    Window& w = windows_.back();
    w.end_ns = m.base_ns;
    ++w.samples;
    if (m.upper) {
      w.upper_ns = w.upper_ns ? std::min(*w.upper_ns, m.bound_ns) : m.bound_ns;
    } else {
      w.lower_ns = w.lower_ns ? std::max(*w.lower_ns, m.bound_ns) : m.bound_ns;
    }
  }
  for (Window& w : windows_) {
    if (!w.upper_ns) {
      // Only lower bounds: the base unless it violates them.
      w.correction_ns = w.lower_ns && *w.lower_ns > 0 ? *w.lower_ns : 0;
      w.method = w.lower_ns && *w.lower_ns > 0 ? "lower-bound" : "no-bound";
      continue;
    }
    int64_t u = *w.upper_ns;
    if (w.lower_ns && *w.lower_ns > u) {
      w.correction_ns = u;
      w.method = "inconsistent";
      ++inconsistent_;
    } else if (u >= 0 && u <= kTrustBaseNs && (!w.lower_ns || *w.lower_ns <= 0)) {
      w.correction_ns = 0;
      w.method = "base";
    } else {
      w.correction_ns = u;
      w.method = "upper-bound";
    }
  }
}

int64_t GpuClockMap::CorrectionAt(int64_t base_ns) const {
  if (windows_.empty()) return 0;
  auto centre = [](const Window& w) { return w.start_ns + (w.end_ns - w.start_ns) / 2; };
  if (base_ns <= centre(windows_.front())) return windows_.front().correction_ns;
  if (base_ns >= centre(windows_.back())) return windows_.back().correction_ns;
  for (size_t i = 0; i + 1 < windows_.size(); ++i) {
    int64_t c0 = centre(windows_[i]);
    int64_t c1 = centre(windows_[i + 1]);
    if (base_ns >= c0 && base_ns <= c1) {
      if (c1 == c0) return windows_[i].correction_ns;
      __int128 e0 = windows_[i].correction_ns;
      __int128 e1 = windows_[i + 1].correction_ns;
      return static_cast<int64_t>(e0 + (e1 - e0) * (base_ns - c0) / (c1 - c0));
    }
  }
  return windows_.back().correction_ns;
}

int64_t GpuClockMap::ToStreamNs(uint64_t gpu_ns) const {
  int64_t base = BaseNs(gpu_ns);
  return base + CorrectionAt(base);
}

}  // namespace gt::exporter
