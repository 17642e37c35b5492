// The NVTX ring record: what an NVTX hook writes on the application thread (fixed head slot +
// message and payload bytes), and its decoder that the drain thread runs to produce NvtxEvent
// messages. Layout is private to this module.
#pragma once

#include <cstddef>
#include <cstdint>

#include "collector/session.h"

namespace gt::nvtx {

enum RecordFlag : uint8_t {
  kFlagHasColor = 1 << 0,
  kFlagAscii = 1 << 1,        // text bytes are UTF-8/ASCII
  kFlagUtf32 = 1 << 2,        // text bytes are wchar_t (UTF-32 on Linux)
  kFlagRegistered = 1 << 3,   // a registered string names the message (no text)
  kFlagTruncated = 1 << 4,    // the message was cut to kMaxTextBytes
  kFlagHasCategory = 1 << 5,  // category != 0
  kFlagHasPayload = 1 << 6,   // scalar payload present (payload_type)
};

// Fixed part of every NVTX record. RecordHeader.aux16 = kind (NvtxEventKind) | flags << 8;
// aux32 = domain id. Optional fields follow only when present, in this order:
//   uint64 id             START/END (range id), NAME_THREAD (named tid)
//   uint32 registered_id  kFlagRegistered
//   uint32 category       kFlagHasCategory
//   uint32 color          kFlagHasColor
//   uint64 payload        kFlagHasPayload
//   uint32 ext_bytes      ext_count > 0
// then `text_bytes` of message, then the extended payload blobs. A push/pop with a name of up to
// 40 bytes fits in one 64-byte slot.
struct RecordBase {
  RecordHeader h;
  uint16_t text_bytes;
  uint8_t payload_type;  // nvtxPayloadType_t value (1..6) when kFlagHasPayload
  uint8_t ext_count;     // extended payload blobs after the text
  uint32_t depth;        // PUSH/POP nesting level
};
static_assert(sizeof(RecordBase) == 24);
inline constexpr size_t kMaxHeadBytes = sizeof(RecordBase) + 8 + 4 + 4 + 4 + 8 + 4;

inline bool KindHasId(uint8_t kind) { return kind == 3 || kind == 4 || kind == 7; }  // START, END, NAME_THREAD

// Each extended payload blob: this header then `size` bytes.
struct ExtBlobHeader {
  uint64_t schema_id;
  uint32_t size;
  uint32_t truncated_bytes;
};

inline constexpr size_t kMaxTextBytes = 4096;
inline constexpr size_t kMaxExtBytes = 4096;

// What a hook wants recorded. Pointers are only read during WriteRecord.
struct EventArgs {
  uint8_t kind = 0;
  uint8_t flags = 0;
  uint32_t domain_id = 0;
  uint64_t id = 0;
  uint32_t depth = 0;
  uint32_t registered_id = 0;
  uint64_t payload = 0;
  uint8_t payload_type = 0;
  uint32_t category = 0;
  uint32_t color = 0;
  const char* ascii = nullptr;
  const wchar_t* wide = nullptr;
  const void* ext = nullptr;  // const nvtxPayloadData_t* array
  size_t ext_count = 0;
};

// Hot path: room in this thread's ring first, then one clock read and the record. False when
// dropped (no clock read then).
bool WriteRecord(const EventArgs& args);
// The same with a given timestamp; ts_ns 0 reads the clock after the room is found.
bool WriteRecordAt(const EventArgs& args, uint64_t ts_ns);

// A record without message or attributes (POP with its depth, END with its range id): the same
// layout as WriteRecord's, stored straight into one slot (no EventArgs, no probe, no copy loop).
bool WriteBareRecord(uint8_t kind, uint32_t domain_id, uint32_t depth, uint64_t id);
bool WriteBareRecordIn(ThreadBuffer* b, uint8_t kind, uint32_t domain_id, uint32_t depth, uint64_t id);

// True when the event's only attribute is an ASCII message (nvtxRangePushA, nvtxMarkA,
// nvtxRangeStartA and their Ex forms with a message only).
inline bool IsPlainAscii(const EventArgs& a) {
  return a.ascii != nullptr && a.flags == 0 && a.category == 0 && a.ext_count == 0;
}
// WriteRecord into the calling thread's buffer `b`, already looked up with CurrentThreadBuffer()
// (not null): one TLS lookup per hook. A plain-ASCII event takes WriteAsciiRecordIn.
bool WriteRecordIn(ThreadBuffer* b, const EventArgs& args);
// A plain-ASCII event (PUSH with `depth`, START with range `id`, MARK, ...) into `b`: the same
// record as the general path; a message that fits the head slot (40 bytes, 32 with an id) is
// copied word by word into it with one reservation, a longer one takes the general path.
bool WriteAsciiRecordIn(ThreadBuffer* b, uint8_t kind, uint32_t domain_id, uint32_t depth, uint64_t id,
                        const char* text);

// Drain thread: one NvtxEvent (and the InternedString of a new message) per record. Records
// without extended payloads take a short encoder that writes the event into a stack buffer and
// appends it with one copy (drain throughput, issue 20); the others go through
// DecodeRecordGeneral. Both write the same bytes for the same record (tests compare them).
void DecodeRecord(const RecordView& view, ChunkBuilder* chunk);
// The general encoder, every record form (ProtoWriter's nested-message calls).
void DecodeRecordGeneral(const RecordView& view, ChunkBuilder* chunk);

}  // namespace gt::nvtx
