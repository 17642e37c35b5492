#include "inject/nvtx/nvtx_record.h"

#include <cstring>
#include <cwchar>
#include <string>

#include "collector/schema_fields.h"
#include "inject/nvtx/nvtx_api.h"

namespace gt::nvtx {
namespace {

// Appends the UTF-8 encoding of code point `cp` (invalid ones become U+FFFD).
void AppendUtf8(std::string* out, uint32_t cp) {
  if (cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) cp = 0xfffd;
  if (cp < 0x80) {
    out->push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out->push_back(static_cast<char>(0xc0 | (cp >> 6)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3f)));
  } else if (cp < 0x10000) {
    out->push_back(static_cast<char>(0xe0 | (cp >> 12)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3f)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3f)));
  } else {
    out->push_back(static_cast<char>(0xf0 | (cp >> 18)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3f)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3f)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3f)));
  }
}

// Replaces bytes that are not valid UTF-8 with U+FFFD so the stream's `string` fields stay valid
// (protobuf rejects invalid UTF-8 in proto3 strings).
void SanitizeUtf8(const unsigned char* p, size_t n, std::string* out) {
  out->clear();
  size_t i = 0;
  while (i < n) {
    unsigned char c = p[i];
    if (c < 0x80) {
      out->push_back(static_cast<char>(c));
      ++i;
      continue;
    }
    size_t len = (c & 0xe0) == 0xc0 ? 2 : (c & 0xf0) == 0xe0 ? 3 : (c & 0xf8) == 0xf0 ? 4 : 0;
    bool ok = len != 0 && i + len <= n;
    uint32_t cp = len == 2 ? (c & 0x1f) : len == 3 ? (c & 0x0f) : (c & 0x07);
    for (size_t k = 1; ok && k < len; ++k) {
      if ((p[i + k] & 0xc0) != 0x80) ok = false;
      cp = (cp << 6) | (p[i + k] & 0x3f);
    }
    // Reject overlong forms and surrogates.
    if (ok && ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
               (cp >= 0xd800 && cp <= 0xdfff))) {
      ok = false;
    }
    if (ok) {
      out->append(reinterpret_cast<const char*>(p + i), len);
      i += len;
    } else {
      AppendUtf8(out, 0xfffd);
      ++i;
    }
  }
}

bool IsAscii(const unsigned char* p, size_t n) {
  unsigned char any = 0;
  for (size_t i = 0; i < n; ++i) any |= p[i];
  return any < 0x80;
}

}  // namespace

// ts_ns 0: the clock is read once the ring has room (a dropped record never pays for it).
bool WriteRecord(const EventArgs& a) { return WriteRecordAt(a, 0); }

namespace {
bool WriteGeneralIn(ThreadBuffer* b, const EventArgs& a, uint64_t ts_ns);
}  // namespace

// The thread's buffer is looked up here, once, outside the big function below: GCC 12's UBSan
// null check of the initial-exec TLS access, inlined into WriteGeneralIn's body, was miscompiled
// (a `je` on stale flags sent every ext_count == 0 record to __ubsan_handle_type_mismatch in the
// ASan+UBSan build).
bool WriteRecordAt(const EventArgs& a, uint64_t ts_ns) {
  ThreadBuffer* b = CurrentThreadBuffer();
  if (b == nullptr) return false;  // the lookup counted the drop
  return ts_ns == 0 ? WriteRecordIn(b, a) : WriteGeneralIn(b, a, ts_ns);
}

bool WriteRecordIn(ThreadBuffer* b, const EventArgs& a) {
  if (IsPlainAscii(a)) return WriteAsciiRecordIn(b, a.kind, a.domain_id, a.depth, a.id, a.ascii);
  return WriteGeneralIn(b, a, 0);
}

