// ThreadNameRegistry: OS names of threads noted while they were alive, for threads the drain thread
// learns about only later (they appear only in CUPTI activity records, which arrive up to a flush
// interval after the calls) and that may have exited by then, when /proc no longer has their name.
// A fixed table of kMaxThreads entries: noting is lock-free and allocation-free; when the table is
// full, further threads are not noted (they fall back to "thread <tid>" in the export, as before).
//
// Threads: Note from any application thread (a slow path: CUPTI's per-thread buffer request);
// Find from the drain thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace gt {

inline constexpr size_t kMaxNotedThreads = 4096;

// The calling thread's tid and current OS name (one prctl). Noted again only if it changed.
void NoteCurrentThreadName();
// The last name noted for `tid` ("" when none).
std::string NotedThreadName(uint32_t tid);

}  // namespace gt
