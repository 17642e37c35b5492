// EndQueue: the ends of slices that have begun and not yet ended, so a writer can put records in
// time order while it reads events in start order. Holds only what is open at a time (bounded by
// the trace's concurrency, not its length). Ends at equal times come out last-scheduled first, so
// nested slices close inner first.
//
// Used by one thread; owns its items.
#pragma once

#include <cstdint>
#include <queue>
#include <vector>

namespace gt::viewers {

template <typename T>
class EndQueue {
 public:
  void Push(int64_t time_ns, T item) { heap_.push(Entry{time_ns, next_seq_++, std::move(item)}); }

  // Calls fn(time_ns, item) for every end at or before `time_ns`, in time order.
  template <typename F>
  void PopThrough(int64_t time_ns, F&& fn) {
    while (!heap_.empty() && heap_.top().time_ns <= time_ns)
      PopOne(fn);
  }
  template <typename F>
  void PopAll(F&& fn) {
    while (!heap_.empty())
      PopOne(fn);
  }
  size_t size() const { return heap_.size(); }

 private:
  struct Entry {
    int64_t time_ns;
    uint64_t seq;
    T item;
  };
  struct Later {
    bool operator()(const Entry& a, const Entry& b) const {
      if (a.time_ns != b.time_ns)
        return a.time_ns > b.time_ns;
      return a.seq < b.seq;  // equal times: the later-scheduled end first
    }
  };
  template <typename F>
  void PopOne(F& fn) {
    Entry e = std::move(const_cast<Entry&>(heap_.top()));
    heap_.pop();
    fn(e.time_ns, e.item);
  }

  std::priority_queue<Entry, std::vector<Entry>, Later> heap_;
  uint64_t next_seq_ = 0;
};

}  // namespace gt::viewers
