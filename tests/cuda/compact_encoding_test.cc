// The stream reader's expansion of compact CUDA records (tools/stream/cuda_compact.h) on hand-made
// chunks: the exact messages it rebuilds, and malformed batches refused instead of guessed at.
#include <gtest/gtest.h>

#include <string>

#include "gtrace.pb.h"
#include "tools/stream/cuda_compact.h"

namespace gt::stream {
namespace {

schema::Chunk ChunkWithConfigs() {
  schema::Chunk c;
  schema::CudaKernelConfig* k = c.add_cuda_kernel_configs();
  k->set_id(1);
  k->mutable_kernel()->set_name_id(9);
  k->mutable_kernel()->set_grid_x(64);
  k->mutable_kernel()->set_stream_id(13);
  schema::CudaApiConfig* a = c.add_cuda_api_configs();
  a->set_id(1);
  a->mutable_call()->set_tid(4242);
  a->mutable_call()->set_cbid(211);
  return c;
}

TEST(CudaCompact, BatchesBecomeMessagesAfterTheChunksOwn) {
  schema::Chunk c = ChunkWithConfigs();
  c.add_cuda_kernels()->set_start_delta_ns(100);  // a full message first (never mixed by our writer)
  schema::CudaKernelBatch* b = c.add_cuda_kernel_batches();
  for (int64_t d : {5, 7}) b->add_start_delta_ns(d);
  for (uint64_t d : {2000, 3000}) b->add_duration_ns(d);
  for (uint64_t id : {1, 1}) b->add_config_id(id);
  for (int64_t d : {41, 2}) b->add_correlation_id_delta(d);
  for (int64_t d : {1000, -1}) b->add_grid_id_delta(d);
  schema::CudaApiBatch* a = c.add_cuda_api_batches();
  a->add_config_id(1);
  a->add_start_delta_ns(-3);
  a->add_duration_ns(900);
  a->add_correlation_id_delta(41);
  CudaCompactExpander x;
  std::string error;
  ASSERT_TRUE(x.Expand(&c, &error)) << error;
  EXPECT_EQ(c.cuda_kernel_configs_size() + c.cuda_kernel_batches_size() + c.cuda_api_configs_size() +
                c.cuda_api_batches_size(),
            0);
  ASSERT_EQ(c.cuda_kernels_size(), 3);
  EXPECT_EQ(c.cuda_kernels(0).start_delta_ns(), 100);
  const schema::CudaKernel& k = c.cuda_kernels(2);
  EXPECT_EQ(k.start_delta_ns(), 7);
  EXPECT_EQ(k.duration_ns(), 3000u);
  EXPECT_EQ(k.correlation_id(), 43u);
  EXPECT_EQ(k.grid_id(), 999);
  EXPECT_EQ(k.name_id(), 9u);
  EXPECT_EQ(k.grid_x(), 64);
  EXPECT_EQ(k.stream_id(), 13u);
  ASSERT_EQ(c.cuda_api_calls_size(), 1);
  EXPECT_EQ(c.cuda_api_calls(0).start_delta_ns(), -3);
  EXPECT_EQ(c.cuda_api_calls(0).correlation_id(), 41u);
  EXPECT_EQ(c.cuda_api_calls(0).tid(), 4242u);
  EXPECT_EQ(c.cuda_api_calls(0).cbid(), 211u);
  // Configs stay defined for the rest of the stream.
  schema::Chunk later;
  schema::CudaApiBatch* la = later.add_cuda_api_batches();
  la->add_config_id(1);
  la->add_start_delta_ns(1);
  la->add_duration_ns(1);
  la->add_correlation_id_delta(50);
  ASSERT_TRUE(x.Expand(&later, &error)) << error;
  ASSERT_EQ(later.cuda_api_calls_size(), 1);
  EXPECT_EQ(later.cuda_api_calls(0).correlation_id(), 50u);  // the chain starts again in each batch
  EXPECT_EQ(later.cuda_api_calls(0).cbid(), 211u);
}

TEST(CudaCompact, MalformedBatchesAreErrors) {
  CudaCompactExpander x;
  std::string error;
  schema::Chunk undefined;
  schema::CudaKernelBatch* b = undefined.add_cuda_kernel_batches();
  b->add_config_id(7);
  b->add_start_delta_ns(1);
  b->add_duration_ns(1);
  b->add_correlation_id_delta(1);
  b->add_grid_id_delta(1);
  EXPECT_FALSE(x.Expand(&undefined, &error));
  EXPECT_EQ(error, "kernel batch refers to undefined config 7");

  schema::Chunk ragged = ChunkWithConfigs();
  schema::CudaApiBatch* a = ragged.add_cuda_api_batches();
  a->add_config_id(1);
  a->add_config_id(1);
  a->add_start_delta_ns(1);
  a->add_duration_ns(1);
  a->add_correlation_id_delta(1);
  EXPECT_FALSE(x.Expand(&ragged, &error));
  EXPECT_EQ(error, "API batch columns of different lengths");

  schema::Chunk zero;
  zero.add_cuda_kernel_configs()->set_id(0);
  EXPECT_FALSE(x.Expand(&zero, &error));
  EXPECT_EQ(error, "kernel config with id 0");
}

}  // namespace
}  // namespace gt::stream
