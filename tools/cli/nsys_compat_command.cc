// `gtrace nsys-compat DIR`: writes DIR/nsys, a small script that answers the two nsys CLI calls that
// converters of nsys exports make (BSC's nsys2prv runs `nsys export -t sqlite ...` and
// `nsys stats -r cuda_api_trace --timeunit nsec -f csv -o BASE file.sqlite`) with gtrace's exporter
// and reports, and refuses everything else with a clear error. Put DIR first in PATH (or set
// NSYS_HOME=DIR/.. with DIR named bin) for such a tool only; it is not NVIDIA's nsys.
//
// The script execs `gtrace nsys-shim ARGS` (RunNsysShim below), so the argument handling is here,
// tested, not in shell. Output files follow nsys's naming: `-o BASE` writes BASE_<report>.<csv|json|txt>;
// `nsys export` without -o writes the input's name with .sqlite. A report whose tables the database
// lacks prints nsys's "SKIPPED: ..." line and writes no file (exit 0), as nsys does.
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "tools/cli/commands.h"
#include "tools/cli/stream_export_cache.h"
#include "tools/export/exporter.h"
#include "tools/stats/stats.h"

namespace gt::cli {
namespace {

// A stream buffer that writes `prefix` to `target` before the first byte that passes through it, and
// nothing when none does: nsys-compat's "Processing [...]" line belongs only to a report that prints.
class LazyPrefixBuffer : public std::streambuf {
 public:
  LazyPrefixBuffer(std::streambuf* target, std::string prefix) : target_(target), prefix_(std::move(prefix)) {}

 protected:
  int_type overflow(int_type c) override {
    if (traits_type::eq_int_type(c, traits_type::eof()))
      return traits_type::not_eof(c);
    const char ch = traits_type::to_char_type(c);
    return xsputn(&ch, 1) == 1 ? c : traits_type::eof();
  }
  std::streamsize xsputn(const char* data, std::streamsize size) override {
    if (size > 0 && !started_) {
      started_ = true;
      target_->sputn(prefix_.data(), static_cast<std::streamsize>(prefix_.size()));
    }
    return target_->sputn(data, size);
  }
  int sync() override { return target_->pubsync(); }

 private:
  std::streambuf* target_;
  std::string prefix_;
  bool started_ = false;
};

bool Exists(const std::string& p) {
  struct stat st;
  return ::stat(p.c_str(), &st) == 0;
}

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::vector<std::string> SplitList(const std::string& list) {
  std::vector<std::string> out;
  std::stringstream ss(list);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (!item.empty())
      out.push_back(item);
  }
  return out;
}

std::string WithoutExtension(const std::string& path) {
  size_t slash = path.rfind('/');
  size_t dot = path.rfind('.');
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash))
    return path;
  return path.substr(0, dot);
}

std::string SelfPath() {
  char buf[PATH_MAX];
  ssize_t n = ::readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  if (n <= 0)
    return "";
  buf[n] = '\0';
  return buf;
}

