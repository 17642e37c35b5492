// GTRACE_RANKS and GTRACE_CLOCK_ALIGNMENT: who each process is in the job and how its clock was
// put on the session time line. nsys has MPI_RANKS(globalTid, rank) and the host name per hw id in
// TARGET_INFO_SYSTEM_ENV (both written as well); it has no place for the local rank, the launcher's
// world size, the boot id or the clock alignment, hence these prefixed tables (docs/multi-rank.md).
// Every gtrace database has GTRACE_RANKS (one row per process): `gtrace export` merges databases
// and `gtrace analyze` reads ranks from it.
#pragma once

#include <string_view>

#include "schema/status.h"
#include "tools/export/export_context.h"

namespace gt::exporter {

inline constexpr std::string_view kRanksTable = "GTRACE_RANKS";
inline constexpr std::string_view kClockAlignmentTable = "GTRACE_CLOCK_ALIGNMENT";

Status CreateRankTables(SqliteDb& db);
// Rows for every stream of `ctx` (the i-th stream placed by plan.streams[i]) and
// every clock domain of `plan`.
Status WriteRankTables(ExportContext& ctx, const SessionPlan& plan);

}  // namespace gt::exporter
