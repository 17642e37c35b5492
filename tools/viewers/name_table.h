// NameTable: dense ids for names (Perfetto interning ids, Paraver event values). Bounded: after
// `capacity` distinct names, Lookup stops adding and returns 0, and the caller writes the name
// inline (Perfetto) or uses a catch-all value (Paraver). NVTX messages may be unique per event
// ("step 1234"), so an unbounded table would grow with the trace.
//
// Used by one thread; owns its strings.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace gt::viewers {

class NameTable {
 public:
  explicit NameTable(size_t capacity = 1 << 20) : capacity_(capacity) {}

  // The id of `name` (from 1); *added is true the first time. 0 when the table is full.
  uint64_t Lookup(std::string_view name, bool* added) {
    *added = false;
    auto it = ids_.find(std::string(name));
    if (it != ids_.end()) return it->second;
    if (names_.size() >= capacity_) return 0;
    names_.emplace_back(name);
    uint64_t id = names_.size();
    ids_.emplace(names_.back(), id);
    *added = true;
    return id;
  }
  const std::vector<std::string>& names() const { return names_; }  // names()[id - 1]
  bool full() const { return names_.size() >= capacity_; }

 private:
  size_t capacity_;
  std::unordered_map<std::string, uint64_t> ids_;
  std::vector<std::string> names_;
};

}  // namespace gt::viewers
