// The loaded-module announcements of one stream (LoadedModule / ModuleUnload in its chunks), read
// by every export module that symbolizes addresses: CUDA and OS runtime call stacks
// (callstack_export.cc) and CPU samples (sampling_export.cc). Each reads the same announcements for
// itself; the exporter's one thread calls it, a stream at a time (Clear at BeginStream).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "gtrace.pb.h"

namespace gt::exporter {

struct LoadedModuleInfo {
  std::string path;
  std::string build_id;
  uint64_t load_bias = 0;
  uint64_t start = 0, end = 0;
  uint64_t loaded_ns = 0;
  uint64_t unloaded_ns = 0;  // 0: never seen unloaded
};

class ModuleTable {
 public:
  static constexpr size_t kNoModule = SIZE_MAX;

  void Clear() {
    modules_.clear();
    index_.clear();
  }
  // Takes the chunk's module loads and unloads.
  void Read(const schema::Chunk& chunk);
  // Index of the module holding `address` at `ts_ns`; a module whose range holds it at another time
  // when none does then (cannot happen with a well-formed stream); kNoModule when none.
  size_t At(uint64_t address, uint64_t ts_ns) const;
  const LoadedModuleInfo* Get(size_t index) const { return index != kNoModule ? &modules_[index] : nullptr; }

 private:
  std::vector<LoadedModuleInfo> modules_;
  std::unordered_map<uint64_t, size_t> index_;  // module_id -> modules_ index
};

}  // namespace gt::exporter
