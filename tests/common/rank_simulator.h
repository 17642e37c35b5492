// RankSimulator: writes N synthetic rank streams of a data-parallel training job, as gtrace would
// record them (NVTX step ranges, CUDA kernels, NCCL plugin events with kernel-channel GPU timers,
// periodic clock pairs), on hosts whose clocks are off by known amounts, with a planted straggler
// and planted load imbalance. It keeps the ground truth: true event times, each host's clock error
// and the POP factors of the timeline it wrote. Used by tests/analyze and bench/multi_rank.
//
// The job (true time, ns), per step i and rank r:
//   step start S_i (common) -> the host starts the step: NVTX push `step_range` at S_i;
//   GPU idle for host_gap_ns (+ straggler_delay_ns on the straggler): the host is late with work;
//   compute kernels back to back for compute_ns * imbalance[r] (compute stream);
//   `buckets` AllReduce buckets during the second half of compute (comm stream; DDP's backward),
//   each entering when its gradients are ready (or when the previous bucket ended) and ending,
//   on every rank, bucket_ns after the last rank entered (+ a per-rank end jitter);
//   a final small AllReduce after compute and the buckets (exposed communication);
//   the step ends, on every rank, step_turnaround_ns after the final AllReduce ended (NVTX pop
//   10 us before that).
// Clocks of host h (true time t): CLOCK_MONOTONIC = mono_base + t + drift_ppb[h] * t / 1e9 and
// CLOCK_REALTIME = epoch + ntp_offset_ns[h] + t + drift_ppb[h] * t / 1e9 (NTP slews both alike:
// realtime - monotonic stays constant, so the clock pairs show no drift); the GPU's %globaltimer
// reads CLOCK_REALTIME (NCCL's base model, docs/nccl.md).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace gt::test {

struct SimConfig {
  uint32_t ranks = 8;
  uint32_t ranks_per_host = 4;
  uint32_t steps = 40;
  int64_t compute_ns = 20000000;  // GPU compute per step at imbalance 1
  uint32_t kernels_per_step = 24;
  uint32_t buckets = 4;
  int64_t bucket_ns = 1500000;
  int64_t final_ns = 300000;
  int64_t host_gap_ns = 200000;  // GPU idle at each step start (host orchestration)
  int64_t step_turnaround_ns = 50000;
  std::vector<double> imbalance;  // per rank compute factor (empty: 1.0)
  int32_t straggler_rank = -1;
  int64_t straggler_delay_ns = 0;      // extra host delay of the straggler, every step
  std::vector<int64_t> ntp_offset_ns;  // per host (empty: 0)
  std::vector<int64_t> drift_ppb;      // per host (empty: 0)
  int64_t end_jitter_ns = 2000;        // collective end skew per rank, uniform in [0, end_jitter_ns]
  uint64_t seed = 1;
  std::string step_range = "train_step";  // "" = no NVTX step ranges
  bool cuda_api = false;                  // a cudaLaunchKernel RUNTIME row per kernel
  uint64_t comm_hash = 0xC0FFEE1234ULL;
};

struct SimTruth {
  std::vector<std::string> paths;  // one stream per rank, rank order
  std::vector<uint32_t> host_of_rank;
  // First compute kernel of each step, true time (ns since the job's epoch), [rank][step].
  std::vector<std::vector<int64_t>> first_kernel_true_ns;
  int64_t epoch_realtime_ns = 0;  // CLOCK_REALTIME of true time 0 (without NTP error)
  // POP over the window [first step start, last step end] (docs/multi-rank.md definitions).
  std::vector<int64_t> compute_ns;  // per rank: union of compute kernels
  std::vector<int64_t> busy_ns;     // per rank: union of all GPU work
  std::vector<int64_t> comm_ns;     // per rank: union of NCCL kernels
  std::vector<int64_t> overlap_ns;  // per rank: NCCL kernels during compute
  int64_t window_ns = 0;
  double load_balance = 0, communication = 0, orchestration = 0, parallel = 0;
  // Stragglers: wait each rank caused others (sum over instances it arrived last in).
  std::vector<int64_t> wait_caused_ns;
  uint64_t kernels = 0, nccl_records = 0, records = 0;  // written, all ranks
};

// Writes dir/rank-<r>.gtrace for every rank; fills *truth.
void SimulateRanks(const SimConfig& config, const std::string& dir, SimTruth* truth);

// The clock error a host's session times carry after the exporter's start-pair mapping, at true
// time t: ntp_offset + drift * t (ns), up to a constant common to all hosts.
int64_t SimHostClockError(const SimConfig& config, uint32_t host, int64_t true_ns);

}  // namespace gt::test
