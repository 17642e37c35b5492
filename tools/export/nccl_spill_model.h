// NcclSpillModel: the NCCL plugin events of one stream for `gtrace export`, in memory bounded by the
// events open at a time. The GPU clock fit needs every kernel-channel observation of the stream and
// an operation's row needs its API parent, kernel channels and proxy ops, so the rows can only be
// written at the stream's end; NcclStreamModel (the export's former model, now the tests' reference:
// tests/common/nccl_stream_model.h) holds every event until then, this
// model keeps only the events started and not yet stopped and sends the rest, as they are read, to
// the spill database (schema gt_spill, ExportContext::AttachSpill):
//   nccl_events  one row per event (seq = its place in first-record order, as NcclStreamModel's
//                order()), written when its STOP is read (or at the stream's end if never stopped)
//   nccl_states  STATE records, keyed (event seq, read position): read back per event in order
//   nccl_late    STOP / STATE records of an id not open when read: applied at the end to the event
//                started before them (a state read after the stop, a second stop), else orphans
//   nccl_marks   NCCL's NVTX reduction-op marks, looked up per operation
//   nccl_agg     per operation: kernel channels, first GPU start, last GPU end, last proxy stop
// Finish fits the GPU clock from the spilled samples (GpuClockMap::FitStreamed: two passes) and
// fills nccl_agg; ForEachEvent / ForEachOperation / ForEachGroupEnd then give the same events,
// states and operations, in the same order, as NcclStreamModel (the export is byte for byte the
// same: tests/export/large_nccl_test.cc). Every query runs on an index (no sort, no automatic index:
// the connection's temp_store is MEMORY). Ids are unique per process (the plugin's counter); a START
// of an id already stopped makes a second row where NcclStreamModel would merge the two.
// Memory: the open events, the communicators, pools, NVTX domains, GPU clock snapshots and windows.
// Single-threaded (the exporter's thread); owned by the NCCL export module, one stream at a time.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>

#include "gtrace.pb.h"
#include "schema/status.h"
#include "tools/export/export_context.h"
#include "tools/export/nccl_clock.h"
#include "tools/export/nccl_model.h"

namespace gt::exporter {

class NcclSpillModel {
 public:
  NcclSpillModel() = default;
  NcclSpillModel(const NcclSpillModel&) = delete;
  NcclSpillModel& operator=(const NcclSpillModel&) = delete;

  // Forgets the previous stream (its spill rows are deleted by Finish / Clear).
  Status BeginStream(ExportContext& ctx);
  template <typename TextFn>
  Status AddChunk(ExportContext& ctx, const schema::Chunk& chunk, TextFn text);
  Status AddNvtx(ExportContext& ctx, const schema::Chunk& chunk);
  void AddClockSnapshot(uint64_t monotonic_ns, uint64_t realtime_ns) { clock_.AddSnapshot(monotonic_ns, realtime_ns); }
  // Writes the open events, applies the late records, fits the GPU clock, fills nccl_agg.
  Status Finish(ExportContext& ctx);
  // Empties the spill tables (after the stream's rows are written).
  Status Clear(ExportContext& ctx);

  // Events in first-record order (GPU times converted); `on_state` follows each event's `on_event`
  // with its states in read order. Also fills nccl_agg (the operations' kernel channels and proxy
  // ops) and unattributed_channels() on the way: call it before ForEachOperation.
  Status ForEachEvent(ExportContext& ctx,
                      const std::function<Status(const NcclEvent&)>& on_event,
                      const std::function<Status(const NcclEvent&, const NcclEvent::State&)>& on_state);
  // Operations (Coll, P2p, CeColl) in first-record order, as NcclStreamModel::operations().
  Status ForEachOperation(ExportContext& ctx, const std::function<Status(const NcclOperation&)>& fn);
  // Explicit groups' ncclGroupEnd: GroupApi events of depth >= 2 with a stop and a state 24; gives
  // the first such state's time and thread and the event's stop.
  Status ForEachGroupEnd(ExportContext& ctx,
                         const std::function<Status(uint64_t start_ns, uint32_t tid, uint64_t stop_ns)>& fn);

