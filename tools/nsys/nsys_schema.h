// gt::nsys: the Nsight Systems SQLite export schema (EXPORT_SCHEMA_VERSION 3.25.0) that `gtrace export` writes,
// so that scripts written for `nsys export --type sqlite` files read ours unchanged.
//
// Holds two kinds of facts, both as constant data compiled into the library (no reference file is read at build or
// run time):
//   - Tables(): CREATE TABLE text for every non-ENUM table gtrace may write. Column names, order, declared types,
//     NOT NULL and PRIMARY KEY match nsys exactly (tests compare `pragma table_info` with real exports); the text
//     itself is ours. No indexes and no foreign keys, as in nsys.
//   - EnumTables(): the 24 ENUM_* lookup tables of a 3.25.0 CUDA export with every row.
//
// All functions are reentrant; the data is immutable and constant-initialized, so any thread may call them at any
// time (also during static initialization of another translation unit).
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "schema/status.h"

struct sqlite3;

namespace gt::nsys {

// The value nsys writes as META_DATA_EXPORT.EXPORT_SCHEMA_VERSION for this schema.
inline constexpr char kSchemaVersion[] = "3.25.0";
// EXPORT_SCHEMA_VERSION_MAJOR / _MINOR / _MICRO, stored as text like every META_DATA_EXPORT value.
inline constexpr char kSchemaVersionMajor[] = "3";
inline constexpr char kSchemaVersionMinor[] = "25";
inline constexpr char kSchemaVersionMicro[] = "0";

struct TableDef {
  std::string_view name;        // exact nsys table name, e.g. "CUPTI_ACTIVITY_KIND_KERNEL"
  std::string_view create_sql;  // one CREATE TABLE statement for exactly that table, no trailing ';'
};

// Every non-ENUM table gtrace may write, each name once. ENUM_* tables are not in this list (see EnumTables()).
std::span<const TableDef> Tables();

// The entry of Tables() named `name` (exact, case-sensitive match), or nullptr if there is none.
const TableDef* FindTable(std::string_view name);

struct EnumRow {
  int64_t id;
  const char* name;   // symbol name, e.g. "CUDA_MEMCPY_KIND_HTOD"; nullptr would be written as NULL
  const char* label;  // human-readable label, e.g. "Host-to-Device"; nullptr would be written as NULL
};

struct EnumTable {
  std::string_view name;          // e.g. "ENUM_CUDA_MEMCPY_OPER"
  std::span<const EnumRow> rows;  // sorted by id, ids unique
};

// Every ENUM table: (id INTEGER NOT NULL PRIMARY KEY, name TEXT, label TEXT).
inline constexpr std::string_view kEnumTableColumns = "id INTEGER NOT NULL PRIMARY KEY, name TEXT, label TEXT";

// The 24 ENUM_* tables of a 3.25.0 CUDA export (rows identical to 3.24.14), in nsys's table order.
std::span<const EnumTable> EnumTables();

// The entry of EnumTables() named `name` (exact match), or nullptr.
const EnumTable* FindEnumTable(std::string_view name);

// ENUM_SAMPLING_THREAD_STATE (not one of the 24: written only by exports with CPU samples).
const EnumTable& SamplingThreadStateEnum();
// Creates one ENUM table (kEnumTableColumns) and inserts its rows; fails if it exists.
gt::Status WriteEnumTable(sqlite3* db, const EnumTable& table);

// Executes the CREATE TABLE statement of the Tables() entry `name`. Fails (and changes nothing) if `name` is not in
// Tables() (ENUM tables included: use WriteEnumTables) or if the table already exists.
gt::Status CreateTable(sqlite3* db, std::string_view name);

// Creates all 24 ENUM tables and inserts every row. All or nothing: on failure (e.g. one of the tables already
// exists) nothing is left behind. Works inside or outside a transaction the caller holds (uses a SAVEPOINT).
gt::Status WriteEnumTables(sqlite3* db);

}  // namespace gt::nsys
