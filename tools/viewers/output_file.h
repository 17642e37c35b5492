// OutputFile: writes one output through a temporary file next to it and renames it into place on
// Commit, so a failed or interrupted export leaves neither a partial output nor a clobbered one (the
// rule `gtrace export --type sqlite` follows). Writes are buffered; write errors (a full disk) are
// reported by Commit with the file's name.
//
// Used by one thread; owns its FILE*. Destroying an uncommitted file removes the temporary.
#pragma once

#include <cstdio>
#include <memory>
#include <string>
#include <string_view>

#include "schema/status.h"

namespace gt::viewers {

class OutputFile {
 public:
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;
  ~OutputFile();

  // Fails when `path` exists and `force` is false, or is a directory.
  static Status CheckWritable(const std::string& path, bool force);
  static Status Create(const std::string& path, bool force, std::unique_ptr<OutputFile>* out);

  void Write(std::string_view bytes) {
    if (std::fwrite(bytes.data(), 1, bytes.size(), file_) != bytes.size())
      failed_ = true;
    written_bytes_ += bytes.size();
  }
  Status Commit();

  const std::string& path() const { return path_; }
  uint64_t written_bytes() const { return written_bytes_; }

 private:
  OutputFile(std::string path, std::string temp, FILE* file)
      : path_(std::move(path)), temp_(std::move(temp)), file_(file) {}
  std::string path_, temp_;
  FILE* file_;
  bool failed_ = false;
  bool committed_ = false;
  uint64_t written_bytes_ = 0;
};

// "<path>.gtrace-tmp-<pid>": where an output is built before the rename.
std::string TemporaryPathFor(const std::string& path);

}  // namespace gt::viewers
