// SyntheticStream: writes gtrace streams with exactly chosen content, through the library's own
// encoder (collector/), for reader/exporter tests and the export benchmark.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "collector/chunk_builder.h"
#include "collector/config.h"
#include "collector/process_info.h"
#include "collector/string_interner.h"

namespace gt::test {

struct NvtxSpec {
  uint32_t kind = 0;  // field::enums::kNvtx*
  uint64_t ts_ns = 0;
  uint32_t domain_id = 0;
  std::string text;                  // literal message ("" = none)
  uint64_t registered_string_id = 0;  // instead of text
  uint32_t category = 0;
  std::optional<uint32_t> color;
  uint64_t range_id = 0;
  uint32_t depth = 0;
  uint32_t named_tid = 0;
  std::optional<int64_t> payload_int64;
  std::optional<double> payload_double;
};

class SyntheticStream {
 public:
  // Stream clock (monotonic) and realtime at the session start.
  SyntheticStream(uint32_t pid, uint64_t start_mono_ns, uint64_t start_realtime_ns, std::string host = "testhost",
                  std::string boot_id = "boot-0");
  ProcessInfo& info() { return info_; }
  Config& config() { return config_; }

  void BeginChunk(uint64_t sequence_id, uint32_t tid, uint64_t base_ns);
  void Nvtx(const NvtxSpec& e);
  void Thread(uint32_t tid, const std::string& name, int32_t nice = 0);
  void Domain(uint32_t id, const std::string& name, uint64_t ts_ns, uint32_t tid);
  void RegisteredString(uint64_t id, uint32_t domain_id, const std::string& text);
  void Drops(uint32_t source, uint32_t tid, uint64_t count, uint64_t ts_ns);
  void EndChunk();
  // The end-of-stream chunk (omit it to simulate a killed process).
  void Close(const std::string& reason = "exit");

  // Header + every chunk so far.
  std::string Bytes() const;
  void WriteTo(const std::string& path) const;
  size_t header_bytes() const;

 private:
  ProcessInfo info_;
  Config config_;
  uint64_t start_mono_ns_, start_realtime_ns_;
  StringInterner interner_;
  ChunkBuilder chunk_;
};

}  // namespace gt::test
