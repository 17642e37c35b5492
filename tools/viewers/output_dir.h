// OutputDir: a directory of outputs (one Kineto JSON file per rank) built under a temporary name
// and renamed into place on Commit. An existing directory is replaced only with `force`, and only
// when it holds nothing but regular *.json files (what an earlier kineto-json export left), so
// --force-overwrite never deletes files it did not write.
//
// Used by one thread. Destroying an uncommitted OutputDir removes the temporary directory.
#pragma once

#include <memory>
#include <string>

#include "schema/status.h"

namespace gt::viewers {

class OutputDir {
 public:
  OutputDir(const OutputDir&) = delete;
  OutputDir& operator=(const OutputDir&) = delete;
  ~OutputDir();

  static Status Create(const std::string& path, bool force, std::unique_ptr<OutputDir>* out);

  // Where a file of the output is written before the commit.
  std::string PathOf(const std::string& file_name) const { return temp_ + "/" + file_name; }
  const std::string& path() const { return path_; }
  Status Commit();

 private:
  OutputDir(std::string path, std::string temp) : path_(std::move(path)), temp_(std::move(temp)) {}
  std::string path_, temp_;
  bool committed_ = false;
};

}  // namespace gt::viewers
