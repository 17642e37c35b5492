// `gtrace export [options] STREAM... | DIR | DB.sqlite`: streams -> one nsys-schema SQLite database,
// and streams or a database -> Perfetto, Kineto-style JSON or Paraver (tools/viewers).
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <iostream>

#include "tools/cli/args.h"
#include "tools/cli/commands.h"
#include "tools/cli/python_module.h"
#include "tools/export/db_merge.h"
#include "tools/export/exporter.h"
#include "tools/export/merge_catalog.h"
#include "tools/export/multi_export.h"
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

// GTRACE_ALIGN_MAX_OPS: the operations the alignment pass holds per stream (anchor_scan.h; 0: no
// cap). Unset or empty: the default. Read here only, not by the injected library.
Status AlignMaxOpsFromEnv(uint64_t* max_ops) {
  const char* v = std::getenv("GTRACE_ALIGN_MAX_OPS");
  if (v == nullptr || *v == '\0') return Status::Ok();
  uint64_t n = 0;
  for (const char* c = v; *c != '\0'; ++c) {
    if (*c < '0' || *c > '9' || n > (UINT64_MAX - 9) / 10) {
      return Status::Error(std::string("GTRACE_ALIGN_MAX_OPS='") + v +
                           "' is not a number of operations (0: no cap; default " +
                           std::to_string(exporter::kAnchorScanMaxOps) + ")");
    }
    n = n * 10 + static_cast<uint64_t>(*c - '0');
  }
  *max_ops = n;
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
// Streams -> the temporary database so.output (overwritten: it is ours): several streams are converted in
// parallel and clock-aligned as by `gtrace export` (multi_export.h). Prints warnings; on failure
// prints the error, removes the partial file and returns 1.
int ExportToTempDb(exporter::ExportOptions* so) {
  so->force = true;
  Status st;
  std::vector<std::string> warnings;
  if (so->inputs.size() > 1) {
    exporter::MultiExportOptions mo;
    mo.inputs = so->inputs;
    mo.output = so->output;
    mo.force = true;
    exporter::MultiExportResult mr;
    st = AlignMaxOpsFromEnv(&mo.align_max_ops);
    if (st.ok()) st = exporter::ExportMany(mo, &mr);
    warnings = mr.warnings;
  } else {
    exporter::ExportResult sr;
    st = exporter::ExportSqlite(*so, &sr);
    warnings = sr.warnings;
  }
  if (!st.ok()) {
    std::cerr << "gtrace: export: " << st.message() << "\n";
    std::remove(so->output.c_str());
    return 1;
  }
  for (const std::string& w : warnings) std::cerr << "gtrace: warning: " << w << "\n";
  return 0;
}

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
    if (ExportToTempDb(&so) != 0) return 1;
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

struct ParquetOptions {
  std::string rank;         // per-rank mode (in the job): the one process of the input is this rank
  std::string alignment;    // with rank: the merged summaries whose correction it gets
  std::string compression;  // zstd (default), snappy, ...
  std::string row_group_rows;
};

// --type parquet: streams -> a temporary database (as --type sqlite would write it) -> the Parquet
// dataset, by python/gtrace/parquet.py (Apache Arrow's writer; docs/multi-rank.md, "Columnar
// dataset"); databases are converted directly. The temporary database is removed afterwards.
int RunParquetExport(const exporter::ExportOptions& o, const ParquetOptions& q, const std::vector<std::string>& given) {
  std::string out = o.output;
  if (out.empty()) {
    if (given.size() != 1) {
      std::cerr << "gtrace: export: several inputs: name the dataset directory with -o\n";
      return 2;
    }
    out = StemOf(given[0]) + ".parquet";
  }
  struct stat st_out;
  if (q.rank.empty() && !o.force && stat(out.c_str(), &st_out) == 0) {
    std::cerr << "gtrace: export: " << out << " exists (use --force-overwrite to replace it)\n";
    return 1;
  }
  size_t dbs = 0;
  for (const std::string& in : given) dbs += !IsDir(in) && IsSqliteFile(in) ? 1 : 0;
  if (dbs > 0 && dbs < given.size()) {
    std::cerr << "gtrace: export: give streams or gtrace databases, not both\n";
    return 2;
  }
  const bool each = q.rank == "each";
  if (!q.alignment.empty() && q.rank.empty()) {
    std::cerr << "gtrace: export: --alignment goes with --rank R or --rank each\n";
    return 2;
  }
  std::vector<std::string> databases;
  std::vector<std::string> temp_dbs;  // removed at the end, whatever happened
  std::string temp_dir;
  if (dbs > 0) {
    databases = given;
  } else {
    exporter::ExportOptions so;
    Status st = ExpandInputs(given, &so.inputs);
    if (!st.ok()) {
      std::cerr << "gtrace: export: " << st.message() << "\n";
      return 1;
    }
    std::string base = out;
    while (base.size() > 1 && base.back() == '/') base.pop_back();
    if (!each) {
      temp_dbs.push_back(base + ".gtrace-tmp-" + std::to_string(getpid()) + ".sqlite");
      so.output = temp_dbs.back();
      if (ExportToTempDb(&so) != 0) return 1;
    } else {
      // --rank each: every stream alone, as each rank's own export in the job would be (its own session);
      // one at a time, so the disk holds one extra database per stream only until Python has read it.
      temp_dir = base + ".gtrace-tmp-" + std::to_string(getpid());
      if (mkdir(temp_dir.c_str(), 0755) != 0) {
        std::cerr << "gtrace: export: cannot create " << temp_dir << "\n";
        return 1;
      }
      for (size_t i = 0; i < so.inputs.size(); ++i) {
        exporter::ExportOptions one = so;
        one.inputs = {so.inputs[i]};
        one.output = temp_dir + "/" + std::to_string(i) + ".sqlite";
        temp_dbs.push_back(one.output);
        if (ExportToTempDb(&one) != 0) {
          for (const std::string& t : temp_dbs) std::remove(t.c_str());
          rmdir(temp_dir.c_str());
          return 1;
        }
      }
    }
    databases = temp_dbs;
  }
  std::vector<std::string> args = {"convert", "-o", out};
  if (o.force) args.push_back("--force-overwrite");
  if (each) {
    args.push_back("--each-rank");
  } else if (!q.rank.empty()) {
    args.insert(args.end(), {"--rank", q.rank});
  }
  if (!q.alignment.empty()) args.insert(args.end(), {"--alignment", q.alignment});
  if (!q.compression.empty()) args.insert(args.end(), {"--compression", q.compression});
  if (!q.row_group_rows.empty()) args.insert(args.end(), {"--row-group-rows", q.row_group_rows});
  args.insert(args.end(), databases.begin(), databases.end());
  int rc = RunPythonModule("gtrace.parquet", args);
  for (const std::string& t : temp_dbs) std::remove(t.c_str());
  if (!temp_dir.empty()) rmdir(temp_dir.c_str());
  return rc;
}

std::string Micros(int64_t ns) {
  char buf[48];
  std::snprintf(buf, sizeof(buf), "%.1f us", static_cast<double>(ns) / 1000.0);
  return buf;
}

// One line per clock domain, and the worst rank's residual: what the alignment did and how well.
void PrintAlignment(const exporter::SessionPlan& plan) {
  if (plan.domains.size() <= 1) {
    std::cerr << "gtrace: clock alignment: one clock domain (" << (plan.domains.empty() ? "" : plan.domains[0].host_name)
              << "): left alone\n";
    return;
  }
  if (!plan.aligned) {
    std::cerr << "gtrace: clock alignment: off (" << plan.domains.size() << " clock domains mapped through their "
              << "clock pairs only)\n";
    return;
  }
  std::cerr << "gtrace: clock alignment (" << plan.domains.size() << " " << plan.domain_kind << " domains):\n";
  size_t shown = 0;
  for (size_t i = 0; i < plan.domains.size(); ++i) {
    const exporter::ClockDomain& d = plan.domains[i];
    const exporter::DomainAlignment& a = d.alignment;
    if (shown++ == 16) {
      std::cerr << "gtrace:   ... (" << plan.domains.size() - 16 << " more in GTRACE_CLOCK_ALIGNMENT)\n";
      break;
    }
    std::cerr << "gtrace:   " << d.host_name << (plan.domain_kind == "rank" ? " pid " + std::to_string((d.global_pid >> 24) & 0xffffff) : "")
              << ": " << a.method;
    if (a.method == "collectives" || a.method == "clock-pairs") {
      char drift[32];
      std::snprintf(drift, sizeof(drift), "%.3f", static_cast<double>(a.correction.drift_ppb) / 1000.0);
      std::cerr << ", correction " << Micros(a.correction.offset_ns) << " + " << drift << " ppm";
    }
    if (a.anchors > 0) {
      std::cerr << ", residual " << Micros(a.residual_rms_ns) << " rms (error " << Micros(a.stderr_ns) << ", "
                << a.instances << " collectives";
      if (a.outliers > 0) std::cerr << ", " << a.outliers << " outliers";
      std::cerr << ")";
    }
    std::cerr << "\n";
  }
  size_t worst = 0;
  for (size_t i = 1; i < plan.streams.size(); ++i) {
    if (plan.streams[i].residual.rms_ns > plan.streams[worst].residual.rms_ns) worst = i;
  }
  if (!plan.streams.empty() && plan.streams[worst].residual.anchors > 0) {
    std::cerr << "gtrace:   largest per-rank residual: input " << worst << ", " << Micros(plan.streams[worst].residual.rms_ns)
              << " rms, " << Micros(plan.streams[worst].residual.max_abs_ns) << " max (GTRACE_RANKS)\n";
  }
}

// --column-catalog: the merge catalog (merge_catalog.cc) as JSON, for python/gtrace/parquet.py, which
// must know the time and StringIds columns of every table without a second copy of the list.
int PrintColumnCatalog() {
  auto kind = [](exporter::ColumnKind k) -> const char* {
    switch (k) {
      case exporter::ColumnKind::kPlain: return "plain";
      case exporter::ColumnKind::kTime: return "time";
      case exporter::ColumnKind::kTimeOrZero: return "time_or_zero";
      case exporter::ColumnKind::kGlobalId: return "global_id";
      case exporter::ColumnKind::kHostIndex: return "host_index";
      case exporter::ColumnKind::kStringId: return "string_id";
      case exporter::ColumnKind::kCallchainId: return "callchain_id";
      case exporter::ColumnKind::kOsrtCallchainId: return "osrt_callchain_id";
      case exporter::ColumnKind::kSampleId: return "sample_id";
      case exporter::ColumnKind::kGpuId: return "gpu_id";
    }
    return "plain";
  };
  std::cout << "{";
  bool first = true;
  for (const exporter::TableRule& t : exporter::TableRules()) {
    std::cout << (first ? "\n" : ",\n") << " \"" << t.table << "\": {\"process_key\": \"" << t.process_key
              << "\", \"columns\": {";
    first = false;
    bool c1 = true;
    for (const exporter::ColumnRule& c : t.columns) {
      std::cout << (c1 ? "" : ", ") << "\"" << c.column << "\": \"" << kind(c.kind) << "\"";
      c1 = false;
    }
    std::cout << "}}";
  }
  std::cout << "\n}\n";
  return 0;
}

}  // namespace

