#include "collector/stream_header.h"

#include "schema/proto_writer.h"
#include "collector/schema_fields.h"
#include "schema/format.h"

namespace gt {

std::string EncodeStreamPreamble(const ProcessInfo& info, const Config& config, const ClockPair& start,
                                 const char* gtrace_version) {
  namespace h = field::header;
  ProtoWriter w;
  w.Fixed64(kStreamFileMagicField, kStreamMagic);
  w.BeginNested(kStreamFileHeaderField);
  w.Varint(h::kFormatMajor, kFormatMajor);
  w.Varint(h::kFormatMinor, kFormatMinor);
  w.String(h::kGtraceVersion, gtrace_version);
  w.String(h::kHostName, info.host_name);
  w.StringIfNonEmpty(h::kBootId, info.boot_id);
  w.Varint(h::kPid, info.pid);
  w.Varint(h::kPpid, info.ppid);
  for (const std::string& arg : info.command_line) w.String(h::kCommandLine, arg);
  w.StringIfNonEmpty(h::kExecutablePath, info.executable_path);
  w.Int(h::kRank, info.rank.rank);
  w.Int(h::kLocalRank, info.rank.local_rank);
  w.Int(h::kWorldSize, info.rank.world_size);
  w.StringIfNonEmpty(h::kRankSource, info.rank.source);
  w.Varint(h::kClock, StreamClockIsTicks() ? field::enums::kClockTsc : field::enums::kClockMonotonic);
  w.BeginNested(h::kStartClock);
  w.Varint(field::clock_snapshot::kStreamClockNs, start.stream_ns);
  w.Varint(field::clock_snapshot::kRealtimeNs, start.realtime_ns);
  w.Varint(field::clock_snapshot::kUncertaintyNs, start.uncertainty_ns);
  if (StreamClockIsTicks()) w.Varint(field::clock_snapshot::kMonotonicNs, start.monotonic_ns);
  w.EndNested();
  w.String(h::kOutputPattern, config.output_pattern);
  w.String(h::kTrace, config.trace);
  for (const auto& [key, value] : config.raw) {
    w.BeginNested(h::kOptions);
    w.String(field::key_value::kKey, key);
    w.String(field::key_value::kValue, value);
    w.EndNested();
  }
  w.Varint(h::kBufferLimitBytes, config.buffer_bytes);
  w.Varint(h::kFlushIntervalMs, config.flush_interval_ms);
  w.StringIfNonEmpty(h::kCpuArchitecture, info.cpu_architecture);
  w.StringIfNonEmpty(h::kOsDescription, info.os_description);
  w.Varint(h::kCpuCores, info.cpu_cores);
  if (info.forked_without_exec) w.Bool(h::kForkedWithoutExec, true);
  for (const ProcessAncestorInfo& a : info.ancestors) {
    w.BeginNested(h::kAncestors);
    w.Varint(field::process_ancestor::kPid, a.pid);
    w.Varint(field::process_ancestor::kPpid, a.ppid);
    w.StringIfNonEmpty(field::process_ancestor::kName, a.name);
    w.EndNested();
  }
  w.EndNested();
  return w.bytes();
}

}  // namespace gt
