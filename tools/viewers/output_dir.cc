#include "tools/viewers/output_dir.h"

#include <sys/stat.h>

#include <filesystem>
#include <system_error>

#include "tools/viewers/output_file.h"

namespace gt::viewers {
namespace {

namespace fs = std::filesystem;

// True when `dir` holds only regular files named *.json (an earlier kineto-json export).
bool OnlyJsonFiles(const std::string& dir) {
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (!entry.is_regular_file(ec) || entry.is_symlink(ec) || name.size() < 5 ||
        name.compare(name.size() - 5, 5, ".json") != 0) {
      return false;
    }
  }
  return !ec;
}

}  // namespace

Status OutputDir::Create(const std::string& path, bool force, std::unique_ptr<OutputDir>* out) {
  std::error_code ec;
  auto status = fs::symlink_status(path, ec);
  if (!ec && fs::exists(status)) {
    if (!fs::is_directory(status))
      return Status::Error(path + " exists and is not a directory");
    if (!force)
      return Status::Error(path + " exists; use --force-overwrite to replace it");
    if (!OnlyJsonFiles(path)) {
      return Status::Error(path + " holds files other than *.json; not replacing it (remove it yourself)");
    }
  }
  std::string temp = TemporaryPathFor(path);
  fs::remove_all(temp, ec);
  if (!fs::create_directory(temp, ec))
    return Status::Error("cannot create " + temp + ": " + ec.message());
  out->reset(new OutputDir(path, std::move(temp)));
  return Status::Ok();
}

OutputDir::~OutputDir() {
  std::error_code ec;
  if (!committed_)
    fs::remove_all(temp_, ec);
}

Status OutputDir::Commit() {
  std::error_code ec;
  std::string old;
  if (fs::exists(fs::symlink_status(path_, ec))) {
    old = TemporaryPathFor(path_) + "-old";
    fs::rename(path_, old, ec);
    if (ec)
      return Status::Error("cannot move " + path_ + " aside: " + ec.message());
  }
  fs::rename(temp_, path_, ec);
  if (ec) {
    std::error_code ignored;
    if (!old.empty())
      fs::rename(old, path_, ignored);
    return Status::Error("cannot rename " + temp_ + " to " + path_ + ": " + ec.message());
  }
  committed_ = true;
  if (!old.empty())
    fs::remove_all(old, ec);
  return Status::Ok();
}

}  // namespace gt::viewers
