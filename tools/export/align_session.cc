#include "tools/export/align_session.h"

#include <algorithm>
#include <map>
#include <tuple>

namespace gt::exporter {

void UsePerRankDomains(SessionPlan* plan,
                       const std::vector<std::string>& host_names,
                       const std::vector<std::string>& boot_ids,
                       const std::vector<int64_t>& global_pids) {
  plan->domain_kind = "rank";
  plan->domains.clear();
  plan->aligned = plan->streams.size() == 1;
  for (size_t i = 0; i < plan->streams.size(); ++i) {
    StreamPlacement& p = plan->streams[i];
    p.clock_domain = static_cast<uint32_t>(i);
    ClockDomain d;
    d.host_name = i < host_names.size() ? host_names[i] : "";
    d.boot_id = i < boot_ids.size() ? boot_ids[i] : "";
    d.host_index = p.host_index;
    d.global_pid = i < global_pids.size() ? global_pids[i] : 0;
    d.alignment.aligned_to = static_cast<uint32_t>(i);
    plan->domains.push_back(d);
  }
  if (plan->domains.size() == 1)
    plan->domains[0].alignment.method = "reference";
}

void AlignSession(const std::vector<ProcessAnchors>& procs, SessionPlan* plan) {
  AlignInput in;
  in.domains = static_cast<uint32_t>(plan->domains.size());
  in.processes = static_cast<uint32_t>(plan->streams.size());
  in.reference_domain = plan->streams.empty() ? 0 : plan->streams[0].clock_domain;
  std::map<std::tuple<uint64_t, std::string, uint64_t>, uint32_t> instances;
  for (size_t p = 0; p < procs.size() && p < plan->streams.size(); ++p) {
    for (const ProcessAnchors::End& e : procs[p].ends) {
      auto [it, added] = instances.try_emplace({e.comm_hash, e.func, e.seq}, static_cast<uint32_t>(instances.size()));
      in.anchors.push_back({plan->streams[p].clock_domain, static_cast<uint32_t>(p), it->second, e.t_ns});
    }
  }
  // Domains no collective reaches keep their clock-pair (NTP) mapping: no correction is supplied.
  // (Their clock pairs cannot tell drift: NTP slews CLOCK_REALTIME and CLOCK_MONOTONIC alike, so
  // realtime - monotonic only moves when the wall clock is stepped; GTRACE_RANKS.realtimeDriftPpb
  // reports it.)
  AlignResult r = EstimateAlignment(in);
  for (uint32_t d = 0; d < in.domains; ++d)
    plan->domains[d].alignment = r.domains[d];
  int64_t min_start = 0;
  for (size_t p = 0; p < plan->streams.size(); ++p) {
    StreamPlacement& s = plan->streams[p];
    const DomainAlignment& a = r.domains[s.clock_domain];
    s.correction = a.correction;
    s.method = a.method;
    s.residual = p < r.processes.size() ? r.processes[p] : ProcessResidual();
    s.align_error_ns = a.stderr_ns;
    if (p < procs.size())
      min_start = std::min(min_start, s.correction.Apply(procs[p].start_ns));
  }
  if (min_start < 0) {
    int64_t shift = -min_start;
    plan->session_utc_ns -= shift;
    plan->system_clock_ns -= shift;
    for (StreamPlacement& s : plan->streams) {
      s.offset_ns += shift;
      s.correction.ref_ns += shift;
    }
    for (ClockDomain& d : plan->domains)
      d.alignment.correction.ref_ns += shift;
  }
  plan->aligned = true;
}

}  // namespace gt::exporter
