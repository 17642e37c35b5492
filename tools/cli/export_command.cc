// `gtrace export [options] STREAM... | DIR`: streams -> one nsys-schema SQLite database.
#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <iostream>

#include "tools/cli/args.h"
#include "tools/cli/commands.h"
#include "tools/export/exporter.h"

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

}  // namespace

int RunExport(const std::vector<std::string>& args) {
  exporter::ExportOptions o;
  std::string type = "sqlite";
  ArgParser p("export", "gtrace export [options] <stream.gtrace>... | <directory>",
              "Converts gtrace streams (one per process/rank) into one SQLite database in the Nsight Systems\n"
              "export schema 3.25.0. Each stream becomes its own process. The database is written to a temporary\n"
              "file and renamed when complete; an existing output is kept unless --force-overwrite is given.");
  p.Add({"output", 'o', true, "FILE", "database to write (default: the single input with .sqlite)",
         [&](std::string_view v) {
           o.output = std::string(v);
           return Status::Ok();
         }});
  p.Add({"type", 0, true, "TYPE", "output format: sqlite", [&](std::string_view v) {
           if (v != "sqlite") return Status::Error("--type: '" + std::string(v) + "' is not supported (known: sqlite)");
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
