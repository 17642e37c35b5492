#include "tools/stream/stream_reader.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "schema/crc32c.h"
#include "schema/format.h"
#include "tools/stream/chunk_times.h"

namespace gt::stream {
namespace {

std::atomic<uint64_t> g_release_block_for_testing{0};

}  // namespace

void StreamReader::SetReleaseBlockBytesForTesting(uint64_t bytes) {
  g_release_block_for_testing.store(bytes, std::memory_order_relaxed);
}

StreamReader::~StreamReader() {
  if (data_ != nullptr && size_ > 0) munmap(const_cast<unsigned char*>(data_), size_);
}

Status StreamReader::Error(uint64_t offset, const std::string& what) const {
  return Status::Error(path_ + ": offset " + std::to_string(offset) + ": " + what);
}

bool StreamReader::ReadVarint(uint64_t* pos, uint64_t* value) const {
  uint64_t v = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (*pos >= size_) return false;
    unsigned char b = data_[(*pos)++];
    v |= static_cast<uint64_t>(b & 0x7f) << shift;
    if ((b & 0x80) == 0) {
      *value = v;
      return true;
    }
  }
  return false;
}

void StreamReader::ReleaseConsumed() {
  const uint64_t end = pos_ - pos_ % page_bytes_;
  if (end < released_ + release_block_bytes_) return;
  // Advice only: on failure the pages stay resident, which costs memory, not correctness.
  madvise(const_cast<unsigned char*>(data_) + released_, end - released_, MADV_DONTNEED);
  released_ = end;
}

Status StreamReader::Open(const std::string& path) {
  compact_ = CudaCompactExpander();  // configs are per stream
  tick_clock_ = TickClock();
  cupti_clock_ = TickClock();
  path_ = path;
  const long page = sysconf(_SC_PAGESIZE);
  if (page > 0) page_bytes_ = static_cast<uint64_t>(page);
  const uint64_t block = g_release_block_for_testing.load(std::memory_order_relaxed);
  release_block_bytes_ = std::max(block != 0 ? block : kDefaultReleaseBlockBytes, page_bytes_);
  // O_NONBLOCK: opening a FIFO must not wait for a writer (it is refused below, not read).
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return Status::Error(path + ": cannot open: " + strerror(errno));
  struct stat st;
  if (fstat(fd, &st) != 0) {
    int err = errno;
    ::close(fd);
    return Status::Error(path + ": cannot stat: " + strerror(err));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return Status::Error(path + ": not a regular file");
  }
  size_ = static_cast<size_t>(st.st_size);
  summary_.file_bytes = size_;
  if (size_ > 0) {
    void* p = mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      int err = errno;
      ::close(fd);
      size_ = 0;
      return Status::Error(path + ": cannot map: " + strerror(err));
    }
    data_ = static_cast<const unsigned char*>(p);
    madvise(p, size_, MADV_SEQUENTIAL);
  }
  ::close(fd);

  // Magic: tag of field 1 (fixed64) and 8 bytes.
  if (size_ < 9) return Error(0, "not a gtrace stream (file too short: " + std::to_string(size_) + " bytes)");
  uint64_t magic = 0;
  std::memcpy(&magic, data_ + 1, 8);
  if (data_[0] != ((kStreamFileMagicField << 3) | 1) || magic != kStreamMagic) {
    return Error(0, "not a gtrace stream (wrong magic)");
  }
  pos_ = 9;
  uint64_t tag = 0, len = 0;
  uint64_t at = pos_;
  if (!ReadVarint(&pos_, &tag) || tag != ((kStreamFileHeaderField << 3) | 2) || !ReadVarint(&pos_, &len)) {
    if (pos_ >= size_) return Error(at, "stream ends before its header is complete (the process was killed at start?)");
    return Error(at, "stream header missing");
  }
  if (len > size_ - pos_) {
    return Error(at, "stream ends before its header is complete (the process was killed at start?)");
  }
  if (!header_.ParseFromArray(data_ + pos_, static_cast<int>(len))) return Error(at, "stream header is damaged");
  if (header_.format_major() != kFormatMajor) {
    return Error(at, "unsupported stream format version " + std::to_string(header_.format_major()) + "." +
                         std::to_string(header_.format_minor()) + " (this gtrace reads " +
                         std::to_string(kFormatMajor) + ".x)");
  }
  pos_ += len;
  recorded_clock_ = header_.clock();
  if (recorded_clock_ == schema::CLOCK_ID_TSC) return PrepareTickClock();
  return Status::Ok();
}

