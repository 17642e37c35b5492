#include "tools/viewers/output_file.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace gt::viewers {

std::string TemporaryPathFor(const std::string& path) {
  return path + ".gtrace-tmp-" + std::to_string(getpid());
}

Status OutputFile::CheckWritable(const std::string& path, bool force) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0)
    return Status::Ok();
  if (S_ISDIR(st.st_mode))
    return Status::Error(path + " is a directory");
  if (!force)
    return Status::Error(path + " exists; use --force-overwrite to replace it");
  return Status::Ok();
}

Status OutputFile::Create(const std::string& path, bool force, std::unique_ptr<OutputFile>* out) {
  Status st = CheckWritable(path, force);
  if (!st.ok())
    return st;
  std::string temp = TemporaryPathFor(path);
  FILE* file = std::fopen(temp.c_str(), "wb");
  if (file == nullptr)
    return Status::Error("cannot create " + temp + ": " + std::strerror(errno));
  std::setvbuf(file, nullptr, _IOFBF, 1 << 20);
  out->reset(new OutputFile(path, std::move(temp), file));
  return Status::Ok();
}

OutputFile::~OutputFile() {
  if (file_ != nullptr)
    std::fclose(file_);
  if (!committed_)
    std::remove(temp_.c_str());
}

Status OutputFile::Commit() {
  bool ok = !failed_ && std::fflush(file_) == 0 && !std::ferror(file_);
  int saved = errno;
  if (std::fclose(file_) != 0)
    ok = false;
  file_ = nullptr;
  if (!ok)
    return Status::Error("cannot write " + path_ + ": " + std::strerror(saved != 0 ? saved : EIO));
  if (std::rename(temp_.c_str(), path_.c_str()) != 0) {
    return Status::Error("cannot rename " + temp_ + " to " + path_ + ": " + std::strerror(errno));
  }
  committed_ = true;
  return Status::Ok();
}

}  // namespace gt::viewers
