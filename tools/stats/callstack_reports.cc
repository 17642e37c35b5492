// cuda_api_callers (gtrace's own report; nsys has none like it): the slowest CUDA API call sites,
// aggregated by call stack. Source: the backtraced calls, i.e. CUPTI_ACTIVITY_KIND_RUNTIME rows with
// eventClass 67 and their CUDA_CALLCHAINS (written by `gtrace export` for --cudabacktrace, and by
// nsys for its own --cudabacktrace). Rows group calls of the same API with the same stack, compared
// by frame text (function, file:line, module), so equal call sites of different processes (and
// different load addresses) are one row. Durations are those of the backtraced rows.
//
// Columns: Time (%) (share of the listed calls' total), Total Time, Num Calls, Avg, Med, Max, Name (the
// API, version suffix stripped), Caller (the innermost frame outside the CUDA libraries and the
// profilers: libcuda, libcudart, libcupti, libgtrace; frame 0 when every frame is inside them), Python
// Caller (the innermost Python frame, "FUNCTION at FILE:LINE", recorded with --python-backtrace=cuda;
// a Python frame is a row whose module is a .py file or whose originalIP is NULL; empty when the
// stack has none), Stack (every frame, innermost first, separated by " <- ").
#include <map>
#include <tuple>

#include "tools/stats/reports.h"
#include "tools/stats/statistics.h"

namespace gt::stats {
namespace {

bool InsideCudaOrProfiler(const std::string& module) {
  size_t slash = module.rfind('/');
  std::string base = slash == std::string::npos ? module : module.substr(slash + 1);
  for (const char* prefix : {"libcuda.so", "libcudart.so", "libcupti.so", "libgtrace.so", "libcudart_static"}) {
    if (base.rfind(prefix, 0) == 0)
      return true;
  }
  return false;
}

}  // namespace

gt::Status BuildCudaApiCallers(Database& db, Table* table) {
  if (!db.HasTable(kRuntimeTable))
    return MissingTable(db, *table, kRuntimeTable, "was CUDA traced?");
  if (!db.HasTable("CUDA_CALLCHAINS")) {
    return MissingTable(db, *table, "CUDA_CALLCHAINS", "record with --cudabacktrace (e.g. --cudabacktrace=all)");
  }
  // Frames of every chain, in depth order.
  struct FrameText {
    std::string symbol, module;
    bool python;
  };
  std::map<int64_t, std::vector<FrameText>> chains;  // id -> frames
  Statement frames;
  gt::Status status = db.Prepare(
      "SELECT c.id, coalesce(s.value, ''), coalesce(m.value, ''), c.originalIP IS NULL FROM CUDA_CALLCHAINS AS c "
      "LEFT JOIN StringIds AS s ON s.id = c.symbol LEFT JOIN StringIds AS m ON m.id = c.module "
      "ORDER BY c.id, c.stackDepth",
      &frames);
  if (!status.ok())
    return status;
  for (;;) {
    bool has_row = false;
    if (!(status = frames.Step(&has_row)).ok())
      return status;
    if (!has_row)
      break;
    std::string module = frames.Text(2);
    bool python = frames.Int(3) != 0 || (module.size() > 3 && module.compare(module.size() - 3, 3, ".py") == 0);
    chains[frames.Int(0)].push_back({frames.Text(1), module, python});
  }
  Statement calls;
  status = db.Prepare(
      "SELECT coalesce(s.value, ''), r.\"end\" - r.start, r.callchainId FROM CUPTI_ACTIVITY_KIND_RUNTIME AS r "
      "LEFT JOIN StringIds AS s ON s.id = r.nameId WHERE r.eventClass = 67 AND r.callchainId IS NOT NULL",
      &calls);
  if (!status.ok())
    return status;
  // (name, caller, python caller, stack) -> durations
  std::map<std::tuple<std::string, std::string, std::string, std::string>, std::vector<int64_t>> groups;
  std::map<int64_t, std::tuple<std::string, std::string, std::string>> text_of_chain;  // id -> (caller, python, stack)
  int64_t grand_total = 0;
  for (;;) {
    bool has_row = false;
    if (!(status = calls.Step(&has_row)).ok())
      return status;
    if (!has_row)
      break;
    int64_t chain = calls.Int(2);
    auto t = text_of_chain.find(chain);
    if (t == text_of_chain.end()) {
      std::string caller, python_caller, stack;
      const auto& f = chains[chain];
      for (const FrameText& frame : f) {
        stack += (stack.empty() ? "" : " <- ") + frame.symbol;
        if (caller.empty() && !InsideCudaOrProfiler(frame.module))
          caller = frame.symbol;
        if (python_caller.empty() && frame.python)
          python_caller = frame.symbol;
      }
      if (caller.empty() && !f.empty())
        caller = f.front().symbol;
      t = text_of_chain.emplace(chain, std::make_tuple(caller, python_caller, stack)).first;
    }
    const auto& [caller, python_caller, stack] = t->second;
    groups[{StripApiVersionSuffix(calls.Text(0)), caller, python_caller, stack}].push_back(calls.Int(1));
    grand_total += calls.Int(1);
  }
  table->columns = {NumberColumn("Time (%)"),    NumberColumn("Total Time (ns)"),
                    NumberColumn("Num Calls"),   NumberColumn("Avg (ns)"),
                    NumberColumn("Med (ns)"),    NumberColumn("Max (ns)"),
                    TextColumn("Name"),          TextColumn("Caller"),
                    TextColumn("Python Caller"), TextColumn("Stack")};
  for (const auto& [key, summary] : SortedSummaries(&groups)) {
    table->rows.push_back({Percent(summary.total, grand_total), Cell::Int(summary.total), Cell::Int(summary.count),
                           summary.avg, summary.median, Cell::Int(summary.max), Cell::Text(std::get<0>(key)),
                           Cell::Text(std::get<1>(key)), Cell::Text(std::get<2>(key)), Cell::Text(std::get<3>(key))});
  }
  return gt::Status::Ok();
}

}  // namespace gt::stats
