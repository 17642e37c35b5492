#include "collector/stream_writer.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "collector/high_fd.h"
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
    // Read-write: a deleted file is copied back from this descriptor (Recreate).
    int fd = ::open(candidate.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd >= 0) {
      struct stat st {};
      if (::fstat(fd, &st) != 0) {
        int err = errno;
        ::close(fd);
        return Status::Error("cannot stat " + candidate + ": " + strerror(err));
      }
      fd_ = MoveFdHigh(fd);
      dev_ = st.st_dev;
      ino_ = st.st_ino;
      path_ = candidate;
      offset_ = 0;
      renamed_ = attempt > 0;
      return Status::Ok();
    }
    if (errno != EEXIST) return Status::Error("cannot create " + candidate + ": " + strerror(errno));
  }
  return Status::Error("cannot create " + base + ": 100 names taken");
}

bool StreamWriter::IsOwn(int fd, bool* deleted) const {
  struct stat st {};
  if (fd < 0 || ::fstat(fd, &st) != 0) return false;
  if (st.st_dev != dev_ || st.st_ino != ino_) return false;
  *deleted = st.st_nlink == 0;
  return true;
}

Status StreamWriter::EnsureOwnFile() {
  bool deleted = false;
  if (fd_ >= 0 && IsOwn(fd_, &deleted)) return deleted ? Recreate() : Status::Ok();
  // Closed, or the application's file dup2'ed over the number: that number is not ours any more,
  // so it is neither written nor closed. The stream is reopened where it was written.
  fd_ = -1;
  int fd = ::open(path_.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) {
    return Status::Error("the application closed or replaced gtrace's stream descriptor and " + path_ +
                         " cannot be reopened: " + strerror(errno));
  }
  if (!IsOwn(fd, &deleted)) {
    ::close(fd);
    return Status::Error("the application closed or replaced gtrace's stream descriptor and " + path_ +
                         " is another file now");
  }
  fd_ = MoveFdHigh(fd);
  ++reopened_;
  // Whatever reached the file past the last complete chunk was not gtrace's.
  if (::ftruncate(fd_, static_cast<off_t>(offset_)) != 0) {
    return Status::Error("cannot cut " + path_ + " back to its last chunk: " + strerror(errno));
  }
  return Status::Ok();
}

Status StreamWriter::Recreate() {
  // The file was unlinked (its directory removed, a cleanup job): what was written lives on in the
  // old descriptor. Create the name again and copy it over, or say the trace is going nowhere.
  int fd = ::open(path_.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) {
    return Status::Error(path_ + " was deleted while the process ran and cannot be created again: " + strerror(errno));
  }
  fd = MoveFdHigh(fd);
  char buf[64 * 1024];
  uint64_t at = 0;
  while (at < offset_) {
    size_t want = offset_ - at < sizeof(buf) ? static_cast<size_t>(offset_ - at) : sizeof(buf);
    ssize_t n = ::pread(fd_, buf, want, static_cast<off_t>(at));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0 || ::pwrite(fd, buf, static_cast<size_t>(n), static_cast<off_t>(at)) != n) {
      int err = n < 0 ? errno : EIO;
      ::close(fd);
      ::unlink(path_.c_str());
      return Status::Error(path_ + " was deleted while the process ran and could not be written again: " +
                           strerror(err));
    }
    at += static_cast<uint64_t>(n);
  }
  struct stat st {};
  ::fstat(fd, &st);
  ::close(fd_);
  fd_ = fd;
  dev_ = st.st_dev;
  ino_ = st.st_ino;
  ++recreated_;
  return Status::Ok();
}

Status StreamWriter::Append(std::string_view bytes) {
  if (path_.empty()) return Status::Error("stream not open");
  if (Status st = EnsureOwnFile(); !st.ok()) return st;
  // pwrite at gtrace's own offset: a file offset shared with a dup'ed copy cannot move the stream.
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::pwrite(fd_, bytes.data() + done, bytes.size() - done, static_cast<off_t>(offset_ + done));
    if (n > 0) {
      done += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    int err = n < 0 ? errno : ENOSPC;
    // Cut the partial chunk off so the file stays a clean prefix of the stream.
    // If that fails too, stop writing: appending after a partial chunk would corrupt the file.
    if (done > 0 && ::ftruncate(fd_, static_cast<off_t>(offset_)) != 0) {
      Close();
      path_.clear();
    }
    return Status::Error("write to " + (path_.empty() ? std::string("the stream") : path_) + " failed: " + strerror(err));
  }
  offset_ += done;
  return Status::Ok();
}

void StreamWriter::Sync() {
  bool deleted = false;
  if (fd_ >= 0 && IsOwn(fd_, &deleted)) ::fdatasync(fd_);
}

void StreamWriter::Close() {
  // Closed only while it is still the stream's: the number may be the application's by now.
  bool deleted = false;
  if (fd_ >= 0 && IsOwn(fd_, &deleted)) ::close(fd_);
  fd_ = -1;
}

}  // namespace gt
