// GTRACE_PROCESS_TREE when databases are merged (db_merge.cc calls these on its writer thread).
// Each source lists its traced processes and the untraced ancestors it saw; the same process may
// appear in several sources (an untraced bash above two ranks, or a parent that one source saw as
// untraced and another traced). The merged table keeps one row per globalPid, the traced one when
// any source traced it, and re-derives tracedAncestorGlobalPid across all merged processes.
#pragma once

#include <functional>
#include <string>

#include "schema/status.h"
#include "tools/export/sqlite_db.h"

namespace gt::exporter {

// Copies the rows of src.GTRACE_PROCESS_TREE (the source attached as `src`) into
// main.GTRACE_PROCESS_TREE (already created). `gid` maps a global-id column expression to its
// merged value (host bits renumbered).
Status MergeProcessTreeRows(SqliteDb& db, const std::function<std::string(const std::string&)>& gid);

// After the last source: every row whose tracedAncestorGlobalPid is unknown gets the nearest
// traced process up its parentGlobalPid chain (through untraced rows only), when there is one.
Status ResolveTracedAncestors(SqliteDb& db);

}  // namespace gt::exporter
