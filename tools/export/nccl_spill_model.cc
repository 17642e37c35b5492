#include "tools/export/nccl_spill_model.h"

#include <algorithm>
#include <cstring>
#include <optional>
#include <vector>

#include "tools/export/nccl_event_start.h"

namespace gt::exporter {
namespace {

constexpr uint32_t kKindStop = 2, kKindState = 3;

// The columns ReadEvent reads, with a table alias.
std::string EventColumns(const char* a) {
  std::string out;
  for (const char* c : {"seq", "id", "type", "comm", "start_ns", "start_tid", "stop_ns", "stop_tid", "parent", "grp",
                        "gpu_start_raw", "gpu_stop_raw", "func", "datatype", "algo", "proto", "sync", "start"}) {
    out += (out.empty() ? "" : ", ") + std::string(a) + "." + c;
  }
  return out;
}
constexpr int kEventColumnCount = 18;

std::optional<int64_t> OptColumn(const Statement& q, int i) {
  return q.ColumnIsNull(i) ? std::nullopt : std::optional<int64_t>(q.ColumnInt(i));
}

}  // namespace

Status NcclSpillModel::Create(ExportContext& ctx) {
  if (created_)
    return Status::Ok();
  Status st = ctx.db().Exec(
      "CREATE TABLE gt_spill.nccl_events (seq INTEGER PRIMARY KEY, id INTEGER NOT NULL, first_read INTEGER NOT NULL, "
      "type INTEGER NOT NULL, comm INTEGER NOT NULL, start_ns INTEGER, start_tid INTEGER NOT NULL, stop_ns INTEGER, "
      "stop_tid INTEGER NOT NULL, parent INTEGER NOT NULL, grp INTEGER NOT NULL, gpu_start_raw INTEGER NOT NULL, "
      "gpu_stop_raw INTEGER NOT NULL, group_depth INTEGER NOT NULL, func TEXT, datatype TEXT, algo TEXT, proto TEXT, "
      "sync TEXT, start BLOB);"
      "CREATE INDEX gt_spill.nccl_events_id ON nccl_events (id);"
      "CREATE TABLE gt_spill.nccl_states (seq INTEGER NOT NULL, r INTEGER NOT NULL, ts INTEGER NOT NULL, tid INTEGER "
      "NOT NULL, state INTEGER NOT NULL, trans INTEGER NOT NULL, appended INTEGER NOT NULL, PRIMARY KEY (seq, r)) "
      "WITHOUT ROWID;"
      "CREATE TABLE gt_spill.nccl_late (r INTEGER PRIMARY KEY, id INTEGER NOT NULL, kind INTEGER NOT NULL, ts "
      "INTEGER NOT NULL, tid INTEGER NOT NULL, gpu_raw INTEGER NOT NULL, state INTEGER NOT NULL, trans INTEGER NOT "
      "NULL, appended INTEGER NOT NULL);"
      "CREATE TABLE gt_spill.nccl_marks (tid INTEGER NOT NULL, schema_id INTEGER NOT NULL, seq INTEGER NOT NULL, ts "
      "INTEGER NOT NULL, red_op INTEGER NOT NULL, PRIMARY KEY (tid, schema_id, seq)) WITHOUT ROWID;"
      "CREATE TABLE gt_spill.nccl_agg (parent INTEGER PRIMARY KEY, channels INTEGER NOT NULL, gpu_start INTEGER, "
      "gpu_end INTEGER, proxy_end INTEGER);");
  if (!st.ok())
    return st;
  created_ = true;
  if ((insert_event_ = ctx.db().Prepare(
           "INSERT INTO gt_spill.nccl_events (seq, id, first_read, type, comm, start_ns, start_tid, stop_ns, "
           "stop_tid, parent, grp, gpu_start_raw, gpu_stop_raw, group_depth, func, datatype, algo, proto, sync, start) "
           "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
           &st)) == nullptr ||
      (insert_state_ = ctx.db().Prepare(
           "INSERT INTO gt_spill.nccl_states (seq, r, ts, tid, state, trans, appended) VALUES (?,?,?,?,?,?,?)", &st)) ==
          nullptr ||
      (insert_late_ =
           ctx.db().Prepare("INSERT INTO gt_spill.nccl_late (r, id, kind, ts, tid, gpu_raw, state, trans, appended) "
                            "VALUES (?,?,?,?,?,?,?,?,?)",
                            &st)) == nullptr ||
      (insert_mark_ = ctx.db().Prepare(
           "INSERT INTO gt_spill.nccl_marks (tid, schema_id, seq, ts, red_op) VALUES (?,?,?,?,?)", &st)) == nullptr ||
      (upsert_agg_ = ctx.db().Prepare(
           "INSERT INTO gt_spill.nccl_agg (parent, channels, gpu_start, gpu_end, proxy_end) VALUES (?,?,?,?,?) "
           "ON CONFLICT (parent) DO UPDATE SET channels = channels + excluded.channels, "
           "gpu_start = CASE WHEN excluded.gpu_start IS NULL THEN gpu_start WHEN gpu_start IS NULL THEN "
           "excluded.gpu_start ELSE min(gpu_start, excluded.gpu_start) END, "
           "gpu_end = CASE WHEN excluded.gpu_end IS NULL THEN gpu_end WHEN gpu_end IS NULL THEN excluded.gpu_end "
           "ELSE max(gpu_end, excluded.gpu_end) END, "
           "proxy_end = CASE WHEN excluded.proxy_end IS NULL THEN proxy_end WHEN proxy_end IS NULL THEN "
           "excluded.proxy_end ELSE max(proxy_end, excluded.proxy_end) END",
           &st)) == nullptr) {
    return st;
  }
  return Status::Ok();
}

Status NcclSpillModel::BeginStream(ExportContext& ctx) {
  open_.clear();
  nccl_domains_.clear();
  comms_.clear();
  pools_.clear();
  clock_ = GpuClockMap();
  next_seq_ = 1;
  read_ = events_ = late_ = marks_ = 0;
  orphan_records_ = unattributed_channels_ = open_events_ = 0;
  pending_.reset();
  channels_ = 0;
  aggregated_ = false;
  return Create(ctx);
}

Status NcclSpillModel::Clear(ExportContext& ctx) {
  if (!created_)
    return Status::Ok();
  return ctx.db().Exec(
      "DELETE FROM gt_spill.nccl_events; DELETE FROM gt_spill.nccl_states; DELETE FROM gt_spill.nccl_late; "
      "DELETE FROM gt_spill.nccl_marks; DELETE FROM gt_spill.nccl_agg;");
}

Status NcclSpillModel::AddNvtx(ExportContext& ctx, const schema::Chunk& chunk) {
  for (const schema::NvtxDomain& d : chunk.nvtx_domains()) {
    if (d.name() == "NCCL")
      nccl_domains_.insert(d.domain_id());
  }
  if (nccl_domains_.empty())
    return Status::Ok();
  Status st;
  uint64_t ts = chunk.base_ns();
  for (const schema::NvtxEvent& e : chunk.nvtx()) {
    ts += static_cast<uint64_t>(e.ts_delta_ns());
    if (e.kind() != schema::NVTX_EVENT_KIND_PUSH || nccl_domains_.count(e.domain_id()) == 0)
      continue;
    for (const schema::NvtxExtPayload& p : e.ext_payloads()) {
      // As NcclStreamModel::AddNvtx: NCCL 2.28's AllReduce / ReduceScatter / Reduce payloads.
      size_t at = p.schema_id() == (uint64_t{1} << 24) + 8 ? 20 : 16;
      bool reduction = p.schema_id() == (uint64_t{1} << 24) + 5 || p.schema_id() == (uint64_t{1} << 24) + 7 ||
                       p.schema_id() == (uint64_t{1} << 24) + 8;
      if (!reduction || p.data().size() < at + 4)
        continue;
      int32_t op = 0;
      std::memcpy(&op, p.data().data() + at, 4);
      Statement* ins = insert_mark_;
      ins->Int(1, e.tid() != 0 ? e.tid() : chunk.tid()).Int(2, static_cast<int64_t>(p.schema_id()));
      ins->Int(3, static_cast<int64_t>(++marks_)).Int(4, static_cast<int64_t>(ts)).Int(5, op);
      if (!(st = ins->Run()).ok())
        return st;
    }
  }
  return Status::Ok();
}

Status NcclSpillModel::AddEvent(ExportContext& ctx,
                                const schema::NcclEvent& e,
                                uint64_t ts,
                                uint32_t tid,
                                std::string_view func,
                                std::string_view datatype,
                                std::string_view algo,
                                std::string_view proto,
                                std::string_view sync) {
  Status st;
  switch (e.kind()) {
    case schema::NCCL_EVENT_KIND_START: {
      ++read_;
      auto [it, fresh] = open_.try_emplace(e.event_id());
      Open& o = it->second;
      if (fresh) {
        o.seq = next_seq_++;
        o.first_read = read_;
        ++events_;
      }
      FillStart(e, ts, tid, func, datatype, algo, proto, sync, &o.event);
      o.start_blob.clear();
      e.SerializeToString(&o.start_blob);
      o.gpu_start_raw_ns = e.gpu_timer_ns();
      o.group_depth = e.group_depth();
      return Status::Ok();
    }
    case schema::NCCL_EVENT_KIND_STOP:
    case schema::NCCL_EVENT_KIND_STATE: {
      ++read_;
      auto it = open_.find(e.event_id());
      if (it == open_.end()) {
        // Not open: an orphan, or a record of an event already stopped (applied in Finish).
        Statement* ins = insert_late_;
        ++late_;
        ins->Int(1, static_cast<int64_t>(read_)).Int(2, static_cast<int64_t>(e.event_id())).Int(3, e.kind());
        ins->Int(4, static_cast<int64_t>(ts)).Int(5, tid).Int(6, static_cast<int64_t>(e.gpu_timer_ns()));
        ins->Int(7, e.state()).Int(8, static_cast<int64_t>(e.trans_size_bytes())).Int(9, e.appended_proxy_ops());
        return ins->Run();
      }
      if (e.kind() == schema::NCCL_EVENT_KIND_STATE) {
        Statement* ins = insert_state_;
        ins->Int(1, it->second.seq).Int(2, static_cast<int64_t>(read_)).Int(3, static_cast<int64_t>(ts)).Int(4, tid);
        ins->Int(5, e.state()).Int(6, static_cast<int64_t>(e.trans_size_bytes())).Int(7, e.appended_proxy_ops());
        return ins->Run();
      }
      NcclEvent& ev = it->second.event;
      ev.stop_ns = ts;
      ev.stop_tid = tid;
      ev.gpu_stop_raw_ns = e.gpu_timer_ns();
      if (!(st = Spill(ctx, it->second)).ok())
        return st;
      open_.erase(it);
      return Status::Ok();
    }
    case schema::NCCL_EVENT_KIND_FINALIZE: {
      auto it = comms_.find(e.comm_index());
      if (it != comms_.end()) {
        it->second.finalize_ns = ts;
        it->second.finalize_tid = tid;
      }
      return Status::Ok();
    }
    default:
      return Status::Ok();
  }
}

Status NcclSpillModel::Spill(ExportContext&, const Open& o) {
  Statement* ins = insert_event_;
  const NcclEvent& e = o.event;
  ins->Int(1, o.seq).Int(2, static_cast<int64_t>(e.id)).Int(3, static_cast<int64_t>(o.first_read)).Int(4, e.type);
  ins->Int(5, e.comm_index);
  ins->OptInt(6, e.start_ns ? std::optional<int64_t>(static_cast<int64_t>(*e.start_ns)) : std::nullopt);
  ins->Int(7, e.start_tid);
  ins->OptInt(8, e.stop_ns ? std::optional<int64_t>(static_cast<int64_t>(*e.stop_ns)) : std::nullopt);
  ins->Int(9, e.stop_tid).Int(10, static_cast<int64_t>(e.parent_id)).Int(11, static_cast<int64_t>(e.group_id));
  ins->Int(12, static_cast<int64_t>(o.gpu_start_raw_ns)).Int(13, static_cast<int64_t>(e.gpu_stop_raw_ns));
  ins->Int(14, o.group_depth);
  ins->Text(15, e.func).Text(16, e.datatype).Text(17, e.algo).Text(18, e.proto).Text(19, e.sync_strategy);
  ins->Blob(20, o.start_blob.data(), o.start_blob.size());
  return ins->Run();
}

void NcclSpillModel::ReadEvent(const Statement& q, int f, NcclEvent* e) {
  *e = NcclEvent();
  e->id = static_cast<uint64_t>(q.ColumnInt(f + 1));
  e->type = static_cast<uint32_t>(q.ColumnInt(f + 2));
  e->comm_index = static_cast<uint32_t>(q.ColumnInt(f + 3));
  if (!q.ColumnIsNull(f + 4))
    e->start_ns = static_cast<uint64_t>(q.ColumnInt(f + 4));
  e->start_tid = static_cast<uint32_t>(q.ColumnInt(f + 5));
  if (!q.ColumnIsNull(f + 6))
    e->stop_ns = static_cast<uint64_t>(q.ColumnInt(f + 6));
  e->stop_tid = static_cast<uint32_t>(q.ColumnInt(f + 7));
  e->parent_id = static_cast<uint64_t>(q.ColumnInt(f + 8));
  e->group_id = static_cast<uint64_t>(q.ColumnInt(f + 9));
  e->gpu_stop_raw_ns = static_cast<uint64_t>(q.ColumnInt(f + 11));
  e->func = q.ColumnText(f + 12);
  e->datatype = q.ColumnText(f + 13);
  e->algo = q.ColumnText(f + 14);
  e->proto = q.ColumnText(f + 15);
  e->sync_strategy = q.ColumnText(f + 16);
  std::string_view blob = q.ColumnBlob(f + 17);
  e->start.ParseFromArray(blob.data(), static_cast<int>(blob.size()));
}

Status NcclSpillModel::ResolveLate(ExportContext& ctx) {
  if (late_ == 0)
    return Status::Ok();
  Status st;
  // Orphans: no START of the id read before the record (NcclStreamModel counts them when read).
  Statement* count = ctx.db().Prepare(
      "SELECT count(*) FROM gt_spill.nccl_late AS l WHERE NOT EXISTS (SELECT 1 FROM gt_spill.nccl_events AS e "
      "WHERE e.id = l.id AND e.first_read < l.r)",
      &st);
  if (count == nullptr)
    return st;
  if (count->Step())
    orphan_records_ += static_cast<uint64_t>(count->ColumnInt(0));
  count->Reset();
  // States after the event's stop: after its other states (ordered by read position).
  if (!(st = ctx.db().Exec(
            "INSERT INTO gt_spill.nccl_states (seq, r, ts, tid, state, trans, appended) SELECT e.seq, l.r, l.ts, "
            "l.tid, l.state, l.trans, l.appended FROM gt_spill.nccl_late AS l JOIN gt_spill.nccl_events AS e ON "
            "e.id = l.id AND e.first_read < l.r WHERE l.kind = 3"))
           .ok()) {
    return st;
  }
  // A second stop wins over the first, in read order.
  Statement* stops =
      ctx.db().Prepare("SELECT r, id, ts, tid, gpu_raw FROM gt_spill.nccl_late WHERE kind = 2 ORDER BY r", &st);
  if (stops == nullptr)
    return st;
  Statement* update = ctx.db().Prepare(
      "UPDATE gt_spill.nccl_events SET stop_ns = ?, stop_tid = ?, gpu_stop_raw = ? WHERE id = ? AND first_read < ?",
      &st);
  if (update == nullptr)
    return st;
  while (stops->Step()) {
    update->Int(1, stops->ColumnInt(2)).Int(2, stops->ColumnInt(3)).Int(3, stops->ColumnInt(4));
    update->Int(4, stops->ColumnInt(1)).Int(5, stops->ColumnInt(0));
    if (!(st = update->Run()).ok()) {
      stops->Reset();
      return st;
    }
  }
  stops->Reset();
  (void)kKindStop;
  (void)kKindState;
  return Status::Ok();
}

Status NcclSpillModel::Finish(ExportContext& ctx) {
  Status st;
  // The events never stopped, in their places.
  for (const auto& [id, o] : open_) {
    if (!(st = Spill(ctx, o)).ok())
      return st;
  }
  open_.clear();
  if (!(st = ResolveLate(ctx)).ok())
    return st;
  // GPU clock: the kernel-channel observations, as NcclStreamModel::Finish gives them.
  Statement* samples = ctx.db().Prepare(
      "SELECT k.gpu_start_raw, k.start_ns, k.gpu_stop_raw, k.stop_ns, api.start_ns, api.type FROM "
      "gt_spill.nccl_events AS k LEFT JOIN gt_spill.nccl_events AS op ON op.id = k.parent LEFT JOIN "
      "gt_spill.nccl_events AS api ON api.id = op.parent WHERE k.type = " +
          std::to_string(schema::NCCL_EVENT_TYPE_KERNEL_CH),
      &st);
  if (samples == nullptr)
    return st;
  // The origin pass needs every distinct GPU time once: a channel's start and end (a lower bound
  // repeats its channel's start), no join.
  Statement* times =
      ctx.db().Prepare("SELECT gpu_start_raw, gpu_stop_raw, stop_ns FROM gt_spill.nccl_events WHERE type = " +
                           std::to_string(schema::NCCL_EVENT_TYPE_KERNEL_CH),
                       &st);
  if (times == nullptr)
    return st;
  clock_.FitStreamed([samples, times](bool origin_pass, const GpuClockMap::SampleFn& fn) {
    if (origin_pass) {
      while (times->Step()) {
        auto gpu_start = static_cast<uint64_t>(times->ColumnInt(0));
        auto gpu_stop = static_cast<uint64_t>(times->ColumnInt(1));
        if (gpu_start != 0)
          fn(gpu_start, 0, true);
        if (gpu_stop != 0 && !times->ColumnIsNull(2))
          fn(gpu_stop, 0, true);
      }
      times->Reset();
      return;
    }
    while (samples->Step()) {
      auto gpu_start = static_cast<uint64_t>(samples->ColumnInt(0));
      auto gpu_stop = static_cast<uint64_t>(samples->ColumnInt(2));
      if (gpu_start != 0 && !samples->ColumnIsNull(1))
        fn(gpu_start, static_cast<uint64_t>(samples->ColumnInt(1)), true);
      if (gpu_stop != 0 && !samples->ColumnIsNull(3))
        fn(gpu_stop, static_cast<uint64_t>(samples->ColumnInt(3)), true);
      int64_t api_type = samples->ColumnInt(5);
      if (!samples->ColumnIsNull(4) && gpu_start != 0 &&
          (api_type == schema::NCCL_EVENT_TYPE_COLL_API || api_type == schema::NCCL_EVENT_TYPE_P2P_API)) {
        fn(gpu_start, static_cast<uint64_t>(samples->ColumnInt(4)), false);
      }
    }
    samples->Reset();
  });
  Statement* open = ctx.db().Prepare("SELECT count(*) FROM gt_spill.nccl_events WHERE stop_ns IS NULL", &st);
  if (open == nullptr)
    return st;
  if (open->Step())
    open_events_ = static_cast<uint64_t>(open->ColumnInt(0));
  open->Reset();
  return Status::Ok();
}

Status NcclSpillModel::AggregateChild(const NcclEvent& e) {
  if (e.type != schema::NCCL_EVENT_TYPE_KERNEL_CH && e.type != schema::NCCL_EVENT_TYPE_PROXY_OP)
    return Status::Ok();
  const auto parent = static_cast<int64_t>(e.parent_id);
  if (pending_ && pending_->parent != parent) {
    Status st = FlushAggregate();
    if (!st.ok())
      return st;
  }
  if (!pending_) {
    PendingAggregate fresh;  // not emplace(): clang rejects it for a nested type with member initializers
    fresh.parent = parent;
    pending_ = fresh;
  }
  PendingAggregate& p = *pending_;
  if (e.type == schema::NCCL_EVENT_TYPE_PROXY_OP) {
    if (e.stop_ns)
      p.proxy_end_ns = std::max(p.proxy_end_ns.value_or(0), static_cast<int64_t>(*e.stop_ns));
    return Status::Ok();
  }
  ++channels_;
  ++p.channels;
  if (e.gpu_start_ns)
    p.gpu_start_ns = p.gpu_start_ns ? std::min(*p.gpu_start_ns, *e.gpu_start_ns) : *e.gpu_start_ns;
  if (e.gpu_stop_ns)
    p.gpu_end_ns = p.gpu_end_ns ? std::max(*p.gpu_end_ns, *e.gpu_stop_ns) : *e.gpu_stop_ns;
  return Status::Ok();
}

Status NcclSpillModel::FlushAggregate() {
  if (!pending_)
    return Status::Ok();
  Statement* up = upsert_agg_;
  up->Int(1, pending_->parent).Int(2, pending_->channels).OptInt(3, pending_->gpu_start_ns);
  up->OptInt(4, pending_->gpu_end_ns).OptInt(5, pending_->proxy_end_ns);
  pending_.reset();
  return up->Run();
}

Status NcclSpillModel::FinishAggregate(ExportContext& ctx) {
  Status st = FlushAggregate();
  if (!st.ok())
    return st;
  // Channels whose parent is no operation.
  Statement* attributed = ctx.db().Prepare(
      "SELECT coalesce(sum(a.channels), 0) FROM gt_spill.nccl_agg AS a WHERE EXISTS (SELECT 1 FROM "
      "gt_spill.nccl_events AS e WHERE e.id = a.parent AND e.type IN (" +
          std::to_string(schema::NCCL_EVENT_TYPE_COLL) + "," + std::to_string(schema::NCCL_EVENT_TYPE_P2P) + "," +
          std::to_string(schema::NCCL_EVENT_TYPE_CE_COLL) + "))",
      &st);
  if (attributed == nullptr)
    return st;
  uint64_t in_ops = attributed->Step() ? static_cast<uint64_t>(attributed->ColumnInt(0)) : 0;
  attributed->Reset();
  unattributed_channels_ = channels_ - in_ops;
  aggregated_ = true;
  return Status::Ok();
}

Status NcclSpillModel::ForEachEvent(ExportContext& ctx,
                                    const std::function<Status(const NcclEvent&)>& on_event,
                                    const std::function<Status(const NcclEvent&, const NcclEvent::State&)>& on_state) {
  Status st;
  Statement* q =
      ctx.db().Prepare("SELECT " + EventColumns("e") + " FROM gt_spill.nccl_events AS e ORDER BY e.seq", &st);
  if (q == nullptr)
    return st;
  Statement* states =
      ctx.db().Prepare("SELECT seq, ts, tid, state, trans, appended FROM gt_spill.nccl_states ORDER BY seq, r", &st);
  if (states == nullptr)
    return st;
  bool state_row = states->Step();
  NcclEvent e;
  auto done = [&](Status s) {
    q->Reset();
    states->Reset();
    return s;
  };
  while (q->Step()) {
    int64_t seq = q->ColumnInt(0);
    ReadEvent(*q, 0, &e);
    if (e.type == schema::NCCL_EVENT_TYPE_KERNEL_CH) {
      if (e.start.gpu_timer_ns() != 0)
        e.gpu_start_ns = clock_.ToStreamNs(e.start.gpu_timer_ns());
      if (e.gpu_stop_raw_ns != 0)
        e.gpu_stop_ns = clock_.ToStreamNs(e.gpu_stop_raw_ns);
    }
    if (!aggregated_ && !(st = AggregateChild(e)).ok())
      return done(st);
    if (!(st = on_event(e)).ok())
      return done(st);
    while (state_row && states->ColumnInt(0) < seq)
      state_row = states->Step();
    while (state_row && states->ColumnInt(0) == seq) {
      NcclEvent::State x{static_cast<uint64_t>(states->ColumnInt(1)), static_cast<uint32_t>(states->ColumnInt(2)),
                         static_cast<uint32_t>(states->ColumnInt(3)), static_cast<uint64_t>(states->ColumnInt(4)),
                         static_cast<int32_t>(states->ColumnInt(5))};
      if (!(st = on_state(e, x)).ok())
        return done(st);
      state_row = states->Step();
    }
  }
  q->Reset();
  states->Reset();
  return aggregated_ ? Status::Ok() : FinishAggregate(ctx);
}

Status NcclSpillModel::ForEachOperation(ExportContext& ctx, const std::function<Status(const NcclOperation&)>& fn) {
  Status st;
  if (!aggregated_) {  // the aggregates come from a pass over the events
    st = ForEachEvent(
        ctx, [](const NcclEvent&) { return Status::Ok(); },
        [](const NcclEvent&, const NcclEvent::State&) { return Status::Ok(); });
    if (!st.ok())
      return st;
  }
  const std::string ops = std::to_string(schema::NCCL_EVENT_TYPE_COLL) + "," +
                          std::to_string(schema::NCCL_EVENT_TYPE_P2P) + "," +
                          std::to_string(schema::NCCL_EVENT_TYPE_CE_COLL);
  const std::string apis =
      std::to_string(schema::NCCL_EVENT_TYPE_COLL_API) + "," + std::to_string(schema::NCCL_EVENT_TYPE_P2P_API);
  Statement* q = ctx.db().Prepare(
      "SELECT " + EventColumns("op") + ", " + EventColumns("api") +
          ", a.channels, a.gpu_start, a.gpu_end, a.proxy_end FROM gt_spill.nccl_events AS op LEFT JOIN "
          "gt_spill.nccl_events AS api ON api.id = op.parent AND api.type IN (" +
          apis + ") LEFT JOIN gt_spill.nccl_agg AS a ON a.parent = op.id WHERE op.type IN (" + ops +
          ") ORDER BY op.seq",
      &st);
  if (q == nullptr)
    return st;
  Statement* mark = nullptr;
  if (marks_ > 0) {
    mark = ctx.db().Prepare(
        "SELECT red_op FROM gt_spill.nccl_marks WHERE tid = ? AND schema_id = ? AND ts <= ? ORDER BY seq DESC LIMIT 1",
        &st);
    if (mark == nullptr)
      return st;
  }
  NcclEvent op, api;
  constexpr int kAgg = 2 * kEventColumnCount;
  while (q->Step()) {
    ReadEvent(*q, 0, &op);
    NcclOperation o;
    o.op = &op;
    if (!q->ColumnIsNull(kEventColumnCount)) {
      ReadEvent(*q, kEventColumnCount, &api);
      o.api = &api;
    }
    auto comm = comms_.find(op.comm_index);
    o.comm = comm != comms_.end() ? &comm->second : nullptr;
    DeriveOperation(&o);
    uint64_t schema = o.func == "AllReduce" ? 5 : o.func == "ReduceScatter" ? 7 : o.func == "Reduce" ? 8 : 0;
    if (mark != nullptr && o.api != nullptr && o.api->start_ns && schema != 0) {
      mark->Int(1, o.api->start_tid).Int(2, static_cast<int64_t>((uint64_t{1} << 24) + schema));
      mark->Int(3, static_cast<int64_t>(*o.api->start_ns));
      if (mark->Step())
        o.red_op = static_cast<int32_t>(mark->ColumnInt(0));
      mark->Reset();
    }
    if (!q->ColumnIsNull(kAgg)) {
      o.kernel_channels = static_cast<uint32_t>(q->ColumnInt(kAgg));
      o.gpu_start_ns = OptColumn(*q, kAgg + 1);
      o.gpu_stop_ns = OptColumn(*q, kAgg + 2);
      if (!q->ColumnIsNull(kAgg + 3))
        o.proxy_stop_ns = static_cast<uint64_t>(q->ColumnInt(kAgg + 3));
    }
    if (!(st = fn(o)).ok()) {
      q->Reset();
      return st;
    }
  }
  q->Reset();
  return Status::Ok();
}

Status NcclSpillModel::ForEachGroupEnd(
    ExportContext& ctx,
    const std::function<Status(uint64_t start_ns, uint32_t tid, uint64_t stop_ns)>& fn) {
  Status st;
  Statement* q = ctx.db().Prepare(
      "SELECT e.seq, e.stop_ns, s.ts, s.tid FROM gt_spill.nccl_events AS e JOIN gt_spill.nccl_states AS s ON s.seq = "
      "e.seq WHERE e.type = " +
          std::to_string(schema::NCCL_EVENT_TYPE_GROUP_API) +
          " AND e.group_depth >= 2 AND e.stop_ns IS NOT NULL AND s.state = 24 ORDER BY e.seq, s.r",
      &st);
  if (q == nullptr)
    return st;
  std::optional<int64_t> last;
  while (q->Step()) {
    if (last && *last == q->ColumnInt(0))
      continue;  // the first state 24 only
    last = q->ColumnInt(0);
    st = fn(static_cast<uint64_t>(q->ColumnInt(2)), static_cast<uint32_t>(q->ColumnInt(3)),
            static_cast<uint64_t>(q->ColumnInt(1)));
    if (!st.ok()) {
      q->Reset();
      return st;
    }
  }
  q->Reset();
  return Status::Ok();
}

}  // namespace gt::exporter
