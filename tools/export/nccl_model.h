// NcclStreamModel: the NCCL plugin events of one stream, assembled from its chunks (START / STATE /
// STOP messages joined by event id), with the derived per-operation view the export tables and
// nccl_sum use. Built by the NCCL export module (nccl_export.cc) while the exporter reads a
// stream, then finished at the end of the stream (the GPU clock fit needs every observation).
// Single-threaded; owned by the module.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "gtrace.pb.h"
#include "tools/export/nccl_clock.h"

namespace gt::exporter {

// One plugin event. Host times are on the stream clock (CLOCK_MONOTONIC ns).
struct NcclEvent {
  uint64_t id = 0;
  uint32_t type = 0;  // NcclEventType value (one bit)
  uint32_t comm_index = 0;
  std::optional<uint64_t> start_ns;
  std::optional<uint64_t> stop_ns;
  uint32_t start_tid = 0;
  uint32_t stop_tid = 0;
  uint64_t parent_id = 0;
  uint64_t group_id = 0;
  schema::NcclEvent start;  // the START message (fields as recorded)
  std::string func, datatype, algo, proto, sync_strategy;
  uint64_t gpu_stop_raw_ns = 0;  // KERNEL_CH: from the STOP message
  std::optional<int64_t> gpu_start_ns;  // KERNEL_CH: converted onto the stream clock
  std::optional<int64_t> gpu_stop_ns;
  struct State {
    uint64_t ts_ns;
    uint32_t tid;
    uint32_t state;
    uint64_t trans_size_bytes;
    int32_t appended_proxy_ops;
  };
  std::vector<State> states;
};

struct NcclComm {
  schema::NcclComm info;
  std::optional<uint64_t> finalize_ns;
  uint32_t finalize_tid = 0;
};

// One NCCL operation (a Coll, P2p or CeColl event) with what its relatives tell.
struct NcclOperation {
  const NcclEvent* op = nullptr;
  const NcclEvent* api = nullptr;    // CollApi / P2pApi parent (v5+)
  const NcclComm* comm = nullptr;
  std::string func;                  // "AllReduce"
  uint64_t count = 0;                // as the application passed it (from the API event when present)
  std::string datatype;              // idem
  uint32_t type_size_bytes = 0;      // 0 when the datatype is unknown
  std::optional<uint64_t> message_bytes;  // count * type size (NCCL's NVTX "Message size")
  std::optional<uint64_t> alg_bytes;      // nccl-tests' size S (x nRanks for gathers/scatters/alltoall)
  int32_t peer = -1;                 // P2p peer (also copied onto its P2pApi)
  std::optional<int64_t> gpu_start_ns;    // first kernel-channel start (stream clock)
  std::optional<int64_t> gpu_stop_ns;     // last kernel-channel end
  uint32_t kernel_channels = 0;
  std::optional<uint64_t> proxy_stop_ns;  // last proxy-op stop (host)
  std::optional<uint64_t> send_bytes;     // send buffer size (from the function, count, type and nRanks)
  std::optional<uint64_t> recv_bytes;     // receive buffer size (root-only buffers: the root's size)
  std::optional<int32_t> red_op;          // ncclRedOp_t from NCCL's own NVTX payload (the plugin has none)
};

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

  const std::map<uint32_t, NcclComm>& comms() const { return comms_; }
  const std::vector<uint64_t>& order() const { return order_; }  // event ids, by first record
  const NcclEvent* Find(uint64_t id) const;
  const std::vector<NcclOperation>& operations() const { return operations_; }
  const std::map<uint32_t, std::pair<uint32_t, uint64_t>>& pools() const { return pools_; }  // type -> (capacity, dropped)
  const GpuClockMap& clock() const { return clock_; }
  bool empty() const { return comms_.empty() && events_.empty(); }
  uint64_t orphan_records() const { return orphan_records_; }           // STOP/STATE of an unknown id
  uint64_t unattributed_channels() const { return unattributed_channels_; }  // KERNEL_CH without a parent
  uint64_t open_events() const { return open_events_; }                 // started, never stopped

 private:
  NcclEvent* Get(uint64_t id);
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
  std::map<uint32_t, NcclComm> comms_;
  std::unordered_map<uint64_t, NcclEvent> events_;
  std::vector<uint64_t> order_;
  std::vector<NcclOperation> operations_;
  std::map<uint32_t, std::pair<uint32_t, uint64_t>> pools_;
  GpuClockMap clock_;
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

// Bytes of one element of an NCCL datatype name (ncclDatatypeToString spelling); 0 if unknown.
uint32_t NcclTypeSizeBytes(const std::string& datatype);
// nccl-tests: the size S of an operation and its bus-bandwidth factor num/den for `n_ranks`.
// False for functions nccl-tests has no formula for.
bool NcclTestsFactors(const std::string& func, int32_t n_ranks, uint64_t* size_multiplier, int64_t* bus_num,
                      int64_t* bus_den);
// Send and receive buffer sizes of an operation of `message_bytes` (count x type size) on `n_ranks`.
void NcclBufferBytes(const std::string& func, uint64_t message_bytes, int32_t n_ranks, std::optional<uint64_t>* send,
                     std::optional<uint64_t>* recv);
// Fills the derived fields of an operation (func .. recv_bytes, peer) from its op, api and comm.
void DeriveOperation(NcclOperation* o);
// "AllReduce" -> "ncclAllReduce" (NCCL's API and NVTX range name).
std::string NcclApiName(const std::string& func);

}  // namespace gt::exporter
