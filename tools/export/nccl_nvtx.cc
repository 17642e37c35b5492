// NCCL's API calls as nsys shows them: NVTX push/pop ranges (eventType 59) in a domain named "NCCL",
// named by registered strings (textId -> StringIds: "ncclAllReduce", ...), with NCCL's static
// payload schemas in NVTX_PAYLOAD_SCHEMAS / NVTX_PAYLOAD_SCHEMA_ENTRIES and each range's payload in
// binaryData. Written only for a stream that has no NVTX domain "NCCL" of its own: when NVTX was
// traced, NCCL's own ranges are already in NVTX_EVENTS (exported by the NVTX module) and a second
// copy would double every NCCL range in nvtx_sum (docs/nccl.md, "Two views of NCCL").
//
// Facts matched (fact sheet §4.8 and NVIDIA/nccl v2.28.9-1 src/include/nvtx.h,
// nvtx_payload_schemas.h, collectives.cc):
//   schema ids 1<<24 + NVTX_SID_*: AllGather 4, AllReduce 5, Broadcast 6, ReduceScatter 7, Reduce 8,
//   Send 9, Recv 10, AlltoAll 16, Gather 17, Scatter 18; schema type 1 (static), name/flags/alignTo
//   NULL; entries "NCCL communicator ID" UINT64 (18) at 0 (offset NULL), "Message size [bytes]"
//   SIZE (22) at 8 (= count * type size), then "Root" or "Peer rank" INT (5) at 16.
// Deviations (the plugin ABI has no reduction operation): AllReduce and ReduceScatter schemas end
// after the message size (2 entries, 16 bytes; NCCL's add "Reduction operation" and are 24 bytes),
// Reduce has its 3 first entries (24 bytes, no operation). Send/Recv take the peer from the P2p
// event (-1 when it was not recorded). Without API events (ABI v4, or `api` not traced) a range
// spans the Coll/P2p enqueue instead of the API call.
// binaryData: a 32-byte little-endian header {domainId, schemaId, payload size, payload offset = 32}
// then the payload, the layout community tools read from `nsys export --include-blobs=true` files
// (nsys-ai; not documented by NVIDIA).
#include <cstring>
#include <map>
#include <set>

#include "tools/export/nccl_export.h"

