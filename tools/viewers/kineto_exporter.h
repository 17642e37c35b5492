// KinetoExporter: nsys-schema events -> Kineto-style Chrome trace JSON, one file per rank, so that
// Holistic Trace Analysis loads the directory (TraceAnalysis(trace_dir=...)) and Perfetto/Chrome
// open each file. Each file starts with "distributedInfo" (rank, world size) on its own line
// (HTA's rank regex reads the first match line by line) and "deviceProperties"; events follow
// Kineto's conventions: cat kernel / gpu_memcpy / gpu_memset / cuda_sync on pid = CUDA device,
// tid = stream, with args device/stream/correlation; cuda_runtime / cuda_driver and user_annotation
// (NVTX) on pid/tid of the host thread; "ac2g" flows from launch to GPU activity; GPU metrics as
// counters. Events are written as they are read (streamed); a file is one rank's processes.
//
// Output: a directory (rank_<R>.json per rank), or a single *.json file when there is one rank.
#pragma once

#include <memory>
#include <string>

#include "schema/status.h"
#include "tools/viewers/catalog.h"
#include "tools/viewers/viewer_writer.h"

namespace gt::viewers {

Status CreateKinetoExporter(const Catalog* catalog,
                            const std::string& output,
                            bool force,
                            std::unique_ptr<ViewerWriter>* out);

// Ranks whose files one pass keeps open.
inline constexpr size_t kKinetoRanksPerPass = 256;

}  // namespace gt::viewers
