// sim_ranks: writes the rank simulator's streams (tests/common/rank_simulator.h) for benchmarks and
// by-hand runs of `gtrace export` / `gtrace analyze`, and prints the planted truth.
//
//   sim_ranks DIR [--ranks N] [--per-host N] [--steps N] [--kernels N] [--buckets N] [--cuda-api]
//                 [--straggler R] [--straggler-delay-us US] [--imbalance F] [--offset-us US] [--drift-ppm P]
//                 [--step-range NAME|--no-step-range]
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "tests/common/rank_simulator.h"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: sim_ranks DIR [--ranks N] [--per-host N] [--steps N] ...\n");
    return 2;
  }
  gt::test::SimConfig c;
  double imbalance = 0.0, offset_us = 0.0, drift_ppm = 0.0;
  for (int i = 2; i < argc; ++i) {
    std::string f = argv[i];
    auto next = [&]() { return i + 1 < argc ? argv[++i] : "0"; };
    if (f == "--ranks")
      c.ranks = static_cast<uint32_t>(std::atol(next()));
    else if (f == "--per-host")
      c.ranks_per_host = static_cast<uint32_t>(std::atol(next()));
    else if (f == "--steps")
      c.steps = static_cast<uint32_t>(std::atol(next()));
    else if (f == "--kernels")
      c.kernels_per_step = static_cast<uint32_t>(std::atol(next()));
    else if (f == "--buckets")
      c.buckets = static_cast<uint32_t>(std::atol(next()));
    else if (f == "--compute-us")
      c.compute_ns = std::atoll(next()) * 1000;
    else if (f == "--cuda-api")
      c.cuda_api = true;
    else if (f == "--straggler")
      c.straggler_rank = std::atoi(next());
    else if (f == "--straggler-delay-us")
      c.straggler_delay_ns = std::atoll(next()) * 1000;
    else if (f == "--imbalance")
      imbalance = std::atof(next());
    else if (f == "--offset-us")
      offset_us = std::atof(next());
    else if (f == "--drift-ppm")
      drift_ppm = std::atof(next());
    else if (f == "--step-range")
      c.step_range = next();
    else if (f == "--no-step-range")
      c.step_range.clear();
    else {
      std::fprintf(stderr, "sim_ranks: unknown flag %s\n", f.c_str());
      return 2;
    }
  }
  uint32_t hosts = (c.ranks + c.ranks_per_host - 1) / c.ranks_per_host;
  for (uint32_t r = 0; r < c.ranks; ++r)
    c.imbalance.push_back(1.0 + imbalance * (r % 4) / 3.0);
  for (uint32_t h = 0; h < hosts; ++h) {
    // Host h's clock: +-offset and +-drift alternating, growing with h (host 0 exact).
    double sign = h % 2 ? 1.0 : -1.0;
    c.ntp_offset_ns.push_back(h == 0 ? 0 : static_cast<int64_t>(sign * offset_us * 1000.0 * (1 + h % 5) / 5));
    c.drift_ppb.push_back(h == 0 ? 0 : static_cast<int64_t>(sign * drift_ppm * 1000.0 * (1 + h % 3) / 3));
  }
  std::error_code ec;
  std::filesystem::create_directories(argv[1], ec);
  gt::test::SimTruth t;
  gt::test::SimulateRanks(c, argv[1], &t);
  for (const std::string& p : t.paths) {
    if (!std::filesystem::exists(p)) {
      std::fprintf(stderr, "sim_ranks: could not write %s\n", p.c_str());
      return 1;
    }
  }
  std::printf("ranks=%u hosts=%u steps=%u records=%llu kernels=%llu nccl_records=%llu window_ns=%lld\n", c.ranks, hosts,
              c.steps, static_cast<unsigned long long>(t.records), static_cast<unsigned long long>(t.kernels),
              static_cast<unsigned long long>(t.nccl_records), static_cast<long long>(t.window_ns));
  std::printf("pop: load_balance=%.6f communication=%.6f orchestration=%.6f parallel=%.6f\n", t.load_balance,
              t.communication, t.orchestration, t.parallel);
  int64_t most = 0;
  int32_t who = -1;
  for (uint32_t r = 0; r < c.ranks; ++r) {
    if (t.wait_caused_ns[r] > most) {
      most = t.wait_caused_ns[r];
      who = static_cast<int32_t>(r);
    }
  }
  std::printf("straggler: rank %d caused %lld ns of waiting\n", who, static_cast<long long>(most));
  return 0;
}
