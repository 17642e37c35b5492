// Context and stream ids unique per GPU. CUPTI numbers contexts and streams per process (every
// process's first context is 1, its NULL stream often 7), so two processes on one GPU (MPS, or
// several ranks per GPU) would share (deviceId, contextId) and (deviceId, streamId) pairs in one
// database, and a reader keying streams on (deviceId, streamId) would pile them together. After an
// export or a merge, the k-th process (k >= 1, in globalPid order) on a GPU gets k * kSharedGpuIdStride
// added to its contextId, nullStreamId and streamId on that GPU, in every table that has them.
// MEMCPY src/dstContextId (peer copies) are left as recorded.
// Called once per database by the thread that writes it, inside its last transaction.
#pragma once

#include <cstdint>

#include "schema/status.h"
#include "tools/export/sqlite_db.h"

namespace gt::exporter {

inline constexpr int64_t kSharedGpuIdStride = 1000000;

// Needs GTRACE_DEVICES (globalPid, deviceId); a database without it is left as it is.
Status MakeContextsUniquePerGpu(SqliteDb& db);

}  // namespace gt::exporter