namespace gt::exporter {
namespace {

constexpr uint64_t kSchemaBase = uint64_t{1} << 24;
constexpr int64_t kEntryUint64 = 18, kEntrySize = 22, kEntryInt = 5;

struct SchemaDef {
  const char* func;
  uint64_t sid;
  const char* third;  // "Root", "Peer rank" or nullptr
};

const SchemaDef* FindSchema(const std::string& func) {
  static const SchemaDef kDefs[] = {
      {"AllGather", 4, nullptr},  {"AllReduce", 5, nullptr}, {"Broadcast", 6, "Root"},   {"ReduceScatter", 7, nullptr},
      {"Reduce", 8, "Root"},      {"Send", 9, "Peer rank"},  {"Recv", 10, "Peer rank"},  {"AlltoAll", 16, nullptr},
      {"Gather", 17, "Root"},     {"Scatter", 18, "Root"},
  };
  for (const SchemaDef& d : kDefs) {
    if (func == d.func) return &d;
  }
  return nullptr;
}

void PutU64(std::string* out, uint64_t v) {
  char b[8];
  std::memcpy(b, &v, 8);  // little-endian hosts (x86-64, aarch64)
  out->append(b, 8);
}

Status WriteSchema(ExportContext& ctx, uint32_t domain_id, const SchemaDef& d) {
  Status st;
  Statement* ins = ctx.Insert("NVTX_PAYLOAD_SCHEMAS",
                              "INSERT INTO NVTX_PAYLOAD_SCHEMAS (domainId, schemaId, name, type, flags, numEntries, "
                              "payloadSize, alignTo) VALUES (?,?,?,?,?,?,?,?)",
                              &st);
  if (ins == nullptr) return st;
  int n = d.third != nullptr ? 3 : 2;
  ins->Int(1, domain_id).Int(2, static_cast<int64_t>(kSchemaBase + d.sid)).Int(4, 1).Int(6, n).Int(7, n == 3 ? 24 : 16);
  if (!(st = ins->Run()).ok()) return st;
  Statement* entry = ctx.Insert("NVTX_PAYLOAD_SCHEMA_ENTRIES",
                                "INSERT INTO NVTX_PAYLOAD_SCHEMA_ENTRIES (domainId, schemaId, idx, flags, type, name, "
                                "description, arrayOrUnionDetail, offset) VALUES (?,?,?,?,?,?,?,?,?)",
                                &st);
  if (entry == nullptr) return st;
  struct E {
    int64_t type;
    const char* name;
    int64_t offset;
  } entries[3] = {{kEntryUint64, "NCCL communicator ID", 0}, {kEntrySize, "Message size [bytes]", 8},
                  {kEntryInt, d.third, 16}};
  for (int i = 0; i < n; ++i) {
    entry->Int(1, domain_id).Int(2, static_cast<int64_t>(kSchemaBase + d.sid)).Int(3, i).Int(4, 0);
    entry->Int(5, entries[i].type).Text(6, entries[i].name).Int(8, 0);
    if (entries[i].offset != 0) entry->Int(9, entries[i].offset);
    if (!(st = entry->Run()).ok()) return st;
  }
  return Status::Ok();
}

}  // namespace

NcclNvtxWriter::NcclNvtxWriter(ExportContext& ctx, StreamContext& s, const std::map<uint32_t, NcclComm>& comms,
                               uint32_t domain_id)
    : ctx_(ctx), s_(s), comms_(comms), domain_id_(domain_id) {}

Status NcclNvtxWriter::WriteDomain() {
  if (domain_written_) return Status::Ok();
  domain_written_ = true;
  // Announced when the first communicator was created (NCCL creates its domain in ncclCommInit*).
  const NcclComm* first = nullptr;
  for (const auto& [index, c] : comms_) {
    if (first == nullptr || c.info.init_ts_ns() < first->info.init_ts_ns()) first = &c;
  }
  Status st;
  Statement* ins = ctx_.Insert("NVTX_EVENTS",
                               "INSERT INTO NVTX_EVENTS (start, eventType, text, globalTid, domainId) VALUES (?,?,?,?,?)",
                               &st);
  if (ins == nullptr) return st;
  uint64_t ts = first != nullptr ? first->info.init_ts_ns() : 0;
  uint32_t tid = first != nullptr ? first->info.init_tid() : s_.pid;
  int64_t t = s_.ToSessionNs(ts);
  ctx_.NoteTime(t);
  return ins->Int(1, t).Int(2, 75).Text(3, "NCCL").Int(4, s_.GlobalTid(tid)).Int(5, domain_id_).Run();
}

Status NcclNvtxWriter::Range(uint64_t start, uint64_t end, uint32_t tid, const std::string& name,
                             const std::string* blob) {
  Status st;
  if (!(st = WriteDomain()).ok()) return st;
  int64_t text_id = 0;
  if (!(st = ctx_.StringId(name, &text_id)).ok()) return st;
  Statement* ins = ctx_.Insert("NVTX_EVENTS",
                               "INSERT INTO NVTX_EVENTS (start, end, eventType, globalTid, textId, domainId, binaryData) "
                               "VALUES (?,?,?,?,?,?,?)",
                               &st);
  if (ins == nullptr) return st;
  int64_t a = s_.ToSessionNs(start), b = s_.ToSessionNs(end);
  ctx_.NoteTime(b);
  ins->Int(1, a).Int(2, b).Int(3, 59).Int(4, s_.GlobalTid(tid)).Int(5, text_id).Int(6, domain_id_);
  if (blob != nullptr) ins->Blob(7, blob->data(), blob->size());
  ++ranges_;
  return ins->Run();
}

Status NcclNvtxWriter::Operation(const NcclOperation& o) {
  const NcclEvent* interval = o.api != nullptr ? o.api : o.op;
  if (!interval->start_ns || !interval->stop_ns || o.func.empty()) return Status::Ok();
  Status st;
  const SchemaDef* def = FindSchema(o.func);
  std::string blob;
  if (def != nullptr && o.message_bytes) {
    if (schemas_written_.insert(def->sid).second) {
      if (!(st = WriteSchema(ctx_, domain_id_, *def)).ok()) return st;
    }
    uint64_t size = def->third != nullptr ? 24 : 16;
    PutU64(&blob, domain_id_);
    PutU64(&blob, kSchemaBase + def->sid);
    PutU64(&blob, size);
    PutU64(&blob, 32);
    PutU64(&blob, o.comm != nullptr ? o.comm->info.comm_hash() : 0);
    PutU64(&blob, *o.message_bytes);
    if (def->third != nullptr) {
      int32_t third = std::strcmp(def->third, "Root") == 0 ? o.op->start.root() : o.peer;
      int32_t pad = 0;
      blob.append(reinterpret_cast<const char*>(&third), 4);
      blob.append(reinterpret_cast<const char*>(&pad), 4);
    }
  }
  return Range(*interval->start_ns, *interval->stop_ns, interval->start_tid, NcclApiName(o.func),
               blob.empty() ? nullptr : &blob);
}

Status NcclNvtxWriter::GroupEnd(uint64_t start_ns, uint32_t tid, uint64_t stop_ns) {
  return Range(start_ns, stop_ns, tid, "ncclGroupEnd", nullptr);
}

}  // namespace gt::exporter
