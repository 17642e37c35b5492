#include "tests/common/synthetic_stream.h"

#include <fstream>

#include "collector/schema_fields.h"
#include "collector/stream_header.h"

namespace gt::test {

SyntheticStream::SyntheticStream(uint32_t pid, uint64_t start_mono_ns, uint64_t start_realtime_ns, std::string host,
                                 std::string boot_id)
    : start_mono_ns_(start_mono_ns), start_realtime_ns_(start_realtime_ns), chunk_(&interner_) {
  info_.pid = pid;
  info_.ppid = 1;
  info_.host_name = std::move(host);
  info_.boot_id = std::move(boot_id);
  info_.command_line = {"synthetic", "--pid", std::to_string(pid)};
  info_.executable_path = "/opt/synthetic/bin/app";
  info_.cpu_architecture = "x86_64";
  info_.os_description = "Linux test";
  info_.cpu_cores = 4;
  config_.trace = "nvtx";
}

size_t SyntheticStream::header_bytes() const {
  return EncodeStreamPreamble(info_, config_, {start_mono_ns_, start_realtime_ns_, 10}, "test").size();
}

std::string SyntheticStream::Bytes() const {
  std::string bytes = EncodeStreamPreamble(info_, config_, {start_mono_ns_, start_realtime_ns_, 10}, "test");
  bytes += *const_cast<ChunkBuilder&>(chunk_).output();
  return bytes;
}

void SyntheticStream::WriteTo(const std::string& path) const {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << Bytes();
}

void SyntheticStream::BeginChunk(uint64_t sequence_id, uint32_t tid, uint64_t base_ns) {
  chunk_.Begin(sequence_id, tid, base_ns);
}

void SyntheticStream::EndChunk() { chunk_.End(); }

void SyntheticStream::Nvtx(const NvtxSpec& e) {
  namespace f = field::nvtx_event;
  uint64_t sid = e.text.empty() ? 0 : chunk_.Intern(e.text);
  ProtoWriter& w = chunk_.body();
  w.BeginNested(field::chunk::kNvtx);
  w.Varint(f::kKind, e.kind);
  w.SInt(f::kTsDeltaNs, chunk_.DeltaNs(field::chunk::kNvtx, e.ts_ns));
  w.VarintIfNonZero(f::kDomainId, e.domain_id);
  w.VarintIfNonZero(f::kStringId, sid);
  w.VarintIfNonZero(f::kRegisteredStringId, e.registered_string_id);
  w.VarintIfNonZero(f::kCategory, e.category);
  if (e.color) w.Fixed32(f::kColorArgb, *e.color);
  w.VarintIfNonZero(f::kRangeId, e.range_id);
  w.VarintIfNonZero(f::kNamedTid, e.named_tid);
  if (e.payload_int64) w.Int(f::kPayloadInt64, *e.payload_int64);
  if (e.payload_double) w.Double(f::kPayloadDouble, *e.payload_double);
  w.VarintIfNonZero(f::kDepth, e.depth);
  w.EndNested();
  chunk_.CountRecord();
}

void SyntheticStream::Thread(uint32_t tid, const std::string& name, int32_t nice) {
  ProtoWriter& w = chunk_.body();
  w.BeginNested(field::chunk::kThread);
  w.Varint(field::thread_info::kTid, tid);
  w.String(field::thread_info::kName, name);
  w.Int(field::thread_info::kNice, nice);
  w.EndNested();
}

void SyntheticStream::Domain(uint32_t id, const std::string& name, uint64_t ts_ns, uint32_t tid) {
  ProtoWriter& w = chunk_.body();
  w.BeginNested(field::chunk::kNvtxDomains);
  w.Varint(field::nvtx_domain::kDomainId, id);
  w.String(field::nvtx_domain::kName, name);
  w.Varint(field::nvtx_domain::kCreateTsNs, ts_ns);
  w.Varint(field::nvtx_domain::kCreateTid, tid);
  w.EndNested();
}

void SyntheticStream::RegisteredString(uint64_t id, uint32_t domain_id, const std::string& text) {
  ProtoWriter& w = chunk_.body();
  w.BeginNested(field::chunk::kNvtxStrings);
  w.Varint(field::nvtx_registered_string::kId, id);
  w.VarintIfNonZero(field::nvtx_registered_string::kDomainId, domain_id);
  w.String(field::nvtx_registered_string::kText, text);
  w.EndNested();
}

void SyntheticStream::Drops(uint32_t source, uint32_t tid, uint64_t count, uint64_t ts_ns) {
  ProtoWriter& w = chunk_.body();
  w.BeginNested(field::chunk::kDrops);
  w.Varint(field::drop_report::kSource, source);
  w.VarintIfNonZero(field::drop_report::kTid, tid);
  w.Varint(field::drop_report::kDroppedRecords, count);
  w.Varint(field::drop_report::kTsNs, ts_ns);
  w.EndNested();
}

void SyntheticStream::Close(const std::string& reason) {
  chunk_.Begin(0, 0, 0);
  ProtoWriter& w = chunk_.body();
  w.BeginNested(field::chunk::kStats);
  w.Varint(field::stream_stats::kRecordsWritten, chunk_.records_total());
  w.String(field::stream_stats::kCloseReason, reason);
  w.EndNested();
  w.Bool(field::chunk::kEndOfStream, true);
  chunk_.End();
}

}  // namespace gt::test