namespace {
// Every record form: the head assembled from the optional fields, then text and extended payloads.
bool WriteGeneralIn(ThreadBuffer* b, const EventArgs& a, uint64_t ts_ns) {
  // A full ring drops before any other work (issue 20): probe for the head slot first (nothing
  // is committed; the real reservation below takes the full size).
  RecordSpan probe;
  if (!BeginRecordIn(b, kSlotBytes, &probe)) return false;
  AbandonRecord(probe);
  // Message bytes: bounded scans, so a missing terminator costs at most kMaxTextBytes.
  size_t text_bytes = 0;
  uint8_t flags = a.flags;
  const void* text = nullptr;
  if (a.ascii != nullptr) {
    size_t n = strnlen(a.ascii, kMaxTextBytes + 1);
    if (n > kMaxTextBytes) {
      n = kMaxTextBytes;
      flags |= kFlagTruncated;
    }
    text_bytes = n;
    text = a.ascii;
    flags |= kFlagAscii;
  } else if (a.wide != nullptr) {
    size_t n = wcsnlen(a.wide, kMaxTextBytes / sizeof(wchar_t) + 1);
    if (n > kMaxTextBytes / sizeof(wchar_t)) {
      n = kMaxTextBytes / sizeof(wchar_t);
      flags |= kFlagTruncated;
    }
    text_bytes = n * sizeof(wchar_t);
    text = a.wide;
    flags |= kFlagUtf32;
  }
  if (a.category != 0) flags |= kFlagHasCategory;
  // Extended payloads: schema id + bytes each, bounded in total.
  const auto* ext = static_cast<const nvtxPayloadData_t*>(a.ext);
  size_t ext_count = a.ext_count > 16 ? 16 : a.ext_count;
  size_t ext_bytes = 0;
  for (size_t i = 0; i < ext_count; ++i) {
    size_t keep = ext[i].payload != nullptr ? ext[i].size : 0;
    if (ext_bytes + sizeof(ExtBlobHeader) + keep > kMaxExtBytes) {
      keep = kMaxExtBytes > ext_bytes + sizeof(ExtBlobHeader) ? kMaxExtBytes - ext_bytes - sizeof(ExtBlobHeader) : 0;
    }
    ext_bytes += sizeof(ExtBlobHeader) + keep;
  }
  // The head: base + the optional fields this event has, assembled on the stack.
  unsigned char head[kMaxHeadBytes];
  RecordBase base;
  base.h.type = kRecordNvtx;
  base.h.ext_slots = 0;  // set below, once the size is known
  base.h.aux16 = static_cast<uint16_t>(a.kind | (flags << 8));
  base.h.aux32 = a.domain_id;
  base.h.ts_ns = 0;  // set once the ring has room
  base.text_bytes = static_cast<uint16_t>(text_bytes);
  base.payload_type = a.payload_type;
  base.ext_count = static_cast<uint8_t>(ext_count);
  base.depth = a.depth;
  size_t head_bytes = sizeof(RecordBase);
  auto put = [&head, &head_bytes](const void* v, size_t n) {
    std::memcpy(head + head_bytes, v, n);
    head_bytes += n;
  };
  if (KindHasId(a.kind)) put(&a.id, 8);
  if (flags & kFlagRegistered) put(&a.registered_id, 4);
  if (flags & kFlagHasCategory) put(&a.category, 4);
  if (flags & kFlagHasColor) put(&a.color, 4);
  if (flags & kFlagHasPayload) put(&a.payload, 8);
  uint32_t ext_bytes32 = static_cast<uint32_t>(ext_bytes);
  if (ext_count > 0) put(&ext_bytes32, 4);

  RecordSpan span;
  if (!BeginRecordIn(b, head_bytes + text_bytes + ext_bytes, &span)) return false;
  base.h.ts_ns = ts_ns != 0 ? ts_ns : StreamNow();
  base.h.ext_slots = static_cast<uint8_t>(span.n_slots - 1);
  std::memcpy(head, &base, sizeof(base));
  RecordCopy(span, 0, head, head_bytes);
  size_t at = head_bytes;
  if (text_bytes > 0) {
    RecordCopy(span, at, text, text_bytes);
    at += text_bytes;
  }
  size_t used = 0;
  for (size_t i = 0; i < ext_count; ++i) {
    size_t size = ext[i].payload != nullptr ? ext[i].size : 0;
    size_t keep = size;
    if (used + sizeof(ExtBlobHeader) + keep > kMaxExtBytes) {
      keep = kMaxExtBytes > used + sizeof(ExtBlobHeader) ? kMaxExtBytes - used - sizeof(ExtBlobHeader) : 0;
    }
    ExtBlobHeader bh{ext[i].schemaId, static_cast<uint32_t>(keep), static_cast<uint32_t>(size - keep)};
    RecordCopy(span, at, &bh, sizeof(bh));
    at += sizeof(bh);
    if (keep > 0) RecordCopy(span, at, ext[i].payload, keep);
    at += keep;
    used += sizeof(bh) + keep;
  }
  CommitRecord(span);
  return true;
}
}  // namespace

