// `gtrace stats [--report NAME[,NAME...]] [--format table|csv|json] [-o FILE] DB|STREAM`: nsys-style
// reports. A .gtrace stream is exported first (to <stem>.sqlite, kept for next time, as nsys does
// with .nsys-rep files).
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>

#include <fstream>
#include <iostream>
#include <sstream>

#include "tools/cli/args.h"
#include "tools/cli/commands.h"
#include "tools/cli/stream_export_cache.h"
#include "tools/export/exporter.h"
#include "tools/stats/stats.h"

namespace gt::cli {
namespace {

bool Exists(const std::string& p) {
  struct stat st;
  return stat(p.c_str(), &st) == 0;
}

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::vector<std::string> Split(const std::string& list) {
  std::vector<std::string> out;
  std::stringstream ss(list);
  std::string item;
  while (std::getline(ss, item, ',')) out.push_back(item);
  return out;
}

}  // namespace

void PrintDefaultReports(const std::string& db_path) {
  stats::ReportOptions o;
  // nsys's order; osrt_sum only when the OS runtime was traced (no "skipped" line for every run without -t osrt).
  for (const char* r : {"nvtx_sum", "osrt_sum", "cuda_api_sum", "cuda_gpu_kern_sum", "cuda_gpu_mem_time_sum",
                        "cuda_gpu_mem_size_sum"}) {
    std::ostringstream out;
    Status st = stats::RunReport(db_path, r, o, out);
    if (!st.ok() && std::string_view(r) == "osrt_sum") continue;
    if (st.ok()) {
      std::cout << out.str() << "\n";
    } else {
      std::cout << "gtrace: " << r << ": skipped: " << st.message() << "\n\n";
    }
  }
}

int RunStats(const std::vector<std::string>& args) {
  std::string reports = "nvtx_sum";
  stats::ReportOptions options;
  std::string output;
  bool force = false;
  bool list = false;
  ArgParser p("stats", "gtrace stats [options] <file.sqlite | stream.gtrace>",
              "Prints nsys-style reports from an nsys-schema SQLite file (gtrace's or nsys's own).");
  p.Add({"report", 'r', true, "NAME[,NAME...]", "reports to run (default nvtx_sum; see --help-reports)",
         [&](std::string_view v) {
           reports = std::string(v);
           for (const std::string& r : Split(reports)) {
             bool known = false;
             for (const stats::ReportInfo& info : stats::Reports()) known |= info.name == r;
             if (!known) return Status::Error("--report: unknown report '" + r + "' (see gtrace stats --help-reports)");
           }
           return Status::Ok();
         }});
  p.Add({"format", 0, true, "FMT", "table, csv or json (default table)",
         [&](std::string_view v) { return stats::ParseFormat(v, &options.format); }});
  p.Add({"output", 'o', true, "FILE", "write to FILE instead of standard output", [&](std::string_view v) {
           output = std::string(v);
           return Status::Ok();
         }});
  p.Add({"force-export", 0, false, "", "re-export a .gtrace input even if its .sqlite exists",
         [&](std::string_view v) {
           ParseBoolValue(v, &force);
           return Status::Ok();
         }});
  p.Add({"help-reports", 0, false, "", "list the reports", [&](std::string_view v) {
           ParseBoolValue(v, &list);
           return Status::Ok();
         }});
  std::vector<std::string> inputs;
  bool help = false;
  Status st = p.Parse(args, false, &inputs, &help);
  if (help) {
    std::cout << p.Help();
    return 0;
  }
  if (!st.ok()) {
    std::cerr << "gtrace: " << st.message() << "\n";
    return 2;
  }
  if (list) {
    for (const stats::ReportInfo& info : stats::Reports()) {
      std::cout << "  " << info.name << std::string(info.name.size() < 24 ? 24 - info.name.size() : 1, ' ')
                << info.description << "\n";
    }
    return 0;
  }
  if (inputs.size() != 1) {
    std::cerr << "gtrace: stats: give exactly one input file\n";
    return 2;
  }
  std::string db = inputs[0];
  if (EndsWith(db, ".gtrace")) {
    std::string sqlite = db.substr(0, db.size() - 7) + ".sqlite";
    bool stale = Exists(sqlite) && !ExportIsCurrent(db, sqlite);
    if (stale) std::cerr << "gtrace: stats: " << sqlite << " is older than " << db << "; exporting it again\n";
    if (!Exists(sqlite) || stale || force) {
      exporter::ExportOptions eo;
      eo.inputs = {db};
      eo.output = sqlite;
      eo.force = true;
      exporter::ExportResult result;
      st = exporter::ExportSqlite(eo, &result);
      if (!st.ok()) {
        std::cerr << "gtrace: stats: " << st.message() << "\n";
        return 1;
      }
      for (const std::string& w : result.warnings) std::cerr << "gtrace: warning: " << w << "\n";
    }
    db = sqlite;
  }
  // Each report goes straight to its destination (a trace prints one line per row: never held here).
  // -o FILE: written to FILE.tmp-<pid>, renamed into place at the end (FILE is only ever replaced by a
  // finished output).
  std::ofstream file;
  std::string temp;
  if (!output.empty()) {
    temp = output + ".tmp-" + std::to_string(::getpid());
    file.open(temp, std::ios::binary | std::ios::trunc);
    if (!file) {
      std::cerr << "gtrace: stats: cannot write " << output << "\n";
      return 1;
    }
  }
  std::ostream& out = output.empty() ? std::cout : file;
  int rc = 0;
  std::vector<std::string> names = Split(reports);
  for (size_t i = 0; i < names.size(); ++i) {
    st = stats::RunReport(db, names[i], options, out);
    if (!st.ok()) {
      out.flush();  // the lines before the error, if a trace failed in its middle
      std::cerr << "gtrace: stats: " << st.message() << "\n";
      rc = 1;
      continue;
    }
    if (i + 1 < names.size() && options.format == stats::Format::kTable) out << "\n";
  }
  if (!output.empty()) {
    file.close();
    if (!file || ::rename(temp.c_str(), output.c_str()) != 0) {
      ::unlink(temp.c_str());
      std::cerr << "gtrace: stats: cannot write " << output << "\n";
      return 1;
    }
  }
  return rc;
}

}  // namespace gt::cli
