#include "tools/export/nccl_clock.h"

#include <algorithm>
#include <cstdlib>
#include <map>

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
  // realtime - monotonic at the GPU time (which reads like realtime), interpolated linearly between
  // the snapshots around it and held beyond the first and last.
  auto g = static_cast<int64_t>(gpu_ns);
  auto it = std::lower_bound(snapshots_.begin(), snapshots_.end(), g,
                             [](const Snapshot& s, int64_t v) { return s.realtime_ns < v; });
  if (it == snapshots_.begin()) return it->realtime_ns - it->monotonic_ns;
  if (it == snapshots_.end()) return snapshots_.back().realtime_ns - snapshots_.back().monotonic_ns;
  const Snapshot& a = *(it - 1);
  const Snapshot& b = *it;
  __int128 oa = a.realtime_ns - a.monotonic_ns;
  __int128 ob = b.realtime_ns - b.monotonic_ns;
  if (b.realtime_ns == a.realtime_ns) return static_cast<int64_t>(oa);
  return static_cast<int64_t>(oa + (ob - oa) * (g - a.realtime_ns) / (b.realtime_ns - a.realtime_ns));
}

int64_t GpuClockMap::BaseNs(uint64_t gpu_ns) const {
  if (!sorted_) {
    // Snapshots closer than kSnapshotSpacingNs to the previous one kept are dropped: their
    // realtime-monotonic difference varies by the pair's read jitter (tens of ns), which would
    // otherwise show up as a rate error over short spans.
    auto* self = const_cast<GpuClockMap*>(this);
    std::vector<Snapshot>& v = self->snapshots_;
    std::sort(v.begin(), v.end(), [](const Snapshot& a, const Snapshot& b) { return a.monotonic_ns < b.monotonic_ns; });
    std::vector<Snapshot> kept;
    for (const Snapshot& s : v) {
      if (kept.empty() || s.monotonic_ns - kept.back().monotonic_ns >= kSnapshotSpacingNs) kept.push_back(s);
    }
    std::sort(kept.begin(), kept.end(), [](const Snapshot& a, const Snapshot& b) { return a.realtime_ns < b.realtime_ns; });
    v.swap(kept);
    self->sorted_ = true;
  }
  return static_cast<int64_t>(gpu_ns) - OffsetFor(gpu_ns);
}

void GpuClockMap::Fit() {
  FitStreamed([this](bool, const SampleFn& fn) {
    for (const Sample& s : samples_) fn(static_cast<uint64_t>(s.gpu_ns), static_cast<uint64_t>(s.host_ns), s.upper);
  });
}

void GpuClockMap::FitStreamed(const std::function<void(bool origin_pass, const SampleFn&)>& each) {
  windows_.clear();
  inconsistent_ = 0;
  // Pass 1: the origin of the windows, the smallest base-mapped sample time.
  std::optional<int64_t> origin;
  each(true, [&](uint64_t gpu_ns, uint64_t, bool) {
    int64_t base = BaseNs(gpu_ns);
    if (!origin || base < *origin) origin = base;
  });
  if (!origin) return;
  // Pass 2: each window's bounds, in window order. A window starts at its smallest base-mapped
  // time, with that sample's offset (the first of equal ones: as a sort by time would give it).
  std::map<int64_t, Window> by_index;
  each(false, [&](uint64_t gpu_ns, uint64_t host_ns, bool upper) {
    int64_t base = BaseNs(gpu_ns);
    int64_t bound = static_cast<int64_t>(host_ns) - base;
    int64_t offset = static_cast<int64_t>(gpu_ns) - base;
    auto [it, fresh] = by_index.try_emplace((base - *origin) / kWindowNs);
    Window& w = it->second;
    if (fresh || base < w.start_ns) {
      w.start_ns = base;
      w.base_offset_ns = offset;
    }
    if (fresh || base > w.end_ns) w.end_ns = base;
    ++w.samples;
    if (upper) {
      w.upper_ns = w.upper_ns ? std::min(*w.upper_ns, bound) : bound;
    } else {
      w.lower_ns = w.lower_ns ? std::max(*w.lower_ns, bound) : bound;
    }
  });
  windows_.reserve(by_index.size());
  for (auto& [index, w] : by_index) windows_.push_back(std::move(w));
  ChooseCorrections();
}

void GpuClockMap::ChooseCorrections() {
  // The base holds for the whole stream when no bound contradicts it, at least one window confirms it
  // tightly, and no well-sampled window shows a consistent lag beyond kTrustBaseNs (an offset or a
  // drift); a sparse window with a slow observation is not evidence against it.
  bool base_ok = true;
  bool confirmed = false;
  for (const Window& w : windows_) {
    if (w.upper_ns && *w.upper_ns < 0) base_ok = false;
    if (w.lower_ns && *w.lower_ns > 0) base_ok = false;
    if (w.upper_ns && *w.upper_ns <= kTrustBaseNs) confirmed = true;
    if (w.upper_ns && *w.upper_ns > kTrustBaseNs && w.samples >= kEvidenceSamples) base_ok = false;
  }
  if (base_ok && confirmed) {
    for (Window& w : windows_) {
      w.correction_ns = 0;
      w.method = "base";
    }
    return;
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
