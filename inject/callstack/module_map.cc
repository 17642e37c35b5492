#include "inject/callstack/module_map.h"

#include <elf.h>
#include <link.h>
#include <unistd.h>

#include <cstddef>
#include <atomic>
#include <cstring>

#include "collector/clock.h"
#include "collector/session.h"
#include "inject/callstack/callstack_fields.h"

namespace gt::callstack {
namespace {

constexpr size_t kMaxBuildIdBytes = 64;

std::string ExecutablePath() {
  char buf[4096];
  ssize_t n = ::readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string();
}

// NT_GNU_BUILD_ID from a mapped PT_NOTE segment ("" when absent).
std::string BuildIdOf(const dl_phdr_info* info) {
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_NOTE)
      continue;
    const auto* p = reinterpret_cast<const unsigned char*>(info->dlpi_addr + ph.p_vaddr);
    size_t left = ph.p_memsz;
    while (left >= sizeof(ElfW(Nhdr))) {
      ElfW(Nhdr) n;
      std::memcpy(&n, p, sizeof(n));
      size_t name_bytes = (n.n_namesz + 3u) & ~3u;
      size_t desc_bytes = (n.n_descsz + 3u) & ~3u;
      size_t total = sizeof(n) + name_bytes + desc_bytes;
      if (total > left)
        break;
      const unsigned char* name = p + sizeof(n);
      if (n.n_type == NT_GNU_BUILD_ID && n.n_namesz == 4 && std::memcmp(name, "GNU", 4) == 0 && n.n_descsz > 0 &&
          n.n_descsz <= kMaxBuildIdBytes) {
        return std::string(reinterpret_cast<const char*>(name + name_bytes), n.n_descsz);
      }
      p += total;
      left -= total;
    }
  }
  return {};
}

struct ScanState {
  std::vector<ModuleInfo>* out;
  unsigned long long adds = 0, subs = 0;
  bool counters = false;
  bool first = true;
  const std::string* exe;
};

int Collect(dl_phdr_info* info, size_t size, void* data) {
  auto* st = static_cast<ScanState*>(data);
  if (st->first) {
    st->first = false;
    if (size >= offsetof(dl_phdr_info, dlpi_subs) + sizeof(info->dlpi_subs)) {
      st->counters = true;
      st->adds = info->dlpi_adds;
      st->subs = info->dlpi_subs;
    }
  }
  ModuleInfo m;
  uint64_t lo = UINT64_MAX, hi = 0;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_LOAD)
      continue;
    uint64_t b = info->dlpi_addr + ph.p_vaddr;
    if (b < lo)
      lo = b;
    if (b + ph.p_memsz > hi)
      hi = b + ph.p_memsz;
  }
  if (hi == 0)
    return 0;
  const char* name = info->dlpi_name != nullptr ? info->dlpi_name : "";
  m.main_executable = name[0] == '\0' && st->out->empty();
  m.path = m.main_executable ? *st->exe : std::string(name);
  if (m.path.empty())
    return 0;
  m.load_bias = info->dlpi_addr;
  m.start_address = lo;
  m.end_address = hi;
  m.build_id = BuildIdOf(info);
  st->out->push_back(std::move(m));
  return 0;
}

}  // namespace

std::vector<ModuleInfo> ListModules() {
  std::vector<ModuleInfo> out;
  std::string exe = ExecutablePath();
  ScanState st{&out};
  st.exe = &exe;
  dl_iterate_phdr(&Collect, &st);
  return out;
}

bool FindModule(const void* address, ModuleInfo* out) {
  auto a = reinterpret_cast<uint64_t>(address);
  for (ModuleInfo& m : ListModules()) {
    if (a >= m.start_address && a < m.end_address) {
      *out = std::move(m);
      return true;
    }
  }
  return false;
}

void ModuleMap::Emit(ChunkBuilder* chunk, uint64_t session_id, uint64_t now_ns) {
  if (session_id != session_id_) {
    session_id_ = session_id;
    known_.clear();
    scanned_ = false;
  }
  if (scanned_) {
    // Cheap check first: the loader counts every load and unload.
    struct Counters {
      unsigned long long adds = 0, subs = 0;
      bool ok = false;
    } c;
    dl_iterate_phdr(
        [](dl_phdr_info* info, size_t size, void* data) -> int {
          auto* c = static_cast<Counters*>(data);
          if (size >= offsetof(dl_phdr_info, dlpi_subs) + sizeof(info->dlpi_subs)) {
            c->ok = true;
            c->adds = info->dlpi_adds;
            c->subs = info->dlpi_subs;
          }
          return 1;  // the first entry is enough
        },
        &c);
    if (c.ok && c.adds == adds_ && c.subs == subs_)
      return;
  }
  std::vector<ModuleInfo> now;
  std::string exe = ExecutablePath();
  ScanState st{&now};
  st.exe = &exe;
  dl_iterate_phdr(&Collect, &st);
  adds_ = st.adds;
  subs_ = st.subs;
  scanned_ = true;
  std::map<std::pair<uint64_t, std::string>, uint64_t> next;
  ProtoWriter& w = chunk->body();
  for (const ModuleInfo& m : now) {
    auto key = std::make_pair(m.start_address, m.path);
    auto it = known_.find(key);
    if (it != known_.end()) {
      next.emplace(key, it->second);
      known_.erase(it);
      continue;
    }
    uint64_t id = next_id_++;
    next.emplace(key, id);
    namespace f = field::loaded_module;
    w.BeginNested(field::chunk::kLoadedModules);
    w.Varint(f::kModuleId, id);
    w.String(f::kPath, m.path);
    if (!m.build_id.empty())
      w.Bytes(f::kBuildId, m.build_id.data(), m.build_id.size());
    w.VarintIfNonZero(f::kLoadBias, m.load_bias);
    w.Varint(f::kStartAddress, m.start_address);
    w.Varint(f::kEndAddress, m.end_address);
    w.Varint(f::kLoadedTsNs, now_ns);
    if (m.main_executable)
      w.Bool(f::kMainExecutable, true);
    w.EndNested();
  }
  for (const auto& [key, id] : known_) {  // gone since the previous scan
    w.BeginNested(field::chunk::kModuleUnloads);
    w.Varint(field::module_unload::kModuleId, id);
    w.Varint(field::module_unload::kTsNs, now_ns);
    w.EndNested();
  }
  known_.swap(next);
}

void EmitProcessModules(ChunkBuilder* chunk, uint64_t session_id) {
  static ModuleMap* map = new ModuleMap();  // never freed: no destructor runs at exit; drain thread only
  map->Emit(chunk, session_id, StreamNow());  // load times go to the stream
}

namespace {
void EmitModules(ChunkBuilder* chunk, uint64_t session_id) { EmitProcessModules(chunk, session_id); }
}  // namespace

void EnableModuleAnnouncements() {
  static std::atomic<bool> done{false};
  if (!done.exchange(true))
    RegisterEmitter(&EmitModules);
}

}  // namespace gt::callstack
