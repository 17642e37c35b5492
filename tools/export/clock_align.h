// Cross-host clock alignment (docs/multi-rank.md, "Clock alignment").
//
// Streams of one host and boot share CLOCK_MONOTONIC; the exporter maps each host onto the session
// time line through one clock pair (monotonic, realtime) of that host, so hosts agree only as well
// as their CLOCK_REALTIME (NTP: often milliseconds), and their monotonic clocks drift apart.
// Events that must coincide across ranks measure what is left: every rank of an NCCL collective
// finishes it at (nearly) the same instant, because its last step needs data from the others.
//
// Model: a rank r of clock domain d (a host; or a process with per-rank domains) observes the end
// of collective instance k at  t(r,k) = T(k) - c_d(t) + e(r,k),  with T(k) the common end time,
// c_d a linear correction (offset + drift) and e noise (end skew, GPU-clock conversion). The
// estimator solves  min sum (t + c_d(t) - T(k))^2  over T and c_d, with c = 0 for a reference
// domain per connected group of domains (alternating least squares from a median-based start,
// with outliers beyond 6 robust sigmas dropped). Domains no collective connects to the reference
// keep the mapping of their clock pairs (NTP), plus a correction the caller may supply.
//
// Pure computation, no I/O; any thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gt::exporter {

// corrected = t + At(t) on the session time line (ns). Integer arithmetic, mirrored exactly by
// SqlCorrected (SQLite's integer / and % truncate toward zero like C++'s).
struct ClockCorrection {
  int64_t offset_ns = 0;  // correction at ref_ns
  int64_t drift_ppb = 0;  // growth of the correction, ns per s of session time
  int64_t ref_ns = 0;

  static constexpr int64_t kMaxDriftPpb = 100000;  // 100 ppm: beyond it the model is not trusted

  int64_t At(int64_t t_ns) const {
    int64_t d = t_ns - ref_ns;
    return offset_ns + (d / 1000000) * drift_ppb / 1000 + ((d % 1000000) * drift_ppb) / 1000000000;
  }
  int64_t Apply(int64_t t_ns) const { return t_ns + At(t_ns); }
  bool is_zero() const { return offset_ns == 0 && drift_ppb == 0; }
  // SQL expression of `expr` corrected (expr is evaluated several times: pass a column name).
  std::string SqlCorrected(const std::string& expr) const;
};

// One observed end of a collective instance on one process.
struct AlignAnchor {
  uint32_t domain = 0;    // clock domain index
  uint32_t process = 0;   // process index (for per-process residuals)
  uint32_t instance = 0;  // collective instance index (dense)
  int64_t t_ns = 0;       // observed end, unaligned session ns
};

struct AlignInput {
  uint32_t domains = 0;
  uint32_t processes = 0;
  uint32_t reference_domain = 0;  // its correction is 0
  std::vector<AlignAnchor> anchors;
  // Per domain (optional): the correction its clock pairs imply, relative to the reference
  // domain's; used for domains that no collective connects to the reference.
  std::vector<std::optional<ClockCorrection>> clock_pair;
};

struct DomainAlignment {
  ClockCorrection correction;
  // "reference": left alone; "collectives": estimated from collective ends; "clock-pairs": no
  // collective connects it to the reference: mapped by its clock pairs alone (NTP; plus the
  // caller's clock-pair correction when given); "none": not estimated.
  std::string method = "none";
  uint32_t aligned_to = 0;       // the domain whose clock this one was aligned to
  uint64_t anchors = 0;          // observations used (outliers excluded)
  uint64_t outliers = 0;         // observations dropped as outliers
  uint64_t instances = 0;        // instances shared with other domains
  int64_t residual_rms_ns = 0;   // RMS of this domain's anchor residuals after alignment
  int64_t stderr_ns = 0;         // statistical error of the correction (rms / sqrt(instances))
  bool drift_estimated = false;  // false: too short a span (< kMinDriftSpanNs) or too few instances
};

struct ProcessResidual {
  uint64_t anchors = 0;
  int64_t rms_ns = 0;  // RMS of (aligned end - instance end)
  int64_t max_abs_ns = 0;
};

struct AlignResult {
  std::vector<DomainAlignment> domains;
  std::vector<ProcessResidual> processes;
  uint32_t iterations = 0;
};

// Anchors must span this long (and 8 shared instances) before a drift is fitted: over shorter
// spans the slope is noise, and it is extrapolated over the whole stream.
inline constexpr int64_t kMinDriftSpanNs = 200000000;

AlignResult EstimateAlignment(const AlignInput& input);

}  // namespace gt::exporter
