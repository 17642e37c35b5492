// The drain side of the per-thread sample slots (NativeStackSlot, PySampleSlot): one
// single-producer/single-consumer ring of entries, each stamped with the perf ring's data_head when
// the sampled thread's SIGPROF handler wrote it. Both slots match an entry to its sample the same
// way, so they share this one function.
//
// Threads: the drain thread only (the single consumer). The producer is the owning thread's signal
// handler, which publishes an entry with a release store of `write`; the release store of `read`
// here hands the skipped entries' room back to it.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace gt::sampling {

// The entry whose sample's record ended at `end_offset`, or nullptr. Entries before it belong to
// samples whose record was lost: they are skipped and their room freed. A later sample's entry stops
// the search and stays. The caller pops a returned entry (read + 1) once it has used it.
template <typename Entry, size_t kEntries>
const Entry* TakeSlotEntry(std::atomic<uint64_t>* read,
                           const std::atomic<uint64_t>& write,
                           const Entry (&entries)[kEntries],
                           uint64_t end_offset) {
  uint64_t r = read->load(std::memory_order_relaxed);
  uint64_t w = write.load(std::memory_order_acquire);
  const Entry* found = nullptr;
  for (; r != w; ++r) {
    const Entry& e = entries[r % kEntries];
    if (e.data_head == end_offset) {
      found = &e;
      break;
    }
    if (e.data_head > end_offset)
      break;  // a later sample's entry
  }
  read->store(r, std::memory_order_release);  // entries before it had no sample: free their room
  return found;
}

}  // namespace gt::sampling
