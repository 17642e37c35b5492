#include "tools/cli/stream_export_cache.h"

#include <sys/stat.h>

namespace gt::cli {

bool ExportIsCurrent(const std::string& stream, const std::string& sqlite) {
  struct stat s {}, d {};
  if (::stat(sqlite.c_str(), &d) != 0 || ::stat(stream.c_str(), &s) != 0) return false;
  if (d.st_mtim.tv_sec != s.st_mtim.tv_sec) return d.st_mtim.tv_sec > s.st_mtim.tv_sec;
  return d.st_mtim.tv_nsec >= s.st_mtim.tv_nsec;
}

}  // namespace gt::cli