  const std::map<uint32_t, NcclComm>& comms() const { return comms_; }
  const std::map<uint32_t, std::pair<uint32_t, uint64_t>>& pools() const { return pools_; }
  const GpuClockMap& clock() const { return clock_; }
  bool empty() const { return comms_.empty() && events_ == 0; }
  uint64_t orphan_records() const { return orphan_records_; }
  uint64_t unattributed_channels() const { return unattributed_channels_; }
  uint64_t open_events() const { return open_events_; }

 private:
  struct Open {
    int64_t seq = 0;          // place in first-record order
    uint64_t first_read = 0;  // read position of its first START
    NcclEvent event;          // without `start` (serialized in start_blob) and states (nccl_states)
    std::string start_blob;   // the START message as recorded
    uint64_t gpu_start_raw_ns = 0;
    int32_t group_depth = 0;
  };
  Status Create(ExportContext& ctx);
  Status AddEvent(ExportContext& ctx,
                  const schema::NcclEvent& e,
                  uint64_t ts,
                  uint32_t tid,
                  std::string_view func,
                  std::string_view datatype,
                  std::string_view algo,
                  std::string_view proto,
                  std::string_view sync);
  Status Spill(ExportContext& ctx, const Open& o);
  Status ResolveLate(ExportContext& ctx);
  // nccl_agg: one pending parent at a time (children of one operation mostly follow each other).
  Status AggregateChild(const NcclEvent& e);
  Status FlushAggregate();
  Status FinishAggregate(ExportContext& ctx);
  // Reads an event row of the SELECT in kEventColumns order, from column `first`.
  static void ReadEvent(const Statement& q, int first, NcclEvent* e);

  bool created_ = false;
  // Statements of the read path, prepared once (owned by the database's statement cache).
  Statement* insert_event_ = nullptr;
  Statement* insert_state_ = nullptr;
  Statement* insert_late_ = nullptr;
  Statement* insert_mark_ = nullptr;
  Statement* upsert_agg_ = nullptr;
  struct PendingAggregate {
    int64_t parent = 0;
    int64_t channels = 0;
    std::optional<int64_t> gpu_start_ns, gpu_end_ns, proxy_end_ns;
  };
  std::optional<PendingAggregate> pending_;
  uint64_t channels_ = 0;  // KernelCh events seen by ForEachEvent
  bool aggregated_ = false;
  std::unordered_map<uint64_t, Open> open_;  // id -> started, not stopped
  std::set<uint32_t> nccl_domains_;
  std::map<uint32_t, NcclComm> comms_;
  std::map<uint32_t, std::pair<uint32_t, uint64_t>> pools_;
  GpuClockMap clock_;
  int64_t next_seq_ = 1;
  uint64_t read_ = 0;  // records read (the read position)
  uint64_t events_ = 0;
  uint64_t late_ = 0;
  uint64_t marks_ = 0;
  uint64_t orphan_records_ = 0;
  uint64_t unattributed_channels_ = 0;
  uint64_t open_events_ = 0;
};

template <typename TextFn>
Status NcclSpillModel::AddChunk(ExportContext& ctx, const schema::Chunk& chunk, TextFn text) {
  for (const schema::NcclComm& c : chunk.nccl_comms())
    comms_[c.comm_index()].info = c;
  for (const schema::NcclPoolStats& p : chunk.nccl_pools()) {
    auto& entry = pools_[p.type()];
    entry.first = p.capacity_events();
    entry.second += p.dropped_events();
  }
  uint64_t ts = chunk.base_ns();
  for (const schema::NcclEvent& e : chunk.nccl()) {
    ts += static_cast<uint64_t>(e.ts_delta_ns());
    Status st = AddEvent(ctx, e, ts, chunk.tid(), text(e.func_string_id()), text(e.datatype_string_id()),
                         text(e.algo_string_id()), text(e.proto_string_id()), text(e.sync_strategy_string_id()));
    if (!st.ok())
      return st;
  }
  return Status::Ok();
}

}  // namespace gt::exporter
