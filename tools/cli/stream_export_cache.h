// Whether `gtrace stats` / the compat `nsys stats` may read the .sqlite beside a .gtrace stream
// instead of exporting it again (issue 28, item 12). A database exported while the run was still
// writing the stream holds part of it: reused, it reports part of the run as the whole, silently.
#pragma once

#include <string>

namespace gt::cli {

// True when `sqlite` exists and was written no earlier than the stream's last write (both mtimes
// to the nanosecond). A missing, older or unreadable database is re-exported.
bool ExportIsCurrent(const std::string& stream, const std::string& sqlite);

}  // namespace gt::cli
