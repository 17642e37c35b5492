#include "inject/cupti/compact_encoder.h"

#include "inject/cupti/cuda_fields.h"

namespace gt::cupti {
namespace {

void PutVarint(std::string* out, uint64_t v) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

uint64_t ZigZag(int64_t v) { return (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63); }

void PutColumn(ProtoWriter* w, uint32_t field, const std::string& column) {
  if (!column.empty()) w->Bytes(field, column.data(), column.size());
}

}  // namespace

void CompactCudaEncoder::Columns::Clear() {
  config_id.clear();
  start_delta.clear();
  duration.clear();
  correlation_delta.clear();
  grid_delta.clear();
  records = 0;
  prev_correlation = 0;
  prev_grid = 0;
}

void CompactCudaEncoder::Reset() {
  kernels_.Clear();
  apis_.Clear();
  kernel_configs_.clear();
  api_configs_.clear();
  next_kernel_config_ = next_api_config_ = 1;
}

uint64_t CompactCudaEncoder::ConfigId(ChunkBuilder* chunk, ConfigMap* map, uint64_t* next_id, uint32_t chunk_field,
                                      uint32_t body_field, std::string_view constants) {
  key_.assign(constants.data(), constants.size());
  auto it = map->find(key_);
  if (it != map->end()) return it->second;
  if (map->size() >= kMaxConfigs) map->clear();  // start over; the new ids are defined again below
  uint64_t id = (*next_id)++;
  map->emplace(key_, id);
  ProtoWriter& w = chunk->body();
  w.BeginNested(chunk_field);
  w.Varint(1, id);  // CudaKernelConfig.id / CudaApiConfig.id
  w.Bytes(body_field, constants.data(), constants.size());
  w.EndNested();
  ++configs_defined_;
  return id;
}

void CompactCudaEncoder::AddKernel(ChunkBuilder* chunk, std::string_view constants, uint64_t start_ns,
                                   uint64_t duration_ns, uint32_t correlation_id, int64_t grid_id) {
  uint64_t id = ConfigId(chunk, &kernel_configs_, &next_kernel_config_, field::chunk::kCudaKernelConfigs,
                         field::cuda_kernel_config::kKernel, constants);
  Columns& c = kernels_;
  PutVarint(&c.config_id, id);
  PutVarint(&c.start_delta, ZigZag(chunk->DeltaNs(field::chunk::kCudaKernels, start_ns)));
  PutVarint(&c.duration, duration_ns);
  PutVarint(&c.correlation_delta, ZigZag(static_cast<int64_t>(correlation_id) - c.prev_correlation));
  c.prev_correlation = correlation_id;
  PutVarint(&c.grid_delta, ZigZag(static_cast<int64_t>(static_cast<uint64_t>(grid_id) - static_cast<uint64_t>(c.prev_grid))));
  c.prev_grid = grid_id;
  ++c.records;
}

void CompactCudaEncoder::AddApi(ChunkBuilder* chunk, std::string_view constants, uint64_t start_ns,
                                uint64_t duration_ns, uint32_t correlation_id) {
  uint64_t id = ConfigId(chunk, &api_configs_, &next_api_config_, field::chunk::kCudaApiConfigs,
                         field::cuda_api_config::kCall, constants);
  Columns& c = apis_;
  PutVarint(&c.config_id, id);
  PutVarint(&c.start_delta, ZigZag(chunk->DeltaNs(field::chunk::kCudaApiCalls, start_ns)));
  PutVarint(&c.duration, duration_ns);
  PutVarint(&c.correlation_delta, ZigZag(static_cast<int64_t>(correlation_id) - c.prev_correlation));
  c.prev_correlation = correlation_id;
  ++c.records;
}

void CompactCudaEncoder::Flush(ChunkBuilder* chunk) {
  ProtoWriter& w = chunk->body();
  if (kernels_.records != 0) {
    namespace f = field::cuda_kernel_batch;
    w.BeginNested(field::chunk::kCudaKernelBatches);
    PutColumn(&w, f::kConfigId, kernels_.config_id);
    PutColumn(&w, f::kStartDeltaNs, kernels_.start_delta);
    PutColumn(&w, f::kDurationNs, kernels_.duration);
    PutColumn(&w, f::kCorrelationIdDelta, kernels_.correlation_delta);
    PutColumn(&w, f::kGridIdDelta, kernels_.grid_delta);
    w.EndNested();
    kernels_.Clear();
  }
  if (apis_.records != 0) {
    namespace f = field::cuda_api_batch;
    w.BeginNested(field::chunk::kCudaApiBatches);
    PutColumn(&w, f::kConfigId, apis_.config_id);
    PutColumn(&w, f::kStartDeltaNs, apis_.start_delta);
    PutColumn(&w, f::kDurationNs, apis_.duration);
    PutColumn(&w, f::kCorrelationIdDelta, apis_.correlation_delta);
    w.EndNested();
    apis_.Clear();
  }
}

}  // namespace gt::cupti
