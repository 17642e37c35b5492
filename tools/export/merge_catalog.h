// What merging databases must do to each column of each table gtrace writes (db_merge.h): shift
// times onto the merged session, renumber the host byte of global ids, translate StringIds ids,
// and offset ids that are only unique within one database. A column not listed is copied as is.
//
// Every table a gtrace database may hold needs an entry (tests/analyze/merge_catalog_test.cc fails
// for a table of gt::nsys::Tables() without one, and for a listed table whose time- or id-like
// columns are not all classified): a merge refuses a table it has no rule for rather than copy
// times and ids that mean something else in the merged database.
#pragma once

#include <span>
#include <string_view>

namespace gt::exporter {

enum class ColumnKind {
  kPlain,        // copied unchanged (also: classified on purpose, e.g. raw GPU timer values)
  kTime,         // session ns: shifted (and aligned) with the row's process
  kTimeOrZero,   // session ns, 0 meaning "not recorded": 0 stays 0
  kGlobalId,     // <hw:8><vm:8>...: the host bits are renumbered
  kHostIndex,    // a plain host index (TARGET_INFO_CUDA_* hwId): renumbered
  kStringId,     // StringIds.id: translated
  kCallchainId,  // CUDA_CALLCHAINS.id: offset per source database
  kOsrtCallchainId,  // OSRT_CALLCHAINS.id (ids from 1; 0 = no stack, kept 0): offset per source database
  kSampleId,     // COMPOSITE_EVENTS.id (and SAMPLING_CALLCHAINS.id, which refers to it): offset per source
  kGpuId,        // TARGET_INFO_GPU.id (also every deviceId): translated (GPUs are renumbered across the
                 // merged hosts); a value with no GPU row of its source is kept
};

struct ColumnRule {
  std::string_view column;
  ColumnKind kind;
};

enum class TableMode {
  kCopy,     // rows copied with the column rules
  kSpecial,  // db_merge.cc handles the table itself (regenerated, deduplicated or renumbered)
  kSkip,     // written once by the merge (ENUM_* tables)
};

struct TableRule {
  std::string_view table;
  TableMode mode;
  std::string_view process_key;  // global-id column naming the row's process (times need one)
  std::span<const ColumnRule> columns;
};

// The rule of `table` (ENUM_* tables share one kSkip rule), or nullptr.
const TableRule* FindTableRule(std::string_view table);
std::span<const TableRule> TableRules();

// Column names that look like times or ids (for the catalog test and for refusing unknown tables).
bool LooksLikeTimeOrId(std::string_view column);

}  // namespace gt::exporter
