// CompactCudaEncoder: writes kernel and CUDA API records in the compact form of schema/cuda.proto
// (issue 16): the per-launch constants of a record (a kernel's name, grid, block, registers, shared
// memory, device, context, stream, ...; an API call's kind, thread, cbid, name, result) are sent once
// per stream as a config (CudaKernelConfig / CudaApiConfig), and each record becomes a config id, a
// start delta (the same chain as CudaKernel.start_delta_ns), a duration and zigzag deltas of its
// correlation id (and grid id), in the packed columns of a CudaKernelBatch / CudaApiBatch.
// A realistic training stream then costs about 8 bytes per kernel and 7 per API call instead of 52
// and 23 (bench/stream_sizes, bench/results/2026-11-25-compact-stream.md).
//
// Threads: the drain thread only (owned by the ActivityDecoder), never an application thread.
// Protocol: Add* queue a record and may write a config definition into the chunk body (so they must
// be called outside any nested message, like ChunkBuilder::Intern); Flush writes the pending batches
// and must run before the chunk ends or splits (the start deltas belong to the chunk's chain).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>

#include "collector/chunk_builder.h"

namespace gt::cupti {

class CompactCudaEncoder {
 public:
  // Configs each kind keeps before forgetting them all and starting over with new ids (drain-thread
  // memory stays bounded when launch configurations never repeat; ids are never reused).
  static constexpr size_t kMaxConfigs = 16384;

  CompactCudaEncoder() = default;
  CompactCudaEncoder(const CompactCudaEncoder&) = delete;
  CompactCudaEncoder& operator=(const CompactCudaEncoder&) = delete;

  // A new stream: config ids start over. Pending records must have been flushed.
  void Reset();

  // `constants`: the encoded CudaKernel fields other than start, duration, correlation id and grid id.
  void AddKernel(ChunkBuilder* chunk, std::string_view constants, uint64_t start_ns, uint64_t duration_ns,
                 uint32_t correlation_id, int64_t grid_id);
  // `constants`: the encoded CudaApiCall fields other than start, duration and correlation id.
  void AddApi(ChunkBuilder* chunk, std::string_view constants, uint64_t start_ns, uint64_t duration_ns,
              uint32_t correlation_id);
  // Writes the pending batches into the chunk (nothing when none is pending).
  void Flush(ChunkBuilder* chunk);

  size_t pending_records() const { return kernels_.records + apis_.records; }
  size_t pending_bytes() const { return kernels_.Bytes() + apis_.Bytes(); }
  uint64_t configs_defined() const { return configs_defined_; }

 private:
  struct Columns {
    std::string config_id, start_delta, duration, correlation_delta, grid_delta;
    size_t records = 0;
    int64_t prev_correlation = 0;
    int64_t prev_grid = 0;
    size_t Bytes() const {
      return config_id.size() + start_delta.size() + duration.size() + correlation_delta.size() + grid_delta.size();
    }
    void Clear();
  };
  using ConfigMap = std::unordered_map<std::string, uint64_t>;
  // The id of `constants`, defining it in the chunk when new.
  uint64_t ConfigId(ChunkBuilder* chunk, ConfigMap* map, uint64_t* next_id, uint32_t chunk_field,
                    uint32_t body_field, std::string_view constants);

  Columns kernels_;
  Columns apis_;
  ConfigMap kernel_configs_;
  ConfigMap api_configs_;
  uint64_t next_kernel_config_ = 1;
  uint64_t next_api_config_ = 1;
  uint64_t configs_defined_ = 0;
  std::string key_;  // lookup scratch (no allocation once grown)
};

}  // namespace gt::cupti
