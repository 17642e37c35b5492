// The tests' in-memory NCCL model: design in nccl_stream_model.h.
#include "tests/common/nccl_stream_model.h"

#include <algorithm>
#include <cstring>

#include "tools/export/nccl_event_start.h"

namespace gt::test {
namespace {

bool IsOperation(uint32_t type) {
  return type == schema::NCCL_EVENT_TYPE_COLL || type == schema::NCCL_EVENT_TYPE_P2P ||
         type == schema::NCCL_EVENT_TYPE_CE_COLL;
}

}  // namespace

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

exporter::NcclEvent* NcclStreamModel::Get(uint64_t id) {
  auto it = events_.find(id);
  return it != events_.end() ? &it->second : nullptr;
}

const exporter::NcclEvent* NcclStreamModel::Find(uint64_t id) const {
  auto it = events_.find(id);
  return it != events_.end() ? &it->second : nullptr;
}

void NcclStreamModel::AddEvent(const schema::NcclEvent& e, uint64_t ts, uint32_t tid, const std::string& func,
                               const std::string& datatype, const std::string& algo, const std::string& proto,
                               const std::string& sync) {
  switch (e.kind()) {
    case schema::NCCL_EVENT_KIND_START: {
      auto [it, fresh] = events_.try_emplace(e.event_id());
      exporter::NcclEvent& ev = it->second;
      if (fresh) order_.push_back(e.event_id());
      exporter::FillStart(e, ts, tid, func, datatype, algo, proto, sync, &ev);
      ev.start = e;
      break;
    }
    case schema::NCCL_EVENT_KIND_STOP: {
      exporter::NcclEvent* ev = Get(e.event_id());
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
      exporter::NcclEvent* ev = Get(e.event_id());
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
    const exporter::NcclEvent* op = Find(ev.parent_id);
    const exporter::NcclEvent* api = op != nullptr ? Find(op->parent_id) : nullptr;
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
    const exporter::NcclEvent& ev = events_.at(id);
    if (!IsOperation(ev.type)) continue;
    exporter::NcclOperation o;
    o.op = &ev;
    auto comm = comms_.find(ev.comm_index);
    o.comm = comm != comms_.end() ? &comm->second : nullptr;
    const exporter::NcclEvent* parent = Find(ev.parent_id);
    if (parent != nullptr &&
        (parent->type == schema::NCCL_EVENT_TYPE_COLL_API || parent->type == schema::NCCL_EVENT_TYPE_P2P_API)) {
      o.api = parent;
    }
    exporter::DeriveOperation(&o);
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
    const exporter::NcclEvent& ev = events_.at(id);
    if (ev.type != schema::NCCL_EVENT_TYPE_KERNEL_CH && ev.type != schema::NCCL_EVENT_TYPE_PROXY_OP) continue;
    auto it = op_index.find(ev.parent_id);
    if (it == op_index.end()) {
      if (ev.type == schema::NCCL_EVENT_TYPE_KERNEL_CH) ++unattributed_channels_;
      continue;
    }
    exporter::NcclOperation& o = operations_[it->second];
    if (ev.type == schema::NCCL_EVENT_TYPE_PROXY_OP) {
      if (ev.stop_ns) o.proxy_stop_ns = std::max(o.proxy_stop_ns.value_or(0), *ev.stop_ns);
      continue;
    }
    ++o.kernel_channels;
    if (ev.gpu_start_ns) o.gpu_start_ns = o.gpu_start_ns ? std::min(*o.gpu_start_ns, *ev.gpu_start_ns) : *ev.gpu_start_ns;
    if (ev.gpu_stop_ns) o.gpu_stop_ns = o.gpu_stop_ns ? std::max(*o.gpu_stop_ns, *ev.gpu_stop_ns) : *ev.gpu_stop_ns;
  }
}

}  // namespace gt::test