namespace {

// A ring record taken apart (drain thread). `text` points into the record's bytes.
struct ParsedRecord {
  RecordBase base;
  uint8_t kind = 0;
  uint8_t flags = 0;
  uint64_t id = 0;
  uint64_t payload = 0;
  uint32_t registered_id = 0;
  uint32_t category = 0;
  uint32_t color = 0;
  uint32_t ext_bytes = 0;
  const unsigned char* text = nullptr;
};

// False for a malformed record (skipped).
bool ParseRecord(const RecordView& view, ParsedRecord* r) {
  if (view.size_bytes < sizeof(RecordBase)) return false;
  std::memcpy(&r->base, view.bytes, sizeof(r->base));
  r->kind = static_cast<uint8_t>(r->base.h.aux16 & 0xff);
  r->flags = static_cast<uint8_t>(r->base.h.aux16 >> 8);
  // Optional fields, in the writer's order.
  const unsigned char* p = view.bytes + sizeof(RecordBase);
  const unsigned char* end_of_record = view.bytes + view.size_bytes;
  auto take = [&p, end_of_record](void* out, size_t n) {
    if (p + n > end_of_record) return false;
    std::memcpy(out, p, n);
    p += n;
    return true;
  };
  bool ok = true;
  if (KindHasId(r->kind)) ok &= take(&r->id, 8);
  if (r->flags & kFlagRegistered) ok &= take(&r->registered_id, 4);
  if (r->flags & kFlagHasCategory) ok &= take(&r->category, 4);
  if (r->flags & kFlagHasColor) ok &= take(&r->color, 4);
  if (r->flags & kFlagHasPayload) ok &= take(&r->payload, 8);
  if (r->base.ext_count > 0) ok &= take(&r->ext_bytes, 4);
  if (!ok || r->base.text_bytes > static_cast<size_t>(end_of_record - p) ||
      r->ext_bytes > static_cast<size_t>(end_of_record - p) - r->base.text_bytes) {
    return false;
  }
  r->text = p;
  return true;
}

// The message's InternedString id (0 for none). Strings first: their definitions cannot go inside
// the event message.
uint64_t InternMessage(const ParsedRecord& r, ChunkBuilder* chunk) {
  uint16_t n = r.base.text_bytes;
  if (n == 0) return 0;
  if (!(r.flags & kFlagUtf32) && IsAscii(r.text, n)) {
    // The common case (ASCII names): no copy, no re-encoding.
    return chunk->Intern(std::string_view(reinterpret_cast<const char*>(r.text), n));
  }
  std::string utf8;
  if (r.flags & kFlagUtf32) {
    for (size_t i = 0; i + sizeof(wchar_t) <= n; i += sizeof(wchar_t)) {
      wchar_t wc;
      std::memcpy(&wc, r.text + i, sizeof(wc));
      AppendUtf8(&utf8, static_cast<uint32_t>(wc));
    }
  } else {
    SanitizeUtf8(r.text, n, &utf8);
  }
  return chunk->Intern(utf8);
}

// The general encoder: every record form, through ProtoWriter's nested-message calls.
void EncodeGeneral(const ParsedRecord& r, uint64_t string_id, ChunkBuilder* chunk) {
  const RecordBase& base = r.base;
  const uint8_t kind = r.kind;
  const uint8_t flags = r.flags;
  const uint64_t id = r.id;
  const uint64_t payload = r.payload;
  namespace f = field::nvtx_event;
  ProtoWriter& w = chunk->body();
  w.BeginNested(field::chunk::kNvtx);
  w.Varint(f::kKind, kind);
  w.SInt(f::kTsDeltaNs, chunk->DeltaNs(field::chunk::kNvtx, base.h.ts_ns));
  w.VarintIfNonZero(f::kDomainId, base.h.aux32);
  if (flags & kFlagRegistered) {
    w.Varint(f::kRegisteredStringId, r.registered_id);
  } else if (string_id != 0) {
    w.Varint(f::kStringId, string_id);
  }
  w.VarintIfNonZero(f::kCategory, r.category);
  if (flags & kFlagHasColor) w.Fixed32(f::kColorArgb, r.color);
  if (kind == field::enums::kNvtxStart || kind == field::enums::kNvtxEnd) w.Varint(f::kRangeId, id);
  if (kind == field::enums::kNvtxNameThread) w.Varint(f::kNamedTid, id);
  if (kind == field::enums::kNvtxPush || kind == field::enums::kNvtxPop) w.VarintIfNonZero(f::kDepth, base.depth);
  if (flags & kFlagHasPayload) {
    switch (base.payload_type) {
      case NVTX_PAYLOAD_TYPE_UNSIGNED_INT64:
        w.Varint(f::kPayloadUint64, payload);
        break;
      case NVTX_PAYLOAD_TYPE_INT64:
        w.Int(f::kPayloadInt64, static_cast<int64_t>(payload));
        break;
      case NVTX_PAYLOAD_TYPE_DOUBLE: {
        double d;
        std::memcpy(&d, &payload, sizeof(d));
        w.Double(f::kPayloadDouble, d);
        break;
      }
      case NVTX_PAYLOAD_TYPE_UNSIGNED_INT32:
        w.Varint(f::kPayloadUint32, static_cast<uint32_t>(payload));
        break;
      case NVTX_PAYLOAD_TYPE_INT32:
        w.Int(f::kPayloadInt32, static_cast<int32_t>(static_cast<uint32_t>(payload)));
        break;
      case NVTX_PAYLOAD_TYPE_FLOAT: {
        float v;
        uint32_t bits = static_cast<uint32_t>(payload);
        std::memcpy(&v, &bits, sizeof(v));
        w.Float(f::kPayloadFloat, v);
        break;
      }
      default:
        break;
    }
  }
  const unsigned char* ext = r.text + base.text_bytes;
  size_t left = r.ext_bytes;
  uint32_t truncated = 0;
  for (uint8_t i = 0; i < base.ext_count && left >= sizeof(ExtBlobHeader); ++i) {
    ExtBlobHeader bh;
    std::memcpy(&bh, ext, sizeof(bh));
    ext += sizeof(bh);
    left -= sizeof(bh);
    if (bh.size > left) break;
    w.BeginNested(f::kExtPayloads);
    w.Varint(field::nvtx_ext_payload::kSchemaId, bh.schema_id);
    w.Bytes(field::nvtx_ext_payload::kData, ext, bh.size);
    w.EndNested();
    truncated += bh.truncated_bytes;
    ext += bh.size;
    left -= bh.size;
  }
  if (flags & kFlagTruncated) w.Bool(f::kMessageTruncated, true);
  w.VarintIfNonZero(f::kExtPayloadTruncatedBytes, truncated);
  w.EndNested();
}

// --- the short encoder (records without extended payloads: nearly all of them) -----------------
// Writes the same bytes as EncodeGeneral (nvtx.NvtxDecode.* compares them) into a stack buffer and
// appends them with one copy: no nested-message bookkeeping, no per-byte append. Without extended
// payloads an event's body is at most 73 bytes (every optional field at its longest), so its
// length is one varint byte, as EncodeGeneral's BeginNested/EndNested write it.

inline unsigned char* PutVarint(unsigned char* p, uint64_t v) {
  while (v >= 0x80) {
    *p++ = static_cast<unsigned char>(v | 0x80);
    v >>= 7;
  }
  *p++ = static_cast<unsigned char>(v);
  return p;
}
// A field's tag, folded at compile time (fields 1-15 take one byte, 16-2047 two).
template <uint32_t kField, uint32_t kWireType>
inline unsigned char* PutTag(unsigned char* p) {
  constexpr uint32_t kTag = kField << 3 | kWireType;
  static_assert(kTag < (1u << 14));
  if constexpr (kTag < 0x80) {
    *p++ = static_cast<unsigned char>(kTag);
  } else {
    *p++ = static_cast<unsigned char>(kTag | 0x80);
    *p++ = static_cast<unsigned char>(kTag >> 7);
  }
  return p;
}
template <uint32_t kField>
inline unsigned char* PutVarintField(unsigned char* p, uint64_t v) {
  return PutVarint(PutTag<kField, 0>(p), v);
}
template <uint32_t kField>
inline unsigned char* PutFixed32Field(unsigned char* p, uint32_t v) {
  p = PutTag<kField, 5>(p);
  std::memcpy(p, &v, 4);
  return p + 4;
}

constexpr size_t kMaxShortBodyBytes = 73;
// Chunk field tag (2 bytes) + length (1 byte) + body.
constexpr size_t kMaxShortEventBytes = 3 + kMaxShortBodyBytes;

void EncodeShort(const ParsedRecord& r, uint64_t string_id, ChunkBuilder* chunk) {
  namespace f = field::nvtx_event;
  unsigned char ev[kMaxShortEventBytes + 8];
  unsigned char* p = PutTag<field::chunk::kNvtx, 2>(ev);
  static_assert(field::chunk::kNvtx << 3 >= 0x80, "the tag is two bytes: the body starts at ev + 3");
  unsigned char* body = p + 1;  // the length byte goes at p
  unsigned char* q = body;
  const uint8_t kind = r.kind;
  const uint8_t flags = r.flags;
  q = PutVarintField<f::kKind>(q, kind);
  int64_t delta = chunk->DeltaNs(field::chunk::kNvtx, r.base.h.ts_ns);
  q = PutVarintField<f::kTsDeltaNs>(q, (static_cast<uint64_t>(delta) << 1) ^ static_cast<uint64_t>(delta >> 63));
  if (r.base.h.aux32 != 0) q = PutVarintField<f::kDomainId>(q, r.base.h.aux32);
  if (flags & kFlagRegistered) {
    q = PutVarintField<f::kRegisteredStringId>(q, r.registered_id);
  } else if (string_id != 0) {
    q = PutVarintField<f::kStringId>(q, string_id);
  }
  if (r.category != 0) q = PutVarintField<f::kCategory>(q, r.category);
  if (flags & kFlagHasColor) q = PutFixed32Field<f::kColorArgb>(q, r.color);
  if (kind == field::enums::kNvtxStart || kind == field::enums::kNvtxEnd) q = PutVarintField<f::kRangeId>(q, r.id);
  if (kind == field::enums::kNvtxNameThread) q = PutVarintField<f::kNamedTid>(q, r.id);
  if ((kind == field::enums::kNvtxPush || kind == field::enums::kNvtxPop) && r.base.depth != 0) {
    q = PutVarintField<f::kDepth>(q, r.base.depth);
  }
  if (flags & kFlagHasPayload) {
    const uint64_t payload = r.payload;
    switch (r.base.payload_type) {
      case NVTX_PAYLOAD_TYPE_UNSIGNED_INT64:
        q = PutVarintField<f::kPayloadUint64>(q, payload);
        break;
      case NVTX_PAYLOAD_TYPE_INT64:
        q = PutVarintField<f::kPayloadInt64>(q, payload);  // two's complement varint, as ProtoWriter::Int
        break;
      case NVTX_PAYLOAD_TYPE_DOUBLE:
        q = PutTag<f::kPayloadDouble, 1>(q);
        std::memcpy(q, &payload, 8);
        q += 8;
        break;
      case NVTX_PAYLOAD_TYPE_UNSIGNED_INT32:
        q = PutVarintField<f::kPayloadUint32>(q, static_cast<uint32_t>(payload));
        break;
      case NVTX_PAYLOAD_TYPE_INT32:  // sign-extended to 64 bits, as ProtoWriter::Int
        q = PutVarintField<f::kPayloadInt32>(
            q, static_cast<uint64_t>(static_cast<int64_t>(static_cast<int32_t>(static_cast<uint32_t>(payload)))));
        break;
      case NVTX_PAYLOAD_TYPE_FLOAT:
        q = PutFixed32Field<f::kPayloadFloat>(q, static_cast<uint32_t>(payload));
        break;
      default:
        break;
    }
  }
  if (flags & kFlagTruncated) q = PutVarintField<f::kMessageTruncated>(q, 1);
  *p = static_cast<unsigned char>(q - body);  // < 128: one length byte
  chunk->body().RawBytes(ev, static_cast<size_t>(q - ev));
}

}  // namespace

