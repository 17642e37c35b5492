// gtrace's NCCL ABI declarations (inject/nccl/nccl_abi.h) against the fake NCCL host's independent
// ones (tests/fakes/fake_nccl_abi.h, in NCCL's member names): every member the plugin reads must sit
// at the same offset, and the structs must have the same sizes. Both were written from NCCL's
// headers (v2.28.9-1 / v2.29.7-1); a mistake in either fails here.
#include <gtest/gtest.h>

#include <cstddef>

#include "inject/nccl/nccl_abi.h"
#include "tests/fakes/fake_nccl_abi.h"

namespace {

using namespace gt::nccl::abi;
using namespace fake_nccl;

#define EXPECT_SAME_OFFSET(ours, theirs) EXPECT_EQ(offsetof ours, offsetof theirs) << #ours " vs " #theirs

TEST(NcclAbi, V6DescriptorMatchesNcclLayout) {
  EXPECT_EQ(sizeof(EventDescrV6), sizeof(ncclProfilerEventDescr_v6_t));
  EXPECT_SAME_OFFSET((EventDescrV6, parent_obj), (ncclProfilerEventDescr_v6_t, parentObj));
  EXPECT_SAME_OFFSET((EventDescrV6, rank), (ncclProfilerEventDescr_v6_t, rank));
  EXPECT_SAME_OFFSET((EventDescrV6, group_api.group_depth), (ncclProfilerEventDescr_v6_t, groupApi.groupDepth));
  EXPECT_SAME_OFFSET((EventDescrV6, coll_api.count), (ncclProfilerEventDescr_v6_t, collApi.count));
  EXPECT_SAME_OFFSET((EventDescrV6, coll_api.datatype), (ncclProfilerEventDescr_v6_t, collApi.datatype));
  EXPECT_SAME_OFFSET((EventDescrV6, coll_api.root), (ncclProfilerEventDescr_v6_t, collApi.root));
  EXPECT_SAME_OFFSET((EventDescrV6, coll_api.stream), (ncclProfilerEventDescr_v6_t, collApi.stream));
  EXPECT_SAME_OFFSET((EventDescrV6, coll_api.graph_captured), (ncclProfilerEventDescr_v6_t, collApi.graphCaptured));
  EXPECT_SAME_OFFSET((EventDescrV6, p2p_api.stream), (ncclProfilerEventDescr_v6_t, p2pApi.stream));
  EXPECT_SAME_OFFSET((EventDescrV6, p2p_api.graph_captured), (ncclProfilerEventDescr_v6_t, p2pApi.graphCaptured));
  EXPECT_SAME_OFFSET((EventDescrV6, kernel_launch.stream), (ncclProfilerEventDescr_v6_t, kernelLaunch.stream));
  EXPECT_SAME_OFFSET((EventDescrV6, coll.seq_number), (ncclProfilerEventDescr_v6_t, coll.seqNumber));
  EXPECT_SAME_OFFSET((EventDescrV6, coll.func), (ncclProfilerEventDescr_v6_t, coll.func));
  EXPECT_SAME_OFFSET((EventDescrV6, coll.count), (ncclProfilerEventDescr_v6_t, coll.count));
  EXPECT_SAME_OFFSET((EventDescrV6, coll.root), (ncclProfilerEventDescr_v6_t, coll.root));
  EXPECT_SAME_OFFSET((EventDescrV6, coll.datatype), (ncclProfilerEventDescr_v6_t, coll.datatype));
  EXPECT_SAME_OFFSET((EventDescrV6, coll.n_channels), (ncclProfilerEventDescr_v6_t, coll.nChannels));
  EXPECT_SAME_OFFSET((EventDescrV6, coll.n_warps), (ncclProfilerEventDescr_v6_t, coll.nWarps));
  EXPECT_SAME_OFFSET((EventDescrV6, coll.algo), (ncclProfilerEventDescr_v6_t, coll.algo));
  EXPECT_SAME_OFFSET((EventDescrV6, coll.proto), (ncclProfilerEventDescr_v6_t, coll.proto));
  EXPECT_SAME_OFFSET((EventDescrV6, coll.parent_group), (ncclProfilerEventDescr_v6_t, coll.parentGroup));
  EXPECT_SAME_OFFSET((EventDescrV6, p2p.datatype), (ncclProfilerEventDescr_v6_t, p2p.datatype));
  EXPECT_SAME_OFFSET((EventDescrV6, p2p.count), (ncclProfilerEventDescr_v6_t, p2p.count));
  EXPECT_SAME_OFFSET((EventDescrV6, p2p.peer), (ncclProfilerEventDescr_v6_t, p2p.peer));
  EXPECT_SAME_OFFSET((EventDescrV6, p2p.n_channels), (ncclProfilerEventDescr_v6_t, p2p.nChannels));
  EXPECT_SAME_OFFSET((EventDescrV6, p2p.parent_group), (ncclProfilerEventDescr_v6_t, p2p.parentGroup));
  EXPECT_SAME_OFFSET((EventDescrV6, proxy_op.pid), (ncclProfilerEventDescr_v6_t, proxyOp.pid));
  EXPECT_SAME_OFFSET((EventDescrV6, proxy_op.channel_id), (ncclProfilerEventDescr_v6_t, proxyOp.channelId));
  EXPECT_SAME_OFFSET((EventDescrV6, proxy_op.peer), (ncclProfilerEventDescr_v6_t, proxyOp.peer));
  EXPECT_SAME_OFFSET((EventDescrV6, proxy_op.n_steps), (ncclProfilerEventDescr_v6_t, proxyOp.nSteps));
  EXPECT_SAME_OFFSET((EventDescrV6, proxy_op.chunk_size), (ncclProfilerEventDescr_v6_t, proxyOp.chunkSize));
  EXPECT_SAME_OFFSET((EventDescrV6, proxy_op.is_send), (ncclProfilerEventDescr_v6_t, proxyOp.isSend));
  EXPECT_SAME_OFFSET((EventDescrV6, proxy_step.step), (ncclProfilerEventDescr_v6_t, proxyStep.step));
  EXPECT_SAME_OFFSET((EventDescrV6, kernel_ch.channel_id), (ncclProfilerEventDescr_v6_t, kernelCh.channelId));
  EXPECT_SAME_OFFSET((EventDescrV6, kernel_ch.ptimer), (ncclProfilerEventDescr_v6_t, kernelCh.pTimer));
  EXPECT_SAME_OFFSET((EventDescrV6, net_plugin.id), (ncclProfilerEventDescr_v6_t, netPlugin.id));
  EXPECT_SAME_OFFSET((EventDescrV6, ce_coll.seq_number), (ncclProfilerEventDescr_v6_t, ceColl.seqNumber));
  EXPECT_SAME_OFFSET((EventDescrV6, ce_coll.datatype), (ncclProfilerEventDescr_v6_t, ceColl.datatype));
  EXPECT_SAME_OFFSET((EventDescrV6, ce_coll.sync_strategy), (ncclProfilerEventDescr_v6_t, ceColl.syncStrategy));
  EXPECT_SAME_OFFSET((EventDescrV6, ce_coll.intra_batch_sync), (ncclProfilerEventDescr_v6_t, ceColl.intraBatchSync));
  EXPECT_SAME_OFFSET((EventDescrV6, ce_coll.batch_size), (ncclProfilerEventDescr_v6_t, ceColl.batchSize));
  EXPECT_SAME_OFFSET((EventDescrV6, ce_coll.num_batches), (ncclProfilerEventDescr_v6_t, ceColl.numBatches));
  EXPECT_SAME_OFFSET((EventDescrV6, ce_coll.ce_seq_number), (ncclProfilerEventDescr_v6_t, ceColl.ceSeqNum));
  EXPECT_SAME_OFFSET((EventDescrV6, ce_coll.stream), (ncclProfilerEventDescr_v6_t, ceColl.stream));
  EXPECT_SAME_OFFSET((EventDescrV6, ce_sync.is_complete), (ncclProfilerEventDescr_v6_t, ceCollSync.isComplete));
  EXPECT_SAME_OFFSET((EventDescrV6, ce_sync.n_ranks), (ncclProfilerEventDescr_v6_t, ceCollSync.nRanks));
  EXPECT_SAME_OFFSET((EventDescrV6, ce_batch.num_ops), (ncclProfilerEventDescr_v6_t, ceCollBatch.numOps));
  EXPECT_SAME_OFFSET((EventDescrV6, ce_batch.total_bytes), (ncclProfilerEventDescr_v6_t, ceCollBatch.totalBytes));
  EXPECT_SAME_OFFSET((EventDescrV6, ce_batch.use_intra_sync), (ncclProfilerEventDescr_v6_t, ceCollBatch.useIntraSync));
}

TEST(NcclAbi, V5DescriptorIsTheV6LayoutWithoutCopyEngineMembers) {
  EXPECT_EQ(sizeof(EventDescrV5), sizeof(ncclProfilerEventDescr_v5_t));
  // Every v5 member the plugin reads through the v6 layout sits at the v6 offset in NCCL's v5 type.
  EXPECT_SAME_OFFSET((EventDescrV6, coll.parent_group), (ncclProfilerEventDescr_v5_t, coll.parentGroup));
  EXPECT_SAME_OFFSET((EventDescrV6, coll.proto), (ncclProfilerEventDescr_v5_t, coll.proto));
  EXPECT_SAME_OFFSET((EventDescrV6, p2p.parent_group), (ncclProfilerEventDescr_v5_t, p2p.parentGroup));
  EXPECT_SAME_OFFSET((EventDescrV6, coll_api.graph_captured), (ncclProfilerEventDescr_v5_t, collApi.graphCaptured));
  EXPECT_SAME_OFFSET((EventDescrV6, kernel_ch.ptimer), (ncclProfilerEventDescr_v5_t, kernelCh.pTimer));
  EXPECT_SAME_OFFSET((EventDescrV6, net_plugin.data), (ncclProfilerEventDescr_v5_t, netPlugin.data));
}

TEST(NcclAbi, V4DescriptorMatchesNcclLayout) {
  EXPECT_EQ(sizeof(EventDescrV4), sizeof(ncclProfilerEventDescr_v4_t));
  EXPECT_SAME_OFFSET((EventDescrV4, parent_obj), (ncclProfilerEventDescr_v4_t, parentObj));
  EXPECT_SAME_OFFSET((EventDescrV4, rank), (ncclProfilerEventDescr_v4_t, rank));
  EXPECT_SAME_OFFSET((EventDescrV4, coll.count), (ncclProfilerEventDescr_v4_t, coll.count));
  EXPECT_SAME_OFFSET((EventDescrV4, coll.n_warps), (ncclProfilerEventDescr_v4_t, coll.nWarps));
  EXPECT_SAME_OFFSET((EventDescrV4, coll.algo), (ncclProfilerEventDescr_v4_t, coll.algo));
  EXPECT_SAME_OFFSET((EventDescrV4, coll.proto), (ncclProfilerEventDescr_v4_t, coll.proto));
  EXPECT_SAME_OFFSET((EventDescrV4, p2p.peer), (ncclProfilerEventDescr_v4_t, p2p.peer));
  EXPECT_SAME_OFFSET((EventDescrV4, p2p.n_channels), (ncclProfilerEventDescr_v4_t, p2p.nChannels));
  EXPECT_SAME_OFFSET((EventDescrV4, proxy_op.is_send), (ncclProfilerEventDescr_v4_t, proxyOp.isSend));
  EXPECT_SAME_OFFSET((EventDescrV4, kernel_ch.ptimer), (ncclProfilerEventDescr_v4_t, kernelCh.pTimer));
}

TEST(NcclAbi, PluginTablesAndStateArgs) {
  EXPECT_EQ(sizeof(EventStateArgsV4), sizeof(ncclProfilerEventStateArgs_v5_t));
  EXPECT_SAME_OFFSET((ProfilerV6, init), (ncclProfiler_v6_t, init));
  EXPECT_SAME_OFFSET((ProfilerV6, start_event), (ncclProfiler_v6_t, startEvent));
  EXPECT_SAME_OFFSET((ProfilerV6, stop_event), (ncclProfiler_v6_t, stopEvent));
  EXPECT_SAME_OFFSET((ProfilerV6, record_event_state), (ncclProfiler_v6_t, recordEventState));
  EXPECT_SAME_OFFSET((ProfilerV6, finalize), (ncclProfiler_v6_t, finalize));
  EXPECT_SAME_OFFSET((ProfilerV4, finalize), (ncclProfiler_v4_t, finalize));
  EXPECT_EQ(sizeof(ProfilerV5), sizeof(ncclProfiler_v5_t));
  EXPECT_EQ(static_cast<int>(kKernelChStop), static_cast<int>(ncclProfilerKernelChStop));
  EXPECT_EQ(static_cast<int>(kGroupEndApiStart), static_cast<int>(ncclProfilerGroupEndApiStart));
  EXPECT_EQ(static_cast<int>(kProxyOpInProgressV4), static_cast<int>(ncclProfilerProxyOpInProgress_v4));
  EXPECT_EQ(static_cast<uint32_t>(kCeBatch), static_cast<uint32_t>(ncclProfileCeBatch));
  EXPECT_EQ(static_cast<uint32_t>(kKernelLaunch), static_cast<uint32_t>(ncclProfileKernelLaunch));
}

}  // namespace
