// NVTX -> NVTX_EVENTS (+ NVTX_PAYLOAD_SCHEMAS / _ENTRIES), following nsys 3.25.0:
//   59 push/pop range (written when it closes), 60 start/end range (rangeId, endGlobalTid),
//   34 mark, 33 category name, 39 thread name, 75 domain create, 76 domain destroy.
// A literal message goes to `text`; a registered string goes to `textId` (StringIds); never both.
// Push/pop pairs are matched per (thread, domain) by the nesting level the hook recorded, so a
// dropped record cannot shift the pairing of the others. Ranges still open at the end of a stream
// get a NULL end (and a warning), like events nsys never saw close.
#include "tools/export/nvtx_export.h"

#include <map>
#include <optional>
#include <set>
#include <unordered_map>
#include <vector>

namespace gt::exporter {
namespace {

constexpr int64_t kNvtxCategory = 33;
constexpr int64_t kNvtxMark = 34;
constexpr int64_t kNvtxThread = 39;
constexpr int64_t kNvtxPushPop = 59;
constexpr int64_t kNvtxStartEnd = 60;
constexpr int64_t kNvtxDomainCreate = 75;
constexpr int64_t kNvtxDomainDestroy = 76;

constexpr char kInsertEvent[] =
    "INSERT INTO NVTX_EVENTS (start, end, eventType, rangeId, category, color, text, globalTid, endGlobalTid, "
    "textId, domainId, uint64Value, int64Value, doubleValue, uint32Value, int32Value, floatValue, jsonTextId, "
    "jsonText, binaryData) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)";

// What a row needs of an NvtxEvent. Open ranges keep this instead of a copy of the message: a
// protobuf copy and destruction per range was ~5 % of an NVTX-heavy export's CPU (bench/results/
// 2026-11-26-export-floor-10m.md).
struct EventFields {
  uint64_t range_id = 0;
  uint64_t string_id = 0;
  uint64_t registered_string_id = 0;
  uint32_t category = 0;
  uint32_t domain_id = 0;
  bool has_color = false;
  uint32_t color_argb = 0;
  schema::NvtxEvent::PayloadCase payload = schema::NvtxEvent::PAYLOAD_NOT_SET;
  int64_t payload_int = 0;     // uint64 (as its bits), int64, uint32, int32
  double payload_real = 0;     // double, float

  EventFields() = default;
  explicit EventFields(const schema::NvtxEvent& e)
      : range_id(e.range_id()),
        string_id(e.string_id()),
        registered_string_id(e.registered_string_id()),
        category(e.category()),
        domain_id(e.domain_id()),
        has_color(e.has_color_argb()),
        color_argb(e.color_argb()),
        payload(e.payload_case()) {
    switch (payload) {
      case schema::NvtxEvent::kPayloadUint64: payload_int = static_cast<int64_t>(e.payload_uint64()); break;
      case schema::NvtxEvent::kPayloadInt64: payload_int = e.payload_int64(); break;
      case schema::NvtxEvent::kPayloadUint32: payload_int = e.payload_uint32(); break;
      case schema::NvtxEvent::kPayloadInt32: payload_int = e.payload_int32(); break;
      case schema::NvtxEvent::kPayloadDouble: payload_real = e.payload_double(); break;
      case schema::NvtxEvent::kPayloadFloat: payload_real = e.payload_float(); break;
      default: break;
    }
  }
};

// An event waiting for its end.
struct Open {
  int64_t start_ns = 0;
  uint32_t tid = 0;
  EventFields event;
};

using Stack = std::vector<std::optional<Open>>;  // open push/pop ranges by nesting level

struct StreamState {
  std::map<std::pair<uint32_t, uint32_t>, Stack> stacks;  // (tid, domain) -> by level
  std::unordered_map<uint64_t, Open> started;  // range id -> START
  std::unordered_map<uint64_t, std::string> registered;  // registered string id -> text
  std::set<std::pair<uint32_t, uint64_t>> schemas_written;  // (domain, schema id)
  uint64_t unmatched_pops = 0;
  uint64_t unmatched_ends = 0;
  uint64_t unknown_registered = 0;
  uint64_t dangling = 0;  // ranges exported without an end
};

class NvtxExport final : public ExportModule {
 public:
  const char* name() const override { return "nvtx"; }

