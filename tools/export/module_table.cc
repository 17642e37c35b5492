#include "tools/export/module_table.h"

#include <utility>

namespace gt::exporter {

void ModuleTable::Read(const schema::Chunk& chunk) {
  for (const schema::LoadedModule& m : chunk.loaded_modules()) {
    LoadedModuleInfo mod;
    mod.path = m.path();
    mod.build_id = m.build_id();
    mod.load_bias = m.load_bias();
    mod.start = m.start_address();
    mod.end = m.end_address();
    mod.loaded_ns = m.loaded_ts_ns();
    index_[m.module_id()] = modules_.size();
    modules_.push_back(std::move(mod));
  }
  for (const schema::ModuleUnload& u : chunk.module_unloads()) {
    auto it = index_.find(u.module_id());
    if (it != index_.end())
      modules_[it->second].unloaded_ns = u.ts_ns();
  }
}

size_t ModuleTable::At(uint64_t address, uint64_t ts_ns) const {
  size_t fallback = kNoModule;
  for (size_t i = 0; i < modules_.size(); ++i) {
    const LoadedModuleInfo& m = modules_[i];
    if (address < m.start || address >= m.end)
      continue;
    if (m.loaded_ns <= ts_ns && (m.unloaded_ns == 0 || ts_ns < m.unloaded_ns))
      return i;
    fallback = i;
  }
  return fallback;
}

}  // namespace gt::exporter
