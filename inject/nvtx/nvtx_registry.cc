#include "inject/nvtx/nvtx_registry.h"

#include <sched.h>
#include <time.h>
#include <unistd.h>

#include <cstring>
#include <string>
#include <type_traits>

#include "collector/chunk_builder.h"
#include "collector/clock.h"
#include "collector/schema_fields.h"
#include "collector/session.h"

namespace gt::nvtx {
namespace {

// Zero-initialised static storage (.bss): untouched pages cost nothing. Trivial types only (ReadyFlag,
// nvtx_registry.h): nothing runs over them at load in any build.
static_assert(std::is_trivially_default_constructible_v<Domain> &&
              std::is_trivially_default_constructible_v<RegisteredString> &&
              std::is_trivially_default_constructible_v<Schema> &&
              std::is_trivially_default_constructible_v<SchemaEntry>);
Domain g_domains[kMaxDomains];
RegisteredString g_strings[kMaxRegisteredStrings];
Schema g_schemas[kMaxSchemas];
SchemaEntry g_entries[kMaxSchemaEntries];
char g_arena[kTextArenaBytes];

std::atomic<uint32_t> g_domain_count{0};
std::atomic<uint32_t> g_string_count{0};
std::atomic<uint32_t> g_schema_count{0};
std::atomic<uint32_t> g_entry_count{0};
std::atomic<size_t> g_arena_used{0};
std::atomic<uint64_t> g_overflows{0};
std::atomic<uint64_t> g_next_dynamic_id{uint64_t{1} << 32};

// Domain creation (application threads, inside nvtxDomainCreate): rare — once per name per NVTX
// instance — but many threads may create the same name at the same moment (a framework's per-thread
// initialisation; nvtx.NvtxStress does it from 16). Without a guard, creators that claim slots before
// any of them is ready each become canonical and the domain is announced several times. A short
// creation lock keeps them to one canonical entry. A creator waits for it only where the holder can
// finish: not on the holder's own thread (a signal handler that interrupted the holder: it goes on
// unlocked at once) and not in a forked child (the holder was a thread of the parent). Otherwise the
// wait is bounded by kCreateWaitNs, far above any preemption of the holder on a loaded machine (a
// 50 ms bound once made nvtx.NvtxStress announce the domain twice under load); past it the creator
// goes on unlocked (then at worst the domain is announced twice), so nothing ever hangs.
std::atomic<bool> g_create_busy{false};
std::atomic<uint32_t> g_create_owner_tid{0};
std::atomic<int32_t> g_create_owner_pid{0};
constexpr uint64_t kCreateWaitNs = 2'000'000'000;

uint64_t MonotonicNs() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000u + static_cast<uint64_t>(ts.tv_nsec);
}

// Application thread `tid` (inside nvtxDomainCreate; rare): true when it holds the lock.
bool TakeCreateLock(uint32_t tid) {
  int32_t pid = static_cast<int32_t>(getpid());
  uint64_t deadline_ns = 0;
  for (uint32_t spin = 0;; ++spin) {
    if (!g_create_busy.exchange(true, std::memory_order_acquire)) {
      g_create_owner_pid.store(pid, std::memory_order_relaxed);
      g_create_owner_tid.store(tid, std::memory_order_relaxed);
      return true;
    }
    if (spin < 64) continue;
    uint32_t owner_tid = g_create_owner_tid.load(std::memory_order_relaxed);
    int32_t owner_pid = g_create_owner_pid.load(std::memory_order_relaxed);
    if (owner_pid != 0 && (owner_pid != pid || (tid != 0 && owner_tid == tid))) return false;  // cannot finish: unlocked
    uint64_t now_ns = MonotonicNs();
    if (deadline_ns == 0) deadline_ns = now_ns + kCreateWaitNs;
    if (now_ns >= deadline_ns) return false;
    sched_yield();
  }
}

void ReleaseCreateLock() {
  g_create_owner_tid.store(0, std::memory_order_relaxed);
  g_create_owner_pid.store(0, std::memory_order_relaxed);
  g_create_busy.store(false, std::memory_order_release);
}

// Drain-thread state (only the drain thread touches these).
uint64_t g_emitted_session = 0;
uint32_t g_domains_emitted = 0;
uint32_t g_strings_emitted = 0;
uint32_t g_schemas_emitted = 0;
uint64_t g_overflows_reported = 0;  // RegistryOverflows() at the last diagnostic
uint64_t g_overflow_report_ns = 0;

// Claims a slot index below `limit`, or returns limit when full (and leaves the counter capped).
uint32_t Claim(std::atomic<uint32_t>* counter, uint32_t limit, uint32_t n = 1) {
  uint32_t cur = counter->load(std::memory_order_relaxed);
  while (true) {
    if (cur + n > limit) {
      g_overflows.fetch_add(1, std::memory_order_relaxed);
      return limit;
    }
    if (counter->compare_exchange_weak(cur, cur + n, std::memory_order_relaxed)) return cur;
  }
}

}  // namespace

