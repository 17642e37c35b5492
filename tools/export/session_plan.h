// SessionPlan: how the inputs of one `gtrace export` share a session when they are converted in
// parts (one database per rank, or per-rank parts merged into one; multi_export.h): the time
// base, the host numbering (hw byte of every globalTid) and the clock alignment, decided once
// before any part is written, so that all parts are consistent and merge without renumbering.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "tools/export/clock_align.h"

namespace gt::exporter {

// Least-squares line through a stream's clock pairs: realtime - monotonic as a function of
// monotonic. Its slope is the drift of CLOCK_MONOTONIC against CLOCK_REALTIME (NTP-disciplined),
// the clock-pair fallback of the alignment. Pairs closer than 0.9 s to the previous one are skipped
// (a second snapshot at start-up says nothing about drift).
struct ClockPairFit {
  uint64_t pairs = 0;
  int64_t first_mono_ns = 0;
  int64_t last_mono_ns = 0;
  double sx = 0, sy = 0, sxx = 0, sxy = 0;  // x = mono - first (s), y = realtime - mono - y0 (ns)
  int64_t y0_ns = 0;

  void Add(uint64_t mono_ns, uint64_t realtime_ns);
  // Slope in ns per s (ppb); false with fewer than 3 pairs or under 2 s of them.
  bool DriftPpb(int64_t* ppb) const;
};

// Where one input stream sits in the session.
struct StreamPlacement {
  uint32_t index = 0;         // position among all inputs (META_DATA_CAPTURE PROCESS_<index>: keys)
  uint32_t host_index = 0;    // host+boot index: the hw byte of the globalTids
  uint32_t clock_domain = 0;  // GTRACE_CLOCK_ALIGNMENT.domain
  int64_t offset_ns = 0;      // session ns = stream clock ns + offset_ns, before alignment
  ClockCorrection correction;
  std::string method = "reference";  // of its clock domain
  ProcessResidual residual;          // its collective ends after alignment
  int64_t align_error_ns = 0;        // its domain's statistical error
};

// One clock domain of the alignment (a host+boot, or a process with per-rank domains).
struct ClockDomain {
  std::string host_name;
  std::string boot_id;
  uint32_t host_index = 0;
  int64_t global_pid = 0;  // per-rank domains: the process; 0 for host domains
  DomainAlignment alignment;
};

struct SessionPlan {
  int64_t session_utc_ns = 0;            // UTC of time zero
  int64_t system_clock_ns = 0;           // CLOCK_MONOTONIC of time zero on the first host
  std::string session_id;                // shared by every database of this export (GTRACE_RANKS.sessionId)
  std::string domain_kind = "host";      // "host" or "rank"
  bool aligned = false;                  // the alignment was estimated (and applied unless a correction is 0)
  std::vector<StreamPlacement> streams;  // per input, in input order
  std::vector<ClockDomain> domains;
  // (host_index, pid) of every input: a part still knows which of its ancestors have streams of
  // their own (GTRACE_PROCESS_TREE.tracedAncestorGlobalPid, process_tree.cc).
  std::vector<std::pair<uint32_t, uint32_t>> traced_processes;
};

// Interned text -> StringIds id, shared by concurrent exports. Thread-safe.
class SharedStrings {
 public:
  int64_t Id(std::string_view text) {
    std::lock_guard<std::mutex> lock(mu_);
    auto [it, added] = ids_.try_emplace(std::string(text), next_);
    if (added)
      ++next_;
    return it->second;
  }

 private:
  std::mutex mu_;  // leaf lock: nothing else is taken while it is held
  std::unordered_map<std::string, int64_t> ids_;
  int64_t next_ = 0;
};

}  // namespace gt::exporter