// A shell word in single quotes.
std::string ShellQuote(const std::string& s) {
  std::string out = "'";
  for (char c : s)
    out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

int Fail(const std::string& message, int rc = 1) {
  std::cerr << "gtrace nsys-compat: " << message << "\n";
  return rc;
}

// nsys's wording when a report has nothing to work on (gtrace's reports say "no <TABLE> table in ...").
bool MissingData(const Status& st) {
  return st.message().find(" table in ") != std::string::npos;
}

int ShimStats(const std::vector<std::string>& args) {
  std::string reports, format = "csv", output, timeunit = "nsec";
  bool force_overwrite = false, force_export = false, quiet = false;
  ArgParser p("nsys stats", "nsys stats [options] <file.sqlite | stream.gtrace>",
              "gtrace's answer to `nsys stats` (gtrace nsys-compat).");
  p.Add({"report", 'r', true, "LIST", "reports, comma-separated", [&](std::string_view v) {
           reports = std::string(v);
           return Status::Ok();
         }});
  p.Add({"format", 'f', true, "FMT", "csv, json or table", [&](std::string_view v) {
           format = std::string(v);
           return Status::Ok();
         }});
  p.Add({"output", 'o', true, "BASE", "write BASE_<report>.<ext> ('-' or none: standard output)",
         [&](std::string_view v) {
           output = std::string(v);
           return Status::Ok();
         }});
  p.Add({"timeunit", 0, true, "UNIT", "nsec only (gtrace's reports are in ns)", [&](std::string_view v) {
           timeunit = std::string(v);
           return Status::Ok();
         }});
  p.Add({"force-overwrite", 0, false, "", "replace existing output files", [&](std::string_view v) {
           ParseBoolValue(v, &force_overwrite);
           return Status::Ok();
         }});
  p.Add({"force-export", 0, false, "", "re-export a .gtrace input", [&](std::string_view v) {
           ParseBoolValue(v, &force_export);
           return Status::Ok();
         }});
  p.Add({"quiet", 'q', false, "", "print nothing but errors", [&](std::string_view v) {
           ParseBoolValue(v, &quiet);
           return Status::Ok();
         }});
  std::vector<std::string> inputs;
  bool help = false;
  Status st = p.Parse(args, false, &inputs, &help);
  if (help) {
    std::cout << p.Help();
    return 0;
  }
  if (!st.ok())
    return Fail(st.message() +
                " (only -r, -f, -o, --timeunit=nsec, --force-overwrite, --force-export "
                "and -q are answered)");
  if (timeunit != "nsec" && timeunit != "ns") {
    return Fail("--timeunit " + timeunit + ": gtrace's reports are in nanoseconds (use --timeunit nsec)");
  }
  stats::ReportOptions options;
  if (!(st = stats::ParseFormat(format, &options.format)).ok())
    return Fail(st.message());
  if (inputs.size() != 1)
    return Fail("give exactly one input (.sqlite or .gtrace)");
  std::string db = inputs[0];
  if (EndsWith(db, ".nsys-rep") || EndsWith(db, ".qdrep")) {
    return Fail(db + ": gtrace cannot read an nsys report file; give its .sqlite export or a .gtrace stream");
  }
  if (!Exists(db))
    return Fail(db + ": no such file");
  if (EndsWith(db, ".gtrace")) {
    std::string sqlite = WithoutExtension(db) + ".sqlite";
    bool stale = Exists(sqlite) && !ExportIsCurrent(db, sqlite);
    if (stale) std::cerr << "gtrace: stats: " << sqlite << " is older than " << db << "; exporting it again\n";
    if (!Exists(sqlite) || stale || force_export) {
      exporter::ExportOptions eo;
      eo.inputs = {db};
      eo.output = sqlite;
      eo.force = true;
      exporter::ExportResult result;
      if (!(st = exporter::ExportSqlite(eo, &result)).ok())
        return Fail(st.message());
    }
    db = sqlite;
  }
  std::vector<std::string> names = SplitList(reports);
  const char* ext = options.format == stats::Format::kCsv    ? "csv"
                    : options.format == stats::Format::kJson ? "json"
                                                             : "txt";
  int rc = 0;
  for (const std::string& name : names) {
    // Reports stream their rows (a trace is one line per row): to standard output behind the
    // "Processing" line, printed by the first byte of the report (a skipped report prints none), or
    // to BASE_<report>.<ext>.tmp-<pid>, renamed into place once the report succeeded.
    if (output.empty() || output == "-") {
      LazyPrefixBuffer prefixed(std::cout.rdbuf(),
                                quiet ? std::string() : "\nProcessing [" + db + "] with [" + name + "]... \n");
      std::ostream text(&prefixed);
      st = stats::RunReport(db, name, options, text);
      text.flush();
      if (!st.ok()) {
        if (MissingData(st)) {
          // nsys: "SKIPPED: <file> does not contain <kind> data." on standard output, exit 0.
          std::cout << "SKIPPED: " << db << " does not contain the data of report " << name << " (" << st.message()
                    << ").\n";
          continue;
        }
        std::cerr << "gtrace nsys-compat: " << st.message() << "\n";
        rc = 1;
      }
      continue;
    }
    std::string file = output + "_" + name + "." + ext;
    std::string temp = file + ".tmp-" + std::to_string(::getpid());
    {
      std::ofstream f(temp, std::ios::binary | std::ios::trunc);
      st = stats::RunReport(db, name, options, f);
      f.close();
      if (!st.ok()) {
        ::unlink(temp.c_str());
        if (MissingData(st)) {
          std::cout << "SKIPPED: " << db << " does not contain the data of report " << name << " (" << st.message()
                    << ").\n";
          continue;
        }
        std::cerr << "gtrace nsys-compat: " << st.message() << "\n";
        rc = 1;
        continue;
      }
      if (!f) {
        ::unlink(temp.c_str());
        std::cerr << "gtrace nsys-compat: cannot write " << file << "\n";
        rc = 1;
        continue;
      }
    }
    if (Exists(file) && !force_overwrite) {
      ::unlink(temp.c_str());
      std::cerr << "gtrace nsys-compat: " << file << " exists; use --force-overwrite true to replace it\n";
      rc = 1;
      continue;
    }
    if (::rename(temp.c_str(), file.c_str()) != 0) {
      ::unlink(temp.c_str());
      std::cerr << "gtrace nsys-compat: cannot write " << file << ": " << strerror(errno) << "\n";
      rc = 1;
      continue;
    }
    if (!quiet)
      std::cout << "\nProcessing [" << db << "] with [" << name << "]... \nGenerated:\n\t" << file << "\n";
  }
  return rc;
}

int ShimExport(const std::vector<std::string>& args) {
  std::string type = "sqlite", output;
  bool force_overwrite = false, ignored = false;
  ArgParser p("nsys export", "nsys export -t sqlite [-o OUT] [--force-overwrite=true] <stream.gtrace>...",
              "gtrace's answer to `nsys export` (gtrace nsys-compat).");
  p.Add({"type", 't', true, "TYPE", "sqlite only", [&](std::string_view v) {
           type = std::string(v);
           return Status::Ok();
         }});
  p.Add({"output", 'o', true, "OUT", "the database (default: the input's name with .sqlite)", [&](std::string_view v) {
           output = std::string(v);
           return Status::Ok();
         }});
  p.Add({"force-overwrite", 'f', false, "", "replace an existing output", [&](std::string_view v) {
           ParseBoolValue(v, &force_overwrite);
           return Status::Ok();
         }});
  // Accepted and without effect: gtrace's export is always lazy, JSON columns stay NULL.
  for (const char* name : {"include-json", "lazy", "quiet", "include-blobs"}) {
    p.Add({name, 0, false, "", "accepted, no effect", [&](std::string_view v) {
             ParseBoolValue(v, &ignored);
             return Status::Ok();
           }});
  }
  std::vector<std::string> inputs;
  bool help = false;
  Status st = p.Parse(args, false, &inputs, &help);
  if (help) {
    std::cout << p.Help();
    return 0;
  }
  if (!st.ok())
    return Fail(st.message());
  if (type != "sqlite")
    return Fail("--type " + type + ": gtrace answers `nsys export` only for sqlite");
  if (inputs.empty())
    return Fail("give the stream(s) to export");
  for (const std::string& in : inputs) {
    if (EndsWith(in, ".nsys-rep") || EndsWith(in, ".qdrep")) {
      return Fail(in + ": gtrace cannot read an nsys report file (it exports gtrace streams, .gtrace)");
    }
  }
  exporter::ExportOptions eo;
  eo.inputs = inputs;
  eo.output = output.empty() ? WithoutExtension(inputs[0]) + ".sqlite" : output;
  eo.force = force_overwrite;
  if (Exists(eo.output) && !force_overwrite) {
    return Fail(eo.output + " exists; use --force-overwrite=true to replace it");
  }
  exporter::ExportResult result;
  if (!(st = exporter::ExportSqlite(eo, &result)).ok())
    return Fail(st.message());
  for (const std::string& w : result.warnings)
    std::cerr << "gtrace: warning: " << w << "\n";
  std::cout << "Generated:\n    " << eo.output << "\n";
  return 0;
}

}  // namespace

