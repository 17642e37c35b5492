#include "tools/stream/stream_reader.h"

#include <gtest/gtest.h>
#include <algorithm>
#include <sys/stat.h>
#include <unistd.h>

#include "collector/schema_fields.h"
#include "tests/common/synthetic_stream.h"
#include "tests/common/test_util.h"

namespace gt {
namespace {

// A stream of 3 event chunks (4 marks each) and an end chunk. Returns the byte offset where each
// complete chunk ends (so tests know which cuts keep how many chunks).
std::string MakeStream(std::vector<size_t>* chunk_ends) {
  test::SyntheticStream s(1000, 5000, 1700000000000000000ull);
  size_t total = s.header_bytes();
  for (int c = 0; c < 3; ++c) {
    s.BeginChunk(1, 1000, 5000 + c * 100);
    for (int i = 0; i < 4; ++i) {
      test::NvtxSpec e;
      e.kind = field::enums::kNvtxMark;
      e.ts_ns = 5000 + c * 100 + i;
      e.text = "mark-" + std::to_string(c);
      s.Nvtx(e);
    }
    s.EndChunk();
    chunk_ends->push_back(s.Bytes().size());
  }
  s.Close();
  chunk_ends->push_back(s.Bytes().size());
  (void)total;
  return s.Bytes();
}

struct ReadAll {
  Status status;
  uint64_t chunks = 0;
  uint64_t events = 0;
  stream::ReadSummary summary;
  std::string warning;
};

ReadAll Read(const std::string& path) {
  ReadAll r;
  stream::StreamReader reader;
  r.status = reader.Open(path);
  if (!r.status.ok()) return r;
  schema::Chunk c;
  while (true) {
    bool has = false;
    r.status = reader.Next(&c, &has);
    if (!r.status.ok() || !has) break;
    ++r.chunks;
    r.events += static_cast<uint64_t>(c.nvtx_size());
  }
  r.summary = reader.summary();
  r.warning = reader.TruncationWarning();
  return r;
}

TEST(StreamReader, CompleteStream) {
  test::TempDir dir;
  std::vector<size_t> ends;
  std::string bytes = MakeStream(&ends);
  test::WriteFile(dir.File("s.gtrace"), bytes);
  ReadAll r = Read(dir.File("s.gtrace"));
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(r.chunks, 4u);
  EXPECT_EQ(r.events, 12u);
  EXPECT_TRUE(r.summary.end_of_stream);
  EXPECT_FALSE(r.summary.truncated);
  EXPECT_EQ(r.warning, "");
}

// A process killed at any moment leaves a prefix of the file: every cut must keep exactly the
// complete chunks before it, never fail, and say how many bytes were lost.
TEST(StreamReader, CutAtEveryByteKeepsEveryCompleteChunk) {
  test::TempDir dir;
  std::vector<size_t> ends;
  std::string bytes = MakeStream(&ends);
  test::SyntheticStream probe(1000, 5000, 1700000000000000000ull);
  size_t header = probe.header_bytes();
  for (size_t cut = 0; cut <= bytes.size(); ++cut) {
    std::string path = dir.File("cut.gtrace");
    test::WriteFile(path, bytes.substr(0, cut));
    ReadAll r = Read(path);
    if (cut < header) {
      ASSERT_FALSE(r.status.ok()) << "cut " << cut;
      EXPECT_NE(r.status.message().find(path), std::string::npos);
      continue;
    }
    ASSERT_TRUE(r.status.ok()) << "cut " << cut << ": " << r.status.message();
    uint64_t complete = 0;
    for (size_t e : ends) complete += e <= cut;
    EXPECT_EQ(r.chunks, complete) << "cut " << cut;
    EXPECT_EQ(r.events, std::min<uint64_t>(complete, 3) * 4) << "cut " << cut;
    bool at_boundary = cut == header || std::find(ends.begin(), ends.end(), cut) != ends.end();
    EXPECT_EQ(r.summary.truncated, !at_boundary) << "cut " << cut;
    if (!at_boundary) {
      size_t last_end = header;
      for (size_t e : ends) last_end = e <= cut ? e : last_end;
      EXPECT_EQ(r.summary.truncated_at, last_end) << "cut " << cut;
      EXPECT_EQ(r.summary.truncated_bytes, cut - last_end) << "cut " << cut;
      EXPECT_NE(r.warning.find("cut off at offset " + std::to_string(last_end)), std::string::npos) << r.warning;
    }
    EXPECT_EQ(r.summary.end_of_stream, cut == bytes.size());
    if (cut < bytes.size() && at_boundary) {
      EXPECT_NE(r.warning.find("no end marker"), std::string::npos);
    }
  }
}

// Issue 28 item 8: one flipped bit loses its chunk only; the reader resynchronises at the next
// intact chunk and says where and how much was lost.
TEST(StreamReader, DamagedChunkIsSkippedAndReportedWithItsOffset) {
  test::TempDir dir;
  std::vector<size_t> ends;
  std::string bytes = MakeStream(&ends);
  size_t second_start = ends[0];
  for (size_t flip = second_start; flip < ends[1]; ++flip) {
    std::string bad = bytes;
    bad[flip] ^= 0x04;
    test::WriteFile(dir.File("bad.gtrace"), bad);
    ReadAll r = Read(dir.File("bad.gtrace"));
    ASSERT_TRUE(r.status.ok()) << "flip " << flip << ": " << r.status.message();
    EXPECT_EQ(r.chunks, 3u) << "flip " << flip;
    EXPECT_EQ(r.events, 8u) << "flip " << flip;
    EXPECT_TRUE(r.summary.end_of_stream) << "flip " << flip;
    EXPECT_FALSE(r.summary.truncated) << "flip " << flip;
    ASSERT_EQ(r.summary.damaged.size(), 1u) << "flip " << flip;
    EXPECT_EQ(r.summary.damaged[0].offset, second_start) << "flip " << flip;
    EXPECT_EQ(r.summary.damaged[0].bytes, ends[1] - second_start) << "flip " << flip;
  }
  std::string bad = bytes;
  bad[second_start + (ends[1] - second_start) / 2] ^= 0x5a;
  test::WriteFile(dir.File("bad.gtrace"), bad);
  stream::StreamReader reader;
  ASSERT_TRUE(reader.Open(dir.File("bad.gtrace")).ok());
  schema::Chunk c;
  bool has = true;
  while (has) ASSERT_TRUE(reader.Next(&c, &has).ok());
  std::vector<std::string> w = reader.DamageWarnings();
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0], dir.File("bad.gtrace") + ": damaged at offset " + std::to_string(second_start) +
                      ": damaged chunk (checksum mismatch): " + std::to_string(ends[1] - second_start) +
                      " bytes skipped (their records are lost); the intact chunks before and after are kept");
}