// A tick stream: one light pass over the chunks for the calibration pairs (top-level field 8 of
// each chunk, and 62, CUPTI's clock pairs; nothing else decoded), then the header is presented as a
// CLOCK_MONOTONIC one and Next converts every chunk (chunk_times.h).
Status StreamReader::PrepareTickClock() {
  std::vector<TickPair> pairs;
  if (header_.has_start_clock()) pairs.push_back({header_.start_clock().stream_clock_ns(), header_.start_clock().monotonic_ns()});
  uint64_t start = pos_;
  ReadSummary kept = summary_;
  std::vector<TickPair> cupti_pairs;
  prescan_pairs_ = &pairs;
  prescan_cupti_pairs_ = &cupti_pairs;
  schema::Chunk unused;
  bool has = true;
  Status st = Status::Ok();
  while (st.ok() && has) st = Next(&unused, &has);
  prescan_pairs_ = nullptr;
  prescan_cupti_pairs_ = nullptr;
  pos_ = start;
  summary_ = kept;
  // A damaged chunk is reported by the real pass, at its place; the pairs before it still count.
  if (!tick_clock_.Build(std::move(pairs))) {
    return Error(0, "TSC stream without a usable calibration pair (tick, CLOCK_MONOTONIC)");
  }
  // CUPTI's clock onto ns: each pair's tick reading goes through the tick clock first, so CUPTI's
  // times land where the stream's own events at the same instants do.
  for (TickPair& p : cupti_pairs) p.monotonic_ns = tick_clock_.ToNs(p.monotonic_ns);
  if (!cupti_pairs.empty()) cupti_clock_.Build(std::move(cupti_pairs));
  header_.set_clock(schema::CLOCK_ID_MONOTONIC);
  if (header_.has_start_clock()) {
    schema::ClockSnapshot* s = header_.mutable_start_clock();
    s->set_stream_clock_ns(s->monotonic_ns() != 0 ? s->monotonic_ns() : tick_clock_.ToNs(s->stream_clock_ns()));
  }
  return Status::Ok();
}

// Field 8 (ClockSnapshot) of a chunk body, without decoding the rest.
void StreamReader::CollectPairs(const unsigned char* body, uint64_t len, std::vector<TickPair>* out,
                                std::vector<TickPair>* cupti) const {
  uint64_t p = 0;
  while (p < len) {
    uint64_t tag = 0, v = 0;
    if (!ReadVarintIn(body, len, &p, &tag)) return;
    uint32_t wire = static_cast<uint32_t>(tag & 7);
    if (wire == 0) {
      if (!ReadVarintIn(body, len, &p, &v)) return;
    } else if (wire == 1) {
      p += 8;
    } else if (wire == 5) {
      p += 4;
    } else if (wire == 2) {
      if (!ReadVarintIn(body, len, &p, &v) || v > len - p) return;
      if ((tag >> 3) == 8) {
        schema::ClockSnapshot s;
        if (s.ParseFromArray(body + p, static_cast<int>(v))) out->push_back({s.stream_clock_ns(), s.monotonic_ns()});
      } else if ((tag >> 3) == 62) {
        schema::CuptiClockPair c;
        if (c.ParseFromArray(body + p, static_cast<int>(v))) cupti->push_back({c.cupti_ns(), c.stream_clock_ns()});
      }
      p += v;
    } else {
      return;
    }
  }
}

