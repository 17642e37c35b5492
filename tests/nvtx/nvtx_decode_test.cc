// The drain thread's NVTX encoders (inject/nvtx/nvtx_record.cc), without a session: records laid out
// as WriteRecordAt lays them out in the ring, decoded by DecodeRecord (the short encoder for records
// without extended payloads) and by DecodeRecordGeneral (the nested-message encoder it replaced),
// each into its own chunk. The two chunks must be the same bytes, record by record, for every kind,
// every optional field, every payload type, texts on both sides of the one-slot and 128-byte
// boundaries, invalid UTF-8, wide text, extended payloads, deltas going backwards and the largest
// values; and the protoc decoder must read back what was recorded.
#include <gtest/gtest.h>

#include <cstring>
#include <cwchar>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "collector/chunk_builder.h"
#include "collector/record_types.h"
#include "collector/string_interner.h"
#include "gtrace.pb.h"
#include "inject/nvtx/nvtx_api.h"
#include "inject/nvtx/nvtx_record.h"

namespace gt::nvtx {
namespace {

// What one record holds (the fields of EventArgs that reach the ring, already resolved).
struct Rec {
  uint8_t kind = 1;
  uint8_t flags = 0;
  uint32_t domain = 0;
  uint64_t ts = 1000;
  uint64_t id = 0;
  uint32_t depth = 0;
  uint32_t registered_id = 0;
  uint32_t category = 0;
  uint32_t color = 0;
  uint64_t payload = 0;
  uint8_t payload_type = 0;
  std::string text;                                   // bytes as stored (wchar_t bytes when kFlagUtf32)
  std::vector<std::pair<uint64_t, std::string>> ext;  // schema id, bytes
};

// Lays out `r` as WriteRecordAt does, in whole 64-byte slots.
std::vector<Slot> Layout(const Rec& r) {
  std::string ext_bytes;
  for (const auto& [schema, data] : r.ext) {
    ExtBlobHeader bh{schema, static_cast<uint32_t>(data.size()), 0};
    ext_bytes.append(reinterpret_cast<const char*>(&bh), sizeof(bh));
    ext_bytes.append(data);
  }
  std::string bytes(sizeof(RecordBase), '\0');
  auto put = [&bytes](const void* v, size_t n) { bytes.append(static_cast<const char*>(v), n); };
  if (KindHasId(r.kind))
    put(&r.id, 8);
  if (r.flags & kFlagRegistered)
    put(&r.registered_id, 4);
  if (r.flags & kFlagHasCategory)
    put(&r.category, 4);
  if (r.flags & kFlagHasColor)
    put(&r.color, 4);
  if (r.flags & kFlagHasPayload)
    put(&r.payload, 8);
  uint32_t ext_size = static_cast<uint32_t>(ext_bytes.size());
  if (!r.ext.empty())
    put(&ext_size, 4);
  bytes += r.text;
  bytes += ext_bytes;
  size_t n_slots = (bytes.size() + kSlotBytes - 1) / kSlotBytes;
  RecordBase base{};
  base.h.type = kRecordNvtx;
  base.h.ext_slots = static_cast<uint8_t>(n_slots - 1);
  base.h.aux16 = static_cast<uint16_t>(r.kind | (r.flags << 8));
  base.h.aux32 = r.domain;
  base.h.ts_ns = r.ts;
  base.text_bytes = static_cast<uint16_t>(r.text.size());
  base.payload_type = r.payload_type;
  base.ext_count = static_cast<uint8_t>(r.ext.size());
  base.depth = r.depth;
  std::memcpy(bytes.data(), &base, sizeof(base));
  std::vector<Slot> slots(n_slots);
  std::memcpy(slots.data(), bytes.data(), bytes.size());
  return slots;
}

std::string Wide(const wchar_t* w) {
  return std::string(reinterpret_cast<const char*>(w), std::wcslen(w) * sizeof(wchar_t));
}

std::vector<Rec> AllForms() {
  std::vector<Rec> out;
  uint64_t ts = 5000;
  auto add = [&out, &ts](Rec r) {
    r.ts = ts;
    ts += 37;
    out.push_back(std::move(r));
  };
  const std::vector<std::string> texts = {"",
                                          "x",
                                          "bench-range",
                                          std::string(40, 'a'),
                                          std::string(41, 'b'),
                                          std::string(127, 'c'),
                                          std::string(128, 'd'),
                                          std::string(300, 'e'),
                                          std::string(4096, 'f'),
                                          "gr\xc3\xbcn",
                                          "bad\xff\xfe utf8 \xc3",
                                          "bench-range"};  // again: the interned id, no definition
  for (uint8_t kind = 1; kind <= 8; ++kind) {
    for (const std::string& t : texts) {
      Rec r;
      r.kind = kind;
      r.text = t;
      r.flags = t.empty() ? 0 : kFlagAscii;
      r.id = kind * 1000003ull;
      r.depth = kind % 3;
      add(r);
    }
  }
  // Every optional field, each payload type, the largest values.
  for (uint8_t kind : {1, 2, 3, 4, 5, 6, 7}) {
    for (uint8_t pt = 1; pt <= 7; ++pt) {
      Rec r;
      r.kind = kind;
      r.flags = kFlagAscii | kFlagHasColor | kFlagHasCategory | kFlagHasPayload | kFlagTruncated;
      r.text = "attr-" + std::to_string(pt);
      r.domain = 0xffffffffu;
      r.category = 0xfffffffeu;
      r.color = 0x80ff0001u;
      r.payload_type = pt;                                // 7: not a scalar type, nothing written
      r.payload = pt % 2 ? ~uint64_t{0} : 0x80000000ull;  // int32/int64 negative, uint64 max
      r.id = ~uint64_t{0};
      r.depth = 0xffffffffu;
      add(r);
    }
  }
  // A registered string, a zero payload, a domain-destroy, a wide message.
  Rec reg;
  reg.kind = 1;
  reg.flags = kFlagRegistered | kFlagHasPayload;
  reg.registered_id = 77;
  reg.payload_type = NVTX_PAYLOAD_TYPE_DOUBLE;
  reg.payload = 0x3ff8000000000000ull;  // 1.5
  reg.depth = 200;
  add(reg);
  Rec small;  // one-byte values of every optional field
  small.kind = 6;
  small.flags = kFlagAscii | kFlagHasCategory | kFlagHasColor;
  small.category = 1;
  small.color = 1;
  small.domain = 1;
  small.text = "cat";
  add(small);
  Rec wide;
  wide.kind = 5;
  wide.flags = kFlagUtf32;
  wide.text = Wide(L"wide-\u00fc-\U0001F600");
  add(wide);
  // Extended payloads (the general encoder in both runs), around them short records.
  Rec ext;
  ext.kind = 3;
  ext.flags = kFlagAscii;
  ext.text = "nccl-like";
  ext.id = 9;
  ext.ext = {{0x100, std::string(12, '\x01')}, {0x101, std::string(200, '\x02')}};
  add(ext);
  // Time going backwards (a negative delta) and a large jump.
  Rec back;
  back.kind = 2;
  back.depth = 1;
  add(back);
  out.back().ts = 10;
  Rec jump;
  jump.kind = 2;
  add(jump);
  out.back().ts = ~uint64_t{0} >> 1;
  return out;
}

// Decodes every record of `recs` into one chunk with `fn`; returns the chunk body bytes.
std::string Encode(const std::vector<Rec>& recs, void (*fn)(const RecordView&, ChunkBuilder*), uint64_t* misuse) {
  StringInterner interner;
  ChunkBuilder chunk(&interner);
  chunk.Begin(7, 1234, 4000);
  for (const Rec& r : recs) {
    std::vector<Slot> slots = Layout(r);
    RecordView view{reinterpret_cast<const RecordHeader*>(slots[0].bytes), slots[0].bytes, slots.size() * kSlotBytes,
                    1234};
    fn(view, &chunk);
  }
  *misuse = chunk.intern_misuse();
  return chunk.body().bytes();
}

TEST(NvtxDecode, ShortEncoderWritesTheGeneralEncodersBytes) {
  std::vector<Rec> recs = AllForms();
  uint64_t misuse_short = 0, misuse_general = 0;
  std::string fast = Encode(recs, &DecodeRecord, &misuse_short);
  std::string general = Encode(recs, &DecodeRecordGeneral, &misuse_general);
  EXPECT_EQ(misuse_short, 0u);
  EXPECT_EQ(misuse_general, 0u);
  ASSERT_EQ(fast.size(), general.size());
  EXPECT_TRUE(fast == general);
  // Record by record, to name the first form that differs.
  for (size_t i = 0; i < recs.size(); ++i) {
    std::vector<Rec> one(recs.begin(), recs.begin() + static_cast<long>(i) + 1);
    uint64_t m = 0;
    ASSERT_EQ(Encode(one, &DecodeRecord, &m), Encode(one, &DecodeRecordGeneral, &m))
        << "record " << i << " kind " << int(recs[i].kind) << " flags " << int(recs[i].flags) << " text bytes "
        << recs[i].text.size();
  }
}

TEST(NvtxDecode, ProtocReadsBackWhatWasRecorded) {
  std::vector<Rec> recs = AllForms();
  uint64_t misuse = 0;
  std::string body = Encode(recs, &DecodeRecord, &misuse);
  schema::Chunk chunk;
  ASSERT_TRUE(chunk.ParseFromString(body));
  ASSERT_EQ(chunk.nvtx_size(), static_cast<int>(recs.size()));
  std::map<uint64_t, std::string> strings;
  for (const auto& s : chunk.strings())
    strings[s.id()] = s.text();
  uint64_t ts = chunk.base_ns();
  for (int i = 0; i < chunk.nvtx_size(); ++i) {
    const auto& e = chunk.nvtx(i);
    const Rec& r = recs[static_cast<size_t>(i)];
    ts += static_cast<uint64_t>(e.ts_delta_ns());
    EXPECT_EQ(ts, r.ts) << i;
    EXPECT_EQ(static_cast<int>(e.kind()), r.kind) << i;
    EXPECT_EQ(e.domain_id(), r.domain) << i;
    EXPECT_EQ(e.category(), r.flags & kFlagHasCategory ? r.category : 0u) << i;
    EXPECT_EQ(e.has_color_argb(), (r.flags & kFlagHasColor) != 0) << i;
    EXPECT_EQ(e.message_truncated(), (r.flags & kFlagTruncated) != 0) << i;
    if (r.flags & kFlagRegistered) {
      EXPECT_EQ(e.registered_string_id(), r.registered_id) << i;
    } else if ((r.flags & kFlagAscii) && r.text.find('\xff') == std::string::npos &&
               r.text.find("\xc3\xbc") == std::string::npos) {
      EXPECT_EQ(r.text.empty() ? std::string() : strings[e.string_id()], r.text) << i;
    }
    if (r.kind == 3 || r.kind == 4) {
      EXPECT_EQ(e.range_id(), r.id) << i;
    }
    if (r.kind == 1 || r.kind == 2) {
      EXPECT_EQ(e.depth(), r.depth) << i;
    }
    if ((r.flags & kFlagHasPayload) && r.payload_type == NVTX_PAYLOAD_TYPE_INT32) {
      EXPECT_EQ(e.payload_int32(), static_cast<int32_t>(static_cast<uint32_t>(r.payload))) << i;
    }
    if ((r.flags & kFlagHasPayload) && r.payload_type == NVTX_PAYLOAD_TYPE_INT64) {
      EXPECT_EQ(e.payload_int64(), static_cast<int64_t>(r.payload)) << i;
    }
    if ((r.flags & kFlagHasPayload) && r.payload_type == NVTX_PAYLOAD_TYPE_DOUBLE) {
      double d = e.payload_double();
      uint64_t bits;
      std::memcpy(&bits, &d, 8);
      EXPECT_EQ(bits, r.payload) << i;  // NaN bits included
    }
    EXPECT_EQ(e.ext_payloads_size(), static_cast<int>(r.ext.size())) << i;
  }
  // Interned once each: 10 distinct texts of the first loop (the sanitised one included), attr-1..7,
  // cat, the wide message, nccl-like.
  EXPECT_EQ(strings.size(), 20u);
}

// What a corrupted ring could hold (as tests/fuzz/fuzz_nvtx_record.cc, seeded and short enough for
// every CI run): random bytes with a plausible head; both encoders write the same bytes and the
// chunk parses.
TEST(NvtxDecode, ArbitraryRecordsEncodeAlikeAndParse) {
  std::mt19937_64 rng(20261126);
  for (int i = 0; i < 20000; ++i) {
    size_t n_slots = 1 + rng() % 3;
    std::vector<Slot> slots(n_slots);
    for (size_t k = 0; k < n_slots * kSlotBytes; k += 8) {
      uint64_t v = rng();
      std::memcpy(slots[0].bytes + k, &v, 8);
    }
    RecordBase base;
    std::memcpy(&base, slots[0].bytes, sizeof(base));
    base.h.type = kRecordNvtx;
    base.h.aux16 = static_cast<uint16_t>((base.h.aux16 & 0xff0f) | (rng() % 10));  // kinds 0..9, any flags
    if (rng() % 2)
      base.text_bytes %= 160;
    if (rng() % 2)
      base.ext_count = 0;
    std::memcpy(slots[0].bytes, &base, sizeof(base));
    RecordView view{reinterpret_cast<const RecordHeader*>(slots[0].bytes), slots[0].bytes, n_slots * kSlotBytes, 1};
    StringInterner ia, ib;
    ChunkBuilder a(&ia), b(&ib);
    a.Begin(1, 1, 0);
    b.Begin(1, 1, 0);
    DecodeRecord(view, &a);
    DecodeRecordGeneral(view, &b);
    ASSERT_EQ(a.body().bytes(), b.body().bytes()) << "record " << i;
    schema::Chunk chunk;
    ASSERT_TRUE(chunk.ParseFromString(a.body().bytes())) << "record " << i;
  }
}

}  // namespace
}  // namespace gt::nvtx