// Issue 28 item 9: a corrupt length mid-file (8 GB, 2^63, an overlong varint) is damage, not a
// cut: the chunks after it are read.
TEST(StreamReader, CorruptChunkLengthResynchronisesAtTheNextChunk) {
  test::TempDir dir;
  std::vector<size_t> ends;
  std::string bytes = MakeStream(&ends);
  size_t at = ends[0];
  ASSERT_EQ(static_cast<unsigned char>(bytes[at]), 0x1a);
  size_t len_end = at + 1;
  while (static_cast<unsigned char>(bytes[len_end]) & 0x80) ++len_end;
  ++len_end;
  const std::vector<std::pair<std::string, std::string>> lengths = {
      {"8 GB", std::string("\x80\x80\x80\x80\x20", 5)},
      {"2^63", std::string("\x80\x80\x80\x80\x80\x80\x80\x80\x80\x01", 10)},
      {"overlong", std::string(11, '\x80') + "\x01"}};
  for (const auto& [name, varint] : lengths) {
    std::string bad = bytes.substr(0, at + 1) + varint + bytes.substr(len_end);
    test::WriteFile(dir.File("len.gtrace"), bad);
    ReadAll r = Read(dir.File("len.gtrace"));
    ASSERT_TRUE(r.status.ok()) << name << ": " << r.status.message();
    EXPECT_EQ(r.chunks, 3u) << name;
    EXPECT_EQ(r.events, 8u) << name;
    EXPECT_FALSE(r.summary.truncated) << name;
    EXPECT_EQ(r.warning, "") << name;
    ASSERT_EQ(r.summary.damaged.size(), 1u) << name;
    EXPECT_EQ(r.summary.damaged[0].offset, at) << name;
    EXPECT_EQ(r.summary.damaged[0].bytes, ends[1] - at + varint.size() - (len_end - at - 1)) << name;
    EXPECT_NE(r.summary.damaged[0].what.find("corrupt chunk length"), std::string::npos) << name;
  }
}

// Issue 28 item 13: a FIFO is refused at once (open must not wait for a writer).
TEST(StreamReader, RefusesAFifoWithoutBlocking) {
  test::TempDir dir;
  std::string fifo = dir.File("f.gtrace");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  stream::StreamReader reader;
  Status st = reader.Open(fifo);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("not a regular file"), std::string::npos) << st.message();
}

