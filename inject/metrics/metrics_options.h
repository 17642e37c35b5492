// GPU metrics options (GTRACE_GPU_METRICS_DEVICES / _FREQUENCY / _SET / _RANGES, set by `gtrace
// profile --gpu-metrics-*`) and the rule that decides which process samples which GPU.
//
// Ownership (one process per GPU on a node, never every rank on every GPU):
//   - the candidates are the requested CUDA ordinals this process can see;
//   - without a local rank (a single process), the process owns every candidate;
//   - with local rank L among W local ranks: when the process sees at least W devices, it owns the
//     candidates d with d % W == L (every GPU belongs to exactly one local rank, extra GPUs are
//     spread round-robin); when it sees fewer (each rank sees only its own GPU, or ranks share
//     GPUs), it owns candidate L % visible — the device a rank conventionally uses;
//   - finally a per-GPU lock file (flock on <dir>/gtrace-gpu-metrics-<uuid>.lock, dir = /dev/shm or
//     $TMPDIR or /tmp) held for the process's lifetime: when two processes still claim one GPU
//     (ranks sharing a GPU, a second job), the first one to lock it samples it.
// Pure functions except TryLockGpu; any thread.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "collector/config.h"

namespace gt::metrics {

enum class DeviceSelection { kNone, kAll, kCudaVisible, kList };
enum class RangeMode { kOff, kNvtx, kKernel };

inline constexpr uint32_t kMinFrequencyHz = 10;
inline constexpr uint32_t kMaxFrequencyHz = 200000;
inline constexpr uint32_t kDefaultFrequencyHz = 10000;

struct MetricsOptions {
  DeviceSelection devices = DeviceSelection::kNone;
  std::string devices_text = "none";
  std::vector<uint32_t> device_ids;  // kList, sorted, unique
  uint32_t frequency_hz = kDefaultFrequencyHz;
  std::string set = "default";
  RangeMode range_mode = RangeMode::kOff;
  std::string ranges_text;
  std::string nvtx_message;  // kNvtx
  std::string nvtx_domain;   // "" = default domain
  bool nvtx_any_domain = false;

  bool Sampling() const { return devices != DeviceSelection::kNone; }
  bool Enabled() const { return Sampling() || range_mode != RangeMode::kOff; }
  uint64_t IntervalNs() const { return 1000000000ull / frequency_hz; }
};

// Value parsers (the CLI checks the same grammar). False with `error` on a bad value.
bool ParseDevices(std::string_view text, DeviceSelection* selection, std::vector<uint32_t>* ids, std::string* error);
bool ParseFrequency(std::string_view text, uint32_t* hz, std::string* error);
bool ParseRanges(std::string_view text, MetricsOptions* out, std::string* error);

// Reads the GTRACE_GPU_METRICS_* variables; a bad value keeps the default and adds a warning.
MetricsOptions ReadMetricsOptions(EnvGetter getenv_fn, std::vector<std::string>* warnings);

struct LocalRank {
  int32_t local_rank = -1;
  int32_t local_world_size = -1;
  std::string source;  // variables they came from
};
// Local rank (collector's launcher detection) and local world size (LOCAL_WORLD_SIZE,
// OMPI_COMM_WORLD_LOCAL_SIZE, MPI_LOCALNRANKS, PMIX_LOCAL_SIZE, SLURM_NTASKS_PER_NODE).
LocalRank DetectLocalRank(EnvGetter getenv_fn);

// The ordinals this process owns among `visible` devices, and the rule applied (in words).
std::vector<uint32_t> OwnedDevices(const MetricsOptions& options,
                                   const LocalRank& rank,
                                   uint32_t visible,
                                   std::string* rule);

// Takes the per-GPU lock for `uuid_hex` (held until the process exits; the fd is close-on-exec).
// False with `holder` ("pid 1234", or why the lock file could not be used) when another process
// holds it. A lock file that cannot be created does not prevent sampling (returns true).
bool TryLockGpu(const std::string& uuid_hex, std::string* holder);

}  // namespace gt::metrics
