// Every field-number constant of the hand-written encoder equals the protoc descriptor's, and every
// field of the messages the library writes has a constant (a field added to gtrace.proto without
// an encoder update fails here).
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>

#include "collector/schema_fields.h"
#include "gtrace.pb.h"

namespace gt {
namespace {

std::map<std::string, std::set<std::string>>& Checked() {
  static std::map<std::string, std::set<std::string>> checked;
  return checked;
}

void ExpectField(const google::protobuf::Descriptor* d, const std::string& name, uint32_t number) {
  const google::protobuf::FieldDescriptor* f = d->FindFieldByName(name);
  ASSERT_NE(f, nullptr) << d->name() << "." << name << " is not in gtrace.proto";
  EXPECT_EQ(static_cast<uint32_t>(f->number()), number) << d->name() << "." << name;
  Checked()[d->name()].insert(name);
}

#define EXPECT_FIELD(Message, name, constant) ExpectField(schema::Message::descriptor(), name, constant)

TEST(SchemaFields, ConstantsMatchDescriptor) {
  EXPECT_FIELD(StreamHeader, "format_major", field::header::kFormatMajor);
  EXPECT_FIELD(StreamHeader, "format_minor", field::header::kFormatMinor);
  EXPECT_FIELD(StreamHeader, "gtrace_version", field::header::kGtraceVersion);
  EXPECT_FIELD(StreamHeader, "host_name", field::header::kHostName);
  EXPECT_FIELD(StreamHeader, "boot_id", field::header::kBootId);
  EXPECT_FIELD(StreamHeader, "pid", field::header::kPid);
  EXPECT_FIELD(StreamHeader, "ppid", field::header::kPpid);
  EXPECT_FIELD(StreamHeader, "command_line", field::header::kCommandLine);
  EXPECT_FIELD(StreamHeader, "executable_path", field::header::kExecutablePath);
  EXPECT_FIELD(StreamHeader, "rank", field::header::kRank);
  EXPECT_FIELD(StreamHeader, "local_rank", field::header::kLocalRank);
  EXPECT_FIELD(StreamHeader, "world_size", field::header::kWorldSize);
  EXPECT_FIELD(StreamHeader, "rank_source", field::header::kRankSource);
  EXPECT_FIELD(StreamHeader, "clock", field::header::kClock);
  EXPECT_FIELD(StreamHeader, "start_clock", field::header::kStartClock);
  EXPECT_FIELD(StreamHeader, "output_pattern", field::header::kOutputPattern);
  EXPECT_FIELD(StreamHeader, "trace", field::header::kTrace);
  EXPECT_FIELD(StreamHeader, "options", field::header::kOptions);
  EXPECT_FIELD(StreamHeader, "buffer_limit_bytes", field::header::kBufferLimitBytes);
  EXPECT_FIELD(StreamHeader, "flush_interval_ms", field::header::kFlushIntervalMs);
  EXPECT_FIELD(StreamHeader, "cpu_architecture", field::header::kCpuArchitecture);
  EXPECT_FIELD(StreamHeader, "os_description", field::header::kOsDescription);
  EXPECT_FIELD(StreamHeader, "cpu_cores", field::header::kCpuCores);
  EXPECT_FIELD(StreamHeader, "forked_without_exec", field::header::kForkedWithoutExec);
  EXPECT_FIELD(StreamHeader, "ancestors", field::header::kAncestors);
  EXPECT_FIELD(ProcessAncestor, "pid", field::process_ancestor::kPid);
  EXPECT_FIELD(ProcessAncestor, "ppid", field::process_ancestor::kPpid);
  EXPECT_FIELD(ProcessAncestor, "name", field::process_ancestor::kName);
  EXPECT_FIELD(KeyValue, "key", field::key_value::kKey);
  EXPECT_FIELD(KeyValue, "value", field::key_value::kValue);
  EXPECT_FIELD(ClockSnapshot, "stream_clock_ns", field::clock_snapshot::kStreamClockNs);
  EXPECT_FIELD(ClockSnapshot, "realtime_ns", field::clock_snapshot::kRealtimeNs);
  EXPECT_FIELD(ClockSnapshot, "uncertainty_ns", field::clock_snapshot::kUncertaintyNs);
  EXPECT_FIELD(ClockSnapshot, "monotonic_ns", field::clock_snapshot::kMonotonicNs);
  EXPECT_FIELD(Chunk, "crc32c", field::chunk::kCrc32c);
  EXPECT_FIELD(Chunk, "sequence_id", field::chunk::kSequenceId);
  EXPECT_FIELD(Chunk, "tid", field::chunk::kTid);
  EXPECT_FIELD(Chunk, "base_ns", field::chunk::kBaseNs);
  EXPECT_FIELD(Chunk, "strings", field::chunk::kStrings);
  EXPECT_FIELD(Chunk, "thread", field::chunk::kThread);
  EXPECT_FIELD(Chunk, "drops", field::chunk::kDrops);
  EXPECT_FIELD(Chunk, "clock", field::chunk::kClock);
  EXPECT_FIELD(Chunk, "end_of_stream", field::chunk::kEndOfStream);
  EXPECT_FIELD(Chunk, "stats", field::chunk::kStats);
  EXPECT_FIELD(Chunk, "diagnostics", field::chunk::kDiagnostics);
  EXPECT_FIELD(Chunk, "nvtx", field::chunk::kNvtx);
  EXPECT_FIELD(Chunk, "nvtx_domains", field::chunk::kNvtxDomains);
  EXPECT_FIELD(Chunk, "nvtx_strings", field::chunk::kNvtxStrings);
  EXPECT_FIELD(Chunk, "nvtx_payload_schemas", field::chunk::kNvtxPayloadSchemas);
  EXPECT_FIELD(InternedString, "id", field::interned_string::kId);
  EXPECT_FIELD(InternedString, "text", field::interned_string::kText);
  EXPECT_FIELD(ThreadInfo, "tid", field::thread_info::kTid);
  EXPECT_FIELD(ThreadInfo, "name", field::thread_info::kName);
  EXPECT_FIELD(ThreadInfo, "nice", field::thread_info::kNice);
  EXPECT_FIELD(DropReport, "source", field::drop_report::kSource);
  EXPECT_FIELD(DropReport, "tid", field::drop_report::kTid);
  EXPECT_FIELD(DropReport, "dropped_records", field::drop_report::kDroppedRecords);
  EXPECT_FIELD(DropReport, "ts_ns", field::drop_report::kTsNs);
  EXPECT_FIELD(StreamStats, "records_written", field::stream_stats::kRecordsWritten);
  EXPECT_FIELD(StreamStats, "records_dropped", field::stream_stats::kRecordsDropped);
  EXPECT_FIELD(StreamStats, "chunks_written", field::stream_stats::kChunksWritten);
  EXPECT_FIELD(StreamStats, "bytes_written", field::stream_stats::kBytesWritten);
  EXPECT_FIELD(StreamStats, "threads_seen", field::stream_stats::kThreadsSeen);
  EXPECT_FIELD(StreamStats, "end_ns", field::stream_stats::kEndNs);
  EXPECT_FIELD(StreamStats, "close_reason", field::stream_stats::kCloseReason);
  EXPECT_FIELD(StreamStats, "end_reason", field::stream_stats::kEndReason);
  EXPECT_FIELD(StreamStats, "end_signal", field::stream_stats::kEndSignal);
  EXPECT_FIELD(Chunk, "profiler_overheads", field::chunk::kProfilerOverheads);
  EXPECT_FIELD(ProfilerOverhead, "start_ns", field::profiler_overhead::kStartNs);
  EXPECT_FIELD(ProfilerOverhead, "end_ns", field::profiler_overhead::kEndNs);
  EXPECT_FIELD(ProfilerOverhead, "kind", field::profiler_overhead::kKind);
  EXPECT_FIELD(ProfilerOverhead, "tid", field::profiler_overhead::kTid);
  EXPECT_EQ(field::profiler_overhead::kKindStreamWrite,
            static_cast<uint32_t>(schema::PROFILER_OVERHEAD_KIND_STREAM_WRITE));
  EXPECT_EQ(field::profiler_overhead::kKindDrain, static_cast<uint32_t>(schema::PROFILER_OVERHEAD_KIND_DRAIN));
  EXPECT_FIELD(Diagnostic, "ts_ns", field::diagnostic::kTsNs);
  EXPECT_FIELD(Diagnostic, "severity", field::diagnostic::kSeverity);
  EXPECT_FIELD(Diagnostic, "source", field::diagnostic::kSource);
  EXPECT_FIELD(Diagnostic, "text", field::diagnostic::kText);
  EXPECT_FIELD(NvtxEvent, "kind", field::nvtx_event::kKind);
  EXPECT_FIELD(NvtxEvent, "ts_delta_ns", field::nvtx_event::kTsDeltaNs);
  EXPECT_FIELD(NvtxEvent, "domain_id", field::nvtx_event::kDomainId);
  EXPECT_FIELD(NvtxEvent, "string_id", field::nvtx_event::kStringId);
  EXPECT_FIELD(NvtxEvent, "registered_string_id", field::nvtx_event::kRegisteredStringId);
  EXPECT_FIELD(NvtxEvent, "category", field::nvtx_event::kCategory);
  EXPECT_FIELD(NvtxEvent, "color_argb", field::nvtx_event::kColorArgb);
  EXPECT_FIELD(NvtxEvent, "range_id", field::nvtx_event::kRangeId);
  EXPECT_FIELD(NvtxEvent, "named_tid", field::nvtx_event::kNamedTid);
  EXPECT_FIELD(NvtxEvent, "tid", field::nvtx_event::kTid);
  EXPECT_FIELD(NvtxEvent, "payload_uint64", field::nvtx_event::kPayloadUint64);
  EXPECT_FIELD(NvtxEvent, "payload_int64", field::nvtx_event::kPayloadInt64);
  EXPECT_FIELD(NvtxEvent, "payload_double", field::nvtx_event::kPayloadDouble);
  EXPECT_FIELD(NvtxEvent, "payload_uint32", field::nvtx_event::kPayloadUint32);
  EXPECT_FIELD(NvtxEvent, "payload_int32", field::nvtx_event::kPayloadInt32);
  EXPECT_FIELD(NvtxEvent, "payload_float", field::nvtx_event::kPayloadFloat);
  EXPECT_FIELD(NvtxEvent, "ext_payloads", field::nvtx_event::kExtPayloads);
  EXPECT_FIELD(NvtxEvent, "message_truncated", field::nvtx_event::kMessageTruncated);
  EXPECT_FIELD(NvtxEvent, "ext_payload_truncated_bytes", field::nvtx_event::kExtPayloadTruncatedBytes);
  EXPECT_FIELD(NvtxEvent, "unbalanced", field::nvtx_event::kUnbalanced);
  EXPECT_FIELD(NvtxEvent, "depth", field::nvtx_event::kDepth);
  EXPECT_FIELD(NvtxExtPayload, "schema_id", field::nvtx_ext_payload::kSchemaId);
  EXPECT_FIELD(NvtxExtPayload, "data", field::nvtx_ext_payload::kData);
  EXPECT_FIELD(NvtxDomain, "domain_id", field::nvtx_domain::kDomainId);
  EXPECT_FIELD(NvtxDomain, "name", field::nvtx_domain::kName);
  EXPECT_FIELD(NvtxDomain, "create_ts_ns", field::nvtx_domain::kCreateTsNs);
  EXPECT_FIELD(NvtxDomain, "create_tid", field::nvtx_domain::kCreateTid);
  EXPECT_FIELD(NvtxRegisteredString, "id", field::nvtx_registered_string::kId);
  EXPECT_FIELD(NvtxRegisteredString, "domain_id", field::nvtx_registered_string::kDomainId);
  EXPECT_FIELD(NvtxRegisteredString, "text", field::nvtx_registered_string::kText);
  EXPECT_FIELD(NvtxPayloadSchema, "domain_id", field::nvtx_payload_schema::kDomainId);
  EXPECT_FIELD(NvtxPayloadSchema, "schema_id", field::nvtx_payload_schema::kSchemaId);
  EXPECT_FIELD(NvtxPayloadSchema, "name", field::nvtx_payload_schema::kName);
  EXPECT_FIELD(NvtxPayloadSchema, "type", field::nvtx_payload_schema::kType);
  EXPECT_FIELD(NvtxPayloadSchema, "flags", field::nvtx_payload_schema::kFlags);
  EXPECT_FIELD(NvtxPayloadSchema, "payload_size_bytes", field::nvtx_payload_schema::kPayloadSizeBytes);
  EXPECT_FIELD(NvtxPayloadSchema, "align_to_bytes", field::nvtx_payload_schema::kAlignToBytes);
  EXPECT_FIELD(NvtxPayloadSchema, "entries", field::nvtx_payload_schema::kEntries);
  EXPECT_FIELD(NvtxPayloadSchema, "has_name", field::nvtx_payload_schema::kHasName);
  EXPECT_FIELD(NvtxPayloadSchemaEntry, "flags", field::nvtx_payload_schema_entry::kFlags);
  EXPECT_FIELD(NvtxPayloadSchemaEntry, "type", field::nvtx_payload_schema_entry::kType);
  EXPECT_FIELD(NvtxPayloadSchemaEntry, "name", field::nvtx_payload_schema_entry::kName);
  EXPECT_FIELD(NvtxPayloadSchemaEntry, "description", field::nvtx_payload_schema_entry::kDescription);
  EXPECT_FIELD(NvtxPayloadSchemaEntry, "array_or_union_detail", field::nvtx_payload_schema_entry::kArrayOrUnionDetail);
  EXPECT_FIELD(NvtxPayloadSchemaEntry, "offset_bytes", field::nvtx_payload_schema_entry::kOffsetBytes);
  EXPECT_FIELD(NvtxPayloadSchemaEntry, "has_offset", field::nvtx_payload_schema_entry::kHasOffset);
  EXPECT_FIELD(NvtxPayloadSchemaEntry, "has_description", field::nvtx_payload_schema_entry::kHasDescription);
  // Messages the library writes must have a constant for every field (none forgotten).
  for (const auto& [message, names] : Checked()) {
    const google::protobuf::Descriptor* d =
        google::protobuf::DescriptorPool::generated_pool()->FindMessageTypeByName("gt.schema." + message);
    ASSERT_NE(d, nullptr);
    for (int i = 0; i < d->field_count(); ++i) {
      const google::protobuf::FieldDescriptor* f = d->field(i);
      // Chunk fields of later subsystems are checked by those subsystems' own tests.
      if (message == "Chunk" && f->number() >= 40) continue;
      EXPECT_TRUE(names.count(f->name())) << message << "." << f->name() << " has no encoder constant";
    }
  }
}

TEST(SchemaFields, EnumValuesMatchDescriptor) {
  EXPECT_EQ(field::enums::kClockMonotonic, static_cast<uint32_t>(schema::CLOCK_ID_MONOTONIC));
  EXPECT_EQ(field::enums::kClockTsc, static_cast<uint32_t>(schema::CLOCK_ID_TSC));
  EXPECT_EQ(field::enums::kDropThreadBuffer, static_cast<uint32_t>(schema::DROP_SOURCE_THREAD_BUFFER));
  EXPECT_EQ(field::enums::kDropNoBuffer, static_cast<uint32_t>(schema::DROP_SOURCE_NO_BUFFER));
  EXPECT_EQ(field::enums::kDropCupti, static_cast<uint32_t>(schema::DROP_SOURCE_CUPTI));
  EXPECT_EQ(field::enums::kDropCuptiBuffer, static_cast<uint32_t>(schema::DROP_SOURCE_CUPTI_BUFFER));
  EXPECT_EQ(field::enums::kDropNcclPool, static_cast<uint32_t>(schema::DROP_SOURCE_NCCL_POOL));
  EXPECT_EQ(field::enums::kDropWriter, static_cast<uint32_t>(schema::DROP_SOURCE_WRITER));
  EXPECT_EQ(field::enums::kDropProcessEnd, static_cast<uint32_t>(schema::DROP_SOURCE_PROCESS_END));
  EXPECT_EQ(field::enums::kEndExit, static_cast<uint32_t>(schema::END_REASON_EXIT));
  EXPECT_EQ(field::enums::kEndUnderscoreExit, static_cast<uint32_t>(schema::END_REASON_UNDERSCORE_EXIT));
  EXPECT_EQ(field::enums::kEndExec, static_cast<uint32_t>(schema::END_REASON_EXEC));
  EXPECT_EQ(field::enums::kEndAbort, static_cast<uint32_t>(schema::END_REASON_ABORT));
  EXPECT_EQ(field::enums::kEndSignal, static_cast<uint32_t>(schema::END_REASON_SIGNAL));
  EXPECT_EQ(field::enums::kSeverityInfo, static_cast<uint32_t>(schema::DIAGNOSTIC_SEVERITY_INFO));
  EXPECT_EQ(field::enums::kSeverityWarning, static_cast<uint32_t>(schema::DIAGNOSTIC_SEVERITY_WARNING));
  EXPECT_EQ(field::enums::kSeverityError, static_cast<uint32_t>(schema::DIAGNOSTIC_SEVERITY_ERROR));
  EXPECT_EQ(field::enums::kNvtxPush, static_cast<uint32_t>(schema::NVTX_EVENT_KIND_PUSH));
  EXPECT_EQ(field::enums::kNvtxPop, static_cast<uint32_t>(schema::NVTX_EVENT_KIND_POP));
  EXPECT_EQ(field::enums::kNvtxStart, static_cast<uint32_t>(schema::NVTX_EVENT_KIND_START));
  EXPECT_EQ(field::enums::kNvtxEnd, static_cast<uint32_t>(schema::NVTX_EVENT_KIND_END));
  EXPECT_EQ(field::enums::kNvtxMark, static_cast<uint32_t>(schema::NVTX_EVENT_KIND_MARK));
  EXPECT_EQ(field::enums::kNvtxNameCategory, static_cast<uint32_t>(schema::NVTX_EVENT_KIND_NAME_CATEGORY));
  EXPECT_EQ(field::enums::kNvtxNameThread, static_cast<uint32_t>(schema::NVTX_EVENT_KIND_NAME_THREAD));
  EXPECT_EQ(field::enums::kNvtxDomainDestroy, static_cast<uint32_t>(schema::NVTX_EVENT_KIND_DOMAIN_DESTROY));
}

}  // namespace
}  // namespace gt
