#include "collector/thread_names.h"

#include <sys/prctl.h>

#include <atomic>
#include <cstring>

#include "collector/process_info.h"

namespace gt {
namespace {

struct Entry {
  std::atomic<uint32_t> tid;  // 0: free; published (release) after the name is written
  char name[16];
};

// Zero-initialized static storage: no constructor runs.
Entry g_entries[kMaxNotedThreads];
std::atomic<uint32_t> g_used{0};

}  // namespace

void NoteCurrentThreadName() {
  char name[17] = {};
  if (::prctl(PR_GET_NAME, name, 0, 0, 0) != 0 || name[0] == '\0')
    return;
  uint32_t tid = CurrentTid();
  uint32_t used = g_used.load(std::memory_order_acquire);
  if (used > kMaxNotedThreads)
    used = kMaxNotedThreads;
  for (uint32_t i = 0; i < used; ++i) {
    if (g_entries[i].tid.load(std::memory_order_acquire) == tid && std::strncmp(g_entries[i].name, name, 15) == 0) {
      return;  // already known under this name
    }
  }
  uint32_t slot = g_used.fetch_add(1, std::memory_order_acq_rel);
  if (slot >= kMaxNotedThreads)
    return;
  std::memcpy(g_entries[slot].name, name, 15);
  g_entries[slot].name[15] = '\0';
  g_entries[slot].tid.store(tid, std::memory_order_release);
}

std::string NotedThreadName(uint32_t tid) {
  uint32_t used = g_used.load(std::memory_order_acquire);
  if (used > kMaxNotedThreads)
    used = kMaxNotedThreads;
  std::string found;
  for (uint32_t i = 0; i < used; ++i) {  // the latest entry for the tid wins (renames, reused tids)
    if (g_entries[i].tid.load(std::memory_order_acquire) == tid)
      found = g_entries[i].name;
  }
  return found;
}

}  // namespace gt
