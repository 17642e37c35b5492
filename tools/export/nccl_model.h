// The NCCL plugin's events as the export sees them: one event (START / STATE / STOP messages joined
// by event id), one communicator, and one operation with the derived view the export tables and
// nccl_sum use (DeriveOperation). Filled by the spill model (nccl_spill_model.h) while the exporter
// reads a stream; the in-memory model that held them all (NcclStreamModel) is the tests' reference
// now, in tests/common/nccl_stream_model.h. Plain data and pure functions; the exporter's thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "gtrace.pb.h"

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
