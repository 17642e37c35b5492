// ParaverExporter: nsys-schema events -> a Paraver trace (.prv records, .pcf labels, .row names)
// for BSC's Paraver, with the semantics BSC's tools use for GPU traces:
//   - one Paraver task per process (rank order), its threads: the host threads, then one thread per
//     GPU stream ("CUDA-D<device>.S<stream>", as nsys2prv names them), then an "NCCL operations"
//     thread when GTRACE_NCCL_OPERATIONS has rows, then a thread per GPU with metrics;
//   - states: kernels Running, memcpys/memsets Memory transfer on stream threads; the outermost CUDA
//     call on a host thread by kind (launch: Configuring accelerator, copy: Memory transfer, sync:
//     Synchronization, malloc/free: Allocating/Freeing memory, other: Others); no record = idle;
//   - events: API calls, kernels (+ grid/block/registers/correlation), transfers (+ bytes), GPU
//     synchronizations, NVTX ranges/marks per domain, NCCL, GPU metrics (types in paraver_pcf.h);
//   - a communication record from each launching call to its (first) GPU activity.
// Records are written in time order (ends and deferred states wait in a bounded queue).
#pragma once

#include <memory>
#include <string>

#include "schema/status.h"
#include "tools/viewers/catalog.h"
#include "tools/viewers/viewer_writer.h"

namespace gt::viewers {

// `output` names the .prv (".prv" is added when missing); .pcf and .row go next to it.
Status CreateParaverExporter(const Catalog* catalog,
                             const std::string& output,
                             bool force,
                             std::unique_ptr<ViewerWriter>* out);

}  // namespace gt::viewers