  Status Begin(ExportContext& ctx) override { return ctx.EnsureTable("NVTX_EVENTS"); }

  Status BeginStream(ExportContext&, StreamContext&) override {
    state_ = StreamState();
    last_stack_ = nullptr;
    has_last_tid_ = false;
    return Status::Ok();
  }

  Status OnChunk(ExportContext& ctx, StreamContext& s, const schema::Chunk& chunk) override {
    Status st;
    for (const schema::NvtxRegisteredString& r : chunk.nvtx_strings()) state_.registered[r.id()] = r.text();
    for (const schema::NvtxDomain& d : chunk.nvtx_domains()) {
      if (!(st = Row(ctx, s, kNvtxDomainCreate, s.ToSessionNs(d.create_ts_ns()), std::nullopt, d.create_tid(),
                     std::nullopt, d.domain_id(), EventFields(), d.name()))
               .ok()) {
        return st;
      }
    }
    for (const schema::NvtxPayloadSchema& p : chunk.nvtx_payload_schemas()) {
      if (!(st = WriteSchema(ctx, p)).ok()) return st;
    }
    uint64_t ts = chunk.base_ns();
    uint32_t chunk_tid = chunk.tid();
    for (const schema::NvtxEvent& e : chunk.nvtx()) {
      ts += static_cast<uint64_t>(e.ts_delta_ns());
      uint32_t tid = e.tid() != 0 ? e.tid() : chunk_tid;
      int64_t t = s.ToSessionNs(ts);
      switch (e.kind()) {
        case schema::NVTX_EVENT_KIND_PUSH: {
          Stack& stack = StackOf(tid, e.domain_id());
          size_t level = e.depth();
          // Ranges at this level or deeper that are still open lost their pop (dropped record).
          if (!(st = FlushFrom(ctx, s, &stack, level)).ok()) return st;
          stack.resize(level + 1);
          stack[level] = Open{t, tid, EventFields(e)};
          break;
        }
        case schema::NVTX_EVENT_KIND_POP: {
          Stack& stack = StackOf(tid, e.domain_id());
          size_t level = e.depth();
          if (stack.size() <= level || !stack[level].has_value()) {
            ++state_.unmatched_pops;  // its push was dropped or came before the capture
            break;
          }
          Open open = *stack[level];
          stack[level].reset();
          if (!(st = FlushFrom(ctx, s, &stack, level + 1)).ok()) return st;
          stack.resize(level);
          st = Row(ctx, s, kNvtxPushPop, open.start_ns, t, open.tid, std::nullopt, open.event.domain_id, open.event);
          if (!st.ok()) return st;
          break;
        }
        case schema::NVTX_EVENT_KIND_START:
          state_.started[e.range_id()] = Open{t, tid, EventFields(e)};
          break;
        case schema::NVTX_EVENT_KIND_END: {
          auto it = state_.started.find(e.range_id());
          if (it == state_.started.end()) {
            ++state_.unmatched_ends;
            break;
          }
          Open open = it->second;
          state_.started.erase(it);
          st = Row(ctx, s, kNvtxStartEnd, open.start_ns, t, open.tid, tid, open.event.domain_id, open.event);
          if (!st.ok()) return st;
          break;
        }
        case schema::NVTX_EVENT_KIND_MARK:
          st = Row(ctx, s, kNvtxMark, t, std::nullopt, tid, std::nullopt, e.domain_id(), EventFields(e));
          break;
        case schema::NVTX_EVENT_KIND_NAME_CATEGORY:
          st = Row(ctx, s, kNvtxCategory, t, std::nullopt, tid, std::nullopt, e.domain_id(), EventFields(e));
          break;
        case schema::NVTX_EVENT_KIND_NAME_THREAD:
          s.threads[e.named_tid()].nvtx_name = std::string(s.Text(e.string_id()));
          st = Row(ctx, s, kNvtxThread, t, std::nullopt, e.named_tid(), std::nullopt, 0, EventFields(e));
          break;
        case schema::NVTX_EVENT_KIND_DOMAIN_DESTROY:
          st = Row(ctx, s, kNvtxDomainDestroy, t, std::nullopt, tid, std::nullopt, e.domain_id(), EventFields());
          break;
        default:
          break;
      }
      if (!st.ok()) return st;
    }
    return Status::Ok();
  }

