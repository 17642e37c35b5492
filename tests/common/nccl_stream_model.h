// NcclStreamModel: the NCCL plugin events of one stream held in memory until its end, assembled from
// its chunks (START / STATE / STOP messages joined by event id), with the derived per-operation view.
// The export built it until the spill model (tools/export/nccl_spill_model.h) replaced it; it stays,
// its logic unchanged, as the reference the tests compare the spill model and the bounded
// clock-alignment scan with (export.LargeNccl.*, tests/common/held_anchor_scan.h,
// bench/offline_memory/anchor_scan_bench). Test and bench code: the shipped CLI does not link it.
// Single-threaded; owned by its caller.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "gtrace.pb.h"
#include "tools/export/nccl_clock.h"
#include "tools/export/nccl_model.h"

namespace gt::test {

class NcclStreamModel {
 public:
  // `text` resolves interned string ids of the stream.
  template <typename TextFn>
  void AddChunk(const schema::Chunk& chunk, TextFn text);
  // NCCL's own NVTX ranges of the chunk (domain "NCCL"): remembers the reduction operation of the
  // AllReduce / Reduce / ReduceScatter payloads, to give the plugin's operations their red_op.
  void AddNvtx(const schema::Chunk& chunk);
  void AddClockSnapshot(uint64_t monotonic_ns, uint64_t realtime_ns) { clock_.AddSnapshot(monotonic_ns, realtime_ns); }
  // Fits the GPU clock, converts kernel-channel times and builds the operations.
  void Finish();

  const std::map<uint32_t, exporter::NcclComm>& comms() const { return comms_; }
  const std::vector<uint64_t>& order() const { return order_; }  // event ids, by first record
  const exporter::NcclEvent* Find(uint64_t id) const;
  const std::vector<exporter::NcclOperation>& operations() const { return operations_; }
  const std::map<uint32_t, std::pair<uint32_t, uint64_t>>& pools() const { return pools_; }  // type -> (capacity, dropped)
  const exporter::GpuClockMap& clock() const { return clock_; }
  bool empty() const { return comms_.empty() && events_.empty(); }
  uint64_t orphan_records() const { return orphan_records_; }           // STOP/STATE of an unknown id
  uint64_t unattributed_channels() const { return unattributed_channels_; }  // KERNEL_CH without a parent
  uint64_t open_events() const { return open_events_; }                 // started, never stopped

 private:
  exporter::NcclEvent* Get(uint64_t id);
  void AddEvent(const schema::NcclEvent& e, uint64_t ts, uint32_t tid, const std::string& func,
                const std::string& datatype, const std::string& algo, const std::string& proto,
                const std::string& sync);

  struct RedOpMark {
    uint64_t ts_ns;
    uint64_t schema_id;
    int32_t red_op;
  };
  std::map<uint32_t, std::vector<RedOpMark>> red_ops_;  // tid -> NCCL NVTX pushes with a reduction op
  std::set<uint32_t> nccl_domains_;                      // NVTX domain ids named "NCCL"
  std::map<uint32_t, exporter::NcclComm> comms_;
  std::unordered_map<uint64_t, exporter::NcclEvent> events_;
  std::vector<uint64_t> order_;
  std::vector<exporter::NcclOperation> operations_;
  std::map<uint32_t, std::pair<uint32_t, uint64_t>> pools_;
  exporter::GpuClockMap clock_;
  uint64_t orphan_records_ = 0;
  uint64_t unattributed_channels_ = 0;
  uint64_t open_events_ = 0;
};

template <typename TextFn>
void NcclStreamModel::AddChunk(const schema::Chunk& chunk, TextFn text) {
  for (const schema::NcclComm& c : chunk.nccl_comms()) comms_[c.comm_index()].info = c;
  for (const schema::NcclPoolStats& p : chunk.nccl_pools()) {
    auto& entry = pools_[p.type()];
    entry.first = p.capacity_events();
    entry.second += p.dropped_events();
  }
  uint64_t ts = chunk.base_ns();
  for (const schema::NcclEvent& e : chunk.nccl()) {
    ts += static_cast<uint64_t>(e.ts_delta_ns());
    AddEvent(e, ts, chunk.tid(), std::string(text(e.func_string_id())), std::string(text(e.datatype_string_id())),
             std::string(text(e.algo_string_id())), std::string(text(e.proto_string_id())),
             std::string(text(e.sync_strategy_string_id())));
  }
}

}  // namespace gt::test
