// GpuClockMap: puts NCCL kernel-channel timestamps (the GPU's %globaltimer, in ns, as NCCL's
// KernelCh events carry them) onto the stream clock (CLOCK_MONOTONIC ns). Used by the NCCL export
// module, one map per stream; single-threaded.
//
// Model (docs/nccl.md, "GPU clock"):
//   1. Base. %globaltimer is initialised from the host's system clock (CLOCK_REALTIME) when the
//      device is attached and then ticks in ns without following later changes of the host clock
//      (NVIDIA libcu++ documentation of cuda::std::chrono::system_clock; NCCL's example traces
//      show Unix-epoch values). So g -> g - (realtime - monotonic), with realtime - monotonic
//      interpolated between the stream's clock snapshots (header + one per second; snapshots less
//      than kSnapshotSpacingNs after the previous one are dropped as jitter): steps and slewing of
//      the host clock relative to CLOCK_MONOTONIC are followed.
//   2. Causal correction, per window of host time (1 s). Every observation bounds the error e of
//      the base mapping: NCCL's proxy thread reads a channel's start/end timestamp only after the
//      GPU wrote it, so startEvent / stopEvent host times are upper bounds (e <= host - base(g));
//      a channel cannot start before its operation's API call, so CollApi/P2pApi start times are
//      lower bounds (e >= host - base(g)). Per window: U = min upper bound, L = max lower bound.
//      The base is kept for the whole stream (e = 0 everywhere, GPU durations unchanged) when no
//      window contradicts it (U >= 0, L <= 0), one window confirms it (U <= kTrustBaseNs) and no
//      window with kEvidenceSamples or more samples lags by more than kTrustBaseNs. Otherwise, per
//      window: e = 0 if 0 lies in [L, U] and U <= kTrustBaseNs, else e = U (the tightest
//      always-valid bound; its error is the proxy's smallest observation latency), raised to L if
//      L <= U; if L > U the window is inconsistent (counted) and e = U. Between window centres e is
//      interpolated linearly (this follows a drifting GPU timer); outside them the nearest value holds.
// What must be confirmed on a GPU: that %globaltimer is CLOCK_REALTIME-based on the driver in use
// (if not, step 2 still aligns it, to within the proxy's observation latency) and the size of U.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace gt::exporter {

class GpuClockMap {
 public:
  static constexpr int64_t kWindowNs = 1000000000;  // 1 s of host time
  static constexpr int64_t kTrustBaseNs = 100000;   // 100 us
  static constexpr uint32_t kEvidenceSamples = 16;
  static constexpr int64_t kSnapshotSpacingNs = 900000000;  // 0.9 s

  struct Window {
    int64_t start_ns = 0;  // stream clock, first base-mapped sample time in the window
    int64_t end_ns = 0;
    int64_t base_offset_ns = 0;  // realtime - monotonic used for the window's first sample
    int64_t correction_ns = 0;   // e
    std::optional<int64_t> lower_ns;  // L
    std::optional<int64_t> upper_ns;  // U
    uint32_t samples = 0;
    std::string method;  // "base", "upper-bound", "lower-bound", "inconsistent", "no-bound"
  };

  // Clock pairs of the stream (any order; duplicates fine).
  void AddSnapshot(uint64_t monotonic_ns, uint64_t realtime_ns);
  // The host saw GPU time `gpu_ns` at host time `host_ns` (or later).
  void AddUpperBound(uint64_t gpu_ns, uint64_t host_ns);
  // The host was at `host_ns` before GPU time `gpu_ns` happened.
  void AddLowerBound(uint64_t gpu_ns, uint64_t host_ns);
  // Computes the windows. Call after every Add*; ToStreamNs before Fit uses the base alone.
  void Fit();
  // The same fit without holding the samples (the export spills them): `each(false, fn)` must call
  // fn once per sample (gpu ns, host ns, upper bound?). It is run twice: first `each(true, fn)`,
  // which only needs to give every distinct GPU time of the samples at least once (the windows
  // start at the smallest base-mapped time; the host times are not used), then `each(false, fn)`.
  // Memory: one entry per window.
  using SampleFn = std::function<void(uint64_t gpu_ns, uint64_t host_ns, bool upper)>;
  void FitStreamed(const std::function<void(bool origin_pass, const SampleFn&)>& each);

  // GPU timer -> stream clock ns (may be negative for nonsense input; callers clamp).
  int64_t ToStreamNs(uint64_t gpu_ns) const;
  int64_t BaseNs(uint64_t gpu_ns) const;  // step 1 only

  const std::vector<Window>& windows() const { return windows_; }
  uint32_t inconsistent_windows() const { return inconsistent_; }

 private:
  struct Snapshot {
    int64_t monotonic_ns;
    int64_t realtime_ns;
  };
  struct Sample {
    int64_t gpu_ns;
    int64_t host_ns;
    bool upper;  // host_ns is an upper bound (else a lower bound)
  };
  int64_t OffsetFor(uint64_t gpu_ns) const;
  void ChooseCorrections();
  int64_t CorrectionAt(int64_t base_ns) const;

  std::vector<Snapshot> snapshots_;  // sorted by realtime after Fit
  std::vector<Sample> samples_;
  std::vector<Window> windows_;
  bool sorted_ = false;
  uint32_t inconsistent_ = 0;
};

}  // namespace gt::exporter
