// StreamWriter: the stream file of one process. Opened exclusively (never overwrites an existing
// file: a taken name gets a ".<pid>" or ".<pid>.<n>" suffix), appended to by the drain thread only.
// A failed or short write (disk full) is undone with ftruncate so the file always ends on a chunk
// boundary; the caller counts what was lost and may try again later.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "schema/status.h"

namespace gt {

class StreamWriter {
 public:
  StreamWriter() = default;
  StreamWriter(const StreamWriter&) = delete;
  StreamWriter& operator=(const StreamWriter&) = delete;
  ~StreamWriter() { Close(); }

  // `path` is the expanded output name; ".gtrace" is appended unless present.
  Status Open(std::string_view path, uint32_t pid);
  // Appends all of `bytes` or nothing (the file is cut back on a partial write).
  Status Append(std::string_view bytes);
  void Sync();
  void Close();

  bool is_open() const { return fd_ >= 0; }
  const std::string& path() const { return path_; }
  uint64_t bytes_written() const { return offset_; }
  // True when Open had to pick another name because the requested one existed.
  bool renamed() const { return renamed_; }

 private:
  int fd_ = -1;
  std::string path_;
  uint64_t offset_ = 0;
  bool renamed_ = false;
};

// Appends ".gtrace" unless `path` already ends with it.
std::string WithStreamExtension(std::string_view path);

}  // namespace gt
