// Field numbers of the Perfetto trace protos we write (google/perfetto, protos/perfetto/trace/),
// for the hand encoder. tests/viewers/protos/perfetto_subset.proto declares the same messages for
// protoc, and the tests decode our output with the generated classes.
#pragma once

#include <cstdint>

namespace gt::viewers::pf {

// Trace
inline constexpr uint32_t kTracePacket = 1;

// TracePacket
inline constexpr uint32_t kPacketTimestamp = 8;
inline constexpr uint32_t kPacketTrackEvent = 11;
inline constexpr uint32_t kPacketInternedData = 12;
inline constexpr uint32_t kPacketSequenceFlags = 13;
inline constexpr uint32_t kPacketClockSnapshot = 6;
inline constexpr uint32_t kPacketTrustedPacketSequenceId = 10;
inline constexpr uint32_t kPacketTrackDescriptor = 60;
inline constexpr uint32_t kPacketFirstPacketOnSequence = 87;
inline constexpr uint32_t kSeqIncrementalStateCleared = 1;  // TracePacket.SequenceFlags
inline constexpr uint32_t kSeqNeedsIncrementalState = 2;

// ClockSnapshot / ClockSnapshot.Clock
inline constexpr uint32_t kClockSnapshotClocks = 1;
inline constexpr uint32_t kClockSnapshotPrimaryTraceClock = 2;
inline constexpr uint32_t kClockId = 1;
inline constexpr uint32_t kClockTimestamp = 2;
inline constexpr uint32_t kBuiltinClockRealtime = 1;
inline constexpr uint32_t kBuiltinClockBoottime = 6;

// TrackDescriptor
inline constexpr uint32_t kTrackUuid = 1;
inline constexpr uint32_t kTrackName = 2;
inline constexpr uint32_t kTrackProcess = 3;
inline constexpr uint32_t kTrackThread = 4;
inline constexpr uint32_t kTrackParentUuid = 5;
inline constexpr uint32_t kTrackCounter = 8;
inline constexpr uint32_t kTrackChildOrdering = 11;
inline constexpr uint32_t kTrackSiblingOrderRank = 12;
inline constexpr uint32_t kTrackDescription = 14;
inline constexpr uint32_t kChildOrderingExplicit = 3;

// ProcessDescriptor
inline constexpr uint32_t kProcessPid = 1;
inline constexpr uint32_t kProcessCmdline = 2;
inline constexpr uint32_t kProcessName = 6;
inline constexpr uint32_t kProcessLabels = 8;

// ThreadDescriptor
inline constexpr uint32_t kThreadPid = 1;
inline constexpr uint32_t kThreadTid = 2;
inline constexpr uint32_t kThreadName = 5;

// CounterDescriptor
inline constexpr uint32_t kCounterUnitName = 6;

// TrackEvent
inline constexpr uint32_t kEventCategoryIids = 3;
inline constexpr uint32_t kEventDebugAnnotations = 4;
inline constexpr uint32_t kEventType = 9;
inline constexpr uint32_t kEventNameIid = 10;
inline constexpr uint32_t kEventTrackUuid = 11;
inline constexpr uint32_t kEventName = 23;
inline constexpr uint32_t kEventCounterValue = 30;
inline constexpr uint32_t kEventFlowIds = 47;             // fixed64
inline constexpr uint32_t kEventTerminatingFlowIds = 48;  // fixed64
inline constexpr uint32_t kTypeSliceBegin = 1;            // TrackEvent.Type
inline constexpr uint32_t kTypeSliceEnd = 2;
inline constexpr uint32_t kTypeInstant = 3;
inline constexpr uint32_t kTypeCounter = 4;

// DebugAnnotation
inline constexpr uint32_t kAnnotationNameIid = 1;
inline constexpr uint32_t kAnnotationIntValue = 4;
inline constexpr uint32_t kAnnotationDoubleValue = 5;
inline constexpr uint32_t kAnnotationStringValue = 6;

// InternedData, and EventCategory / EventName / DebugAnnotationName (iid = 1, name = 2)
inline constexpr uint32_t kInternedEventCategories = 1;
inline constexpr uint32_t kInternedEventNames = 2;
inline constexpr uint32_t kInternedDebugAnnotationNames = 3;
inline constexpr uint32_t kInternedIid = 1;
inline constexpr uint32_t kInternedName = 2;

}  // namespace gt::viewers::pf
