// The hand-written encoder (collector/) against the protoc-generated decoder (tools/ side): every
// message the library writes must parse back to the same values.
#include <gtest/gtest.h>

#include <cstring>

#include "collector/chunk_builder.h"
#include "schema/proto_writer.h"
#include "collector/schema_fields.h"
#include "collector/stream_header.h"
#include "gtrace.pb.h"
#include "schema/crc32c.h"
#include "schema/format.h"

namespace gt {
namespace {

// Parses the framed chunks in `bytes` (StreamFile field 3 records) into `out`.
void ParseChunks(const std::string& bytes, std::vector<schema::Chunk>* out) {
  schema::StreamFile file;
  ASSERT_TRUE(file.ParseFromString(bytes));
  for (const auto& c : file.chunk()) out->push_back(c);
}

TEST(ProtoWriter, VarintBoundariesAndNestedLengths) {
  // Lengths around each varint width boundary, so EndNested's move-down path is exercised.
  for (size_t len : {0u, 1u, 127u, 128u, 16383u, 16384u, 2097151u, 2097152u}) {
    ProtoWriter w;
    w.BeginNested(field::chunk::kStrings);
    w.Varint(field::interned_string::kId, 42);
    w.String(field::interned_string::kText, std::string(len, 'x'));
    w.EndNested();
    schema::Chunk c;
    ASSERT_TRUE(c.ParseFromString(w.bytes())) << len;
    ASSERT_EQ(c.strings_size(), 1);
    EXPECT_EQ(c.strings(0).id(), 42u);
    EXPECT_EQ(c.strings(0).text().size(), len);
  }
}

TEST(ProtoWriter, ScalarEncodings) {
  ProtoWriter w;
  w.SInt(field::nvtx_event::kTsDeltaNs, -5);
  w.Int(field::nvtx_event::kPayloadInt64, -42);
  w.Int(field::nvtx_event::kPayloadInt32, -9);
  w.Double(field::nvtx_event::kPayloadDouble, 2.5);  // oneof: the last one wins
  schema::NvtxEvent e;
  ASSERT_TRUE(e.ParseFromString(w.bytes()));
  EXPECT_EQ(e.ts_delta_ns(), -5);
  EXPECT_EQ(e.payload_case(), schema::NvtxEvent::kPayloadDouble);
  EXPECT_EQ(e.payload_double(), 2.5);

  ProtoWriter f;
  f.Float(field::nvtx_event::kPayloadFloat, 1.5f);
  f.Fixed32(field::nvtx_event::kColorArgb, 0xFF00FF00u);
  f.Int(field::nvtx_event::kPayloadInt32, -9);
  ASSERT_TRUE(e.ParseFromString(f.bytes()));
  EXPECT_TRUE(e.has_color_argb());
  EXPECT_EQ(e.color_argb(), 0xFF00FF00u);
  EXPECT_EQ(e.payload_int32(), -9);

  ProtoWriter u;
  u.Varint(field::nvtx_event::kPayloadUint64, UINT64_MAX);
  ASSERT_TRUE(e.ParseFromString(u.bytes()));
  EXPECT_EQ(e.payload_uint64(), UINT64_MAX);
}

TEST(StreamHeader, RoundTripsEveryField) {
  ProcessInfo info;
  info.host_name = "node-7";
  info.boot_id = "boot-1";
  info.pid = 1234;
  info.ppid = 1;
  info.command_line = {"python", "train.py", "--lr=0.1"};
  info.executable_path = "/usr/bin/python3";
  info.rank = {3, 1, 8, "SLURM_PROCID"};
  info.cpu_architecture = "x86_64";
  info.os_description = "Linux 6.1";
  info.cpu_cores = 16;
  Config config;
  config.output_pattern = "report_%q{SLURM_PROCID}";
  config.trace = "nvtx";
  config.raw = {{"GTRACE_TRACE", "nvtx"}};
  config.buffer_bytes = 8u << 20;
  config.flush_interval_ms = 250;
  ClockPair start{1000, 1700000000000000000ull, 40};
  std::string bytes = EncodeStreamPreamble(info, config, start, "9.9.9");
  ASSERT_EQ(bytes.size() > 9, true);
  uint64_t magic;
  std::memcpy(&magic, bytes.data() + 1, 8);
  EXPECT_EQ(static_cast<unsigned char>(bytes[0]), 0x09);
  EXPECT_EQ(magic, kStreamMagic);
  EXPECT_EQ(std::string(bytes.data() + 1, 8), "GTRACE\r\n");
  schema::StreamFile file;
  ASSERT_TRUE(file.ParseFromString(bytes));
  EXPECT_EQ(file.magic(), kStreamMagic);
  const schema::StreamHeader& h = file.header();
  EXPECT_EQ(h.format_major(), kFormatMajor);
  EXPECT_EQ(h.format_minor(), kFormatMinor);
  EXPECT_EQ(h.gtrace_version(), "9.9.9");
  EXPECT_EQ(h.host_name(), "node-7");
  EXPECT_EQ(h.boot_id(), "boot-1");
  EXPECT_EQ(h.pid(), 1234u);
  EXPECT_EQ(h.ppid(), 1u);
  ASSERT_EQ(h.command_line_size(), 3);
  EXPECT_EQ(h.command_line(2), "--lr=0.1");
  EXPECT_EQ(h.executable_path(), "/usr/bin/python3");
  EXPECT_EQ(h.rank(), 3);
  EXPECT_EQ(h.local_rank(), 1);
  EXPECT_EQ(h.world_size(), 8);
  EXPECT_EQ(h.rank_source(), "SLURM_PROCID");
  EXPECT_EQ(h.clock(), schema::CLOCK_ID_MONOTONIC);
  EXPECT_EQ(h.start_clock().stream_clock_ns(), 1000u);
  EXPECT_EQ(h.start_clock().realtime_ns(), 1700000000000000000ull);
  EXPECT_EQ(h.start_clock().uncertainty_ns(), 40u);
  EXPECT_EQ(h.output_pattern(), "report_%q{SLURM_PROCID}");
  EXPECT_EQ(h.trace(), "nvtx");
  ASSERT_EQ(h.options_size(), 1);
  EXPECT_EQ(h.options(0).key(), "GTRACE_TRACE");
  EXPECT_EQ(h.buffer_limit_bytes(), 8u << 20);
  EXPECT_EQ(h.flush_interval_ms(), 250u);
  EXPECT_EQ(h.cpu_architecture(), "x86_64");
  EXPECT_EQ(h.os_description(), "Linux 6.1");
  EXPECT_EQ(h.cpu_cores(), 16u);
  // Negative "unknown" ranks survive the int32 encoding.
  info.rank = {};
  ASSERT_TRUE(file.ParseFromString(EncodeStreamPreamble(info, config, start, "x")));
  EXPECT_EQ(file.header().rank(), -1);
}

TEST(ChunkBuilder, FramesCrcInterningAndDeltas) {
  StringInterner interner;
  ChunkBuilder c(&interner);
  c.Begin(7, 4242, 1000);
  uint64_t a = c.Intern("alpha");
  uint64_t b = c.Intern("beta");
  EXPECT_EQ(c.Intern("alpha"), a);  // defined once
  EXPECT_EQ(c.Intern(""), 0u);
  for (uint64_t ts : {1000u, 1005u, 1003u}) {
    ProtoWriter& w = c.body();
    w.BeginNested(field::chunk::kNvtx);
    w.Varint(field::nvtx_event::kKind, field::enums::kNvtxMark);
    w.SInt(field::nvtx_event::kTsDeltaNs, c.DeltaNs(field::chunk::kNvtx, ts));
    w.Varint(field::nvtx_event::kStringId, ts == 1005 ? b : a);
    EXPECT_EQ(c.Intern("gamma"), 0u);  // inside a nested message: refused and counted
    w.EndNested();
  }
  c.End();
  EXPECT_EQ(c.intern_misuse(), 3u);
  c.Begin(8, 1, 0);  // an empty chunk is not written
  c.End();
  std::vector<schema::Chunk> chunks;
  ParseChunks(*c.output(), &chunks);
  ASSERT_EQ(chunks.size(), 1u);
  const schema::Chunk& k = chunks[0];
  EXPECT_EQ(k.sequence_id(), 7u);
  EXPECT_EQ(k.tid(), 4242u);
  EXPECT_EQ(k.base_ns(), 1000u);
  ASSERT_EQ(k.strings_size(), 2);
  EXPECT_EQ(k.strings(0).text(), "alpha");
  EXPECT_EQ(k.strings(1).text(), "beta");
  ASSERT_EQ(k.nvtx_size(), 3);
  uint64_t ts = k.base_ns();
  std::vector<uint64_t> decoded;
  for (const auto& e : k.nvtx()) decoded.push_back(ts += static_cast<uint64_t>(e.ts_delta_ns()));
  EXPECT_EQ(decoded, (std::vector<uint64_t>{1000, 1005, 1003}));
  // The CRC covers every byte after the 5-byte CRC field.
  const std::string& out = *c.output();
  size_t body_at = 2;  // tag 0x1a + 1..3 byte length
  while (static_cast<unsigned char>(out[body_at - 1]) & 0x80) ++body_at;
  ASSERT_EQ(static_cast<unsigned char>(out[body_at]), 0x0d);
  uint32_t stored;
  std::memcpy(&stored, out.data() + body_at + 1, 4);
  EXPECT_EQ(stored, Crc32c(out.data() + body_at + 5, out.size() - body_at - 5));
  EXPECT_EQ(k.crc32c(), stored);
}

TEST(Crc32c, KnownVector) {
  // RFC 3720 test vector: CRC-32C of "123456789" is 0xE3069283.
  EXPECT_EQ(Crc32c("123456789", 9), 0xE3069283u);
  EXPECT_EQ(Crc32c("", 0), 0u);
  // Incremental equals one-shot.
  uint32_t part = Crc32c("1234", 4);
  EXPECT_EQ(Crc32c("56789", 5, part), 0xE3069283u);
}

TEST(StringInterner, ForgetsPastTheCapButNeverReusesIds) {
  StringInterner in(150);  // tiny cap: two entries of 65 bytes each
  bool is_new = false;
  uint64_t a = in.Intern("a", &is_new);
  EXPECT_TRUE(is_new);
  EXPECT_EQ(in.Intern("a", &is_new), a);
  EXPECT_FALSE(is_new);
  uint64_t b = in.Intern("b", &is_new);
  uint64_t c = in.Intern("c", &is_new);  // over the cap: table reset first
  EXPECT_TRUE(is_new);
  EXPECT_EQ(in.resets(), 1u);
  uint64_t a2 = in.Intern("a", &is_new);
  EXPECT_TRUE(is_new);  // forgotten: re-sent with a new id
  EXPECT_NE(a2, a);
  EXPECT_LT(b, c);
  EXPECT_LT(c, a2);
}

}  // namespace
}  // namespace gt
