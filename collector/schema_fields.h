// Field numbers of schema/gtrace.proto, for the hand-written encoder. Every constant here is
// compared with the protoc-generated descriptor in tests/collector/schema_fields_test.cc, so a
// renumbered field fails the build's tests instead of silently corrupting streams.
#pragma once

#include <cstdint>

namespace gt::field {

namespace header {
inline constexpr uint32_t kFormatMajor = 1, kFormatMinor = 2, kGtraceVersion = 3, kHostName = 4, kBootId = 5,
                          kPid = 6, kPpid = 7, kCommandLine = 8, kExecutablePath = 9, kRank = 10, kLocalRank = 11,
                          kWorldSize = 12, kRankSource = 13, kClock = 14, kStartClock = 15, kOutputPattern = 16,
                          kTrace = 17, kOptions = 18, kBufferLimitBytes = 19, kFlushIntervalMs = 20,
                          kCpuArchitecture = 21, kOsDescription = 22, kCpuCores = 23, kForkedWithoutExec = 24,
                          kAncestors = 25;
}
namespace process_ancestor {
inline constexpr uint32_t kPid = 1, kPpid = 2, kName = 3;
}
namespace key_value {
inline constexpr uint32_t kKey = 1, kValue = 2;
}
namespace clock_snapshot {
inline constexpr uint32_t kStreamClockNs = 1, kRealtimeNs = 2, kUncertaintyNs = 3, kMonotonicNs = 4;
}
namespace chunk {
inline constexpr uint32_t kCrc32c = 1, kSequenceId = 2, kTid = 3, kBaseNs = 4, kStrings = 5, kThread = 6,
                          kDrops = 7, kClock = 8, kEndOfStream = 9, kStats = 10, kDiagnostics = 11,
                          kProfilerOverheads = 12;
inline constexpr uint32_t kNvtx = 16, kNvtxDomains = 17, kNvtxStrings = 18, kNvtxPayloadSchemas = 19;
}
namespace interned_string {
inline constexpr uint32_t kId = 1, kText = 2;
}
namespace thread_info {
inline constexpr uint32_t kTid = 1, kName = 2, kNice = 3;
}
namespace drop_report {
inline constexpr uint32_t kSource = 1, kTid = 2, kDroppedRecords = 3, kTsNs = 4;
}
namespace stream_stats {
inline constexpr uint32_t kRecordsWritten = 1, kRecordsDropped = 2, kChunksWritten = 3, kBytesWritten = 4,
                          kThreadsSeen = 5, kEndNs = 6, kCloseReason = 7, kEndReason = 8,
                          kEndSignal = 9;
}
namespace diagnostic {
inline constexpr uint32_t kTsNs = 1, kSeverity = 2, kSource = 3, kText = 4;
}
namespace profiler_overhead {
inline constexpr uint32_t kStartNs = 1, kEndNs = 2, kKind = 3, kTid = 4;
inline constexpr uint32_t kKindStreamWrite = 1, kKindDrain = 2;
}
namespace nvtx_event {
inline constexpr uint32_t kKind = 1, kTsDeltaNs = 2, kDomainId = 3, kStringId = 4, kRegisteredStringId = 5,
                          kCategory = 6, kColorArgb = 7, kRangeId = 8, kNamedTid = 9, kTid = 10, kPayloadUint64 = 11,
                          kPayloadInt64 = 12, kPayloadDouble = 13, kPayloadUint32 = 14, kPayloadInt32 = 15,
                          kPayloadFloat = 16, kExtPayloads = 17, kMessageTruncated = 18,
                          kExtPayloadTruncatedBytes = 19, kUnbalanced = 20, kDepth = 21;
}
namespace nvtx_ext_payload {
inline constexpr uint32_t kSchemaId = 1, kData = 2;
}
namespace nvtx_domain {
inline constexpr uint32_t kDomainId = 1, kName = 2, kCreateTsNs = 3, kCreateTid = 4;
}
namespace nvtx_registered_string {
inline constexpr uint32_t kId = 1, kDomainId = 2, kText = 3;
}
namespace nvtx_payload_schema {
inline constexpr uint32_t kDomainId = 1, kSchemaId = 2, kName = 3, kType = 4, kFlags = 5, kPayloadSizeBytes = 6,
                          kAlignToBytes = 7, kEntries = 8, kHasName = 9;
}
namespace nvtx_payload_schema_entry {
inline constexpr uint32_t kFlags = 1, kType = 2, kName = 3, kDescription = 4, kArrayOrUnionDetail = 5,
                          kOffsetBytes = 6, kHasOffset = 7, kHasDescription = 8;
}

// Enum values written by the encoder.
namespace enums {
inline constexpr uint32_t kClockMonotonic = 1, kClockTsc = 4;
inline constexpr uint32_t kDropThreadBuffer = 1, kDropNoBuffer = 2, kDropCupti = 3, kDropCuptiBuffer = 4,
                          kDropNcclPool = 5, kDropWriter = 6, kDropProcessEnd = 7;
inline constexpr uint32_t kEndExit = 1, kEndUnderscoreExit = 2, kEndExec = 3, kEndAbort = 4, kEndSignal = 5;
inline constexpr uint32_t kSeverityInfo = 1, kSeverityWarning = 2, kSeverityError = 3;
inline constexpr uint32_t kNvtxPush = 1, kNvtxPop = 2, kNvtxStart = 3, kNvtxEnd = 4, kNvtxMark = 5,
                          kNvtxNameCategory = 6, kNvtxNameThread = 7, kNvtxDomainDestroy = 8;
}  // namespace enums

}  // namespace gt::field