bool StreamReader::ReadVarintIn(const unsigned char* data, uint64_t size, uint64_t* pos, uint64_t* value) {
  uint64_t v = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (*pos >= size) return false;
    unsigned char b = data[(*pos)++];
    v |= static_cast<uint64_t>(b & 0x7f) << shift;
    if ((b & 0x80) == 0) {
      *value = v;
      return true;
    }
  }
  return false;
}

void StreamReader::MarkTruncated(uint64_t at) {
  summary_.truncated = true;
  summary_.truncated_at = at;
  summary_.truncated_bytes = size_ - at;
  pos_ = size_;
}

bool StreamReader::ValidFrameAt(uint64_t p, uint64_t* end) const {
  if (p >= size_ || data_[p] != ((kStreamFileChunkField << 3) | 2)) return false;
  uint64_t q = p + 1, len = 0;
  if (!ReadVarint(&q, &len) || len > size_ - q || len < 5) return false;
  const unsigned char* body = data_ + q;
  if (body[0] != ((1u << 3) | 5)) return false;
  uint32_t stored = 0;
  std::memcpy(&stored, body + 1, 4);
  if (stored != Crc32c(body + 5, len - 5)) return false;
  *end = q + len;
  return true;
}

bool StreamReader::Resync(uint64_t at, const std::string& what) {
  uint64_t end = 0;
  for (uint64_t p = at + 1; p < size_; ++p) {
    const void* hit = std::memchr(data_ + p, (kStreamFileChunkField << 3) | 2, size_ - p);
    if (hit == nullptr) break;
    p = static_cast<uint64_t>(static_cast<const unsigned char*>(hit) - data_);
    if (ValidFrameAt(p, &end)) {
      summary_.damaged.push_back({at, p - at, what});
      pos_ = p;
      return true;
    }
  }
  return false;
}

