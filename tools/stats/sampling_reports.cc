// CPU-sampling reports (gtrace's own: nsys shows these views in its GUI, its `nsys stats` has no
// report for them). Both read COMPOSITE_EVENTS ⨝ SAMPLING_CALLCHAINS of any nsys-schema file (gtrace's
// or nsys's own), all threads together, one sample at a time (memory: one entry per function, or per
// call path for the top-down tree — never per sample).
//
// A frame's function is its SAMPLING_CALLCHAINS symbol without gtrace's " at FILE:LINE" suffix, so the
// lines of one function are one row. A function that appears twice in one stack (recursion) counts
// once in that sample's total.
//
// cpu_samples_bottomup ("CPU Samples Bottom-Up"): one row per function, by self samples:
//   Self (%), Self Samples (samples whose innermost frame is the function), Total (%), Total Samples
//   (samples with the function anywhere on the stack), Function, Module.
// cpu_samples_topdown ("CPU Samples Top-Down"): the call tree from the outermost frame, depth first,
//   children by total samples; Total (%), Total Samples, Self Samples, Function (indented two spaces
//   per level), Module. Nodes under 0.5 % of all samples are left out (with their subtrees).
#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "tools/stats/reports.h"
#include "tools/stats/statistics.h"

namespace gt::stats {
namespace {

constexpr double kTopDownMinShare = 0.005;

std::string FunctionOf(std::string symbol) {
  size_t at = symbol.rfind(" at ");
  if (at != std::string::npos && symbol.find(':', at) != std::string::npos)
    symbol.resize(at);
  return symbol;
}

struct Frame {
  std::string function;
  std::string module;
  // Functions are told apart by name and module: Python's `main`, `<module>` or `__init__` of
  // different files (--python-sampling), or static C functions of different libraries, are not one.
  std::string Key() const { return function + '\0' + module; }
};

// Calls fn(frames) for each sample's stack, innermost first. Errors: a missing table.
template <typename Fn>
gt::Status ForEachSample(Database& db, const Table& table, int64_t* samples, Fn&& fn) {
  if (!db.HasTable("COMPOSITE_EVENTS") || !db.HasTable("SAMPLING_CALLCHAINS"))
    return MissingTable(db, table, "COMPOSITE_EVENTS", "was the run sampled (--sample=process-tree)?");
  Statement count;
  gt::Status status = db.Prepare("SELECT count(*) FROM COMPOSITE_EVENTS", &count);
  if (!status.ok())
    return status;
  bool has_row = false;
  if (!(status = count.Step(&has_row)).ok())
    return status;
  *samples = has_row ? count.Int(0) : 0;
  Statement statement;
  status = db.Prepare(
      "SELECT c.id, s.value, m.value FROM SAMPLING_CALLCHAINS AS c "
      "LEFT JOIN StringIds AS s ON s.id = c.symbol LEFT JOIN StringIds AS m ON m.id = c.module "
      "ORDER BY c.id, c.stackDepth",
      &statement);
  if (!status.ok())
    return status;
  std::vector<Frame> stack;
  int64_t current = -1;
  while ((status = statement.Step(&has_row)).ok() && has_row) {
    int64_t id = statement.Int(0);
    if (id != current && !stack.empty()) {
      fn(stack);
      stack.clear();
    }
    current = id;
    stack.push_back({FunctionOf(statement.IsNull(1) ? "[unknown]" : std::string(statement.Text(1))),
                     statement.IsNull(2) ? std::string() : std::string(statement.Text(2))});
  }
  if (!status.ok())
    return status;
  if (!stack.empty())
    fn(stack);
  return gt::Status::Ok();
}

struct Node {
  std::string module;
  int64_t total = 0, self = 0;
  std::map<std::string, std::unique_ptr<Node>> children;
};

void AddRows(const Node& node, const std::string& name, int depth, int64_t samples, Table* table) {
  if (depth >= 0) {
    table->rows.push_back({Percent(node.total, samples), Cell::Int(node.total), Cell::Int(node.self),
                           Cell::Text(std::string(static_cast<size_t>(depth) * 2, ' ') + name),
                           Cell::Text(node.module)});
  }
  std::vector<std::pair<const std::string*, const Node*>> kids;
  for (const auto& [n, child] : node.children) {
    if (static_cast<double>(child->total) >= kTopDownMinShare * static_cast<double>(samples))
      kids.push_back({&n, child.get()});
  }
  std::stable_sort(kids.begin(), kids.end(),
                   [](const auto& a, const auto& b) { return a.second->total > b.second->total; });
  for (const auto& [n, child] : kids)
    AddRows(*child, n->substr(0, n->find('\0')), depth + 1, samples, table);
}

}  // namespace

gt::Status BuildCpuSamplesBottomUp(Database& db, Table* table) {
  struct Entry {
    std::string module;
    int64_t self = 0, total = 0;
  };
  std::map<std::string, Entry> functions;  // by Frame::Key()
  int64_t samples = 0;
  std::set<std::string> seen;
  gt::Status status = ForEachSample(db, *table, &samples, [&](const std::vector<Frame>& stack) {
    Entry& leaf = functions[stack.front().Key()];
    leaf.module = stack.front().module;
    ++leaf.self;
    seen.clear();
    for (const Frame& f : stack) {
      std::string key = f.Key();
      if (!seen.insert(key).second)
        continue;
      Entry& e = functions[key];
      e.module = f.module;
      ++e.total;
    }
  });
  if (!status.ok())
    return status;
  table->columns = {NumberColumn("Self (%)"),      NumberColumn("Self Samples"), NumberColumn("Total (%)"),
                    NumberColumn("Total Samples"), TextColumn("Function"),       TextColumn("Module")};
  std::vector<std::pair<const std::string*, const Entry*>> rows;
  for (const auto& [name, e] : functions)
    rows.push_back({&name, &e});
  std::stable_sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) {
    if (a.second->self != b.second->self)
      return a.second->self > b.second->self;
    return a.second->total > b.second->total;
  });
  for (const auto& [key, e] : rows) {
    table->rows.push_back({Percent(e->self, samples), Cell::Int(e->self), Percent(e->total, samples),
                           Cell::Int(e->total), Cell::Text(key->substr(0, key->find('\0'))), Cell::Text(e->module)});
  }
  return gt::Status::Ok();
}

gt::Status BuildCpuSamplesTopDown(Database& db, Table* table) {
  Node root;
  int64_t samples = 0;
  gt::Status status = ForEachSample(db, *table, &samples, [&](const std::vector<Frame>& stack) {
    Node* node = &root;
    ++root.total;
    for (auto it = stack.rbegin(); it != stack.rend(); ++it) {  // outermost frame first
      std::unique_ptr<Node>& child = node->children[it->Key()];
      if (!child) {
        child = std::make_unique<Node>();
        child->module = it->module;
      }
      node = child.get();
      ++node->total;
    }
    ++node->self;
  });
  if (!status.ok())
    return status;
  table->columns = {NumberColumn("Total (%)"), NumberColumn("Total Samples"), NumberColumn("Self Samples"),
                    TextColumn("Function"), TextColumn("Module")};
  AddRows(root, "", -1, samples, table);
  return gt::Status::Ok();
}

}  // namespace gt::stats
