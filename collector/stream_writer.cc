#include "collector/stream_writer.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "schema/format.h"

namespace gt {

std::string WithStreamExtension(std::string_view path) {
  std::string p(path);
  std::string_view ext = kStreamExtension;
  if (p.size() < ext.size() || p.compare(p.size() - ext.size(), ext.size(), ext) != 0) p += ext;
  return p;
}

Status StreamWriter::Open(std::string_view requested, uint32_t pid) {
  Close();
  std::string base = WithStreamExtension(requested);
  std::string stem = base.substr(0, base.size() - (sizeof(kStreamExtension) - 1));
  for (int attempt = 0; attempt < 100; ++attempt) {
    std::string candidate = base;
    if (attempt == 1) candidate = stem + "." + std::to_string(pid) + kStreamExtension;
    if (attempt > 1) candidate = stem + "." + std::to_string(pid) + "." + std::to_string(attempt) + kStreamExtension;
    int fd = ::open(candidate.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd >= 0) {
      fd_ = fd;
      path_ = candidate;
      offset_ = 0;
      renamed_ = attempt > 0;
      return Status::Ok();
    }
    if (errno != EEXIST) return Status::Error("cannot create " + candidate + ": " + strerror(errno));
  }
  return Status::Error("cannot create " + base + ": 100 names taken");
}

Status StreamWriter::Append(std::string_view bytes) {
  if (fd_ < 0) return Status::Error("stream not open");
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::write(fd_, bytes.data() + done, bytes.size() - done);
    if (n > 0) {
      done += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    int err = n < 0 ? errno : ENOSPC;
    // Cut the partial chunk off so the file stays a clean prefix of the stream.
    // If that fails too, stop writing: appending after a partial chunk would corrupt the file.
    if (done > 0) {
      if (::ftruncate(fd_, static_cast<off_t>(offset_)) == 0) {
        ::lseek(fd_, static_cast<off_t>(offset_), SEEK_SET);
      } else {
        Close();
      }
    }
    return Status::Error("write to " + path_ + " failed: " + strerror(err));
  }
  offset_ += done;
  return Status::Ok();
}

void StreamWriter::Sync() {
  if (fd_ >= 0) ::fdatasync(fd_);
}

void StreamWriter::Close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

}  // namespace gt
