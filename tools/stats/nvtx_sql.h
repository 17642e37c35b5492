// SQL pieces and helpers shared by the NVTX reports (nvtx_reports.cc, nvtx_gpu_proj_report.cc).
// Internal to gt_stats.
#pragma once

#include <cstdint>

#include "schema/status.h"
#include "tools/stats/database.h"
#include "tools/stats/table.h"

namespace gt::stats {

// A domain is announced once per process by an eventType-75 row; its name is text or a registered
// string. The earliest announcement wins if a process announced the same id twice.
inline constexpr char kDomainNamesSql[] =
    "WITH domain_names AS ("
    "  SELECT e.domainId AS domain_id, e.globalTid >> 24 AS process,"
    "         coalesce(e.text, s.value) AS name, min(e.start) AS first_seen"
    "  FROM NVTX_EVENTS AS e LEFT JOIN StringIds AS s ON s.id = e.textId"
    "  WHERE e.eventType = 75"
    "  GROUP BY e.domainId, e.globalTid >> 24) ";
// "<domain>:<text>" of range row `r` (after kDomainNamesSql, with kRangesFromSql).
inline constexpr char kRangeNameSql[] = "coalesce(d.name, '') || ':' || coalesce(r.text, s.value, '')";
inline constexpr char kRangesFromSql[] =
    "FROM NVTX_EVENTS AS r "
    "LEFT JOIN domain_names AS d ON d.domain_id = r.domainId AND d.process = (r.globalTid >> 24) "
    "LEFT JOIN StringIds AS s ON s.id = r.textId "
    "WHERE r.eventType IN (59, 60, 70, 71) ";

// The report's error when NVTX_EVENTS is missing.
gt::Status RequireNvtx(Database& db, const Table& table);
// The latest NVTX timestamp: where a range still open at the end of the capture ends.
gt::Status LastTimestamp(Database& db, int64_t* last_timestamp);

}  // namespace gt::stats
