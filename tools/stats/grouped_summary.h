// Exact nsys-style summaries (statistics.h) of one integer value per row, grouped by text keys, in
// memory bounded by the number of groups, not of rows: SQLite sorts the rows (its sorter spills to
// temporary files past its cache), and the C++ side holds one group's running sums at a time. Used by the *_sum reports (nvtx_sum, cuda_api_sum, cuda_gpu_kern_sum, cuda_gpu_mem_*_sum, osrt_sum).
// Internal to gt_stats; called on the report's thread with that report's Database.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "schema/status.h"
#include "tools/stats/database.h"
#include "tools/stats/statistics.h"

namespace gt::stats {

struct KeyedSummary {
  std::vector<std::string> key;  // one text per key column
  Summary summary;
};

// `rows_sql` is a SELECT with columns named k0 .. k<key_columns-1> and v. A NULL key reads as ""
// and a NULL value as 0 (as Statement::Text/Int read them). Two passes over it: an unsorted one
// that counts and sums per group (a hash map of the groups), then the rows ORDER BY (group position
// in key order, value) — SQLite's sorter on two integers, the position given by the SQL function
// gt_group_index registered for that pass — fed to a SortedValueSummarizer per group. Memory: the
// groups' keys and sums, SQLite's page cache and sorter memory; never a row. *out comes in SortedSummaries' order (total
// descending, ties by key in byte order); *grand_total (optional) is the sum of every value.
gt::Status SummarizeByKey(Database& db,
                          const std::string& rows_sql,
                          int key_columns,
                          int64_t unit,
                          int decimals,
                          std::vector<KeyedSummary>* out,
                          int64_t* grand_total = nullptr);

// A group whose count and total the report has already counted (its own GROUP BY or unsorted scan).
struct GroupTotals {
  int64_t count = 0;
  __int128 total = 0;
};

// The cheaper form for reports that know their groups: `sorted_sql` yields columns g (the group's
// index in `groups`, an integer) and v (an integer, not NULL), ORDER BY g, v. One pass: SQLite sorts
// two integers per row and each group's values stream through a SortedValueSummarizer; no key text is
// hashed per row. (*out)[i] is the summary of groups[i] (a group of count 0 gets a zero Summary). A row
// whose g or count disagrees with `groups` is an error ("rows changed").
gt::Status SummarizeSortedGroups(Database& db,
                                 const std::string& sorted_sql,
                                 const std::vector<GroupTotals>& groups,
                                 int64_t unit,
                                 int decimals,
                                 std::vector<Summary>* out);

}  // namespace gt::stats
