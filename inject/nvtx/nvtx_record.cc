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

}  // namespace

bool WriteRecord(const EventArgs& a) { return WriteRecordAt(a, NowNs()); }

bool WriteRecordAt(const EventArgs& a, uint64_t ts_ns) {
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
  RecordSpan span;
  if (!BeginRecord(kRecordFixedBytes + text_bytes + ext_bytes, &span)) return false;
  Record r;
  r.h.type = kRecordNvtx;
  r.h.ext_slots = static_cast<uint8_t>(span.n_slots - 1);
  r.h.aux16 = static_cast<uint16_t>(a.kind | (flags << 8));
  r.h.aux32 = a.domain_id;
  r.h.ts_ns = ts_ns;
  r.id = a.id;
  r.payload = a.payload;
  r.category = a.category;
  r.color = a.color;
  r.text_bytes = static_cast<uint16_t>(text_bytes);
  r.payload_type = a.payload_type;
  r.ext_count = static_cast<uint8_t>(ext_count);
  r.ext_bytes = static_cast<uint32_t>(ext_bytes);
  r.depth = a.depth;
  r.registered_id = a.registered_id;
  RecordCopy(span, 0, &r, sizeof(r));
  size_t at = kRecordFixedBytes;
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

void DecodeRecord(const RecordView& view, ChunkBuilder* chunk) {
  if (view.size_bytes < kRecordFixedBytes) return;
  Record r;
  std::memcpy(&r, view.bytes, sizeof(r));
  size_t tail_bytes = view.size_bytes - kRecordFixedBytes;
  if (r.text_bytes > tail_bytes || r.ext_bytes > tail_bytes - r.text_bytes) return;  // malformed: skip
  const unsigned char* text = view.bytes + kRecordFixedBytes;
  uint8_t kind = static_cast<uint8_t>(r.h.aux16 & 0xff);
  uint8_t flags = static_cast<uint8_t>(r.h.aux16 >> 8);

  // Strings first: their definitions cannot go inside the event message.
  uint64_t string_id = 0;
  if (r.text_bytes > 0 || (flags & (kFlagAscii | kFlagUtf32))) {
    std::string utf8;
    if (flags & kFlagUtf32) {
      for (size_t i = 0; i + sizeof(wchar_t) <= r.text_bytes; i += sizeof(wchar_t)) {
        wchar_t wc;
        std::memcpy(&wc, text + i, sizeof(wc));
        AppendUtf8(&utf8, static_cast<uint32_t>(wc));
      }
    } else {
      SanitizeUtf8(text, r.text_bytes, &utf8);
    }
    string_id = chunk->Intern(utf8);
  }

  namespace f = field::nvtx_event;
  ProtoWriter& w = chunk->body();
  w.BeginNested(field::chunk::kNvtx);
  w.Varint(f::kKind, kind);
  w.SInt(f::kTsDeltaNs, chunk->DeltaNs(field::chunk::kNvtx, r.h.ts_ns));
  w.VarintIfNonZero(f::kDomainId, r.h.aux32);
  if (flags & kFlagRegistered) {
    w.Varint(f::kRegisteredStringId, r.registered_id);
  } else if (string_id != 0) {
    w.Varint(f::kStringId, string_id);
  }
  w.VarintIfNonZero(f::kCategory, r.category);
  if (flags & kFlagHasColor) w.Fixed32(f::kColorArgb, r.color);
  if (kind == field::enums::kNvtxStart || kind == field::enums::kNvtxEnd) w.Varint(f::kRangeId, r.id);
  if (kind == field::enums::kNvtxNameThread) w.Varint(f::kNamedTid, r.id);
  if (kind == field::enums::kNvtxPush || kind == field::enums::kNvtxPop) w.VarintIfNonZero(f::kDepth, r.depth);
  if (flags & kFlagHasPayload) {
    switch (r.payload_type) {
      case NVTX_PAYLOAD_TYPE_UNSIGNED_INT64:
        w.Varint(f::kPayloadUint64, r.payload);
        break;
      case NVTX_PAYLOAD_TYPE_INT64:
        w.Int(f::kPayloadInt64, static_cast<int64_t>(r.payload));
        break;
      case NVTX_PAYLOAD_TYPE_DOUBLE: {
        double d;
        std::memcpy(&d, &r.payload, sizeof(d));
        w.Double(f::kPayloadDouble, d);
        break;
      }
      case NVTX_PAYLOAD_TYPE_UNSIGNED_INT32:
        w.Varint(f::kPayloadUint32, static_cast<uint32_t>(r.payload));
        break;
      case NVTX_PAYLOAD_TYPE_INT32:
        w.Int(f::kPayloadInt32, static_cast<int32_t>(static_cast<uint32_t>(r.payload)));
        break;
      case NVTX_PAYLOAD_TYPE_FLOAT: {
        float v;
        uint32_t bits = static_cast<uint32_t>(r.payload);
        std::memcpy(&v, &bits, sizeof(v));
        w.Float(f::kPayloadFloat, v);
        break;
      }
      default:
        break;
    }
  }
  const unsigned char* ext = text + r.text_bytes;
  size_t left = r.ext_bytes;
  uint32_t truncated = 0;
  for (uint8_t i = 0; i < r.ext_count && left >= sizeof(ExtBlobHeader); ++i) {
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
  if (flags & kFlagUnbalanced) w.Bool(f::kUnbalanced, true);
  w.EndNested();
}

}  // namespace gt::nvtx
