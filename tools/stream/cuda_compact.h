// CudaCompactExpander: turns the compact CUDA records of a stream (schema/cuda.proto:
// CudaKernelConfig / CudaApiConfig once per stream, CudaKernelBatch / CudaApiBatch columns) back
// into the CudaKernel / CudaApiCall messages that streams written before issue 16 carry, so that
// everything after the reader (exporter, `gtrace info`, alignment, reports) sees one form and the
// export is byte-identical whichever encoding the stream used.
//
// Single-threaded; one per StreamReader (configs are per stream). Memory: one message per distinct
// launch configuration the stream defined (the writer redefines at most 16384 at a time per kind).
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>

#include "gtrace.pb.h"

namespace gt::stream {

class CudaCompactExpander {
 public:
  // Takes the chunk's config definitions, appends each batch's records to cuda_kernels /
  // cuda_api_calls (after the chunk's own, in batch order) and clears the compact fields. False with
  // *error when a batch is malformed (columns of different lengths, an undefined config id).
  bool Expand(schema::Chunk* chunk, std::string* error);

  size_t kernel_configs() const { return kernels_.size(); }
  size_t api_configs() const { return calls_.size(); }

 private:
  std::unordered_map<uint64_t, schema::CudaKernel> kernels_;
  std::unordered_map<uint64_t, schema::CudaApiCall> calls_;
};

}  // namespace gt::stream
