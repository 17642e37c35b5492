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

// An event waiting for its end.
struct Open {
  int64_t start_ns = 0;
  uint32_t tid = 0;
  schema::NvtxEvent event;
};

struct StreamState {
  std::map<std::pair<uint32_t, uint32_t>, std::vector<std::optional<Open>>> stacks;  // (tid, domain) -> by level
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
    return Status::Ok();
  }

  Status OnChunk(ExportContext& ctx, StreamContext& s, const schema::Chunk& chunk) override {
    Status st;
    for (const schema::NvtxRegisteredString& r : chunk.nvtx_strings()) state_.registered[r.id()] = r.text();
    for (const schema::NvtxDomain& d : chunk.nvtx_domains()) {
      schema::NvtxEvent e;
      if (!(st = Row(ctx, s, kNvtxDomainCreate, s.ToSessionNs(d.create_ts_ns()), std::nullopt, d.create_tid(),
                     std::nullopt, d.domain_id(), e, d.name()))
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
          auto& stack = state_.stacks[{tid, e.domain_id()}];
          size_t level = e.depth();
          // Ranges at this level or deeper that are still open lost their pop (dropped record).
          if (!(st = FlushFrom(ctx, s, &stack, level)).ok()) return st;
          stack.resize(level + 1);
          stack[level] = Open{t, tid, e};
          break;
        }
        case schema::NVTX_EVENT_KIND_POP: {
          auto it = state_.stacks.find({tid, e.domain_id()});
          size_t level = e.depth();
          if (it == state_.stacks.end() || it->second.size() <= level || !it->second[level].has_value()) {
            ++state_.unmatched_pops;  // its push was dropped or came before the capture
            break;
          }
          Open open = std::move(*it->second[level]);
          it->second[level].reset();
          if (!(st = FlushFrom(ctx, s, &it->second, level + 1)).ok()) return st;
          it->second.resize(level);
          st = Row(ctx, s, kNvtxPushPop, open.start_ns, t, open.tid, std::nullopt, open.event.domain_id(), open.event);
          if (!st.ok()) return st;
          break;
        }
        case schema::NVTX_EVENT_KIND_START:
          state_.started[e.range_id()] = Open{t, tid, e};
          break;
        case schema::NVTX_EVENT_KIND_END: {
          auto it = state_.started.find(e.range_id());
          if (it == state_.started.end()) {
            ++state_.unmatched_ends;
            break;
          }
          Open open = std::move(it->second);
          state_.started.erase(it);
          st = Row(ctx, s, kNvtxStartEnd, open.start_ns, t, open.tid, tid, open.event.domain_id(), open.event);
          if (!st.ok()) return st;
          break;
        }
        case schema::NVTX_EVENT_KIND_MARK:
          st = Row(ctx, s, kNvtxMark, t, std::nullopt, tid, std::nullopt, e.domain_id(), e);
          break;
        case schema::NVTX_EVENT_KIND_NAME_CATEGORY:
          st = Row(ctx, s, kNvtxCategory, t, std::nullopt, tid, std::nullopt, e.domain_id(), e);
          break;
        case schema::NVTX_EVENT_KIND_NAME_THREAD:
          s.threads[e.named_tid()].nvtx_name = std::string(s.Text(e.string_id()));
          st = Row(ctx, s, kNvtxThread, t, std::nullopt, e.named_tid(), std::nullopt, 0, e);
          break;
        case schema::NVTX_EVENT_KIND_DOMAIN_DESTROY: {
          schema::NvtxEvent bare;
          st = Row(ctx, s, kNvtxDomainDestroy, t, std::nullopt, tid, std::nullopt, e.domain_id(), bare);
          break;
        }
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
      Status st = Row(ctx, s, kNvtxStartEnd, o.start_ns, std::nullopt, o.tid, std::nullopt, o.event.domain_id(), o.event);
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
  Status FlushFrom(ExportContext& ctx, StreamContext& s, std::vector<std::optional<Open>>* stack, size_t level) {
    for (size_t i = level; i < stack->size(); ++i) {
      std::optional<Open>& o = (*stack)[i];
      if (!o) continue;
      ++state_.dangling;
      Status st = Row(ctx, s, kNvtxPushPop, o->start_ns, std::nullopt, o->tid, std::nullopt, o->event.domain_id(),
                      o->event);
      if (!st.ok()) return st;
      o.reset();
    }
    return Status::Ok();
  }

  // One NVTX_EVENTS row. `name_override` replaces the event's message (domain rows).
  Status Row(ExportContext& ctx, StreamContext& s, int64_t type, int64_t start, std::optional<int64_t> end,
             uint32_t tid, std::optional<uint32_t> end_tid, uint32_t domain_id, const schema::NvtxEvent& e,
             std::optional<std::string_view> name_override = std::nullopt) {
    Status st;
    Statement* ins = ctx.Insert("NVTX_EVENTS", kInsertEvent, &st);
    if (ins == nullptr) return st;
    ctx.NoteTime(end.value_or(start));
    ins->Int(1, start).OptInt(2, end).Int(3, type);
    if (type == kNvtxStartEnd) {
      ins->Int(4, static_cast<int64_t>(e.range_id()));
    }
    if (e.category() != 0 || type == kNvtxCategory) ins->Int(5, e.category());
    if (e.has_color_argb()) ins->Int(6, e.color_argb());
    if (name_override) {
      ins->Text(7, *name_override);
    } else if (e.registered_string_id() != 0) {
      auto it = state_.registered.find(e.registered_string_id());
      if (it != state_.registered.end()) {
        int64_t sid = 0;
        if (!(st = ctx.StringId(it->second, &sid)).ok()) return st;
        ins->Int(10, sid);
      } else {
        ++state_.unknown_registered;
      }
    } else if (e.string_id() != 0) {
      ins->Text(7, s.Text(e.string_id()));
    }
    ins->Int(8, s.GlobalTid(tid));
    if (end_tid) ins->Int(9, s.GlobalTid(*end_tid));
    ins->Int(11, domain_id);
    switch (e.payload_case()) {
      case schema::NvtxEvent::kPayloadUint64:
        ins->Int(12, static_cast<int64_t>(e.payload_uint64()));
        break;
      case schema::NvtxEvent::kPayloadInt64:
        ins->Int(13, e.payload_int64());
        break;
      case schema::NvtxEvent::kPayloadDouble:
        ins->Real(14, e.payload_double());
        break;
      case schema::NvtxEvent::kPayloadUint32:
        ins->Int(15, e.payload_uint32());
        break;
      case schema::NvtxEvent::kPayloadInt32:
        ins->Int(16, e.payload_int32());
        break;
      case schema::NvtxEvent::kPayloadFloat:
        ins->Real(17, e.payload_float());
        break;
      default:
        break;
    }
    return ins->Run();
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
};

}  // namespace

std::unique_ptr<ExportModule> MakeNvtxExport() { return std::make_unique<NvtxExport>(); }

}  // namespace gt::exporter