int RunExport(const std::vector<std::string>& args) {
  exporter::ExportOptions o;
  std::string type = "sqlite";
  bool viewer = false;
  bool parquet = false;
  ParquetOptions pq;
  gt::viewers::ViewerFormat viewer_format = gt::viewers::ViewerFormat::kPerfetto;
  ArgParser p("export", "gtrace export [options] <stream.gtrace>... | <directory> | <database.sqlite>...",
              "Converts gtrace streams (one per process/rank) into one SQLite database in the Nsight Systems\n"
              "export schema 3.25.0 (each stream becomes its own process; several streams are converted in\n"
              "parallel and the clocks of different hosts aligned from NCCL collective ends), or one database\n"
              "per stream (--per-rank); merges gtrace databases (e.g. per-rank exports made inside the job,\n"
              "docs/multi-rank.md) into one; or converts streams or an nsys-schema SQLite\n"
              "database (ours or nsys's) into a viewer format: perfetto (.pftrace for ui.perfetto.dev),\n"
              "kineto-json (a directory of per-rank Chrome-trace JSON files for Holistic Trace Analysis; a\n"
              "single .json for one rank), paraver (.prv/.pcf/.row). Outputs are written to temporaries and\n"
              "renamed when complete; an existing output is kept unless --force-overwrite is given.\n"
              "--type parquet: a hive-partitioned Parquet dataset (DIR/<TABLE>/rank=<r>/part-0.parquet) by\n"
              "python -m gtrace.parquet (pyarrow; GTRACE_PYTHON names the interpreter); docs/multi-rank.md.");
  p.Add({"output", 'o', true, "FILE", "output to write (default: the single input with .sqlite, .pftrace, .kineto or .prv)",
         [&](std::string_view v) {
           o.output = std::string(v);
           return Status::Ok();
         }});
  p.Add({"type", 0, true, "TYPE", "output format: sqlite, perfetto, kineto-json, paraver, parquet", [&](std::string_view v) {
           parquet = v == "parquet";
           if (v == "sqlite" || parquet) {
             viewer = false;
           } else if (gt::viewers::ParseViewerFormat(v, &viewer_format)) {
             viewer = true;
           } else {
             return Status::Error("--type: '" + std::string(v) +
                                  "' is not supported (known: sqlite, perfetto, kineto-json, paraver, parquet)");
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
  exporter::MultiExportOptions mo;
  p.Add({"strict", 0, false, "", "fail (exit 1) when a stream is damaged; by default every intact chunk is kept "
         "and each damaged span is reported (here and in DIAGNOSTIC_EVENT)", [&](std::string_view v) {
           ParseBoolValue(v, &o.strict);
           mo.strict = o.strict;
           return Status::Ok();
         }});
  p.Add({"per-rank", 0, false, "", "one database per input stream, in the directory -o names", [&](std::string_view v) {
           ParseBoolValue(v, &mo.per_rank);
           return Status::Ok();
         }});
  p.Add({"no-align", 0, false, "", "do not align the clocks of different hosts from NCCL collective ends",
         [&](std::string_view v) {
           bool off = true;
           ParseBoolValue(v, &off);
           mo.align = !off;
           return Status::Ok();
         }});
  p.Add({"align-domain", 0, true, "host|rank",
         "clock domains to align: host (default; ranks of one host share a clock) or rank (each process its own: a "
         "check that one host's shared clock comes out with corrections near 0)",
         [&](std::string_view v) {
           if (v != "host" && v != "rank") return Status::Error("--align-domain: '" + std::string(v) + "' is not host or rank");
           mo.align_domain = std::string(v);
           return Status::Ok();
         }});
  p.Add({"jobs", 'j', true, "N", "conversion threads (default: one per core)", [&](std::string_view v) {
           uint64_t n = 0;
           Status st = ParseUnsigned("--jobs", v, 1, 1024, &n);
           mo.jobs = static_cast<unsigned>(n);
           return st;
         }});
  auto keep = [](std::string* to) {
    return [to](std::string_view v) {
      *to = std::string(v);
      return Status::Ok();
    };
  };
  p.Add({"rank", 0, true, "R|each", "--type parquet, inside the job: the input is rank R's one stream or database; "
         "write only its partitions into the dataset directory (which may hold other ranks'). `each`: every input "
         "is one rank's stream or database, converted as --rank <its launcher rank>, all in one process",
         keep(&pq.rank)});
  p.Add({"alignment", 0, true, "DB", "--type parquet --rank R|each: a merge of every rank's summary database; its "
         "clock correction is applied to each rank's times (scripts/slurm-parquet.sh)", keep(&pq.alignment)});
  p.Add({"compression", 0, true, "CODEC", "--type parquet: zstd (default), snappy, gzip, lz4 or none",
         keep(&pq.compression)});
  p.Add({"row-group-rows", 0, true, "N", "--type parquet: rows per row group (default 1048576)",
         keep(&pq.row_group_rows)});
  bool catalog = false;
  p.Add({"column-catalog", 0, false, "", "print which columns of each table are times, ids and strings (JSON; for "
         "python -m gtrace.parquet) and exit", [&](std::string_view) {
           catalog = true;
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
  if (catalog) return PrintColumnCatalog();
  if (inputs.empty()) {
    std::cerr << "gtrace: export: no input streams given\n";
    return 2;
  }
  if (!parquet && !(pq.rank.empty() && pq.alignment.empty() && pq.compression.empty() && pq.row_group_rows.empty())) {
    std::cerr << "gtrace: export: --rank, --alignment, --compression and --row-group-rows go with --type parquet\n";
    return 2;
  }
  if (parquet) return RunParquetExport(o, pq, inputs);
  if (viewer) return RunViewerExport(viewer_format, o, inputs);
  // Databases in: merge them (gtrace databases of per-rank exports, docs/multi-rank.md).
  size_t dbs = 0;
  for (const std::string& in : inputs) dbs += !IsDir(in) && IsSqliteFile(in) ? 1 : 0;
  if (dbs > 0 && dbs < inputs.size()) {
    std::cerr << "gtrace: export: give streams or gtrace databases, not both\n";
    return 2;
  }
  if (dbs == 1) {
    std::cerr << "gtrace: export: " << inputs[0]
              << " is already an SQLite database; --type perfetto, kineto-json or paraver convert it (several gtrace "
                 "databases are merged into one)\n";
    return 2;
  }
  if (dbs > 1) {
    if (o.output.empty()) {
      std::cerr << "gtrace: export: several inputs: name the merged database with -o\n";
      return 2;
    }
    exporter::MergeOptions m;
    m.inputs = inputs;
    m.output = o.output;
    m.force = o.force;
    m.align = mo.align;
    m.align_domain = mo.align_domain;
    exporter::MergeResult mr;
    st = exporter::MergeDatabases(m, &mr);
    if (!st.ok()) {
      std::cerr << "gtrace: export: " << st.message() << "\n";
      return 1;
    }
    for (const std::string& w : mr.warnings) std::cerr << "gtrace: warning: " << w << "\n";
    if (!mr.same_session) PrintAlignment(mr.plan);
    std::cerr << "gtrace: wrote " << o.output << " (" << inputs.size() << " databases, " << mr.processes
              << " processes" << (mr.same_session ? ", one session" : "") << ")\n";
    return 0;
  }
  if (!(st = ExpandInputs(inputs, &o.inputs)).ok()) {
    std::cerr << "gtrace: export: " << st.message() << "\n";
    return 1;
  }
  if (o.inputs.size() > 1 || mo.per_rank) {
    if (!(st = AlignMaxOpsFromEnv(&mo.align_max_ops)).ok()) {
      std::cerr << "gtrace: export: " << st.message() << "\n";
      return 2;
    }
    mo.inputs = o.inputs;
    mo.output = o.output;
    mo.force = o.force;
    if (mo.output.empty()) {
      if (!mo.per_rank) {
        std::cerr << "gtrace: export: several inputs: name the database with -o\n";
        return 2;
      }
      std::string in = o.inputs[0];
      mo.output = in.find('/') == std::string::npos ? "." : in.substr(0, in.rfind('/'));
    }
    if (isatty(2) != 0) {
      mo.progress = [](const std::string& line) { std::cerr << "\rgtrace: " << line << "   " << std::flush; };
    }
    exporter::MultiExportResult mr;
    st = exporter::ExportMany(mo, &mr);
    if (mo.progress) std::cerr << "\n";
    if (!st.ok()) {
      std::cerr << "gtrace: export: " << st.message() << "\n";
      return 1;
    }
    for (const std::string& w : mr.warnings) std::cerr << "gtrace: warning: " << w << "\n";
    PrintAlignment(mr.plan);
    if (mo.per_rank) {
      std::cerr << "gtrace: wrote " << mr.outputs.size() << " databases in " << mo.output << " (" << mr.streams
                << " streams, " << mr.chunks << " chunks, " << mr.jobs << " threads)\n";
    } else {
      char t[96];
      std::snprintf(t, sizeof(t), "%.1f s alignment pass, %.1f s conversion, %.1f s merge", mr.scan_seconds,
                    mr.convert_seconds, mr.merge_seconds);
      std::cerr << "gtrace: wrote " << mo.output << " (" << mr.streams << " streams, " << mr.chunks << " chunks, "
                << mr.jobs << " threads: " << t << ")\n";
    }
    return 0;
  }
  if (o.output.empty()) {
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
