// The analysis as one self-contained HTML page: an SVG heatmap of GPU utilisation per rank over
// time (people look before they read), then the tables. No scripts, fonts or images from the
// network; the file is written to a temporary name and renamed when complete.
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include "tools/analyze/analysis.h"
#include "tools/analyze/report_tables.h"

namespace gt::analyze {
namespace {

// Busy share 0..100 % in 11 steps: pale where the GPU idles, dark where it works (viridis, reversed).
constexpr const char* kPalette[] = {"#fde725", "#b5de2b", "#6ece58", "#35b779", "#1f9e89", "#26828e",
                                    "#31688e", "#3e4989", "#482878", "#440154", "#2b0037"};

std::string Escape(const std::string& s) {
  std::string o;
  for (char c : s) {
    switch (c) {
      case '<':
        o += "&lt;";
        break;
      case '>':
        o += "&gt;";
        break;
      case '&':
        o += "&amp;";
        break;
      case '"':
        o += "&quot;";
        break;
      default:
        o += c;
    }
  }
  return o;
}

std::string Ms(int64_t ns) {
  char b[32];
  std::snprintf(b, sizeof(b), "%.3f", static_cast<double>(ns) / 1e6);
  return b;
}

void Heatmap(const Analysis& a, std::ostream& o) {
  std::vector<const RankResult*> rows;
  for (const RankResult& r : a.ranks) {
    if (r.has_gpu && !r.bin_busy_ns.empty())
      rows.push_back(&r);
  }
  if (rows.empty() || a.heat_bin_ns <= 0) {
    o << "<p>No GPU activity to draw.</p>\n";
    return;
  }
  size_t bins = rows[0]->bin_busy_ns.size();
  const double plot_w = 960, left = 70, top = 10;
  double row_h = std::clamp(640.0 / static_cast<double>(rows.size()), 1.0, 14.0);
  double bin_w = plot_w / static_cast<double>(bins);
  double plot_h = row_h * static_cast<double>(rows.size());
  double w = left + plot_w + 20, h = top + plot_h + 60;
  o << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << w << "\" height=\"" << h << "\" viewBox=\"0 0 " << w
    << " " << h << "\" shape-rendering=\"crispEdges\" font-family=\"sans-serif\" font-size=\"11\">\n";
  o << "<rect x=\"" << left << "\" y=\"" << top << "\" width=\"" << plot_w << "\" height=\"" << plot_h << "\" fill=\""
    << kPalette[0] << "\"/>\n";
  size_t label_every = std::max<size_t>(1, static_cast<size_t>(std::ceil(12.0 / row_h)));
  for (size_t i = 0; i < rows.size(); ++i) {
    const RankResult& r = *rows[i];
    double y = top + row_h * static_cast<double>(i);
    // Runs of equal colour become one rectangle (a thousand ranks stay a small file).
    size_t b = 0;
    while (b < bins) {
      auto level = [&](size_t k) {
        double f = static_cast<double>(r.bin_busy_ns[k]) / static_cast<double>(a.heat_bin_ns);
        return static_cast<int>(std::lround(std::clamp(f, 0.0, 1.0) * 10));
      };
      int lv = level(b);
      size_t e = b + 1;
      while (e < bins && level(e) == lv)
        ++e;
      if (lv > 0) {
        int64_t t0 = a.heat_start_ns + static_cast<int64_t>(b) * a.heat_bin_ns;
        o << "<rect x=\"" << left + bin_w * static_cast<double>(b) << "\" y=\"" << y << "\" width=\""
          << bin_w * static_cast<double>(e - b) << "\" height=\"" << row_h << "\" fill=\"" << kPalette[lv]
          << "\"><title>rank " << r.rank << ", " << Ms(t0) << "-"
          << Ms(t0 + static_cast<int64_t>(e - b) * a.heat_bin_ns) << " ms: " << lv * 10 << " % busy</title></rect>\n";
      }
      b = e;
    }
    if (i % label_every == 0) {
      o << "<text x=\"" << left - 4 << "\" y=\"" << y + std::min(row_h, 11.0) << "\" text-anchor=\"end\">" << r.rank
        << "</text>\n";
    }
  }
  // Iteration starts.
  if (!a.steps.empty() && a.steps.size() <= 400) {
    int64_t span = a.heat_bin_ns * static_cast<int64_t>(bins);
    for (const StepResult& s : a.steps) {
      double x = left + plot_w * static_cast<double>(s.start_ns - a.heat_start_ns) / static_cast<double>(span);
      if (x < left || x > left + plot_w)
        continue;
      o << "<line x1=\"" << x << "\" y1=\"" << top << "\" x2=\"" << x << "\" y2=\"" << top + plot_h
        << "\" stroke=\"#e0e0e0\" stroke-opacity=\"0.5\" stroke-width=\"0.5\"/>\n";
    }
  }
  // Time axis (ms from the window start) and legend.
  for (int k = 0; k <= 8; ++k) {
    double x = left + plot_w * k / 8.0;
    int64_t t = a.heat_bin_ns * static_cast<int64_t>(bins) * k / 8;
    o << "<line x1=\"" << x << "\" y1=\"" << top + plot_h << "\" x2=\"" << x << "\" y2=\"" << top + plot_h + 4
      << "\" stroke=\"#333\"/><text x=\"" << x << "\" y=\"" << top + plot_h + 16 << "\" text-anchor=\"middle\">"
      << Ms(t) << "</text>\n";
  }
  o << "<text x=\"" << left + plot_w / 2 << "\" y=\"" << top + plot_h + 30
    << "\" text-anchor=\"middle\">ms from the window start (" << Ms(a.heat_start_ns)
    << " ms into the session); rows: ranks</text>\n";
  for (int k = 0; k <= 10; ++k) {
    o << "<rect x=\"" << left + k * 24 << "\" y=\"" << top + plot_h + 38 << "\" width=\"24\" height=\"10\" fill=\""
      << kPalette[k] << "\"/>";
  }
  o << "<text x=\"" << left + 11 * 24 + 6 << "\" y=\"" << top + plot_h + 47
    << "\">GPU busy: 0 % (left) to 100 % (right) of each bin (" << Ms(a.heat_bin_ns) << " ms)</text>\n";
  o << "</svg>\n";
}

void HtmlTable(const stats::Table& t, std::ostream& o, size_t max_rows) {
  o << "<h2>" << Escape(t.title) << " <small>(" << Escape(t.report) << ")</small></h2>\n<table>\n<tr>";
  for (const stats::Column& c : t.columns)
    o << "<th>" << Escape(c.name) << "</th>";
  o << "</tr>\n";
  size_t n = 0;
  for (const auto& row : t.rows) {
    if (n++ == max_rows) {
      o << "<tr><td colspan=\"" << t.columns.size() << "\">... " << t.rows.size() - max_rows
        << " more rows (gtrace analyze --format csv)</td></tr>\n";
      break;
    }
    o << "<tr>";
    for (size_t c = 0; c < row.size(); ++c) {
      o << (t.columns[c].align == stats::Align::kRight ? "<td class=\"n\">" : "<td>") << Escape(row[c].ToString())
        << "</td>";
    }
    o << "</tr>\n";
  }
  o << "</table>\n";
}

}  // namespace

Status WriteHtml(const Analysis& a, const AnalyzeOptions& options, const std::string& path) {
  std::ostringstream o;
  o << "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>gtrace analyze</title>\n<style>\n"
       "body{font-family:sans-serif;margin:24px;color:#222}table{border-collapse:collapse;margin-bottom:18px;"
       "font-size:13px}th,td{border:1px solid #ccc;padding:2px 6px}th{background:#f0f0f0}td.n{text-align:right;"
       "font-variant-numeric:tabular-nums}h2{font-size:16px;margin-top:28px}small{color:#777;font-weight:normal}"
       ".pop{font-size:20px}\n</style></head><body>\n";
  o << "<h1>gtrace analyze</h1>\n<p>";
  for (size_t i = 0; i < options.databases.size() && i < 8; ++i)
    o << (i ? ", " : "") << Escape(options.databases[i]);
  if (options.databases.size() > 8)
    o << " and " << options.databases.size() - 8 << " more";
  o << " &mdash; " << a.ranks.size() << " ranks, " << a.steps.size() << " iterations</p>\n";
  if (a.pop.valid) {
    char b[256];
    std::snprintf(b, sizeof(b),
                  "<p class=\"pop\">Parallel efficiency %.1f %% = load balance %.1f %% &times; communication %.1f %% "
                  "&times; orchestration %.1f %%</p>\n",
                  a.pop.parallel * 100, a.pop.load_balance * 100, a.pop.communication * 100, a.pop.orchestration * 100);
    o << b;
  }
  o << "<h2>GPU utilisation per rank over time</h2>\n";
  Heatmap(a, o);
  for (const stats::Table& t : BuildTables(
           a, {"summary", "stragglers", "collectives", "steps", "step_ranks", "gpu_gaps", "gpu_gap_causes", "ranks"},
           options.top)) {
    HtmlTable(t, o, 2000);
  }
  o << "<p><small>Definitions: docs/multi-rank.md in the gtrace sources. Times are ns of the session (0 = the "
       "earliest stream start).</small></p>\n</body></html>\n";
  std::string temp = path + ".tmp-" + std::to_string(::getpid());
  {
    std::ofstream f(temp, std::ios::binary | std::ios::trunc);
    if (!f)
      return Status::Error("cannot write " + temp + ": " + std::strerror(errno));
    f << o.str();
    if (!f.good())
      return Status::Error("cannot write " + temp);
  }
  if (std::rename(temp.c_str(), path.c_str()) != 0) {
    int err = errno;
    std::remove(temp.c_str());
    return Status::Error("cannot move the report to " + path + ": " + std::strerror(err));
  }
  return Status::Ok();
}

}  // namespace gt::analyze