const char* ArenaCopy(const char* text, size_t len) {
  if (len > kMaxNameBytes) len = kMaxNameBytes;
  size_t need = len + 1;
  size_t at = g_arena_used.fetch_add(need, std::memory_order_relaxed);
  if (at + need > kTextArenaBytes) {
    g_overflows.fetch_add(1, std::memory_order_relaxed);
    return nullptr;
  }
  std::memcpy(&g_arena[at], text, len);
  g_arena[at + len] = '\0';
  return &g_arena[at];
}

// CreateDomain's work, under the creation lock (or without it after kCreateWaitNs).
static Domain* CreateDomainLocked(const char* name, uint64_t ts_ns, uint32_t tid) {
  size_t len = strnlen(name, kMaxNameBytes);
  uint32_t n = g_domain_count.load(std::memory_order_acquire);
  for (uint32_t i = 0; i < n; ++i) {
    Domain* d = &g_domains[i];
    if (d->ready.load(std::memory_order_acquire) && d->id == d->canonical && std::strncmp(d->name, name, len) == 0 &&
        d->name[len] == '\0') {
      return d;
    }
  }
  uint32_t index = Claim(&g_domain_count, kMaxDomains);
  if (index == kMaxDomains) return nullptr;
  Domain* d = &g_domains[index];
  const char* copy = ArenaCopy(name, len);
  d->id = index + 1;
  d->canonical = d->id;
  d->name = copy != nullptr ? copy : "";
  d->create_ts_ns = ts_ns;
  d->create_tid = tid;
  // Another thread may have created the same name concurrently: keep the lower one.
  for (uint32_t i = 0; i < index; ++i) {
    Domain* e = &g_domains[i];
    if (e->ready.load(std::memory_order_acquire) && e->id == e->canonical && std::strcmp(e->name, d->name) == 0) {
      d->canonical = e->id;
      d->ready.store(1, std::memory_order_release);
      return e;
    }
  }
  d->ready.store(1, std::memory_order_release);
  return d;
}

Domain* CreateDomain(const char* name, uint64_t ts_ns, uint32_t tid) {
  bool locked = TakeCreateLock(tid);
  Domain* d = CreateDomainLocked(name, ts_ns, tid);
  if (locked) ReleaseCreateLock();
  return d;
}

uint32_t DomainId(const void* handle) {
  if (handle == nullptr) return 0;
  return static_cast<const Domain*>(handle)->id;
}

RegisteredString* RegisterString(uint32_t domain_id, const char* utf8_text, size_t len) {
  uint32_t index = Claim(&g_string_count, kMaxRegisteredStrings);
  if (index == kMaxRegisteredStrings) return nullptr;
  RegisteredString* s = &g_strings[index];
  const char* copy = ArenaCopy(utf8_text, len);
  s->domain_id = domain_id;
  s->id = index + 1;
  s->text = copy != nullptr ? copy : "";
  s->ready.store(1, std::memory_order_release);
  return s;
}

uint64_t NewDynamicId() { return g_next_dynamic_id.fetch_add(1, std::memory_order_relaxed); }

uint64_t RegisterSchema(uint32_t domain_id, const char* name, uint64_t type, uint64_t flags, uint64_t static_size,
                        uint64_t align, uint64_t requested_id, bool has_requested_id, const SchemaEntry* entries,
                        size_t entry_count) {
  if (entry_count > 1024) entry_count = 1024;
  uint32_t index = Claim(&g_schema_count, kMaxSchemas);
  if (index == kMaxSchemas) return 0;
  uint32_t first = Claim(&g_entry_count, kMaxSchemaEntries, static_cast<uint32_t>(entry_count));
  Schema* s = &g_schemas[index];
  s->domain_id = domain_id;
  s->schema_id = has_requested_id ? requested_id : NewDynamicId();
  s->name = name != nullptr ? ArenaCopy(name, strnlen(name, kMaxNameBytes)) : nullptr;
  s->type = type;
  s->flags = flags;
  s->payload_size_bytes = static_size;
  s->align_to_bytes = align;
  if (first == kMaxSchemaEntries) {
    s->first_entry = 0;
    s->entry_count = 0;
  } else {
    s->first_entry = first;
    s->entry_count = static_cast<uint32_t>(entry_count);
    for (size_t i = 0; i < entry_count; ++i) {
      SchemaEntry e = entries[i];
      e.name = e.name != nullptr ? ArenaCopy(e.name, strnlen(e.name, kMaxNameBytes)) : nullptr;
      e.description = e.description != nullptr ? ArenaCopy(e.description, strnlen(e.description, kMaxNameBytes)) : nullptr;
      g_entries[first + i] = e;
    }
  }
  s->ready.store(1, std::memory_order_release);
  return s->schema_id;
}

uint32_t DomainCount() { return g_domain_count.load(std::memory_order_acquire); }
uint64_t RegistryOverflows() { return g_overflows.load(std::memory_order_relaxed); }

