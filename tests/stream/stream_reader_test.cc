#include "tools/stream/stream_reader.h"

#include <gtest/gtest.h>
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

TEST(StreamReader, DamagedChunkIsAnErrorWithItsOffset) {
  test::TempDir dir;
  std::vector<size_t> ends;
  std::string bytes = MakeStream(&ends);
  // Flip a byte in the middle of the second chunk.
  size_t second_start = ends[0];
  std::string bad = bytes;
  bad[second_start + (ends[1] - second_start) / 2] ^= 0x5a;
  test::WriteFile(dir.File("bad.gtrace"), bad);
  ReadAll r = Read(dir.File("bad.gtrace"));
  ASSERT_FALSE(r.status.ok());
  EXPECT_EQ(r.chunks, 1u);
  EXPECT_NE(r.status.message().find(dir.File("bad.gtrace") + ": offset " + std::to_string(second_start)),
            std::string::npos)
      << r.status.message();
  EXPECT_NE(r.status.message().find("checksum mismatch"), std::string::npos) << r.status.message();
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

}  // namespace
}  // namespace gt