namespace {

// The first two words of a record's head (RecordHeader + the rest of RecordBase), composed in
// registers and stored as whole words: a RecordBase assembled on the stack and copied out made the
// CPU wait on store-to-load forwarding (perf put ~40 % of the bare record's samples on that load).
// Little-endian layout, the same bytes as RecordBase: type, ext_slots, aux16, aux32 | ts |
// text_bytes, payload_type, ext_count, depth.
inline uint64_t HeadWord0(uint8_t kind, uint8_t flags, uint32_t domain_id) {
  return uint64_t{kRecordNvtx} | (uint64_t{kind} << 16) | (uint64_t{flags} << 24) |
         (uint64_t{domain_id} << 32);
}
inline uint64_t HeadWord2(uint16_t text_bytes, uint32_t depth) { return uint64_t{text_bytes} | (uint64_t{depth} << 32); }
inline void StoreWord(unsigned char* at, uint64_t v) { std::memcpy(at, &v, 8); }

// Word-at-a-time: index of the first zero byte of `w` (little-endian), or 8 when there is none.
// The lowest flagged byte of the classic haszero expression is exact (false positives only above
// a true zero byte).
inline unsigned FirstZeroByte(uint64_t w) {
  uint64_t t = (w - 0x0101010101010101ull) & ~w & 0x8080808080808080ull;
  return t == 0 ? 8u : static_cast<unsigned>(__builtin_ctzll(t)) / 8u;
}

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
inline constexpr bool kOverReadOk = false;  // the sanitizers would (rightly) flag the word loads
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || __has_feature(memory_sanitizer)
inline constexpr bool kOverReadOk = false;
#else
inline constexpr bool kOverReadOk = true;
#endif
#else
inline constexpr bool kOverReadOk = true;
#endif

// Copies a message that ends within kWords words into `dst` word by word and returns its length
// (at most kWords * 8 - 1), or SIZE_MAX when it does not end there. Reads whole words, so up to 7
// bytes past the terminator: the caller checks that all kWords words lie in the message's first
// page, so it cannot fault where strnlen would not (the bytes past the terminator are never
// exported: the record says how long the text is).
template <unsigned kWords>
inline size_t CopyShortText(const char* text, unsigned char* dst) {
  for (unsigned i = 0; i < kWords; ++i) {
    uint64_t w;
    std::memcpy(&w, text + 8 * i, 8);
    StoreWord(dst + 8 * i, w);
    unsigned z = FirstZeroByte(w);
    if (z < 8) return 8 * i + z;
  }
  return SIZE_MAX;
}

// The one-slot ASCII record: head + optional 8-byte id + text, in one 64-byte slot. False (nothing
// written, nothing reserved) when the text does not fit; the caller then takes the general path.
template <bool kHasId>
inline int WriteAsciiOneSlot(ThreadBuffer* b, uint8_t kind, uint32_t domain_id, uint32_t depth, uint64_t id,
                             const char* text) {
  constexpr size_t kTextAt = sizeof(RecordBase) + (kHasId ? 8 : 0);
  constexpr unsigned kTextWords = static_cast<unsigned>((kSlotBytes - kTextAt) / 8);  // 5 or 4
  constexpr size_t kRoom = kTextWords * 8;
  RecordSpan span;
  if (!BeginRecordIn(b, kSlotBytes, &span)) return 0;  // full ring: dropped and counted
  unsigned char* slot = span.buffer->ring.At(span.pos)->bytes;
  size_t n;
  const uintptr_t page_offset = reinterpret_cast<uintptr_t>(text) & 4095u;
  if (kOverReadOk && page_offset <= 4096u - kRoom) {
    n = CopyShortText<kTextWords>(text, slot + kTextAt);
    if (n == SIZE_MAX) {  // longer: general path (the reservation is not committed)
      AbandonRecord(span);
      return -1;
    }
  } else {
    n = strnlen(text, kRoom);
    if (n >= kRoom) {
      AbandonRecord(span);
      return -1;
    }
    std::memcpy(slot + kTextAt, text, n);
  }
  StoreWord(slot, HeadWord0(kind, kFlagAscii, domain_id));
  StoreWord(slot + 8, StreamNow());
  StoreWord(slot + 16, HeadWord2(static_cast<uint16_t>(n), depth));
  if (kHasId) StoreWord(slot + 24, id);
  CommitRecord(span);
  return 1;
}

}  // namespace

