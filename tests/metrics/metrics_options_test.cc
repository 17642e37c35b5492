// GPU metrics options (GTRACE_GPU_METRICS_*), the ownership rule that makes one process per GPU
// sample it on multi-rank nodes, and the per-GPU lock.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <map>
#include <string>
#include <vector>

#include "inject/metrics/metrics_options.h"
#include "tests/common/test_util.h"

namespace gt::metrics {
namespace {

std::map<std::string, std::string>* g_env = nullptr;
const char* FakeEnv(const char* name) {
  auto it = g_env->find(name);
  return it == g_env->end() ? nullptr : it->second.c_str();
}

MetricsOptions Read(std::map<std::string, std::string> env, std::vector<std::string>* warnings) {
  g_env = &env;
  MetricsOptions o = ReadMetricsOptions(&FakeEnv, warnings);
  g_env = nullptr;
  return o;
}

TEST(MetricsOptions, Defaults) {
  std::vector<std::string> w;
  MetricsOptions o = Read({}, &w);
  EXPECT_TRUE(w.empty());
  EXPECT_FALSE(o.Enabled());
  EXPECT_EQ(o.frequency_hz, 10000u);
  EXPECT_EQ(o.IntervalNs(), 100000u);
  EXPECT_EQ(o.set, "default");
}

TEST(MetricsOptions, DevicesFrequencySetRanges) {
  std::vector<std::string> w;
  MetricsOptions o = Read({{"GTRACE_GPU_METRICS_DEVICES", "2, 0,2"},
                           {"GTRACE_GPU_METRICS_FREQUENCY", "200000"},
                           {"GTRACE_GPU_METRICS_SET", "compute"},
                           {"GTRACE_GPU_METRICS_RANGES", "nvtx:train_step@app"}},
                          &w);
  EXPECT_TRUE(w.empty());
  EXPECT_EQ(o.devices, DeviceSelection::kList);
  EXPECT_EQ(o.device_ids, (std::vector<uint32_t>{0, 2}));
  EXPECT_EQ(o.IntervalNs(), 5000u);
  EXPECT_EQ(o.set, "compute");
  EXPECT_EQ(o.range_mode, RangeMode::kNvtx);
  EXPECT_EQ(o.nvtx_message, "train_step");
  EXPECT_EQ(o.nvtx_domain, "app");
  o = Read({{"GTRACE_GPU_METRICS_DEVICES", "cuda-visible"}, {"GTRACE_GPU_METRICS_RANGES", "kernel"}}, &w);
  EXPECT_EQ(o.devices, DeviceSelection::kCudaVisible);
  EXPECT_EQ(o.range_mode, RangeMode::kKernel);
  o = Read({{"GTRACE_GPU_METRICS_DEVICES", "all"}, {"GTRACE_GPU_METRICS_RANGES", "nvtx:step@*"}}, &w);
  EXPECT_EQ(o.devices, DeviceSelection::kAll);
  EXPECT_TRUE(o.nvtx_any_domain);
}

TEST(MetricsOptions, BadValuesWarnAndKeepDefaults) {
  std::vector<std::string> w;
  MetricsOptions o = Read({{"GTRACE_GPU_METRICS_DEVICES", "gpu0"},
                           {"GTRACE_GPU_METRICS_FREQUENCY", "9"},
                           {"GTRACE_GPU_METRICS_RANGES", "kernels"}},
                          &w);
  ASSERT_EQ(w.size(), 3u);
  EXPECT_NE(w[0].find("GTRACE_GPU_METRICS_DEVICES: 'gpu0' is not none, all, cuda-visible or a list"),
            std::string::npos);
  EXPECT_NE(w[1].find("from 10 to 200000"), std::string::npos);
  EXPECT_NE(w[2].find("'kernels' is not nvtx:RANGE[@DOMAIN], kernel or none"), std::string::npos);
  EXPECT_EQ(o.devices, DeviceSelection::kNone);
  EXPECT_EQ(o.frequency_hz, 10000u);
  EXPECT_EQ(o.range_mode, RangeMode::kOff);
  uint32_t hz = 0;
  std::string error;
  EXPECT_TRUE(ParseFrequency("10", &hz, &error));
  EXPECT_FALSE(ParseFrequency("200001", &hz, &error));
  EXPECT_FALSE(ParseRanges("nvtx:", &o, &error));
}

MetricsOptions All() {
  MetricsOptions o;
  o.devices = DeviceSelection::kAll;
  return o;
}

TEST(Ownership, SingleProcessSamplesEveryRequestedDevice) {
  std::string rule;
  EXPECT_EQ(OwnedDevices(All(), LocalRank{}, 4, &rule), (std::vector<uint32_t>{0, 1, 2, 3}));
  MetricsOptions list;
  list.devices = DeviceSelection::kList;
  list.device_ids = {1, 7};
  EXPECT_EQ(OwnedDevices(list, LocalRank{}, 4, &rule), (std::vector<uint32_t>{1}));  // 7 does not exist
  MetricsOptions none;
  EXPECT_TRUE(OwnedDevices(none, LocalRank{}, 4, &rule).empty());
}

TEST(Ownership, EightRanksSeeingEightGpusOwnOneEach) {
  // torchrun style: every rank sees all GPUs; --gpu-metrics-devices=all must not make each of the
  // 8 ranks sample all 8 GPUs.
  std::vector<int> owners(8, 0);
  for (int l = 0; l < 8; ++l) {
    std::string rule;
    std::vector<uint32_t> own = OwnedDevices(All(), LocalRank{l, 8, ""}, 8, &rule);
    ASSERT_EQ(own.size(), 1u) << rule;
    EXPECT_EQ(own[0], static_cast<uint32_t>(l));
    ++owners[own[0]];
  }
  for (int c : owners)
    EXPECT_EQ(c, 1);
}

TEST(Ownership, FourRanksOnEightGpusCoverAllOnce) {
  std::vector<int> owners(8, 0);
  for (int l = 0; l < 4; ++l) {
    std::string rule;
    for (uint32_t d : OwnedDevices(All(), LocalRank{l, 4, ""}, 8, &rule))
      ++owners[d];
  }
  for (int c : owners)
    EXPECT_EQ(c, 1);
  std::string rule;
  EXPECT_EQ(OwnedDevices(All(), LocalRank{1, 4, ""}, 8, &rule), (std::vector<uint32_t>{1, 5}));
  EXPECT_EQ(rule, "local rank 1 of 4 owns the devices d with d % 4 == 1");
}

TEST(Ownership, OneVisibleGpuPerRankIsOwnedByThatRank) {
  // SLURM/MPI style: CUDA_VISIBLE_DEVICES gives each rank its own GPU (ordinal 0).
  for (int l = 0; l < 8; ++l) {
    std::string rule;
    EXPECT_EQ(OwnedDevices(All(), LocalRank{l, 8, ""}, 1, &rule), (std::vector<uint32_t>{0})) << rule;
  }
}

TEST(Ownership, MoreRanksThanGpusMapRanksOntoGpus) {
  // 16 ranks on 8 GPUs: rank l claims GPU l % 8 — two claims per GPU, settled by the per-GPU lock.
  std::string rule;
  EXPECT_EQ(OwnedDevices(All(), LocalRank{11, 16, ""}, 8, &rule), (std::vector<uint32_t>{3}));
  EXPECT_NE(rule.find("owns device 3 (local rank % visible devices)"), std::string::npos) << rule;
  // Local world size unknown: same rule.
  EXPECT_EQ(OwnedDevices(All(), LocalRank{5, -1, ""}, 4, &rule), (std::vector<uint32_t>{1}));
}

TEST(Ownership, LocalRankDetection) {
  std::map<std::string, std::string> env = {
      {"SLURM_PROCID", "9"}, {"SLURM_LOCALID", "1"}, {"SLURM_NTASKS_PER_NODE", "4(x2)"}};
  g_env = &env;
  LocalRank r = DetectLocalRank(&FakeEnv);
  EXPECT_EQ(r.local_rank, 1);
  EXPECT_EQ(r.local_world_size, 4);
  env = {{"RANK", "3"}, {"LOCAL_RANK", "3"}, {"LOCAL_WORLD_SIZE", "8"}};
  r = DetectLocalRank(&FakeEnv);
  EXPECT_EQ(r.local_rank, 3);
  EXPECT_EQ(r.local_world_size, 8);
  env = {};
  r = DetectLocalRank(&FakeEnv);
  EXPECT_EQ(r.local_rank, -1);
  g_env = nullptr;
}

TEST(Ownership, PerGpuLockAdmitsOneProcess) {
  std::string uuid = "test" + std::to_string(getpid());
  std::string holder;
  ASSERT_TRUE(TryLockGpu(uuid, &holder));
  // A second process cannot take it while we hold it.
  pid_t child = fork();
  if (child == 0) {
    std::string h;
    bool got = TryLockGpu(uuid, &h);
    _exit(!got && h.find("pid " + std::to_string(getppid())) == 0 ? 0 : 1);
  }
  int status = 0;
  waitpid(child, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  for (const char* dir : {"/dev/shm", "/tmp"})
    unlink((std::string(dir) + "/gtrace-gpu-metrics-" + uuid + ".lock").c_str());
}

}  // namespace
}  // namespace gt::metrics