Status StreamReader::Next(schema::Chunk* chunk, bool* has_chunk) {
  *has_chunk = false;
  if (data_ != nullptr) ReleaseConsumed();
  // Damage with no intact chunk after it: everything from `at` to the end is lost.
  auto damaged_to_end = [&](uint64_t at, const std::string& what) {
    summary_.damaged.push_back({at, size_ - at, what + "; no intact chunk follows"});
    pos_ = size_;
  };
  while (pos_ < size_) {
    uint64_t at = pos_;
    uint64_t tag = 0, len = 0;
    if (!ReadVarint(&pos_, &tag)) {
      if (pos_ >= size_) {
        MarkTruncated(at);
        return Status::Ok();
      }
      if (!Resync(at, "bad varint between chunks")) damaged_to_end(at, "bad varint between chunks");
      continue;
    }
    uint32_t field = static_cast<uint32_t>(tag >> 3);
    uint32_t wire = static_cast<uint32_t>(tag & 7);
    if (field == kStreamFileChunkField && wire == 2) {
      uint64_t len_at = pos_;
      bool len_ok = ReadVarint(&pos_, &len);
      if (!len_ok || len > size_ - pos_) {
        // A length that runs past the end: a cut, unless an intact chunk follows (then the length
        // itself is damaged: 8 GB, 2^63, an overlong varint).
        std::string what = !len_ok && pos_ < size_ ? "corrupt chunk length (overlong varint)"
                                                   : "corrupt chunk length " + (len_ok ? std::to_string(len) : "?");
        if (Resync(at, what)) continue;
        if (!len_ok && pos_ < size_) {
          damaged_to_end(at, what);
          continue;
        }
        (void)len_at;
        MarkTruncated(at);
        return Status::Ok();
      }
      const unsigned char* body = data_ + pos_;
      bool crc_ok = len >= 5 && body[0] == ((1u << 3) | 5);
      if (crc_ok) {
        uint32_t stored = 0;
        std::memcpy(&stored, body + 1, 4);
        crc_ok = stored == Crc32c(body + 5, len - 5);
      }
      if (!crc_ok) {
        const std::string what = len < 5 || body[0] != ((1u << 3) | 5) ? "damaged chunk (no checksum field)"
                                                                         : "damaged chunk (checksum mismatch)";
        if (!Resync(at, what)) damaged_to_end(at, what);
        continue;
      }
      if (prescan_pairs_ != nullptr) {
        CollectPairs(body, len, prescan_pairs_, prescan_cupti_pairs_);
        pos_ += len;
        *has_chunk = true;
        return Status::Ok();
      }
      chunk->Clear();
      std::string why;
      if (!chunk->ParseFromArray(body, static_cast<int>(len))) {
        why = "cannot decode";
      } else if (expand_compact_ && !compact_.Expand(chunk, &why)) {
        if (why.empty()) why = "compact records";
      }
      if (!why.empty()) {
        // The frame checks, its content does not (a writer bug, not a flipped bit): that chunk is lost.
        pos_ += len;
        summary_.damaged.push_back({at, pos_ - at, "damaged chunk (" + why + ")"});
        continue;
      }
      // Where records are decoded: a tick stream's times become CLOCK_MONOTONIC ns here.
      if (tick_clock_.active()) ConvertChunkTimes(tick_clock_, chunk, cupti_clock_.active() ? &cupti_clock_ : nullptr);
      pos_ += len;
      chunk_offset_ = at;
      ++summary_.chunks;
      summary_.end_of_stream = chunk->end_of_stream();
      uint64_t t = chunk->base_ns();
      if (chunk->has_clock()) t = std::max<uint64_t>(t, chunk->clock().stream_clock_ns());
      if (chunk->has_stats()) t = std::max<uint64_t>(t, chunk->stats().end_ns());
      summary_.last_chunk_ns = std::max(summary_.last_chunk_ns, t);
      *has_chunk = true;
      return Status::Ok();
    }
    // Unknown top-level field of a newer minor version: skip it if it is well formed and an intact
    // chunk (or the end) follows; otherwise it is damage (a flipped bit in a chunk's tag).
    uint64_t skip = 0;
    bool ok = true;
    switch (wire) {
      case 0:
        ok = ReadVarint(&pos_, &skip);
        break;
      case 1:
        pos_ += 8;
        break;
      case 5:
        pos_ += 4;
        break;
      case 2:
        ok = ReadVarint(&pos_, &len) && len <= size_ - pos_;
        if (ok) pos_ += len;
        break;
      default:
        ok = false;
    }
    uint64_t next_end = 0;
    if (ok && (pos_ == size_ || (pos_ < size_ && ValidFrameAt(pos_, &next_end)))) continue;
    if (ok && pos_ > size_) {
      MarkTruncated(at);
      return Status::Ok();
    }
    pos_ = at;
    if (!Resync(at, "damaged stream (unexpected bytes between chunks)")) {
      // Nothing intact after it: a cut inside a frame we cannot read, or damage to the end.
      damaged_to_end(at, "damaged stream (unexpected bytes between chunks)");
    }
  }
  return Status::Ok();
}

std::vector<std::string> StreamReader::DamageWarnings() const {
  std::vector<std::string> out;
  for (const ReadSummary::Damage& d : summary_.damaged) {
    out.push_back(path_ + ": damaged at offset " + std::to_string(d.offset) + ": " + d.what + ": " +
                  std::to_string(d.bytes) + " bytes skipped (their records are lost); the intact chunks before and "
                  "after are kept");
  }
  return out;
}

std::string StreamReader::TruncationWarning() const {
  if (summary_.truncated) {
    return path_ + ": stream is cut off at offset " + std::to_string(summary_.truncated_at) + ": the last " +
           std::to_string(summary_.truncated_bytes) + " bytes (an incomplete chunk) are lost; " +
           std::to_string(summary_.chunks) + " complete chunks were read (was the process killed?)";
  }
  if (!summary_.end_of_stream) {
    return path_ + ": stream has no end marker: the process ended without closing it (killed, or still "
                   "running); everything up to its last flush was read";
  }
  return {};
}

}  // namespace gt::stream
