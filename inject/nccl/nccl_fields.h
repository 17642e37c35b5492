// Field numbers of schema/nccl.proto and the NCCL fields of Chunk, for the hand-written encoder
// (nccl_record.cc, nccl_comms.cc). tests/nccl/nccl_fields_test.cc compares every constant with the
// protoc-generated descriptor and round-trips encoded messages through the generated decoder.
#pragma once

#include <cstdint>

namespace gt::nccl::field {

namespace chunk {
inline constexpr uint32_t kNccl = 80, kNcclComms = 81, kNcclPools = 82;
}
namespace event {
inline constexpr uint32_t kKind = 1, kTsDeltaNs = 2, kEventId = 3, kType = 4, kCommIndex = 5, kParentId = 6,
                          kGroupId = 7, kRank = 8, kFuncStringId = 9, kDatatypeStringId = 10, kAlgoStringId = 11,
                          kProtoStringId = 12, kSeqNumber = 13, kCount = 14, kRoot = 15, kPeer = 16, kNChannels = 17,
                          kNWarps = 18, kChannelId = 19, kGpuTimerNs = 20, kGraphCaptured = 21, kGroupDepth = 22,
                          kStream = 23, kState = 24, kTransSizeBytes = 25, kAppendedProxyOps = 26, kProxyPid = 27,
                          kNSteps = 28, kChunkSizeBytes = 29, kIsSend = 30, kStep = 31, kNetPluginId = 32,
                          kSyncStrategyStringId = 33, kIntraBatchSync = 34, kBatchSize = 35, kNumBatches = 36,
                          kCeSeqNumber = 37, kSyncComplete = 38, kNRanks = 39, kTotalBytes = 40;
}
namespace comm {
inline constexpr uint32_t kCommIndex = 1, kCommHash = 2, kName = 3, kNNodes = 4, kNRanks = 5, kRank = 6,
                          kPluginVersion = 7, kInitTsNs = 8, kInitTid = 9, kActivationMask = 10,
                          kNameTruncated = 11;
}
namespace pool_stats {
inline constexpr uint32_t kType = 1, kCapacityEvents = 2, kDroppedEvents = 3, kTsNs = 4;
}
namespace kind {
inline constexpr uint32_t kStart = 1, kStop = 2, kState = 3, kFinalize = 4;
}

}  // namespace gt::nccl::field
