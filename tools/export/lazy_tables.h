// Tables only when nsys writes them. nsys exports lazily (`nsys export --lazy=true`, its default):
// a table exists only when it has rows, except a fixed set that every export has. Readers build
// their queries from the tables that exist (sqlite_master), so an empty activity table that nsys
// would never write can break them (an empty CUPTI_ACTIVITY_KIND_MEMSET crashed one). The set
// below is what every real export in shared/reference has, with rows or not (docs/nsys-schema.md).
// Called once per database, by the one thread that writes it, inside its last transaction.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "schema/status.h"
#include "tools/export/sqlite_db.h"

namespace gt::exporter {

// True for the tables every nsys export has, empty or not: the 24 ENUM_* tables, StringIds,
// ThreadNames, PROCESSES, ANALYSIS_DETAILS, META_DATA_CAPTURE, META_DATA_EXPORT,
// TARGET_INFO_SYSTEM_ENV, TARGET_INFO_SESSION_START_TIME; and gtrace's GTRACE_RANKS (every gtrace
// database has it: merge and analyze read it).
bool AlwaysWritten(std::string_view table);

// Drops every table of `db` (schema main) that has no row and is not AlwaysWritten; the names of
// the dropped tables go to `dropped` when given.
Status DropEmptyTables(SqliteDb& db, std::vector<std::string>* dropped = nullptr);

}  // namespace gt::exporter
