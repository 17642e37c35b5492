// Reading back the one stream an in-process NVTX test wrote (nvtx_record_test, nvtx_wrap_test):
// every chunk in order, with the strings interned so far and the records dropped so far. Test code;
// the test's thread, after EndSession.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "tests/common/test_util.h"
#include "tools/stream/stream_reader.h"

namespace gt::test {

// Reads the single *.gtrace file in `dir` chunk by chunk: adds each chunk's interned strings to
// `strings` and its dropped records to `dropped`, then calls on_chunk(chunk). A fatal failure (no
// single stream, a read error, or one raised by on_chunk) stops the reading: call it inside
// ASSERT_NO_FATAL_FAILURE so that the test stops too.
template <typename OnChunk>
void ReadNvtxStream(const TempDir& dir, std::map<uint64_t, std::string>* strings, uint64_t* dropped, OnChunk on_chunk) {
  std::vector<std::string> streams = dir.Find(".gtrace");
  ASSERT_EQ(streams.size(), 1u);
  stream::StreamReader reader;
  ASSERT_TRUE(reader.Open(streams[0]).ok());
  schema::Chunk chunk;
  while (true) {
    bool has = false;
    ASSERT_TRUE(reader.Next(&chunk, &has).ok());
    if (!has)
      break;
    for (const auto& s : chunk.strings())
      (*strings)[s.id()] = s.text();
    for (const auto& d : chunk.drops())
      *dropped += d.dropped_records();
    on_chunk(chunk);
    if (::testing::Test::HasFatalFailure())
      return;
  }
}

}  // namespace gt::test