int RunNsysShim(const std::vector<std::string>& args) {
  if (args.empty())
    return Fail("usage: nsys stats|export ... (gtrace nsys-compat answers these two)", 2);
  std::vector<std::string> rest(args.begin() + 1, args.end());
  if (args[0] == "stats")
    return ShimStats(rest);
  if (args[0] == "export")
    return ShimExport(rest);
  if (args[0] == "--version" || args[0] == "-v") {
    std::cout << "gtrace " << GT_VERSION_STRING
              << " nsys-compat (answers `nsys stats` and `nsys export`; not NVIDIA Nsight Systems)\n";
    return 0;
  }
  return Fail("`nsys " + args[0] +
              "` is not answered: this nsys is gtrace's compatibility script, which answers "
              "only `nsys stats` and `nsys export` (profile with `gtrace profile`)");
}

int RunNsysCompat(const std::vector<std::string>& args) {
  bool force = false;
  ArgParser p("nsys-compat", "gtrace nsys-compat [--force] DIR",
              "Writes DIR/nsys: a script answering `nsys stats` and `nsys export` with gtrace, for tools that call "
              "the nsys CLI on an export (put DIR first in PATH for such a tool only).");
  p.Add({"force", 'f', false, "", "replace an existing DIR/nsys", [&](std::string_view v) {
           ParseBoolValue(v, &force);
           return Status::Ok();
         }});
  std::vector<std::string> dirs;
  bool help = false;
  Status st = p.Parse(args, false, &dirs, &help);
  if (help) {
    std::cout << p.Help();
    return 0;
  }
  if (!st.ok())
    return Fail(st.message(), 2);
  if (dirs.size() != 1)
    return Fail("give exactly one directory", 2);
  std::string self = SelfPath();
  if (self.empty())
    return Fail("cannot find the gtrace executable (/proc/self/exe)");
  if (::mkdir(dirs[0].c_str(), 0755) != 0 && errno != EEXIST) {
    return Fail("cannot create " + dirs[0] + ": " + strerror(errno));
  }
  std::string path = dirs[0] + "/nsys";
  if (Exists(path) && !force)
    return Fail(path + " exists; use --force to replace it");
  std::string temp = path + ".tmp-" + std::to_string(::getpid());
  {
    std::ofstream f(temp, std::ios::trunc);
    f << "#!/bin/sh\n"
         "# Written by `gtrace nsys-compat`: answers `nsys stats` and `nsys export` with gtrace's reports and\n"
         "# exporter, and refuses every other nsys command. Not NVIDIA's Nsight Systems.\n"
         "exec "
      << ShellQuote(self) << " nsys-shim \"$@\"\n";
    f.close();
    if (!f) {
      ::unlink(temp.c_str());
      return Fail("cannot write " + path);
    }
  }
  if (::chmod(temp.c_str(), 0755) != 0 || ::rename(temp.c_str(), path.c_str()) != 0) {
    int err = errno;
    ::unlink(temp.c_str());
    return Fail("cannot write " + path + ": " + strerror(err));
  }
  std::cout << "gtrace: wrote " << path << " (answers `nsys stats` and `nsys export`)\n";
  return 0;
}

}  // namespace gt::cli