TEST(StreamReader, RejectsWrongMagicVersionAndNonFiles) {
  test::TempDir dir;
  std::vector<size_t> ends;
  std::string bytes = MakeStream(&ends);
  std::string wrong = bytes;
  wrong[3] = 'X';
  test::WriteFile(dir.File("magic.gtrace"), wrong);
  ReadAll r = Read(dir.File("magic.gtrace"));
  ASSERT_FALSE(r.status.ok());
  EXPECT_EQ(r.status.message(), dir.File("magic.gtrace") + ": offset 0: not a gtrace stream (wrong magic)");

  test::WriteFile(dir.File("text.gtrace"), "hello world, not a stream");
  r = Read(dir.File("text.gtrace"));
  EXPECT_NE(r.status.message().find("not a gtrace stream"), std::string::npos);

  test::WriteFile(dir.File("empty.gtrace"), "");
  r = Read(dir.File("empty.gtrace"));
  EXPECT_NE(r.status.message().find("file too short: 0 bytes"), std::string::npos) << r.status.message();

  // Major version 2: a future format this reader must refuse.
  test::SyntheticStream s(1, 1, 1);
  std::string v2 = s.Bytes();
  // The header's first field is format_major (tag 0x08, value 1) right after magic + header tag/len.
  size_t at = v2.find(std::string("\x08\x01", 2), 9);
  ASSERT_NE(at, std::string::npos);
  v2[at + 1] = 2;
  test::WriteFile(dir.File("v2.gtrace"), v2);
  r = Read(dir.File("v2.gtrace"));
  ASSERT_FALSE(r.status.ok());
  EXPECT_NE(r.status.message().find("unsupported stream format version 2.0 (this gtrace reads 1.x)"),
            std::string::npos)
      << r.status.message();

  r = Read(dir.File("missing.gtrace"));
  EXPECT_EQ(r.status.message(), dir.File("missing.gtrace") + ": cannot open: No such file or directory");
  r = Read(dir.path());
  EXPECT_EQ(r.status.message(), dir.path() + ": not a regular file");
}

// Resident file-backed memory of this process (RssFile in /proc/self/status), in bytes.
uint64_t RssFileBytes() {
  std::string status = test::ReadFile("/proc/self/status");
  size_t at = status.find("RssFile:");
  if (at == std::string::npos) return 0;
  return std::stoull(status.substr(at + 8)) * 1024;
}

// Releases the reader's block size setting at the end of a test.
struct ReleaseBlock {
  explicit ReleaseBlock(uint64_t bytes) { stream::StreamReader::SetReleaseBlockBytesForTesting(bytes); }
  ~ReleaseBlock() { stream::StreamReader::SetReleaseBlockBytesForTesting(0); }
};

// Every chunk, serialized, and how much file-backed memory reading them added.
struct Pass {
  std::vector<std::string> chunks;
  uint64_t released = 0;
  uint64_t rss_growth = 0;
};

Pass ReadPass(const std::string& path, uint64_t release_block) {
  ReleaseBlock block(release_block);
  Pass pass;
  stream::StreamReader reader;
  EXPECT_TRUE(reader.Open(path).ok());
  schema::Chunk c;
  bool has = false;
  EXPECT_TRUE(reader.Next(&c, &has).ok());
  pass.chunks.push_back(c.SerializeAsString());
  // From here: the decoder's code (file-backed pages of this binary and libprotobuf) is resident.
  const uint64_t before = RssFileBytes();
  uint64_t peak = before;
  while (has) {
    EXPECT_TRUE(reader.Next(&c, &has).ok());
    if (has) pass.chunks.push_back(c.SerializeAsString());
    peak = std::max(peak, RssFileBytes());
  }
  pass.released = reader.released_bytes();
  pass.rss_growth = peak - before;
  return pass;
}

// A stream of ~7 MB in chunks of different sizes (so chunks start and end at every offset within a
// page), read with the pages given back every 64 KiB and with nothing given back: every chunk
// decodes the same, and only the first pass keeps the file's memory bounded.
TEST(StreamReader, GivesBackReadPagesWithEveryChunkIntact) {
  test::TempDir dir;
  test::SyntheticStream s(1000, 5000, 1700000000000000000ull);
  uint64_t ts = 5000;
  for (int c = 0; c < 1200; ++c) {
    s.BeginChunk(1 + c % 3, 1000 + c % 3, ts);
    const int marks = 100 + (c * 37) % 900;
    for (int i = 0; i < marks; ++i) {
      test::NvtxSpec e;
      e.kind = field::enums::kNvtxMark;
      e.ts_ns = ts++;
      e.text = "mark-" + std::to_string(c) + "-" + std::to_string(i % 7);
      s.Nvtx(e);
    }
    s.EndChunk();
  }
  s.Close();
  const std::string path = dir.File("big.gtrace");
  s.WriteTo(path);
  const uint64_t file_bytes = test::ReadFile(path).size();
  ASSERT_GT(file_bytes, uint64_t{6} << 20);

  const Pass released = ReadPass(path, 64 << 10);
  const Pass kept = ReadPass(path, uint64_t{1} << 40);
  ASSERT_EQ(released.chunks.size(), 1201u);
  ASSERT_EQ(kept.chunks.size(), 1201u);
  for (size_t i = 0; i < kept.chunks.size(); ++i) ASSERT_EQ(released.chunks[i], kept.chunks[i]) << "chunk " << i;
  // Everything but the last block (and the page of the last chunk) is given back.
  EXPECT_GT(released.released, file_bytes - (128 << 10));
  EXPECT_LE(released.released, file_bytes);
  EXPECT_EQ(kept.released, 0u);
  // The file was just written, so its pages are cached and reading maps them: without giving them
  // back the whole file becomes resident; with it, one block at a time, plus what the kernel maps
  // around a fault (up to a 2 MiB large folio of the page cache on recent kernels).
  EXPECT_GT(kept.rss_growth, file_bytes / 2);
  EXPECT_LT(released.rss_growth, uint64_t{3} << 20);
}

}  // namespace
}  // namespace gt
