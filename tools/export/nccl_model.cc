#include "tools/export/nccl_model.h"

#include <algorithm>
#include <cstring>

#include "tools/export/nccl_event_start.h"

namespace gt::exporter {
namespace {

bool IsOperation(uint32_t type) {
  return type == schema::NCCL_EVENT_TYPE_COLL || type == schema::NCCL_EVENT_TYPE_P2P ||
         type == schema::NCCL_EVENT_TYPE_CE_COLL;
}

}  // namespace

uint32_t NcclTypeSizeBytes(const std::string& t) {
  if (t == "ncclInt8" || t == "ncclUint8" || t == "ncclFloat8e4m3" || t == "ncclFloat8e5m2") return 1;
  if (t == "ncclFloat16" || t == "ncclBfloat16") return 2;
  if (t == "ncclInt32" || t == "ncclUint32" || t == "ncclFloat32") return 4;
  if (t == "ncclInt64" || t == "ncclUint64" || t == "ncclFloat64") return 8;
  return 0;
}

bool NcclTestsFactors(const std::string& func, int32_t n, uint64_t* size_multiplier, int64_t* bus_num,
                      int64_t* bus_den) {
  if (n <= 0) return false;
  *size_multiplier = 1;
  *bus_num = 1;
  *bus_den = 1;
  if (func == "AllReduce") {
    *bus_num = 2 * (n - 1);
    *bus_den = n;
  } else if (func == "AllGather" || func == "ReduceScatter" || func == "AlltoAll" || func == "Gather" ||
             func == "Scatter") {
    *size_multiplier = static_cast<uint64_t>(n);
    *bus_num = n - 1;
    *bus_den = n;
  } else if (func == "Broadcast" || func == "Reduce" || func == "Send" || func == "Recv") {
    // factor 1
  } else {
    return false;
  }
  return true;
}

void NcclBufferBytes(const std::string& func, uint64_t m, int32_t n, std::optional<uint64_t>* send,
                     std::optional<uint64_t>* recv) {
  uint64_t all = n > 0 ? m * static_cast<uint64_t>(n) : 0;
  if (func == "AllReduce" || func == "Broadcast" || func == "Reduce") {
    *send = m;
    *recv = m;
  } else if (func == "AllGather" || func == "Gather") {
    *send = m;
    if (n > 0) *recv = all;
  } else if (func == "ReduceScatter" || func == "Scatter") {
    if (n > 0) *send = all;
    *recv = m;
  } else if (func == "AlltoAll") {
    if (n > 0) *send = *recv = all;
  } else if (func == "Send") {
    *send = m;
  } else if (func == "Recv") {
    *recv = m;
  }
}

void NcclStreamModel::AddNvtx(const schema::Chunk& chunk) {
  for (const schema::NvtxDomain& d : chunk.nvtx_domains()) {
    if (d.name() == "NCCL") nccl_domains_.insert(d.domain_id());
  }
  uint64_t ts = chunk.base_ns();
  for (const schema::NvtxEvent& e : chunk.nvtx()) {
    ts += static_cast<uint64_t>(e.ts_delta_ns());
    if (e.kind() != schema::NVTX_EVENT_KIND_PUSH || nccl_domains_.count(e.domain_id()) == 0) continue;
    for (const schema::NvtxExtPayload& p : e.ext_payloads()) {
      // NCCL 2.28 payloads (nvtx_payload_schemas.h): AllReduce / ReduceScatter {comm, bytes, op},
      // Reduce {comm, bytes, root, op}; schema ids 1<<24 + 5, 7, 8.
      size_t at = p.schema_id() == (uint64_t{1} << 24) + 8 ? 20 : 16;
      bool reduction = p.schema_id() == (uint64_t{1} << 24) + 5 || p.schema_id() == (uint64_t{1} << 24) + 7 ||
                       p.schema_id() == (uint64_t{1} << 24) + 8;
      if (!reduction || p.data().size() < at + 4) continue;
      int32_t op = 0;
      std::memcpy(&op, p.data().data() + at, 4);
      red_ops_[e.tid() != 0 ? e.tid() : chunk.tid()].push_back({ts, p.schema_id(), op});
    }
  }
}

void DeriveOperation(NcclOperation* out) {
  NcclOperation& o = *out;
  const NcclEvent& ev = *o.op;
  o.func = ev.func;
  o.count = o.api != nullptr ? o.api->start.count() : ev.start.count();
  o.datatype = o.api != nullptr ? o.api->datatype : ev.datatype;
  o.type_size_bytes = NcclTypeSizeBytes(o.datatype);
  if (o.type_size_bytes != 0) o.message_bytes = o.count * o.type_size_bytes;
  if (ev.type == schema::NCCL_EVENT_TYPE_P2P) o.peer = ev.start.peer();
  uint64_t multiplier = 0;
  int64_t num = 0, den = 0;
  int32_t n_ranks = o.comm != nullptr ? o.comm->info.n_ranks() : 0;
  if (o.message_bytes && NcclTestsFactors(o.func, n_ranks, &multiplier, &num, &den)) {
    o.alg_bytes = *o.message_bytes * multiplier;
  }
  if (o.message_bytes) NcclBufferBytes(o.func, *o.message_bytes, n_ranks, &o.send_bytes, &o.recv_bytes);
}

std::string NcclApiName(const std::string& func) { return func.empty() ? std::string() : "nccl" + func; }

NcclEvent* NcclStreamModel::Get(uint64_t id) {
  auto it = events_.find(id);
  return it != events_.end() ? &it->second : nullptr;
}

const NcclEvent* NcclStreamModel::Find(uint64_t id) const {
  auto it = events_.find(id);
  return it != events_.end() ? &it->second : nullptr;
}

void NcclStreamModel::AddEvent(const schema::NcclEvent& e, uint64_t ts, uint32_t tid, const std::string& func,
                               const std::string& datatype, const std::string& algo, const std::string& proto,
                               const std::string& sync) {
  switch (e.kind()) {
    case schema::NCCL_EVENT_KIND_START: {
      auto [it, fresh] = events_.try_emplace(e.event_id());
      NcclEvent& ev = it->second;
      if (fresh) order_.push_back(e.event_id());
      FillStart(e, ts, tid, func, datatype, algo, proto, sync, &ev);
      ev.start = e;
      break;
    }
    case schema::NCCL_EVENT_KIND_STOP: {
      NcclEvent* ev = Get(e.event_id());
      if (ev == nullptr) {
        ++orphan_records_;
        break;
      }
      ev->stop_ns = ts;
      ev->stop_tid = tid;
      ev->gpu_stop_raw_ns = e.gpu_timer_ns();
      break;
    }
    case schema::NCCL_EVENT_KIND_STATE: {
      NcclEvent* ev = Get(e.event_id());
      if (ev == nullptr) {
        ++orphan_records_;
        break;
      }
      ev->states.push_back({ts, tid, e.state(), e.trans_size_bytes(), e.appended_proxy_ops()});
      break;
    }
    case schema::NCCL_EVENT_KIND_FINALIZE: {
      auto it = comms_.find(e.comm_index());
      if (it != comms_.end()) {
        it->second.finalize_ns = ts;
        it->second.finalize_tid = tid;
      }
      break;
    }
    default:
      break;
  }
}

void NcclStreamModel::Finish() {
  // GPU clock: kernel-channel observations bound the offset (nccl_clock.h).
  for (const auto& [id, ev] : events_) {
    if (ev.type != schema::NCCL_EVENT_TYPE_KERNEL_CH) continue;
    if (ev.start.gpu_timer_ns() != 0 && ev.start_ns) clock_.AddUpperBound(ev.start.gpu_timer_ns(), *ev.start_ns);
    if (ev.gpu_stop_raw_ns != 0 && ev.stop_ns) clock_.AddUpperBound(ev.gpu_stop_raw_ns, *ev.stop_ns);
    const NcclEvent* op = Find(ev.parent_id);
    const NcclEvent* api = op != nullptr ? Find(op->parent_id) : nullptr;
    if (api != nullptr && api->start_ns && ev.start.gpu_timer_ns() != 0 &&
        (api->type == schema::NCCL_EVENT_TYPE_COLL_API || api->type == schema::NCCL_EVENT_TYPE_P2P_API)) {
      clock_.AddLowerBound(ev.start.gpu_timer_ns(), *api->start_ns);
    }
  }
  clock_.Fit();
  for (auto& [id, ev] : events_) {
    if (!ev.start_ns || !ev.stop_ns) ++open_events_;
    if (ev.type != schema::NCCL_EVENT_TYPE_KERNEL_CH) continue;
    if (ev.start.gpu_timer_ns() != 0) ev.gpu_start_ns = clock_.ToStreamNs(ev.start.gpu_timer_ns());
    if (ev.gpu_stop_raw_ns != 0) ev.gpu_stop_ns = clock_.ToStreamNs(ev.gpu_stop_raw_ns);
  }
  // Operations, in record order, with their API parent, kernel channels and proxy ops.
  std::unordered_map<uint64_t, size_t> op_index;
  for (uint64_t id : order_) {
    const NcclEvent& ev = events_.at(id);
    if (!IsOperation(ev.type)) continue;
    NcclOperation o;
    o.op = &ev;
    auto comm = comms_.find(ev.comm_index);
    o.comm = comm != comms_.end() ? &comm->second : nullptr;
    const NcclEvent* parent = Find(ev.parent_id);
    if (parent != nullptr &&
        (parent->type == schema::NCCL_EVENT_TYPE_COLL_API || parent->type == schema::NCCL_EVENT_TYPE_P2P_API)) {
      o.api = parent;
    }
    DeriveOperation(&o);
    // The reduction operation: NCCL's NVTX push for this API call (same thread, the last one of the
    // function's schema before the CollApi start).
    uint64_t schema = o.func == "AllReduce" ? 5 : o.func == "ReduceScatter" ? 7 : o.func == "Reduce" ? 8 : 0;
    auto marks = o.api != nullptr && o.api->start_ns && schema != 0 ? red_ops_.find(o.api->start_tid) : red_ops_.end();
    if (marks != red_ops_.end()) {
      for (auto m = marks->second.rbegin(); m != marks->second.rend(); ++m) {
        if (m->ts_ns <= *o.api->start_ns && m->schema_id == (uint64_t{1} << 24) + schema) {
          o.red_op = m->red_op;
          break;
        }
      }
    }
    op_index[id] = operations_.size();
    operations_.push_back(o);
  }
  for (uint64_t id : order_) {
    const NcclEvent& ev = events_.at(id);
    if (ev.type != schema::NCCL_EVENT_TYPE_KERNEL_CH && ev.type != schema::NCCL_EVENT_TYPE_PROXY_OP) continue;
    auto it = op_index.find(ev.parent_id);
    if (it == op_index.end()) {
      if (ev.type == schema::NCCL_EVENT_TYPE_KERNEL_CH) ++unattributed_channels_;
      continue;
    }
    NcclOperation& o = operations_[it->second];
    if (ev.type == schema::NCCL_EVENT_TYPE_PROXY_OP) {
      if (ev.stop_ns) o.proxy_stop_ns = std::max(o.proxy_stop_ns.value_or(0), *ev.stop_ns);
      continue;
    }
    ++o.kernel_channels;
    if (ev.gpu_start_ns) o.gpu_start_ns = o.gpu_start_ns ? std::min(*o.gpu_start_ns, *ev.gpu_start_ns) : *ev.gpu_start_ns;
    if (ev.gpu_stop_ns) o.gpu_stop_ns = o.gpu_stop_ns ? std::max(*o.gpu_stop_ns, *ev.gpu_stop_ns) : *ev.gpu_stop_ns;
  }
}

}  // namespace gt::exporter
