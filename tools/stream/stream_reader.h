// StreamReader: reads one gtrace stream file (schema/gtrace.proto) chunk by chunk with the
// protoc-generated classes. It tells a cut stream (killed process: the last chunk is incomplete,
// everything before it is good) from a damaged one (a complete chunk whose CRC or encoding is
// wrong), and names the file and byte offset in every error.
//
// Single-threaded; one reader per file. The file is memory-mapped read-only, and the pages of the
// chunks already returned are given back (madvise MADV_DONTNEED) once a release block of them has
// been read, so a reader's resident memory is bounded by the release block plus the chunk being
// decoded, not by the file size (the page cache keeps the bytes; they are not this process's RSS).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "gtrace.pb.h"
#include "schema/status.h"
#include "tools/stream/cuda_compact.h"
#include "tools/stream/tick_clock.h"

namespace gt::stream {

struct ReadSummary {
  uint64_t file_bytes = 0;
  uint64_t chunks = 0;
  // The writer closed the stream: the last complete chunk is an end-of-stream chunk. (A process that
  // went on after an end mark — exec failed — writes chunks after one; only the last counts.)
  bool end_of_stream = false;
  // Latest stream-clock time a complete chunk carries (its base_ns, a clock snapshot, the end
  // time): for a cut stream, about when the data that was kept ends.
  uint64_t last_chunk_ns = 0;
  bool truncated = false;      // the file ends inside a chunk
  uint64_t truncated_at = 0;   // offset of the incomplete chunk
  uint64_t truncated_bytes = 0;  // bytes from there to the end of the file (lost)
  // Damage (a complete chunk whose checksum, framing or encoding is wrong, a corrupt length): the
  // reader skips to the next chunk whose framing and checksum check and goes on; each skipped span
  // is listed here (file offset, bytes lost, why). Later chunks are kept.
  struct Damage {
    uint64_t offset = 0;
    uint64_t bytes = 0;
    std::string what;
  };
  std::vector<Damage> damaged;
};

class StreamReader {
 public:
  StreamReader() = default;
  StreamReader(const StreamReader&) = delete;
  StreamReader& operator=(const StreamReader&) = delete;
  ~StreamReader();

  // Maps the file, checks the magic and major version, parses the header. A stream recorded on
  // the tick counter (CLOCK_ID_TSC) is presented as a CLOCK_MONOTONIC one: header() and every
  // chunk Next returns carry ns (tick_clock.h); recorded_clock() says what was on disk.
  Status Open(const std::string& path);
  const schema::StreamHeader& header() const { return header_; }
  schema::ClockId recorded_clock() const { return recorded_clock_; }
  // The tick->ns conversion of a CLOCK_ID_TSC stream (inactive otherwise).
  const TickClock& tick_clock() const { return tick_clock_; }
  // CUPTI's own clock -> CLOCK_MONOTONIC ns, from the stream's CuptiClockPairs (a TSC stream whose
  // CUPTI refused gtrace's timestamp callback; inactive otherwise).
  const TickClock& cupti_clock() const { return cupti_clock_; }
  const std::string& path() const { return path_; }

  // The next chunk in file order. *has_chunk is false at the end of the stream (or of the good
  // prefix of a cut one: see summary()). A damaged chunk is skipped: the reader resynchronises at
  // the next chunk whose framing and CRC check and records the loss in summary().damaged.
  Status Next(schema::Chunk* chunk, bool* has_chunk);
  // Compact CUDA records (CudaKernelBatch, ...) are expanded into CudaKernel / CudaApiCall messages
  // by Next (cuda_compact.h); false leaves them as on disk (bench/stream_sizes counts bytes on disk).
  void set_expand_compact(bool expand) { expand_compact_ = expand; }
  // Offset of the chunk Next returned last (for messages).
  uint64_t chunk_offset() const { return chunk_offset_; }
  const ReadSummary& summary() const { return summary_; }

  // Human-readable description of what a cut cost ("" when the stream is complete).
  std::string TruncationWarning() const;
  // One line per damaged span ("" when none), naming the file, offset and bytes lost.
  std::vector<std::string> DamageWarnings() const;

  // Bytes of already-read chunks kept mapped before they are given back (rounded down to pages).
  static constexpr uint64_t kDefaultReleaseBlockBytes = uint64_t{4} << 20;
  // For tests: the release block of readers opened from now on (0 restores the default). Any thread.
  static void SetReleaseBlockBytesForTesting(uint64_t bytes);
  // Bytes at the start of the file whose pages this reader has given back so far.
  uint64_t released_bytes() const { return released_; }

 private:
  Status Error(uint64_t offset, const std::string& what) const;
  // A frame at `at` is bad: find the next offset > at where a chunk's framing and CRC check. Found:
  // records the span as damage and moves there (true). None: false (the caller decides cut or damage).
  bool Resync(uint64_t at, const std::string& what);
  // A whole chunk frame at p whose CRC checks; *end gets the offset after it.
  bool ValidFrameAt(uint64_t p, uint64_t* end) const;
  void MarkTruncated(uint64_t at);
  bool ReadVarint(uint64_t* pos, uint64_t* value) const;
  // Gives back the pages before pos_ once a release block of them has accumulated. Only bytes of
  // chunks already returned are released: the caller's Chunk holds copies, never pointers into them.
  void ReleaseConsumed();
  static bool ReadVarintIn(const unsigned char* data, uint64_t size, uint64_t* pos, uint64_t* value);
  Status PrepareTickClock();
  // `cupti` gets the CuptiClockPairs as {cupti_ns, stream ticks}.
  void CollectPairs(const unsigned char* body, uint64_t len, std::vector<TickPair>* out,
                    std::vector<TickPair>* cupti) const;

  std::string path_;
  const unsigned char* data_ = nullptr;
  size_t size_ = 0;
  uint64_t pos_ = 0;
  uint64_t chunk_offset_ = 0;
  uint64_t released_ = 0;  // [0, released_) given back; page-aligned
  uint64_t release_block_bytes_ = kDefaultReleaseBlockBytes;
  uint64_t page_bytes_ = 4096;
  schema::StreamHeader header_;
  ReadSummary summary_;
  schema::ClockId recorded_clock_ = schema::CLOCK_ID_UNSPECIFIED;
  TickClock tick_clock_;
  TickClock cupti_clock_;
  CudaCompactExpander compact_;
  bool expand_compact_ = true;
  std::vector<TickPair>* prescan_pairs_ = nullptr;  // set during PrepareTickClock's pass
  std::vector<TickPair>* prescan_cupti_pairs_ = nullptr;
};

}  // namespace gt::stream
