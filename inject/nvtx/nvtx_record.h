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
  kFlagAscii = 1 << 1,       // text bytes are UTF-8/ASCII
  kFlagUtf32 = 1 << 2,       // text bytes are wchar_t (UTF-32 on Linux)
  kFlagRegistered = 1 << 3,  // `registered_id` names the message (no text)
  kFlagTruncated = 1 << 4,   // the message was cut to kMaxTextBytes
  kFlagUnbalanced = 1 << 5,  // POP/END without a matching PUSH/START on this thread's counter
  kFlagHasPayload = 1 << 6,  // scalar payload present (payload_type)
};

// Head slot. RecordHeader.aux16 = kind (NvtxEventKind) | flags << 8; aux32 = domain id.
struct Record {
  RecordHeader h;
  uint64_t id;       // START/END: range id; NAME_THREAD: named tid
  uint64_t payload;  // scalar payload bits
  uint32_t category;
  uint32_t color;
  uint16_t text_bytes;
  uint8_t payload_type;  // nvtxPayloadType_t value (1..6) when kFlagHasPayload
  uint8_t ext_count;     // extended payload blobs after the text
  uint32_t ext_bytes;    // bytes of those blobs, headers included
  uint32_t depth;        // PUSH/POP nesting level
  uint32_t registered_id;  // registered string id of the message (kFlagRegistered)
  // Text, then ext blobs, start here and continue into the following slots.
};
inline constexpr size_t kRecordFixedBytes = sizeof(Record);
static_assert(kRecordFixedBytes == 56);

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

// Hot path: one clock read and one record into this thread's ring. False when dropped.
bool WriteRecord(const EventArgs& args);
bool WriteRecordAt(const EventArgs& args, uint64_t ts_ns);

// Drain thread.
void DecodeRecord(const RecordView& view, ChunkBuilder* chunk);

}  // namespace gt::nvtx
