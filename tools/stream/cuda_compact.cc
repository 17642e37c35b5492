#include "tools/stream/cuda_compact.h"

#include <utility>

namespace gt::stream {
namespace {

bool Fail(std::string* error, std::string what) {
  *error = std::move(what);
  return false;
}

}  // namespace

bool CudaCompactExpander::Expand(schema::Chunk* chunk, std::string* error) {
  for (const schema::CudaKernelConfig& c : chunk->cuda_kernel_configs()) {
    if (c.id() == 0) return Fail(error, "kernel config with id 0");
    kernels_[c.id()] = c.kernel();
  }
  for (const schema::CudaApiConfig& c : chunk->cuda_api_configs()) {
    if (c.id() == 0) return Fail(error, "API config with id 0");
    calls_[c.id()] = c.call();
  }
  for (const schema::CudaKernelBatch& b : chunk->cuda_kernel_batches()) {
    int n = b.config_id_size();
    if (b.start_delta_ns_size() != n || b.duration_ns_size() != n || b.correlation_id_delta_size() != n ||
        b.grid_id_delta_size() != n) {
      return Fail(error, "kernel batch columns of different lengths");
    }
    chunk->mutable_cuda_kernels()->Reserve(chunk->cuda_kernels_size() + n);
    uint64_t correlation = 0, grid = 0;
    for (int i = 0; i < n; ++i) {
      auto it = kernels_.find(b.config_id(i));
      if (it == kernels_.end()) return Fail(error, "kernel batch refers to undefined config " + std::to_string(b.config_id(i)));
      correlation += static_cast<uint64_t>(b.correlation_id_delta(i));
      grid += static_cast<uint64_t>(b.grid_id_delta(i));
      schema::CudaKernel* k = chunk->add_cuda_kernels();
      *k = it->second;
      k->set_start_delta_ns(b.start_delta_ns(i));
      k->set_duration_ns(b.duration_ns(i));
      k->set_correlation_id(static_cast<uint32_t>(correlation));
      k->set_grid_id(static_cast<int64_t>(grid));
    }
  }
  for (const schema::CudaApiBatch& b : chunk->cuda_api_batches()) {
    int n = b.config_id_size();
    if (b.start_delta_ns_size() != n || b.duration_ns_size() != n || b.correlation_id_delta_size() != n) {
      return Fail(error, "API batch columns of different lengths");
    }
    chunk->mutable_cuda_api_calls()->Reserve(chunk->cuda_api_calls_size() + n);
    uint64_t correlation = 0;
    for (int i = 0; i < n; ++i) {
      auto it = calls_.find(b.config_id(i));
      if (it == calls_.end()) return Fail(error, "API batch refers to undefined config " + std::to_string(b.config_id(i)));
      correlation += static_cast<uint64_t>(b.correlation_id_delta(i));
      schema::CudaApiCall* a = chunk->add_cuda_api_calls();
      *a = it->second;
      a->set_start_delta_ns(b.start_delta_ns(i));
      a->set_duration_ns(b.duration_ns(i));
      a->set_correlation_id(static_cast<uint32_t>(correlation));
    }
  }
  chunk->clear_cuda_kernel_configs();
  chunk->clear_cuda_api_configs();
  chunk->clear_cuda_kernel_batches();
  chunk->clear_cuda_api_batches();
  return true;
}

}  // namespace gt::stream