  Status EndStream(ExportContext& ctx, StreamContext& s) override {
    // Ranges that never closed: keep them, with no end.
    for (auto& [key, stack] : state_.stacks) {
      Status st = FlushFrom(ctx, s, &stack, 0);
      if (!st.ok()) return st;
    }
    for (auto& [id, o] : state_.started) {
      ++state_.dangling;
      Status st = Row(ctx, s, kNvtxStartEnd, o.start_ns, std::nullopt, o.tid, std::nullopt, o.event.domain_id, o.event);
      if (!st.ok()) return st;
    }
    uint64_t open_count = state_.dangling;
    if (open_count > 0) {
      ctx.Warn(s.path + ": " + std::to_string(open_count) +
               " NVTX ranges were still open when the stream ended; they are exported with no end");
    }
    if (state_.unmatched_pops + state_.unmatched_ends > 0) {
      ctx.Warn(s.path + ": " + std::to_string(state_.unmatched_pops + state_.unmatched_ends) +
               " NVTX range ends had no recorded beginning (dropped or before the capture) and were skipped");
    }
    if (state_.unknown_registered > 0) {
      ctx.Warn(s.path + ": " + std::to_string(state_.unknown_registered) +
               " NVTX events named an unknown registered string; exported without a name");
    }
    return Status::Ok();
  }

 private:
  // Writes the open ranges of `stack` from `level` up as ranges without an end.
  Status FlushFrom(ExportContext& ctx, StreamContext& s, Stack* stack, size_t level) {
    for (size_t i = level; i < stack->size(); ++i) {
      std::optional<Open>& o = (*stack)[i];
      if (!o) continue;
      ++state_.dangling;
      Status st = Row(ctx, s, kNvtxPushPop, o->start_ns, std::nullopt, o->tid, std::nullopt, o->event.domain_id,
                      o->event);
      if (!st.ok()) return st;
      o.reset();
    }
    return Status::Ok();
  }

  // One NVTX_EVENTS row. `name_override` replaces the event's message (domain rows).
  Status Row(ExportContext& ctx, StreamContext& s, int64_t type, int64_t start, std::optional<int64_t> end,
             uint32_t tid, std::optional<uint32_t> end_tid, uint32_t domain_id, const EventFields& e,
             std::optional<std::string_view> name_override = std::nullopt) {
    Status st;
    Statement* ins = ctx.Insert("NVTX_EVENTS", kInsertEvent, &st);
    if (ins == nullptr) return st;
    ctx.NoteTime(end.value_or(start));
    ins->Int(1, start).OptInt(2, end).Int(3, type);
    if (type == kNvtxStartEnd) {
      ins->Int(4, static_cast<int64_t>(e.range_id));
    }
    if (e.category != 0 || type == kNvtxCategory) ins->Int(5, e.category);
    if (e.has_color) ins->Int(6, e.color_argb);
    // Texts bound without a copy: the chunk (domain names) and the stream's interned strings outlive Run.
    if (name_override) {
      ins->StaticText(7, *name_override);
    } else if (e.registered_string_id != 0) {
      auto it = state_.registered.find(e.registered_string_id);
      if (it != state_.registered.end()) {
        int64_t sid = 0;
        if (!(st = ctx.StringId(it->second, &sid)).ok()) return st;
        ins->Int(10, sid);
      } else {
        ++state_.unknown_registered;
      }
    } else if (e.string_id != 0) {
      ins->StaticText(7, s.Text(e.string_id));
    }
    ins->Int(8, GlobalTid(s, tid));
    if (end_tid) ins->Int(9, GlobalTid(s, *end_tid));
    ins->Int(11, domain_id);
    switch (e.payload) {
      case schema::NvtxEvent::kPayloadUint64: ins->Int(12, e.payload_int); break;
      case schema::NvtxEvent::kPayloadInt64: ins->Int(13, e.payload_int); break;
      case schema::NvtxEvent::kPayloadDouble: ins->Real(14, e.payload_real); break;
      case schema::NvtxEvent::kPayloadUint32: ins->Int(15, e.payload_int); break;
      case schema::NvtxEvent::kPayloadInt32: ins->Int(16, e.payload_int); break;
      case schema::NvtxEvent::kPayloadFloat: ins->Real(17, e.payload_real); break;
      default: break;
    }
    return ins->Run();
  }

