// The analysis as tables (gt::stats' printers: table, CSV, JSON).
#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <ostream>
#include <sstream>

#include "tools/analyze/analysis.h"
#include "tools/analyze/report_tables.h"
#include "tools/stats/table.h"

namespace gt::analyze {
namespace {

using stats::Cell;
using stats::Column;
using stats::Table;

Column Num(const char* n) {
  return Column{n, stats::Align::kRight};
}
Column Txt(const char* n) {
  return Column{n, stats::Align::kLeft};
}
Cell Pct(double fraction) {
  return Cell::Fixed(std::llround(fraction * 10000.0), 2);
}
Cell PctOf(int64_t part, int64_t whole) {
  return whole > 0 ? Pct(static_cast<double>(part) / static_cast<double>(whole)) : Cell::Null();
}
std::string Hex(uint64_t v) {
  char b[24];
  std::snprintf(b, sizeof(b), "0x%016" PRIx64, v);
  return b;
}
std::string HostOf(const Analysis& a, int32_t rank) {
  for (const RankResult& r : a.ranks) {
    if (r.rank == rank)
      return r.host;
  }
  return "";
}

Table Summary(const Analysis& a) {
  Table t{"summary", "Multi-Rank Efficiency (POP model)", {Txt("Metric"), Num("Value"), Txt("Definition")}, {}};
  const PopResult& p = a.pop;
  auto row = [&](const char* m, Cell v, const std::string& d) {
    t.rows.push_back({Cell::Text(m), v, Cell::Text(d)});
  };
  auto pct = [&](double x) { return p.valid ? Pct(x) : Cell::Null(); };
  row("Parallel efficiency (%)", pct(p.parallel), "LB x CE x OE = mean(compute) / window");
  row("  Load balance (%)", pct(p.load_balance), "mean(compute) / max(compute) over ranks");
  row("  Communication efficiency (%)", pct(p.communication), "max(compute) / mean(GPU busy)");
  row("  Orchestration efficiency (%)", pct(p.orchestration), "mean(GPU busy) / window: GPU idle = host gave no work");
  row("Communication overlapped (%)", pct(p.overlap), "NCCL kernel time during computation / NCCL kernel time");
  row("Ranks", Cell::Int(p.ranks), "with GPU activity, of " + std::to_string(a.ranks.size()));
  row("Window (ns)", Cell::Int(p.window_ns),
      "from " + std::to_string(p.window_start_ns) + " ns: the analysed iterations of all ranks");
  row("Iterations", Cell::Int(static_cast<int64_t>(a.steps.size())), a.step_source);
  row("Collective entry", Cell::Null(),
      a.entry_source.empty()    ? "-"
      : a.entry_source == "gpu" ? "a rank enters a collective when its NCCL kernel starts (GPU)"
                                : "a rank enters a collective when it calls NCCL (host)");
  for (const std::string& n : a.notes) row("Note", Cell::Null(), n);
  return t;
}

Table Steps(const Analysis& a) {
  Table t{"steps",
          "Iterations Across Ranks",
          {Num("Step"), Num("Start (ns)"), Num("Ranks"), Num("Min (ns)"), Num("Med (ns)"), Num("Max (ns)"),
           Num("Spread (ns)"), Num("Spread (%)"), Num("Slowest Rank"), Num("Slowest Work (ns)"), Num("Med Work (ns)")},
          {}};
  for (const StepResult& s : a.steps) {
    t.rows.push_back({Cell::Int(s.index), Cell::Int(s.start_ns), Cell::Int(s.ranks), Cell::Int(s.min_ns),
                      Cell::Int(s.median_ns), Cell::Int(s.max_ns), Cell::Int(s.max_ns - s.min_ns),
                      PctOf(s.max_ns - s.min_ns, s.median_ns), Cell::Int(s.slowest_rank), Cell::Int(s.slowest_work_ns),
                      Cell::Int(s.median_work_ns)});
  }
  return t;
}

Table StepRanks(const Analysis& a) {
  Table t{"step_ranks",
          "Iterations per Rank",
          {Num("Rank"), Txt("Host"), Num("Steps"), Num("Avg Step (ns)"), Num("Avg Work (ns)"), Num("Avg Wait (ns)"),
           Num("Times Slowest")},
          {}};
  for (const RankResult& r : a.ranks) {
    if (r.steps == 0)
      continue;
    int64_t n = r.steps;
    t.rows.push_back({Cell::Int(r.rank), Cell::Text(r.host), Cell::Int(n), Cell::Int(r.step_total_ns / n),
                      Cell::Int((r.step_total_ns - r.wait_total_ns) / n), Cell::Int(r.wait_total_ns / n),
                      Cell::Int(r.times_slowest)});
  }
  return t;
}

Table Stragglers(const Analysis& a, uint32_t top) {
  Table t{"stragglers",
          "Ranks by Time They Made Others Wait",
          {Num("Rank"), Txt("Host"), Num("Times Last"), Num("Collectives"), Num("Wait Caused (ns)"), Num("Share (%)"),
           Num("Own Wait (ns)")},
          {}};
  std::vector<const RankResult*> v;
  int64_t total = 0;
  for (const RankResult& r : a.ranks) {
    if (r.collectives == 0)
      continue;
    v.push_back(&r);
    total += r.wait_caused_ns;
  }
  std::stable_sort(v.begin(), v.end(), [](const RankResult* x, const RankResult* y) {
    return x->wait_caused_ns != y->wait_caused_ns ? x->wait_caused_ns > y->wait_caused_ns : x->rank < y->rank;
  });
  if (top > 0 && v.size() > top)
    v.resize(top);
  for (const RankResult* r : v) {
    t.rows.push_back({Cell::Int(r->rank), Cell::Text(r->host), Cell::Int(static_cast<int64_t>(r->times_last)),
                      Cell::Int(static_cast<int64_t>(r->collectives)), Cell::Int(r->wait_caused_ns),
                      PctOf(r->wait_caused_ns, total), Cell::Int(r->waited_ns)});
  }
  return t;
}

Table Collectives(const Analysis& a, uint32_t top) {
  Table t{"collectives",
          "Collective Instances by Waiting",
          {Txt("Communicator"), Txt("Func"), Num("Seq"), Num("Ranks"), Num("First Entry (ns)"), Num("First Rank"),
           Num("Last Entry (ns)"), Num("Last Rank"), Num("Skew (ns)"), Num("Total Wait (ns)")},
          {}};
  std::vector<const InstanceResult*> v;
  for (const InstanceResult& i : a.instances)
    v.push_back(&i);
  std::stable_sort(v.begin(), v.end(), [](const InstanceResult* x, const InstanceResult* y) {
    return x->total_wait_ns > y->total_wait_ns;
  });
  if (top > 0 && v.size() > top)
    v.resize(top);
  for (const InstanceResult* i : v) {
    t.rows.push_back({Cell::Text(Hex(i->comm_id)), Cell::Text(i->func), Cell::Int(static_cast<int64_t>(i->seq)),
                      Cell::Int(i->ranks), Cell::Int(i->first_entry_ns), Cell::Int(i->first_rank),
                      Cell::Int(i->last_entry_ns), Cell::Int(i->last_rank),
                      Cell::Int(i->last_entry_ns - i->first_entry_ns), Cell::Int(i->total_wait_ns)});
  }
  return t;
}

Table Entries(const Analysis& a) {
  Table t{"entries",
          "Collective Entries per Rank",
          {Txt("Communicator"), Txt("Func"), Num("Seq"), Num("Rank"), Num("Entry (ns)"), Num("Wait (ns)")},
          {}};
  for (const Entry& e : a.entries) {
    const InstanceResult& i = a.instances[e.instance];
    t.rows.push_back({Cell::Text(Hex(i.comm_id)), Cell::Text(i.func), Cell::Int(static_cast<int64_t>(i.seq)),
                      Cell::Int(e.rank), Cell::Int(e.entry_ns), Cell::Int(e.wait_ns)});
  }
  return t;
}

Table Gaps(const Analysis& a) {
  Table t{"gpu_gaps", "Longest GPU Idle Gaps", {Num("Rank"), Txt("Host"), Num("Start (ns)"), Num("Duration (ns)")}, {}};
  for (const GapResult& g : a.top_gaps) {
    t.rows.push_back(
        {Cell::Int(g.rank), Cell::Text(HostOf(a, g.rank)), Cell::Int(g.start_ns), Cell::Int(g.duration_ns)});
  }
  return t;
}

// One row per cause (OS calls by time in the gap, then sampled frames by count) of each attributed
// gap, longest gap first, `top` gaps; a gap without any cause gets one row saying why.
Table GapCausesTable(const Analysis& a, uint32_t top) {
  Table t{"gpu_gap_causes",
          "What the Launching Thread Did in GPU Idle Gaps",
          {Num("Rank"), Num("Gap Start (ns)"), Num("Gap (ns)"), Num("TID"), Txt("Launch"), Txt("GPU Work"),
           Txt("Source"), Txt("Name"), Num("Start (ns)"), Num("Duration (ns)"), Num("In Gap (ns)"), Num("In Gap (%)"),
           Num("Samples"), Txt("Caller")},
          {}};
  size_t n = top > 0 ? std::min<size_t>(top, a.gap_causes.size()) : a.gap_causes.size();
  for (size_t i = 0; i < n; ++i) {
    const GapCauses& g = a.gap_causes[i];
    auto head = [&]() {
      return std::vector<Cell>{Cell::Int(g.rank), Cell::Int(g.start_ns), Cell::Int(g.duration_ns),
                               g.launch_tid != 0 ? Cell::Int(g.launch_tid & 0xFFFFFF) : Cell::Null(),
                               Cell::Text(g.launch_api), Cell::Text(g.gpu_work)};
    };
    if (g.causes.empty()) {
      std::vector<Cell> row = head();
      const char* why = g.gpu_work.empty()     ? "GPU work after the gap not found"
                        : g.launch_tid == 0    ? "launching API call not found"
                        : g.samples_in_gap > 0 ? "samples without call stacks"
                                               : "no OS runtime call or CPU sample in the gap";
      row.insert(row.end(), {Cell::Text("none"), Cell::Text(why), Cell::Null(), Cell::Null(), Cell::Null(),
                             Cell::Null(), Cell::Null(), Cell::Text("")});
      t.rows.push_back(std::move(row));
      continue;
    }
    for (const GapCause& c : g.causes) {
      std::vector<Cell> row = head();
      if (c.source == GapCause::Source::kOsCall) {
        row.insert(row.end(), {Cell::Text("osrt"), Cell::Text(c.name), Cell::Int(c.start_ns), Cell::Int(c.duration_ns),
                               Cell::Int(c.in_gap_ns), PctOf(c.in_gap_ns, g.duration_ns), Cell::Null(),
                               Cell::Text(c.caller)});
      } else {
        row.insert(row.end(), {Cell::Text("sample"), Cell::Text(c.name), Cell::Null(), Cell::Null(), Cell::Null(),
                               PctOf(c.samples, g.samples_in_gap), Cell::Int(c.samples), Cell::Text("")});
      }
      t.rows.push_back(std::move(row));
    }
  }
  return t;
}

Table Ranks(const Analysis& a) {
  Table t{"ranks",
          "GPU Time per Rank in the Window",
          {Num("Rank"), Txt("Host"), Num("Busy (%)"), Num("Compute (%)"), Num("NCCL (%)"), Num("Overlap (%)"),
           Num("Idle (%)"), Num("Gaps"), Num("Gap Time (ns)"), Num("Largest Gap (ns)"), Num("Largest Gap At (ns)")},
          {}};
  int64_t w = a.pop.window_ns;
  for (const RankResult& r : a.ranks) {
    if (!r.has_gpu) {
      t.rows.push_back({Cell::Int(r.rank), Cell::Text(r.host), Cell::Null(), Cell::Null(), Cell::Null(), Cell::Null(),
                        Cell::Null(), Cell::Null(), Cell::Null(), Cell::Null(), Cell::Null()});
      continue;
    }
    t.rows.push_back({Cell::Int(r.rank), Cell::Text(r.host), PctOf(r.busy_ns, w), PctOf(r.compute_ns, w),
                      PctOf(r.comm_ns, w), PctOf(r.overlap_ns, r.comm_ns), PctOf(r.idle_ns, w),
                      Cell::Int(static_cast<int64_t>(r.gaps)), Cell::Int(r.gap_ns), Cell::Int(r.largest_gap_ns),
                      Cell::Int(r.largest_gap_start_ns)});
  }
  return t;
}

}  // namespace

std::vector<std::string> ReportNames() {
  return {"summary", "steps", "step_ranks", "stragglers", "collectives", "gpu_gaps", "gpu_gap_causes", "ranks",
          "entries"};
}

std::vector<stats::Table> BuildTables(const Analysis& a, const std::vector<std::string>& reports, uint32_t top) {
  std::vector<stats::Table> out;
  for (const std::string& r : reports) {
    if (r == "summary")
      out.push_back(Summary(a));
    if (r == "steps")
      out.push_back(Steps(a));
    if (r == "step_ranks")
      out.push_back(StepRanks(a));
    if (r == "stragglers")
      out.push_back(Stragglers(a, top));
    if (r == "collectives")
      out.push_back(Collectives(a, top));
    if (r == "entries")
      out.push_back(Entries(a));
    if (r == "gpu_gaps")
      out.push_back(Gaps(a));
    if (r == "gpu_gap_causes")
      out.push_back(GapCausesTable(a, top));
    if (r == "ranks")
      out.push_back(Ranks(a));
  }
  return out;
}

Status WriteReports(const Analysis& a,
                    const std::vector<std::string>& reports_in,
                    Format format,
                    uint32_t top,
                    std::ostream& out) {
  std::vector<std::string> reports = reports_in;
  std::vector<std::string> known = ReportNames();
  if (reports.empty()) {
    // All but entries and gpu_gap_causes (asked for by name: the Parquet engines, whose output must
    // equal this default, do not have it).
    for (const std::string& r : known) {
      if (r != "entries" && r != "gpu_gap_causes")
        reports.push_back(r);
    }
  }
  for (const std::string& r : reports) {
    if (std::find(known.begin(), known.end(), r) == known.end()) {
      std::string list;
      for (const std::string& k : known)
        list += (list.empty() ? "" : ", ") + k;
      return Status::Error("unknown report '" + r + "' (known: " + list + ")");
    }
  }
  std::vector<stats::Table> tables = BuildTables(a, reports, top);
  std::ostringstream s;
  if (format == Format::kJson) {
    s << "{\n";
    for (size_t i = 0; i < tables.size(); ++i) {
      s << stats::JsonString(tables[i].report) << ": ";
      stats::WriteTable(tables[i], stats::Format::kJson, s);
      if (i + 1 < tables.size())
        s << ",\n";
    }
    s << "}\n";
  } else {
    for (size_t i = 0; i < tables.size(); ++i) {
      if (format == Format::kCsv) {
        if (tables.size() > 1)
          s << (i > 0 ? "\n" : "") << "# " << tables[i].title << " (" << tables[i].report << ")\n";
        stats::WriteTable(tables[i], stats::Format::kCsv, s);
      } else {
        stats::WriteTable(tables[i], stats::Format::kTable, s);
      }
    }
  }
  out << s.str();
  return Status::Ok();
}

}  // namespace gt::analyze
