// StreamWriter: the stream file of one process. Opened exclusively (never overwrites an existing
// file: a taken name gets a ".<pid>" or ".<pid>.<n>" suffix), appended to by the drain thread only.
// A failed or short write (disk full) is undone with ftruncate so the file always ends on a chunk
// boundary; the caller counts what was lost and may try again later.
//
// The application owns the descriptor table, not gtrace (issue 28, items 1 and 7): the descriptor
// sits high (MoveFdHigh), and before each write the writer checks that it still names the stream's
// file (device and inode). One the application closed (closefrom) or dup2'ed its own file over is
// never written to or closed; the stream is reopened by path and writing goes on at its offset. A
// stream file deleted while the process runs is created again and filled from the old descriptor.
#pragma once

#include <sys/types.h>

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
  int fd() const { return fd_; }
  uint64_t bytes_written() const { return offset_; }
  // True when Open had to pick another name because the requested one existed.
  bool renamed() const { return renamed_; }
  // How often the descriptor was found closed or replaced and the stream reopened, and how often
  // the file was found deleted and written again.
  uint32_t reopened() const { return reopened_; }
  uint32_t recreated() const { return recreated_; }

 private:
  // Makes fd_ name the stream's file again if the application took it; an error when it cannot.
  Status EnsureOwnFile();
  Status Recreate();
  bool IsOwn(int fd, bool* deleted) const;

  int fd_ = -1;
  std::string path_;
  uint64_t offset_ = 0;
  dev_t dev_ = 0;
  ino_t ino_ = 0;
  bool renamed_ = false;
  uint32_t reopened_ = 0;
  uint32_t recreated_ = 0;
};

// Appends ".gtrace" unless `path` already ends with it.
std::string WithStreamExtension(std::string_view path);

}  // namespace gt
