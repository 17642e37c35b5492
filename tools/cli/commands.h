// The gtrace subcommands. Each returns the process exit status: 0 ok, 1 failure, 2 usage error
// (profile returns the profiled command's status).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "tools/cli/args.h"

namespace gt::cli {

int RunProfile(const std::vector<std::string>& args);
int RunExport(const std::vector<std::string>& args);
int RunStats(const std::vector<std::string>& args);
int RunInfo(const std::vector<std::string>& args);
int RunAnalyze(const std::vector<std::string>& args);
int RunNsysCompat(const std::vector<std::string>& args);  // gtrace nsys-compat DIR
int RunNsysShim(const std::vector<std::string>& args);    // what DIR/nsys execs: nsys stats|export ...

// Capture-window flags of `profile` (--capture-range, --delay, ...), as GTRACE_* variables.
void AddCaptureFlags(ArgParser* parser, std::map<std::string, std::string>* env);
// Call-stack flags of `profile` (--cudabacktrace, --python-backtrace), as GTRACE_* variables.
void AddCallStackFlags(ArgParser* parser, std::map<std::string, std::string>* env);
// Checks that need several of those flags (--capture-range=nvtx needs --nvtx-capture), after parsing.
Status CheckCaptureFlags(const std::map<std::string, std::string>& env);
// The reports `profile --stats` prints.
void PrintDefaultReports(const std::string& db_path);

}  // namespace gt::cli
