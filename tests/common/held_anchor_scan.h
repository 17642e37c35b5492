// The clock-alignment scan as it was before it was bounded (tools/export/anchor_scan.cc until
// 2026-11-26): every NCCL event of the stream held in an NcclStreamModel, the collective ends read
// off its operations. Kept as the reference that export.LargeNccl.* and
// bench/offline_memory/anchor_scan_bench compare ScanAnchors with. Test and bench code; one thread.
#pragma once

#include <string>

#include "schema/status.h"
#include "tools/export/anchor_scan.h"

namespace gt::test {

Status ScanAnchorsHeld(const std::string& path, exporter::StreamAnchors* out);

}  // namespace gt::test
