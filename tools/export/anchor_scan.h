// The alignment pass over one stream, before anything is written: the GPU end of every NCCL
// collective the stream recorded (on its own clock, through the same GPU-clock calibration the
// export uses). Reads the stream four times and holds one entry per NCCL operation (not its
// events), at most AnchorScanOptions::max_ops of them: above that, a deterministic subset chosen by
// sequence number (the same on every rank of a communicator). anchor_scan.cc says what,
// bench/results/2026-11-26-nccl-alignment-flat.md how much (peak RSS flat in the stream's size).
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

// Operations (Coll, P2p, CeColl STARTs) the scan holds per stream by default: 262,144 x 56 bytes
// = 14 MiB, plus at most as many collective ends returned (56 bytes each). A stream with no more
// operations than this is scanned exactly as without a cap. Above it, only operations whose
// sequence number is a multiple of 2^k are held, k the smallest that leaves at most max_ops of them
// (raised while reading). `gtrace export` reads GTRACE_ALIGN_MAX_OPS to override it.
inline constexpr uint64_t kAnchorScanMaxOps = 262144;
// k stops here: a stream with more than max_ops operations whose sequence number is 0 (mod 2^63)
// holds the first max_ops of them (sequence numbers cannot thin such a stream).
inline constexpr uint32_t kAnchorScanMaxSeqShift = 63;

struct AnchorScanOptions {
  uint64_t max_ops = kAnchorScanMaxOps;  // 0: no cap (every operation held)
};

struct StreamAnchors {
  std::vector<CollectiveEnd> ends;  // first-START order of their operations
  uint64_t operations = 0;          // operation STARTs the stream has
  uint64_t held_operations = 0;     // of them held at the end (operations when below the cap)
  uint32_t seq_shift = 0;           // k: only operations with seq % 2^k == 0 held (0: all)
};

Status ScanAnchors(const std::string& path, StreamAnchors* out, const AnchorScanOptions& options = {});

}  // namespace gt::exporter
