#include "collector/string_interner.h"

namespace gt {

uint64_t StringInterner::Intern(std::string_view text, bool* is_new) {
  auto it = map_.find(text);
  if (it != map_.end()) {
    *is_new = false;
    return it->second;
  }
  size_t cost = text.size() + 64;  // rough per-entry overhead of the node
  if (bytes_ + cost > max_bytes_) {
    map_.clear();
    bytes_ = 0;
    ++resets_;
  }
  uint64_t id = next_id_++;
  map_.emplace(std::string(text), id);
  bytes_ += cost;
  *is_new = true;
  return id;
}

}  // namespace gt
