// ChunkBuilder: assembles one Chunk message (schema/gtrace.proto) at a time and appends it, framed
// as StreamFile field 3 and with its CRC-32C filled in, to an output buffer the session writes to
// the file. Owned and used by the drain thread only.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "schema/proto_writer.h"
#include "collector/string_interner.h"

namespace gt {

class ChunkBuilder {
 public:
  explicit ChunkBuilder(StringInterner* interner) : interner_(interner) {}
  ChunkBuilder(const ChunkBuilder&) = delete;
  ChunkBuilder& operator=(const ChunkBuilder&) = delete;

  // Opens a chunk for producer `sequence_id` (thread buffer serial, or 0 for process-level data).
  void Begin(uint64_t sequence_id, uint32_t tid, uint64_t base_ns);
  bool is_open() const { return open_; }
  // Closes the chunk (no-op when nothing but the preamble was written) and appends it to output().
  void End();
  // End + Begin with the same producer, when a chunk grows past `max_body_bytes`.
  void SplitIfLarger(size_t max_body_bytes);

  // The chunk's fields. Events are written as nested messages by the record decoders.
  ProtoWriter& body() { return body_; }
  uint64_t base_ns() const { return base_ns_; }
  // Interns `text`, emitting its InternedString into this chunk when new. 0 for empty text.
  // Call it before BeginNested of the event that uses the id (definitions cannot nest in events);
  // a call inside a nested message returns 0 and counts a misuse (tests assert none).
  uint64_t Intern(std::string_view text);
  // Delta of `ts_ns` from the previous event written to repeated field `field` in this chunk.
  int64_t DeltaNs(uint32_t field, uint64_t ts_ns);
  // Counts one event for StreamStats.
  void CountRecord() { ++records_; }

  std::string* output() { return &out_; }
  uint64_t records_total() const { return records_total_; }
  uint64_t chunks_total() const { return chunks_total_; }
  uint64_t intern_misuse() const { return intern_misuse_; }

 private:
  // Every Chunk field number that carries a delta chain must be below this: DeltaNs of a larger
  // number returns the offset from base_ns, which a reader that chains deltas (ConvertChunkTimes,
  // the exporter) misreads. 256 covers the assigned ranges (CPU sampling uses 161).
  static constexpr size_t kMaxDeltaFields = 256;
  StringInterner* interner_;
  ProtoWriter body_;
  std::string out_;
  bool open_ = false;
  uint64_t sequence_id_ = 0;
  uint32_t tid_ = 0;
  uint64_t base_ns_ = 0;
  size_t preamble_size_ = 0;
  uint64_t records_ = 0;
  uint64_t records_total_ = 0;
  uint64_t chunks_total_ = 0;
  uint64_t intern_misuse_ = 0;
  // The last string interned and its id: a range name repeated record after record skips the
  // hash lookup (drain-thread throughput, issue 20). Valid while the interner has not reset.
  std::string last_text_;
  uint64_t last_id_ = 0;
  uint64_t last_resets_ = 0;
  std::array<uint64_t, kMaxDeltaFields> last_ts_{};
  std::array<bool, kMaxDeltaFields> has_last_{};
};

}  // namespace gt
