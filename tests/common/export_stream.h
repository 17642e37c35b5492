// The set-up the exporter's long-stream tests share (tests/export/large_*_test.cc): one process's
// synthetic stream written to a file, then exported to an SQLite database with gtrace export's
// defaults. Test code; the test's thread.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "schema/status.h"
#include "tests/common/synthetic_stream.h"
#include "tools/export/exporter.h"

namespace gt::test {

// Stream clock (CLOCK_MONOTONIC ns) and realtime at the start of every such stream.
inline constexpr uint64_t kStreamMono0Ns = 1000000000;
inline constexpr uint64_t kStreamReal0Ns = 1700000000000000000;

// Writes process `pid`'s stream to `path`: `setup` fills the first chunk (sequence 1, the process's
// own thread, at kStreamMono0Ns: devices, contexts, communicators, configurations), `body` adds the
// rest; then the end-of-stream chunk ("exit").
void WriteStream(const std::string& path,
                 uint32_t pid,
                 const std::function<void(SyntheticStream&)>& setup,
                 const std::function<void(SyntheticStream&)>& body);

// gtrace export of `inputs` into `output` (one database, default options).
Status ExportStreams(const std::vector<std::string>& inputs, const std::string& output, exporter::ExportResult* result);

}  // namespace gt::test