bool WriteAsciiRecordIn(ThreadBuffer* b, uint8_t kind, uint32_t domain_id, uint32_t depth, uint64_t id,
                        const char* text) {
  int r = KindHasId(kind) ? WriteAsciiOneSlot<true>(b, kind, domain_id, depth, id, text)
                          : WriteAsciiOneSlot<false>(b, kind, domain_id, depth, id, text);
  if (r >= 0) return r == 1;
  EventArgs a;
  a.kind = kind;
  a.domain_id = domain_id;
  a.depth = depth;
  a.id = id;
  a.ascii = text;
  return WriteGeneralIn(b, a, 0);
}

bool WriteBareRecord(uint8_t kind, uint32_t domain_id, uint32_t depth, uint64_t id) {
  ThreadBuffer* b = CurrentThreadBuffer();
  if (b == nullptr) return false;  // the lookup counted the drop
  return WriteBareRecordIn(b, kind, domain_id, depth, id);
}

bool WriteBareRecordIn(ThreadBuffer* b, uint8_t kind, uint32_t domain_id, uint32_t depth, uint64_t id) {
  const bool has_id = KindHasId(kind);
  RecordSpan span;
  if (!BeginRecordIn(b, sizeof(RecordBase) + (has_id ? 8 : 0), &span)) return false;
  unsigned char* slot = span.buffer->ring.At(span.pos)->bytes;  // one slot: never wraps
  StoreWord(slot, HeadWord0(kind, 0, domain_id));
  StoreWord(slot + 8, StreamNow());
  StoreWord(slot + 16, HeadWord2(0, depth));
  if (has_id) StoreWord(slot + 24, id);
  CommitRecord(span);
  return true;
}

void DecodeRecord(const RecordView& view, ChunkBuilder* chunk) {
  ParsedRecord r;
  if (!ParseRecord(view, &r)) return;  // malformed: skip
  uint64_t string_id = InternMessage(r, chunk);
  if (r.base.ext_count == 0) {
    EncodeShort(r, string_id, chunk);
  } else {
    EncodeGeneral(r, string_id, chunk);
  }
}

void DecodeRecordGeneral(const RecordView& view, ChunkBuilder* chunk) {
  ParsedRecord r;
  if (!ParseRecord(view, &r)) return;
  EncodeGeneral(r, InternMessage(r, chunk), chunk);
}

}  // namespace gt::nvtx
