// StringInterner: text -> stream string id, owned by the drain thread. Ids are never reused within
// a stream. Memory is bounded: past the cap the table forgets everything and starts over with new
// ids (strings seen again are re-sent), so a program that names every range differently costs
// stream bytes, not unbounded profiler memory.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>

namespace gt {

class StringInterner {
 public:
  explicit StringInterner(size_t max_bytes = 32u << 20) : max_bytes_(max_bytes) {}

  // Returns the id of `text`; *is_new is true when the caller must emit its definition.
  uint64_t Intern(std::string_view text, bool* is_new);
  void Reset() {
    map_.clear();
    bytes_ = 0;
    ++resets_;  // callers that cache ids see the reset
  }
  size_t size() const { return map_.size(); }
  uint64_t resets() const { return resets_; }

 private:
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>()(s); }
  };
  std::unordered_map<std::string, uint64_t, Hash, std::equal_to<>> map_;
  size_t max_bytes_;
  size_t bytes_ = 0;
  uint64_t next_id_ = 1;
  uint64_t resets_ = 0;
};

}  // namespace gt
