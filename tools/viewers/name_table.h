// NameTable: dense ids for names (Perfetto interning ids, Paraver event values). Bounded: after
// `capacity` distinct names or `capacity_bytes` of text, Lookup stops adding and returns 0, and the
// caller writes the name inline (Perfetto) or uses a catch-all value (Paraver). NVTX messages may
// be unique per event ("step 1234"), so an unbounded table would grow with the trace.
//
// Used by one thread; owns its strings.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace gt::viewers {

class NameTable {
 public:
  explicit NameTable(size_t capacity = 1 << 16, size_t capacity_bytes = 16 << 20)
      : capacity_(capacity), capacity_bytes_(capacity_bytes) {}

  // The id of `name` (from 1); *added is true the first time. 0 when the table is full.
  uint64_t Lookup(std::string_view name, bool* added) {
    *added = false;
    auto it = ids_.find(name);  // heterogeneous: no string built per lookup
    if (it != ids_.end())
      return it->second;
    if (full() || bytes_ + name.size() > capacity_bytes_)
      return 0;
    bytes_ += name.size();
    names_.emplace_back(name);
    uint64_t id = names_.size();
    ids_.emplace(names_.back(), id);
    *added = true;
    return id;
  }
  const std::vector<std::string>& names() const { return names_; }  // names()[id - 1]
  bool full() const { return names_.size() >= capacity_ || bytes_ >= capacity_bytes_; }

 private:
  size_t capacity_, capacity_bytes_;
  size_t bytes_ = 0;
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  std::unordered_map<std::string, uint64_t, Hash, std::equal_to<>> ids_;
  std::vector<std::string> names_;
};

}  // namespace gt::viewers
