// The alignment pass over one stream, before anything is written: the GPU end of every NCCL
// collective the stream recorded (on its own clock, through the same GPU-clock calibration the
// export uses). Reads the stream four times and holds one entry per NCCL operation (not its
// events): anchor_scan.cc says what, bench/results/2026-11-26-nccl-alignment-memory.md how much.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "schema/status.h"
#include "tools/export/session_plan.h"

namespace gt::exporter {

struct CollectiveEnd {
  uint64_t comm_hash = 0;  // NcclComm.comm_hash: equal on every rank of the communicator
  std::string func;        // "AllReduce", ...
  uint64_t seq = 0;        // per communicator and function
  int64_t gpu_end_ns = 0;  // last kernel-channel end, stream clock (ns)
};

struct StreamAnchors {
  std::vector<CollectiveEnd> ends;
};

Status ScanAnchors(const std::string& path, StreamAnchors* out);

}  // namespace gt::exporter