void EmitNvtxRegistry(gt::ChunkBuilder* chunk, uint64_t session_id) {
  if (session_id != g_emitted_session) {
    g_emitted_session = session_id;
    g_domains_emitted = g_strings_emitted = g_schemas_emitted = 0;
    g_overflows_reported = g_overflow_report_ns = 0;
  }
  // Past a limit the handle is null and ranges that use it have no name (issue 28 item 6): said once
  // on stderr, and the count in the stream (DIAGNOSTIC_EVENT) as it grows, at most once a second,
  // and in the session's last pass (ended: the final count).
  if (uint64_t over = RegistryOverflows(); over != g_overflows_reported) {
    uint64_t now = gt::NowNs();
    bool first = g_overflows_reported == 0;
    if (first || now - g_overflow_report_ns >= 1000000000ull || !gt::SessionRunsHere()) {
      g_overflows_reported = over;
      g_overflow_report_ns = now;
      gt::ReportDiagnostic(field::enums::kSeverityWarning, "nvtx",
                           "NVTX registry full: " + std::to_string(over) +
                               " domains, registered strings or payload schemas past its limits (" +
                               std::to_string(kMaxDomains) + " domains, " + std::to_string(kMaxRegisteredStrings) +
                               " registered strings, " + std::to_string(kMaxSchemas) + " schemas, " +
                               std::to_string(kTextArenaBytes >> 20) +
                               " MiB of text) got a null handle; ranges that use them have no name",
                           first);
    }
  }
  ProtoWriter& w = chunk->body();
  uint32_t n = g_domain_count.load(std::memory_order_acquire);
  if (n > kMaxDomains) n = kMaxDomains;
  for (; g_domains_emitted < n; ++g_domains_emitted) {
    Domain* d = &g_domains[g_domains_emitted];
    if (!d->ready.load(std::memory_order_acquire)) break;  // being filled: next cycle
    if (d->id != d->canonical) continue;
    w.BeginNested(field::chunk::kNvtxDomains);
    w.Varint(field::nvtx_domain::kDomainId, d->id);
    w.String(field::nvtx_domain::kName, d->name);
    w.Varint(field::nvtx_domain::kCreateTsNs, d->create_ts_ns);
    w.Varint(field::nvtx_domain::kCreateTid, d->create_tid);
    w.EndNested();
  }
  n = g_string_count.load(std::memory_order_acquire);
  if (n > kMaxRegisteredStrings) n = kMaxRegisteredStrings;
  for (; g_strings_emitted < n; ++g_strings_emitted) {
    RegisteredString* s = &g_strings[g_strings_emitted];
    if (!s->ready.load(std::memory_order_acquire)) break;
    w.BeginNested(field::chunk::kNvtxStrings);
    w.Varint(field::nvtx_registered_string::kId, s->id);
    w.VarintIfNonZero(field::nvtx_registered_string::kDomainId, s->domain_id);
    w.String(field::nvtx_registered_string::kText, s->text);
    w.EndNested();
  }
  n = g_schema_count.load(std::memory_order_acquire);
  if (n > kMaxSchemas) n = kMaxSchemas;
  for (; g_schemas_emitted < n; ++g_schemas_emitted) {
    Schema* s = &g_schemas[g_schemas_emitted];
    if (!s->ready.load(std::memory_order_acquire)) break;
    namespace f = field::nvtx_payload_schema;
    namespace fe = field::nvtx_payload_schema_entry;
    w.BeginNested(field::chunk::kNvtxPayloadSchemas);
    w.VarintIfNonZero(f::kDomainId, s->domain_id);
    w.Varint(f::kSchemaId, s->schema_id);
    if (s->name != nullptr) {
      w.String(f::kName, s->name);
      w.Bool(f::kHasName, true);
    }
    w.VarintIfNonZero(f::kType, s->type);
    w.VarintIfNonZero(f::kFlags, s->flags);
    w.VarintIfNonZero(f::kPayloadSizeBytes, s->payload_size_bytes);
    w.VarintIfNonZero(f::kAlignToBytes, s->align_to_bytes);
    for (uint32_t i = 0; i < s->entry_count; ++i) {
      const SchemaEntry& e = g_entries[s->first_entry + i];
      w.BeginNested(f::kEntries);
      w.VarintIfNonZero(fe::kFlags, e.flags);
      w.VarintIfNonZero(fe::kType, e.type);
      if (e.name != nullptr) w.String(fe::kName, e.name);
      if (e.description != nullptr) {
        w.String(fe::kDescription, e.description);
        w.Bool(fe::kHasDescription, true);
      }
      w.VarintIfNonZero(fe::kArrayOrUnionDetail, e.array_or_union_detail);
      w.VarintIfNonZero(fe::kOffsetBytes, e.offset_bytes);
      w.Bool(fe::kHasOffset, e.offset_bytes != 0);
      w.EndNested();
    }
    w.EndNested();
  }
}

}  // namespace gt::nvtx
