// ModuleMap: the process's loaded modules (executable, shared objects, vdso), as the loader lists them
// (dl_iterate_phdr), announced in the stream so `gtrace export` can turn return addresses into
// module + offset and symbols. Build ids are read from the mapped PT_NOTE segments (no file access).
//
// Rescanned every drain cycle; the loader's load/unload counters (dlpi_adds/dlpi_subs) make an
// unchanged process cost one callback. New modules -> LoadedModule, vanished ones -> ModuleUnload.
// Because the drain thread snapshots ring heads before emitters run, every module a recorded stack
// points into was loaded before the scan that precedes the stack's decoding.
//
// Threads: the drain thread only. One per process, announced by the emitter that
// EnableModuleAnnouncements registers (CUDA and OS runtime backtraces share it).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "collector/chunk_builder.h"

namespace gt::callstack {

struct ModuleInfo {
  std::string path;
  std::string build_id;  // raw bytes
  uint64_t load_bias = 0;
  uint64_t start_address = 0;
  uint64_t end_address = 0;
  bool main_executable = false;
};

// Every module loaded now (slow: reads the loader's list; the main executable's path from /proc/self/exe).
std::vector<ModuleInfo> ListModules();
// The module containing `address` (false when none does).
bool FindModule(const void* address, ModuleInfo* out);

class ModuleMap {
 public:
  ModuleMap() = default;
  ModuleMap(const ModuleMap&) = delete;
  ModuleMap& operator=(const ModuleMap&) = delete;

  // Announces changes since the previous call (everything after a session change).
  void Emit(ChunkBuilder* chunk, uint64_t session_id, uint64_t now_ns);

 private:
  uint64_t session_id_ = 0;
  unsigned long long adds_ = 0, subs_ = 0;
  bool scanned_ = false;
  uint64_t next_id_ = 1;
  std::map<std::pair<uint64_t, std::string>, uint64_t> known_;  // (start, path) -> module id
};

// The process's one ModuleMap, shared by every source that records addresses (CUDA call stacks,
// CPU sampling): each drain cycle's first caller announces the changes, later callers find none, so
// module ids stay unique in the stream. Drain thread only.
void EmitProcessModules(ChunkBuilder* chunk, uint64_t session_id);
// Registers (once per process; any set-up thread) a drain-thread emitter that calls
// EmitProcessModules every cycle, for the stacks recorded by CUDA or OS runtime backtraces.
void EnableModuleAnnouncements();

}  // namespace gt::callstack