  // The push/pop stack of (tid, domain). Events come in per-thread chunks, so the last one asked
  // for is usually asked again: one comparison instead of a map lookup per push and pop.
  Stack& StackOf(uint32_t tid, uint32_t domain_id) {
    std::pair<uint32_t, uint32_t> key{tid, domain_id};
    if (last_stack_ == nullptr || last_stack_key_ != key) {
      last_stack_ = &state_.stacks[key];  // std::map: the element's address is stable
      last_stack_key_ = key;
    }
    return *last_stack_;
  }

  // StreamContext::GlobalTid (a map lookup that also marks the thread used), for the same thread
  // row after row.
  int64_t GlobalTid(StreamContext& s, uint32_t tid) {
    if (!has_last_tid_ || last_tid_ != tid) {
      last_global_tid_ = s.GlobalTid(tid);
      last_tid_ = tid;
      has_last_tid_ = true;
    }
    return last_global_tid_;
  }

  Status WriteSchema(ExportContext& ctx, const schema::NvtxPayloadSchema& p) {
    if (!state_.schemas_written.insert({p.domain_id(), p.schema_id()}).second) return Status::Ok();
    Status st;
    Statement* ins = ctx.Insert("NVTX_PAYLOAD_SCHEMAS",
                                "INSERT INTO NVTX_PAYLOAD_SCHEMAS (domainId, schemaId, name, type, flags, numEntries, "
                                "payloadSize, alignTo) VALUES (?,?,?,?,?,?,?,?)",
                                &st);
    if (ins == nullptr) return st;
    ins->Int(1, p.domain_id()).Int(2, static_cast<int64_t>(p.schema_id()));
    if (p.has_name()) ins->Text(3, p.name());
    ins->Int(4, static_cast<int64_t>(p.type()));
    if (p.flags() != 0) ins->Int(5, static_cast<int64_t>(p.flags()));
    ins->Int(6, p.entries_size()).Int(7, static_cast<int64_t>(p.payload_size_bytes()));
    if (p.align_to_bytes() != 0) ins->Int(8, static_cast<int64_t>(p.align_to_bytes()));
    if (!(st = ins->Run()).ok()) return st;
    Statement* entry = ctx.Insert("NVTX_PAYLOAD_SCHEMA_ENTRIES",
                                  "INSERT INTO NVTX_PAYLOAD_SCHEMA_ENTRIES (domainId, schemaId, idx, flags, type, name, "
                                  "description, arrayOrUnionDetail, offset) VALUES (?,?,?,?,?,?,?,?,?)",
                                  &st);
    if (entry == nullptr) return st;
    for (int i = 0; i < p.entries_size(); ++i) {
      const schema::NvtxPayloadSchemaEntry& e = p.entries(i);
      entry->Int(1, p.domain_id()).Int(2, static_cast<int64_t>(p.schema_id())).Int(3, i);
      entry->Int(4, static_cast<int64_t>(e.flags())).Int(5, static_cast<int64_t>(e.type()));
      entry->Text(6, e.name());
      if (e.has_description()) entry->Text(7, e.description());
      entry->Int(8, static_cast<int64_t>(e.array_or_union_detail()));
      if (e.has_offset()) entry->Int(9, static_cast<int64_t>(e.offset_bytes()));
      if (!(st = entry->Run()).ok()) return st;
    }
    return Status::Ok();
  }

  StreamState state_;
  Stack* last_stack_ = nullptr;  // into state_.stacks (StackOf)
  std::pair<uint32_t, uint32_t> last_stack_key_{0, 0};
  bool has_last_tid_ = false;  // GlobalTid's one-entry cache, per stream
  uint32_t last_tid_ = 0;
  int64_t last_global_tid_ = 0;
};

}  // namespace

std::unique_ptr<ExportModule> MakeNvtxExport() { return std::make_unique<NvtxExport>(); }

}  // namespace gt::exporter
