// An export of a stream much larger than the reader's release block (tools/stream/stream_reader.h):
// the pages of read chunks are given back every 4 KiB here, so nearly every chunk straddles a
// release boundary. Exact row counts, exact rows of the chunk that crosses the 1 MiB offset, and
// the whole NVTX_EVENTS table equal to an export that gives nothing back.
#include <gtest/gtest.h>

#include "collector/schema_fields.h"
#include "tests/common/synthetic_stream.h"
#include "tests/common/test_util.h"
#include "tools/export/exporter.h"
#include "tools/stream/stream_reader.h"

namespace gt {
namespace {

namespace k = field::enums;

constexpr uint32_t kPid = 4242;
constexpr uint32_t kThreads = 8;
constexpr uint64_t kMono0 = 1000000000;
constexpr uint64_t kReal0 = 1700000000000000000;
constexpr int kPairsPerChunk = 500;  // 2,000 NVTX records: about 21 KB a chunk
constexpr int kChunks = 200;         // about 4 MB

// Pair p (an outer range "range-<p % 100>" around an "inner" one) starts at kMono0 + 100 + p * 1100
// on thread kPid + (p / kPairsPerChunk) % kThreads: outer 1000 ns, inner 800 ns from +100.
uint64_t PairStart(int64_t p) {
  return kMono0 + 100 + static_cast<uint64_t>(p) * 1100;
}
uint32_t PairTid(int64_t p) {
  return kPid + static_cast<uint32_t>((p / kPairsPerChunk) % kThreads);
}

// Writes the stream and returns the file offsets where each chunk begins.
std::vector<size_t> WriteStream(const std::string& path) {
  test::SyntheticStream s(kPid, kMono0, kReal0);
  std::vector<size_t> chunk_starts;
  std::string bytes = s.Preamble();
  for (int c = 0; c < kChunks; ++c) {
    const int64_t first = static_cast<int64_t>(c) * kPairsPerChunk;
    s.BeginChunk(1 + c % kThreads, PairTid(first), PairStart(first));
    for (int64_t p = first; p < first + kPairsPerChunk; ++p) {
      test::NvtxSpec e;
      e.kind = k::kNvtxPush;
      e.ts_ns = PairStart(p);
      e.text = "range-" + std::to_string(p % 100);
      s.Nvtx(e);
      e.ts_ns += 100;
      e.text = "inner";
      e.depth = 1;
      s.Nvtx(e);
      test::NvtxSpec pop;
      pop.kind = k::kNvtxPop;
      pop.ts_ns = PairStart(p) + 900;
      pop.depth = 1;
      s.Nvtx(pop);
      pop.ts_ns = PairStart(p) + 1000;
      pop.depth = 0;
      s.Nvtx(pop);
    }
    s.EndChunk();
    chunk_starts.push_back(bytes.size());
    bytes += s.TakeChunks();
  }
  s.Close();
  bytes += s.TakeChunks();
  test::WriteFile(path, bytes);
  return chunk_starts;
}

std::string ExportWithReleaseBlock(const test::TempDir& dir,
                                   const std::string& input,
                                   const std::string& name,
                                   uint64_t release_block_bytes) {
  stream::StreamReader::SetReleaseBlockBytesForTesting(release_block_bytes);
  exporter::ExportOptions o;
  o.inputs = {input};
  o.output = dir.File(name);
  exporter::ExportResult result;
  Status st = exporter::ExportSqlite(o, &result);
  stream::StreamReader::SetReleaseBlockBytesForTesting(0);
  EXPECT_TRUE(st.ok()) << st.message();
  return o.output;
}

// "start|end|text|globalTid" of an NVTX push/pop range row.
std::string RangeRow(int64_t start_rel, int64_t duration, const std::string& text, uint32_t tid) {
  return std::to_string(start_rel) + "|" + std::to_string(start_rel + duration) + "|" + text + "|" +
         std::to_string(exporter::PackGlobalTid(0, kPid, tid));
}

TEST(LargeStream, ExportAcrossReleaseBlocksKeepsEveryRowExactly) {
  test::TempDir dir;
  const std::string input = dir.File("big.gtrace");
  const std::vector<size_t> chunk_starts = WriteStream(input);
  const size_t file_bytes = test::ReadFile(input).size();
  ASSERT_GT(file_bytes, size_t{1000} * 4096);  // over a thousand release blocks

  test::Db db(ExportWithReleaseBlock(dir, input, "small-blocks.sqlite", 4096));
  ASSERT_TRUE(db.ok());
  const int64_t pairs = int64_t{kChunks} * kPairsPerChunk;
  EXPECT_EQ(db.Int("SELECT count(*) FROM NVTX_EVENTS WHERE eventType = 59"), 2 * pairs);
  EXPECT_EQ(db.Int("SELECT count(*) FROM NVTX_EVENTS WHERE eventType = 59 AND text = 'inner' AND "
                   "\"end\" - start = 800"),
            pairs);
  EXPECT_EQ(db.Int("SELECT count(*) FROM NVTX_EVENTS WHERE eventType = 59 AND text LIKE 'range-%' AND "
                   "\"end\" - start = 1000"),
            pairs);
  EXPECT_EQ(db.Int("SELECT count(DISTINCT text) FROM NVTX_EVENTS WHERE eventType = 59"), 101);

  // The chunk whose bytes cross the 1 MiB offset: its first and last pairs, exactly.
  size_t crossing = 0;
  while (crossing + 1 < chunk_starts.size() && chunk_starts[crossing + 1] <= (size_t{1} << 20))
    ++crossing;
  ASSERT_LT(chunk_starts[crossing], size_t{1} << 20);
  ASSERT_GT(crossing, 0u);
  const int64_t first = static_cast<int64_t>(crossing) * kPairsPerChunk;
  const int64_t last = first + kPairsPerChunk - 1;
  const auto rows_of = [&](int64_t p) {
    const int64_t rel = static_cast<int64_t>(PairStart(p) - kMono0);
    return db.Rows("SELECT start, \"end\", text, globalTid FROM NVTX_EVENTS WHERE eventType = 59 AND start >= " +
                   std::to_string(rel) + " AND start < " + std::to_string(rel + 1100) + " ORDER BY start");
  };
  for (int64_t p : {first, last, int64_t{0}, pairs - 1}) {
    const int64_t rel = static_cast<int64_t>(PairStart(p) - kMono0);
    EXPECT_EQ(rows_of(p), (std::vector<std::string>{RangeRow(rel, 1000, "range-" + std::to_string(p % 100), PairTid(p)),
                                                    RangeRow(rel + 100, 800, "inner", PairTid(p))}))
        << "pair " << p;
  }

  // Every row equal to an export whose reader gives nothing back.
  test::Db whole(ExportWithReleaseBlock(dir, input, "no-release.sqlite", uint64_t{1} << 40));
  ASSERT_TRUE(whole.ok());
  const std::string all =
      "SELECT start, \"end\", eventType, text, globalTid, endGlobalTid FROM NVTX_EVENTS ORDER BY rowid";
  const std::vector<std::string> expected = whole.Rows(all);
  ASSERT_GE(expected.size(), static_cast<size_t>(2 * pairs));
  EXPECT_EQ(db.Rows(all), expected);
}

}  // namespace
}  // namespace gt
