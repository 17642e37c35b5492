// Capture-window flags of `gtrace profile`. (Filled in with CUDA tracing.)
#include "tools/cli/commands.h"

namespace gt::cli {

void AddCaptureFlags(ArgParser* parser, std::map<std::string, std::string>* env) {}

}  // namespace gt::cli
