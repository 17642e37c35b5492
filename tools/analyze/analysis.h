// gt::analyze — `gtrace analyze DB...`: cross-rank analysis of gtrace databases (one merged
// database, or the per-rank databases of one export): iterations and their spread, stragglers at
// each collective, the POP efficiency factors for GPU traces, GPU idle gaps, communication overlap,
// and a GPU-utilisation heatmap. Definitions: docs/multi-rank.md, "gtrace analyze".
//
// Reads the databases read-only, twice each (NVTX steps and NCCL operations, then GPU activity),
// one rank's GPU intervals in memory at a time; cross-rank state is per step and per collective
// instance. Single-threaded; called by the CLI.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "schema/status.h"

namespace gt::analyze {

struct AnalyzeOptions {
  std::vector<std::string> databases;
  std::string step_range;       // NVTX range name marking one iteration; "": from the collective pattern
  uint32_t skip_steps = 0;      // leading iterations left out (warm-up)
  int64_t gap_min_ns = 100000;  // GPU idle gaps from this length
  uint32_t top = 10;            // rows of the "top" tables
  uint32_t heatmap_bins = 240;  // columns of the utilisation heatmap
  bool keep_entries = false;    // keep every rank's entry into every collective (report "entries")
  // GPU idle gaps from this length are attributed to the launching thread (report gpu_gap_causes,
  // gap_causes.h): its OS runtime calls and CPU samples during the gap. 0: no attribution.
  int64_t gap_cause_min_ns = 1000000;
};

struct RankResult {
  int64_t global_pid = 0;
  int32_t rank = 0;
  int32_t local_rank = -1;
  std::string host;
  bool has_gpu = false;
  // GPU time inside the analysis window.
  int64_t compute_ns = 0, comm_ns = 0, busy_ns = 0, overlap_ns = 0, idle_ns = 0;
  uint64_t gaps = 0;
  int64_t gap_ns = 0, largest_gap_ns = 0, largest_gap_start_ns = 0;
  std::vector<int64_t> bin_busy_ns;
  // Iterations.
  uint32_t steps = 0;
  int64_t step_total_ns = 0, wait_total_ns = 0;  // over its steps; work = step - wait
  uint32_t times_slowest = 0;
  // Collectives.
  uint64_t collectives = 0;
  uint64_t times_last = 0;
  int64_t wait_caused_ns = 0;  // others' waiting in the collectives it entered last
  int64_t waited_ns = 0;       // its own waiting for the last arriver
};

struct StepResult {
  uint32_t index = 0;
  int64_t start_ns = 0;  // earliest rank
  uint32_t ranks = 0;
  int64_t min_ns = 0, median_ns = 0, max_ns = 0;
  int32_t slowest_rank = -1;  // most work (step time minus collective waiting)
  int64_t slowest_work_ns = 0, median_work_ns = 0;
};

struct InstanceResult {
  uint64_t comm_id = 0;
  std::string func;
  uint64_t seq = 0;
  uint32_t ranks = 0;
  int32_t first_rank = -1, last_rank = -1;
  int64_t first_entry_ns = 0, last_entry_ns = 0;
  int64_t end_ns = 0;         // latest end
  int64_t total_wait_ns = 0;  // sum over ranks of (last entry - own entry)
};

struct Entry {  // keep_entries: one rank's arrival at one instance
  uint32_t instance = 0;
  int32_t rank = 0;
  int64_t entry_ns = 0;
  int64_t wait_ns = 0;
};

struct GapResult {
  int32_t rank = 0;
  int64_t start_ns = 0, duration_ns = 0;
};

// What the launching thread did during one GPU idle gap (gap_causes.cc). The launching thread is the
// thread whose CUDA API call launched the GPU work that ended the gap (the first kernel, copy or set
// after it, joined to its API call by correlation id).
struct GapCause {
  enum class Source { kOsCall, kSample };
  Source source = Source::kOsCall;
  std::string name;         // the libc function (OSRT_API), or the innermost sampled frame
  int64_t start_ns = 0;     // OS call: its start (session ns)
  int64_t duration_ns = 0;  // OS call: the whole call
  int64_t in_gap_ns = 0;    // OS call: the part inside the gap
  int64_t samples = 0;      // sample: CPU samples in the gap with this innermost frame
  std::string caller;       // OS call: the innermost frame of its OSRT_CALLCHAINS stack ("" without)
};
struct GapCauses {
  int32_t rank = 0;
  int64_t global_pid = 0;
  int64_t start_ns = 0, duration_ns = 0;
  int64_t launch_tid = 0;          // globalTid of the launching thread (0: the launch was not found)
  std::string launch_api;          // its API call ("cudaLaunchKernel_v7000")
  std::string gpu_work;            // what ended the gap: "kernel NAME", "memcpy", "memset"
  int64_t samples_in_gap = 0;      // CPU samples of the launching thread in the gap (COMPOSITE_EVENTS)
  std::vector<GapCause> causes;    // OS calls by time in the gap (longest first), then sampled frames by count
};

// POP factors (BSC) for GPU ranks over the window (docs/multi-rank.md):
//   load balance  LB = mean(C) / max(C)        C = computation (GPU busy, not in NCCL kernels)
//   communication CE = max(C) / mean(B)        B = GPU busy (computation or NCCL kernels)
//   orchestration OE = mean(B) / W             W = window length (GPU idle = the host gave no work)
//   parallel      PE = LB * CE * OE = mean(C) / W
struct PopResult {
  bool valid = false;
  int64_t window_start_ns = 0, window_ns = 0;
  double load_balance = 0, communication = 0, orchestration = 0, parallel = 0;
  double overlap = 0;  // share of NCCL kernel time spent while the GPU also computed
  int64_t mean_compute_ns = 0, max_compute_ns = 0, mean_busy_ns = 0;
  uint32_t ranks = 0;
};

struct Analysis {
  std::vector<RankResult> ranks;  // by rank
  std::vector<StepResult> steps;
  std::string step_source;                // how iterations were found
  std::vector<InstanceResult> instances;  // every collective instance seen by two or more ranks, in time order
  std::string entry_source;               // "gpu" (NCCL kernel start) or "host" (NCCL API call)
  std::vector<Entry> entries;
  std::vector<GapResult> top_gaps;
  std::vector<GapCauses> gap_causes;  // gaps of at least gap_cause_min_ns, longest first (at most kMaxCauseGaps)
  PopResult pop;
  int64_t heat_start_ns = 0, heat_bin_ns = 0;
  std::vector<std::string> notes;
};

Status RunAnalysis(const AnalyzeOptions& options, Analysis* out);

// Most gaps attributed (the longest; the rest are counted in a note).
inline constexpr uint32_t kMaxCauseGaps = 200;

enum class Format { kTable, kCsv, kJson };
// The reports, by name: summary (POP), steps, step_ranks, stragglers, collectives, entries, gpu_gaps,
// gpu_gap_causes, ranks. `reports` empty: all but entries and gpu_gap_causes.
std::vector<std::string> ReportNames();
Status WriteReports(const Analysis& a,
                    const std::vector<std::string>& reports,
                    Format format,
                    uint32_t top,
                    std::ostream& out);
// A self-contained HTML page: the heatmap (SVG) and the tables.
Status WriteHtml(const Analysis& a, const AnalyzeOptions& options, const std::string& path);

}  // namespace gt::analyze
