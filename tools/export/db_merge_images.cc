#include "tools/export/db_merge_images.h"

#include <algorithm>
#include <climits>
#include <map>
#include <tuple>

namespace gt::exporter::merge {

Status CheckExecImages(std::vector<Source>* sources, const std::vector<std::string>& input_names,
                       bool* exec_images) {
  std::vector<Source>& src = *sources;
  *exec_images = false;
  // Inputs by the names the user gave (the stream files, not the parts ExportMany converted them to).
  auto name = [&](size_t i) { return i < input_names.size() ? input_names[i] : src[i].path; };
  std::map<std::tuple<std::string, std::string, int64_t>, std::vector<std::pair<const Proc*, size_t>>> by_pid;
  for (size_t i = 0; i < src.size(); ++i) {
    for (const Proc& p : src[i].procs)
      by_pid[{p.host, p.boot, p.pid}].emplace_back(&p, i);
  }
  for (auto& [key, list] : by_pid) {
    if (list.size() < 2)
      continue;
    std::stable_sort(list.begin(), list.end(),
                     [](const auto& a, const auto& b) { return a.first->start_mono < b.first->start_mono; });
    for (size_t k = 1; k < list.size(); ++k) {
      const Proc& a = *list[k - 1].first;
      const Proc& b = *list[k].first;
      std::string head = name(list[k].second) + ": process " + std::to_string(b.pid) + " of host " + b.host +
                         " is in another input too (" + name(list[k - 1].second) + "): ";
      if (a.start_mono == b.start_mono)
        return Status::Error(head + "the same stream twice (both start at the same time)");
      if (a.end_reason != "exec") {
        return Status::Error(head + "the earlier stream ended by " +
                             (a.end_reason.empty() ? std::string("an unknown reason") : a.end_reason) +
                             ", not exec, so the two cannot be images of one process");
      }
      if (!a.end_mono.has_value() || *a.end_mono > b.start_mono) {
        return Status::Error(head + "the two streams overlap in time (the earlier one ended by exec at " +
                             (a.end_mono.has_value() ? std::to_string(*a.end_mono) : std::string("?")) +
                             " ns, after the later one started at " + std::to_string(b.start_mono) + " ns)");
      }
      *exec_images = true;
    }
  }
  if (*exec_images) {
    auto first_start = [](const Source& s) {
      int64_t t = INT64_MAX;
      for (const Proc& p : s.procs)
        t = std::min(t, p.start_mono);
      return t;
    };
    std::stable_sort(src.begin(), src.end(),
                     [&](const Source& a, const Source& b) { return first_start(a) < first_start(b); });
  }
  return Status::Ok();
}

}  // namespace gt::exporter::merge
