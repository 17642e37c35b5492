// `gtrace export [options] STREAM... | DIR | DB.sqlite`: streams -> one nsys-schema SQLite database,
// and streams or a database -> Perfetto, Kineto-style JSON or Paraver (tools/viewers).
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <iostream>

#include "tools/cli/args.h"
#include "tools/cli/commands.h"
#include "tools/export/exporter.h"
#include "tools/viewers/viewer_export.h"

namespace gt::cli {
namespace {

bool IsDir(const std::string& p) {
  struct stat st;
  return stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// A directory stands for every *.gtrace file in it (sorted, so the export is reproducible).
Status ExpandInputs(const std::vector<std::string>& given, std::vector<std::string>* out) {
  for (const std::string& g : given) {
    if (!IsDir(g)) {
      out->push_back(g);
      continue;
    }
    DIR* d = opendir(g.c_str());
    if (d == nullptr) return Status::Error(g + ": cannot read directory");
    std::vector<std::string> found;
    while (dirent* e = readdir(d)) {
      std::string name = e->d_name;
      if (name.size() > 7 && name.compare(name.size() - 7, 7, ".gtrace") == 0) found.push_back(g + "/" + name);
    }
    closedir(d);
    if (found.empty()) return Status::Error(g + ": no .gtrace files in this directory");
    std::sort(found.begin(), found.end());
    out->insert(out->end(), found.begin(), found.end());
  }
  return Status::Ok();
}

bool EndsWith(const std::string& s, const char* suffix) {
  size_t n = std::char_traits<char>::length(suffix);
  return s.size() >= n && s.compare(s.size() - n, n, suffix) == 0;
}

// An SQLite file, by its 16-byte magic (a database need not be named *.sqlite).
bool IsSqliteFile(const std::string& path) {
  FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return false;
  char magic[16] = {};
  size_t n = std::fread(magic, 1, sizeof(magic), f);
  std::fclose(f);
  return n == sizeof(magic) && std::string(magic, sizeof(magic)) == std::string("SQLite format 3\0", 16);
}

// The name an output is derived from: the input without its extension (or trailing slash).
std::string StemOf(std::string in) {
  while (in.size() > 1 && in.back() == '/') in.pop_back();
  for (const char* ext : {".gtrace", ".sqlite"}) {
    if (EndsWith(in, ext)) in.resize(in.size() - std::char_traits<char>::length(ext));
  }
  return in;
}

// --type perfetto|kineto-json|paraver: from one database, or from streams through a temporary
// database next to the output (removed afterwards).
int RunViewerExport(gt::viewers::ViewerFormat format, const exporter::ExportOptions& o,
                    const std::vector<std::string>& given) {
  gt::viewers::ViewerOptions v;
  v.format = format;
  v.force = o.force;
  v.progress = isatty(2) != 0;
  bool from_db = given.size() == 1 && !IsDir(given[0]) && IsSqliteFile(given[0]);
  if (given.size() == 1 && !from_db && EndsWith(given[0], ".sqlite")) {
    struct stat st;
    std::cerr << "gtrace: export: " << given[0]
              << (stat(given[0].c_str(), &st) != 0 ? ": no such file\n" : " is not an SQLite database\n");
    return 1;
  }
  if (given.size() > 1) {
    for (const std::string& g : given) {
      if (!IsDir(g) && IsSqliteFile(g)) {
        std::cerr << "gtrace: export: " << g << " is an SQLite database: give one database, or streams\n";
        return 2;
      }
    }
  }
  v.output = o.output;
  if (v.output.empty()) {
    if (given.size() != 1) {
      std::cerr << "gtrace: export: several inputs: name the output with -o\n";
      return 2;
    }
    v.output = gt::viewers::DefaultViewerOutput(format, StemOf(given[0]));
  }
  std::string temp_db;
  // Before converting streams (which may take long): an output we must not replace is an error now.
  Status st = gt::viewers::CheckViewerOutput(format, v.output, v.force);
  if (!st.ok()) {
    std::cerr << "gtrace: export: " << st.message() << "\n";
    return 1;
  }
  if (from_db) {
    v.database = given[0];
  } else {
    exporter::ExportOptions so;
    if (!(st = ExpandInputs(given, &so.inputs)).ok()) {
      std::cerr << "gtrace: export: " << st.message() << "\n";
      return 1;
    }
    temp_db = v.output + ".gtrace-tmp-" + std::to_string(getpid()) + ".sqlite";
    so.output = temp_db;
    so.force = true;
    exporter::ExportResult sr;
    if (!(st = exporter::ExportSqlite(so, &sr)).ok()) {
      std::cerr << "gtrace: export: " << st.message() << "\n";
      std::remove(temp_db.c_str());
      return 1;
    }
    for (const std::string& w : sr.warnings) std::cerr << "gtrace: warning: " << w << "\n";
    v.database = temp_db;
  }
  gt::viewers::ViewerResult result;
  st = gt::viewers::ExportViewer(v, &result);
  if (!temp_db.empty()) std::remove(temp_db.c_str());
  if (!st.ok()) {
    std::cerr << "gtrace: export: " << st.message() << "\n";
    return 1;
  }
  for (const std::string& w : result.warnings) std::cerr << "gtrace: warning: " << w << "\n";
  // One file (perfetto, single-rank json), the .prv of a Paraver trace, or the per-rank directory.
  std::string what = format == gt::viewers::ViewerFormat::kKinetoJson && result.outputs.size() > 1
                         ? v.output
                         : result.outputs.front();
  std::cerr << "gtrace: wrote " << what << " (" << gt::viewers::ViewerFormatName(format) << ", "
            << result.processes << " processes, " << result.events << " events";
  if (result.outputs.size() > 1) std::cerr << ", " << result.outputs.size() << " files";
  std::cerr << ")\n";
  return 0;
}

}  // namespace

int RunExport(const std::vector<std::string>& args) {
  exporter::ExportOptions o;
  std::string type = "sqlite";
  bool viewer = false;
  gt::viewers::ViewerFormat viewer_format = gt::viewers::ViewerFormat::kPerfetto;
  ArgParser p("export", "gtrace export [options] <stream.gtrace>... | <directory> | <database.sqlite>",
              "Converts gtrace streams (one per process/rank) into one SQLite database in the Nsight Systems\n"
              "export schema 3.25.0 (each stream becomes its own process), or streams or an nsys-schema SQLite\n"
              "database (ours or nsys's) into a viewer format: perfetto (.pftrace for ui.perfetto.dev),\n"
              "kineto-json (a directory of per-rank Chrome-trace JSON files for Holistic Trace Analysis; a\n"
              "single .json for one rank), paraver (.prv/.pcf/.row). Outputs are written to temporaries and\n"
              "renamed when complete; an existing output is kept unless --force-overwrite is given.");
  p.Add({"output", 'o', true, "FILE", "output to write (default: the single input with .sqlite, .pftrace, .kineto or .prv)",
         [&](std::string_view v) {
           o.output = std::string(v);
           return Status::Ok();
         }});
  p.Add({"type", 0, true, "TYPE", "output format: sqlite, perfetto, kineto-json, paraver", [&](std::string_view v) {
           if (v == "sqlite") {
             viewer = false;
           } else if (gt::viewers::ParseViewerFormat(v, &viewer_format)) {
             viewer = true;
           } else {
             return Status::Error("--type: '" + std::string(v) +
                                  "' is not supported (known: sqlite, perfetto, kineto-json, paraver)");
           }
           type = std::string(v);
           return Status::Ok();
         }});
  p.Add({"force-overwrite", 'f', false, "", "replace an existing output file", [&](std::string_view v) {
           ParseBoolValue(v, &o.force);
           return Status::Ok();
         }});
  p.Add({"force", 0, false, "", "same as --force-overwrite", [&](std::string_view v) {
           ParseBoolValue(v, &o.force);
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
  if (inputs.empty()) {
    std::cerr << "gtrace: export: no input streams given\n";
    return 2;
  }
  if (viewer) return RunViewerExport(viewer_format, o, inputs);
  if (inputs.size() == 1 && !IsDir(inputs[0]) && IsSqliteFile(inputs[0])) {
    std::cerr << "gtrace: export: " << inputs[0]
              << " is already an SQLite database; --type perfetto, kineto-json or paraver convert it\n";
    return 2;
  }
  if (!(st = ExpandInputs(inputs, &o.inputs)).ok()) {
    std::cerr << "gtrace: export: " << st.message() << "\n";
    return 1;
  }
  if (o.output.empty()) {
    if (o.inputs.size() != 1) {
      std::cerr << "gtrace: export: several inputs: name the database with -o\n";
      return 2;
    }
    std::string in = o.inputs[0];
    if (in.size() > 7 && in.compare(in.size() - 7, 7, ".gtrace") == 0) in.resize(in.size() - 7);
    o.output = in + ".sqlite";
  }
  exporter::ExportResult result;
  st = exporter::ExportSqlite(o, &result);
  if (!st.ok()) {
    std::cerr << "gtrace: export: " << st.message() << "\n";
    return 1;
  }
  for (const std::string& w : result.warnings) std::cerr << "gtrace: warning: " << w << "\n";
  std::cerr << "gtrace: wrote " << result.output << " (" << result.streams << " streams, " << result.chunks
            << " chunks)\n";
  return 0;
}

}  // namespace gt::cli
