// PerfettoExporter: nsys-schema events -> a Perfetto protobuf trace (.pftrace) for ui.perfetto.dev.
//
// Tracks: one process track per process (named with its rank), a thread track per thread (NVTX
// push/pop ranges, CUDA API calls, NVTX marks), one track per GPU stream under the process that
// owns it (kernels, memcpys, memsets, synchronizations), "NCCL" (NVTX ranges of domain NCCL) and
// "NCCL operations" (GTRACE_NCCL_OPERATIONS) tracks per process, an "NVTX start/end ranges" track
// per process, and a counter track per GPU metric under a "GPU <n> metrics" track. Slices that
// would not nest on their track go to sibling "overlap" tracks. A flow joins each launching API call
// to its GPU activities. Packets are written in timestamp order (docs/viewers.md).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "schema/status.h"
#include "tools/viewers/catalog.h"
#include "tools/viewers/viewer_writer.h"

namespace gt::viewers {

Status CreatePerfettoExporter(const Catalog* catalog,
                              const std::string& output,
                              bool force,
                              std::unique_ptr<ViewerWriter>* out);

}  // namespace gt::viewers
