// The clock-alignment scan as it was before it was bounded (tools/export/anchor_scan.cc until
// 2026-11-26, its logic unchanged): every NCCL event of the stream held in an NcclStreamModel, the
// collective ends read off its operations. Kept as the reference that export.LargeNccl.* and
// bench/offline_memory/anchor_scan_bench compare ScanAnchors with. Test and bench code; one thread.
#pragma once

#include <string>

#include "schema/status.h"
#include "tools/export/anchor_scan.h"
#include "tests/common/nccl_stream_model.h"

namespace gt::test {

// Every NCCL record and communicator of the stream at `path` into `model` (and with `nvtx` NCCL's own
// NVTX marks), as the export held them before the spill model; the caller calls model->Finish().
Status LoadHeldModel(const std::string& path, bool nvtx, NcclStreamModel* model);

// The collective ends of the held model's operations.
Status ScanAnchorsHeld(const std::string& path, exporter::StreamAnchors* out);

}  // namespace gt::test
