// NvtxRegistry: the objects NVTX hands out as opaque handles (domains, registered strings) and
// the payload schemas NCCL and others register. Handles are pointers into fixed tables in static
// storage, shared by every NVTX instance in the process and valid for its lifetime (a forked child
// keeps them). Registration runs on application threads inside NVTX calls, so it is lock-free and
// allocation-free: a slot is claimed with fetch_add, filled, then published with a release store.
// The drain thread reads published entries and writes them to the stream (EmitNvtxRegistry).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace gt {
class ChunkBuilder;
}

namespace gt::nvtx {

inline constexpr uint32_t kMaxDomains = 1024;
// Registered strings (issue 28: 65,536 left every later registered-string range nameless). The
// tables are zero-initialised .bss: pages nobody registers into are never touched, so a
// large limit costs address space only (48 MiB of entries, 32 MiB of text at the limit).
inline constexpr uint32_t kMaxRegisteredStrings = 1u << 21;
inline constexpr uint32_t kMaxSchemas = 1024;
inline constexpr uint32_t kMaxSchemaEntries = 16384;
inline constexpr size_t kTextArenaBytes = 32u << 20;
inline constexpr size_t kMaxNameBytes = 4096;

// A one-byte acquire/release flag with a trivial default constructor, so the tables below are plain
// zeroed .bss in every build: with std::atomic members GCC at -Og ran a dynamic initialiser over the
// 2M-entry string table at load (48 MiB touched in every process), and clang refuses constinit there.
struct ReadyFlag {
  uint8_t value;
  uint8_t load(std::memory_order order) const { return __atomic_load_n(&value, static_cast<int>(order)); }
  void store(uint8_t v, std::memory_order order) { __atomic_store_n(&value, v, static_cast<int>(order)); }
};

struct Domain {
  ReadyFlag ready;
  uint32_t id;         // per-process domain id (> 0)
  uint32_t canonical;  // id of the first domain with this name (== id unless an alias)
  const char* name;
  uint64_t create_ts_ns;
  uint32_t create_tid;
};

struct RegisteredString {
  ReadyFlag ready;
  uint32_t domain_id;
  uint64_t id;  // stream id of the registered string (> 0)
  const char* text;
};

struct SchemaEntry {
  uint64_t flags;
  uint64_t type;
  const char* name;         // may be null
  const char* description;  // may be null
  uint64_t array_or_union_detail;
  uint64_t offset_bytes;
};

struct Schema {
  ReadyFlag ready;
  uint32_t domain_id;
  uint64_t schema_id;
  const char* name;  // may be null
  uint64_t type;
  uint64_t flags;
  uint64_t payload_size_bytes;
  uint64_t align_to_bytes;
  uint32_t first_entry;
  uint32_t entry_count;
};

// Domain by name: the same name returns the same domain (several NVTX instances create "NCCL").
// nullptr when the table is full. `name` must be NUL-terminated UTF-8.
Domain* CreateDomain(const char* name, uint64_t ts_ns, uint32_t tid);
uint32_t DomainId(const void* handle);  // 0 for the default domain (null handle)

// nullptr when a table is full (the caller then records the message as literal text).
RegisteredString* RegisterString(uint32_t domain_id, const char* utf8_text, size_t len);

// Copies a schema; returns its id (the caller's static id, or a dynamic one from 1 << 32).
// 0 when the tables are full.
uint64_t RegisterSchema(uint32_t domain_id, const char* name, uint64_t type, uint64_t flags, uint64_t static_size,
                        uint64_t align, uint64_t requested_id, bool has_requested_id, const SchemaEntry* entries,
                        size_t entry_count);
uint64_t NewDynamicId();

// Drain thread: writes entries published since the last call (all of them for a new session).
void EmitNvtxRegistry(gt::ChunkBuilder* chunk, uint64_t session_id);

// Copies text into the arena (NUL-terminated); nullptr when full. Lock-free.
const char* ArenaCopy(const char* text, size_t len);

// Counters for tests and diagnostics.
uint32_t DomainCount();
uint64_t RegistryOverflows();

}  // namespace gt::nvtx
