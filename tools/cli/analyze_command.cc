// `gtrace analyze [options] DB...`: cross-rank analysis (tools/analyze, docs/multi-rank.md).
#include <cstdio>
#include <iostream>
#include <sstream>

#include "tools/analyze/analysis.h"
#include "tools/cli/args.h"
#include "tools/cli/commands.h"
#include "tools/cli/python_module.h"

namespace gt::cli {

namespace {

// --engine duckdb|dask: the analysis of a Parquet dataset (gtrace export --type parquet) by
// python/gtrace/analyze.py on that engine; the other flags are passed on (it knows --step-range,
// --skip-steps, --gap-min-us, --top, -r, --format json|csv, --workers, --scheduler). "native" (or
// no --engine): this program, on SQLite databases. Returns -1 when the native analysis applies.
int MaybeRunEngine(const std::vector<std::string>& args) {
  std::string engine;
  std::vector<std::string> rest;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--engine" && i + 1 < args.size()) {
      engine = args[++i];
    } else if (args[i].rfind("--engine=", 0) == 0) {
      engine = args[i].substr(9);
    } else {
      rest.push_back(args[i]);
    }
  }
  if (engine.empty() || engine == "native")
    return -1;
  if (engine != "duckdb" && engine != "dask") {
    std::cerr << "gtrace: --engine: '" << engine << "' is not native, duckdb or dask\n";
    return 2;
  }
  rest.insert(rest.begin(), {"--engine", engine});
  return RunPythonModule("gtrace.analyze", rest);
}

}  // namespace

int RunAnalyze(const std::vector<std::string>& args) {
  int engine_rc = MaybeRunEngine(args);
  if (engine_rc >= 0)
    return engine_rc;
  analyze::AnalyzeOptions o;
  analyze::Format format = analyze::Format::kTable;
  std::vector<std::string> reports;
  std::string html;
  std::string known;
  for (const std::string& r : analyze::ReportNames())
    known += (known.empty() ? "" : ", ") + r;
  ArgParser p("analyze", "gtrace analyze [options] <database.sqlite>...",
              "Cross-rank analysis of gtrace databases: one merged database, or the per-rank databases of one\n"
              "export (gtrace export --per-rank). Iterations come from an NVTX range (--step-range) or from the\n"
              "repeating pattern of NCCL collectives; per iteration the spread across ranks and the slowest rank;\n"
              "per collective when each rank entered it, who came last and how long the others waited; the POP\n"
              "efficiency factors (load balance, communication, orchestration); GPU idle gaps; the share of\n"
              "communication overlapped with computation. Definitions: docs/multi-rank.md.\n"
              "--engine duckdb|dask DIR: the same analyses of a Parquet dataset (gtrace export --type parquet)\n"
              "on DuckDB or Dask (python -m gtrace.analyze; needs --step-range; formats json and csv).");
  p.Add(
      {"step-range", 0, true, "NAME", "NVTX range that marks one iteration (e.g. train_step)", [&](std::string_view v) {
         o.step_range = std::string(v);
         return Status::Ok();
       }});
  p.Add({"skip-steps", 0, true, "N", "leave out the first N iterations (warm-up)", [&](std::string_view v) {
           uint64_t n = 0;
           Status st = ParseUnsigned("--skip-steps", v, 0, 1000000, &n);
           o.skip_steps = static_cast<uint32_t>(n);
           return st;
         }});
  p.Add({"gap-min-us", 0, true, "US", "shortest GPU idle gap reported, in us (default 100)", [&](std::string_view v) {
           uint64_t n = 0;
           Status st = ParseUnsigned("--gap-min-us", v, 0, 3600000000ULL, &n);
           o.gap_min_ns = static_cast<int64_t>(n) * 1000;
           return st;
         }});
  p.Add({"gap-cause-min-us", 0, true, "US",
         "GPU idle gaps from US us are attributed to the launching thread's OS calls and CPU samples "
         "(report gpu_gap_causes; default 1000; 0: off)",
         [&](std::string_view v) {
           uint64_t n = 0;
           Status st = ParseUnsigned("--gap-cause-min-us", v, 0, 3600000000ULL, &n);
           o.gap_cause_min_ns = static_cast<int64_t>(n) * 1000;
           return st;
         }});
  p.Add({"top", 0, true, "N", "rows of the top-N tables (0: all; default 10)", [&](std::string_view v) {
           uint64_t n = 0;
           Status st = ParseUnsigned("--top", v, 0, 100000000, &n);
           o.top = static_cast<uint32_t>(n);
           return st;
         }});
  p.Add({"report", 'r', true, "NAMES", "comma-separated reports (default: all but entries and gpu_gap_causes): " + known,
         [&](std::string_view v) {
           std::string s(v);
           size_t start = 0;
           while (start <= s.size()) {
             size_t comma = s.find(',', start);
             std::string name = s.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
             if (!name.empty())
               reports.push_back(name);
             if (comma == std::string::npos)
               break;
             start = comma + 1;
           }
           return Status::Ok();
         }});
  p.Add({"format", 0, true, "FMT", "table, csv or json", [&](std::string_view v) {
           if (v == "table" || v == "column") {
             format = analyze::Format::kTable;
           } else if (v == "csv") {
             format = analyze::Format::kCsv;
           } else if (v == "json") {
             format = analyze::Format::kJson;
           } else {
             return Status::Error("--format: '" + std::string(v) + "' is not table, csv or json");
           }
           return Status::Ok();
         }});
  p.Add({"html", 0, true, "FILE", "also write an HTML report with a GPU-utilisation heatmap", [&](std::string_view v) {
           html = std::string(v);
           return Status::Ok();
         }});
  p.Add({"heatmap-bins", 0, true, "N", "time columns of the heatmap (default 240)", [&](std::string_view v) {
           uint64_t n = 0;
           Status st = ParseUnsigned("--heatmap-bins", v, 1, 4000, &n);
           o.heatmap_bins = static_cast<uint32_t>(n);
           return st;
         }});
  bool help = false;
  Status st = p.Parse(args, false, &o.databases, &help);
  if (help) {
    std::cout << p.Help();
    return 0;
  }
  if (!st.ok()) {
    std::cerr << "gtrace: " << st.message() << "\n";
    return 2;
  }
  if (o.databases.empty()) {
    std::cerr << "gtrace: analyze: no database given\n";
    return 2;
  }
  for (const std::string& r : reports)
    o.keep_entries |= r == "entries";
  analyze::Analysis a;
  if (!(st = analyze::RunAnalysis(o, &a)).ok()) {
    std::cerr << "gtrace: analyze: " << st.message() << "\n";
    return 1;
  }
  std::ostringstream out;
  if (!(st = analyze::WriteReports(a, reports, format, o.top, out)).ok()) {
    std::cerr << "gtrace: analyze: " << st.message() << "\n";
    return 2;
  }
  std::cout << out.str();
  if (!html.empty()) {
    if (!(st = analyze::WriteHtml(a, o, html)).ok()) {
      std::cerr << "gtrace: analyze: " << st.message() << "\n";
      return 1;
    }
    std::cerr << "gtrace: wrote " << html << "\n";
  }
  return 0;
}

}  // namespace gt::cli
