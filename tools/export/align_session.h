// Turns collective ends of many processes into the clock corrections of a SessionPlan: the step
// between the alignment pass (anchor_scan.h, or the GTRACE_NCCL_OPERATIONS of databases being
// merged) and the conversion. docs/multi-rank.md, "Clock alignment".
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tools/export/session_plan.h"

namespace gt::exporter {

struct ProcessAnchors {
  struct End {
    uint64_t comm_hash = 0;
    std::string func;
    uint64_t seq = 0;
    int64_t t_ns = 0;  // unaligned session ns (the plan's offset applied, no correction)
  };
  std::vector<End> ends;
  int64_t start_ns = 0;  // unaligned session ns of the process's start clock pair
};

// One clock domain per process instead of per host (--align-domain=rank). `host_names` and
// `boot_ids` per stream; keeps hw bytes, replaces plan->domains.
void UsePerRankDomains(SessionPlan* plan,
                       const std::vector<std::string>& host_names,
                       const std::vector<std::string>& boot_ids,
                       const std::vector<int64_t>& global_pids);

// Estimates the corrections from `processes` (one per plan->streams entry), stores them in the
// plan (domains, placements, residuals) and marks it aligned. The reference is the clock domain of
// the first input. When a correction would put a process start before time zero, time zero moves
// earlier (offsets, corrections and the session's UTC/monotonic zero shift together).
void AlignSession(const std::vector<ProcessAnchors>& processes, SessionPlan* plan);

}  // namespace gt::exporter
