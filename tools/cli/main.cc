// gtrace: profile a command, convert its streams to an nsys-schema SQLite database, print reports.
#include <iostream>
#include <string>
#include <vector>

#include "tools/cli/commands.h"

namespace {

constexpr char kUsage[] =
    "usage: gtrace <command> [options]\n"
    "\n"
    "commands:\n"
    "  profile   run a command with gtrace injected; one stream per process\n"
    "  export    convert streams to an SQLite database in the Nsight Systems export schema\n"
    "  stats     print nsys-style reports from such a database (or a stream)\n"
    "  info      describe streams: process, rank, counts, drops, completeness\n"
    "  analyze   cross-rank analysis: iterations, stragglers, POP efficiency, GPU gaps, HTML heatmap\n"
    "  nsys-compat DIR  write DIR/nsys answering `nsys stats` / `nsys export` for tools that call nsys\n"
    "\n"
    "`gtrace <command> --help` describes each. `gtrace --version` prints the version.\n";

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << kUsage;
    return 2;
  }
  std::string cmd = argv[1];
  std::vector<std::string> args(argv + 2, argv + argc);
  if (cmd == "profile") return gt::cli::RunProfile(args);
  if (cmd == "export") return gt::cli::RunExport(args);
  if (cmd == "stats") return gt::cli::RunStats(args);
  if (cmd == "info") return gt::cli::RunInfo(args);
  if (cmd == "analyze") return gt::cli::RunAnalyze(args);
  if (cmd == "nsys-compat") return gt::cli::RunNsysCompat(args);
  if (cmd == "nsys-shim") return gt::cli::RunNsysShim(args);  // what DIR/nsys runs
  if (cmd == "-h" || cmd == "--help" || cmd == "help") {
    std::cout << kUsage;
    return 0;
  }
  if (cmd == "--version" || cmd == "-v") {
    std::cout << "gtrace " << GT_VERSION_STRING << " (stream format 1, nsys export schema 3.25.0)\n";
    return 0;
  }
  std::cerr << "gtrace: unknown command '" << cmd << "'\n\n" << kUsage;
  return 2;
}
