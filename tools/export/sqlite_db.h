// Thin RAII wrappers over SQLite for the exporter: a database with a prepared-statement cache and
// statements with typed, NULL-aware binding. Single-threaded.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "schema/status.h"

namespace gt::exporter {

class Statement {
 public:
  Statement(sqlite3* db, std::string_view sql);
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  ~Statement();

  bool valid() const { return stmt_ != nullptr; }
  const std::string& error() const { return error_; }

  Statement& Int(int index, int64_t value);
  Statement& Null(int index);
  Statement& Real(int index, double value);
  Statement& Text(int index, std::string_view value);
  // Binds without a copy: `value` must stay valid until Run (or Reset) — e.g. a stream's interned
  // strings. The hot rows' texts (NVTX names) take this path; SQLite copies at step anyway.
  Statement& StaticText(int index, std::string_view value);
  Statement& Blob(int index, const void* data, size_t size);
  Statement& OptInt(int index, std::optional<int64_t> value) {
    return value ? Int(index, *value) : Null(index);
  }
  // Steps once (INSERT/UPDATE), then resets and clears the bindings.
  Status Run();
  // For SELECT: true while a row is available.
  bool Step();
  int64_t ColumnInt(int i) const { return sqlite3_column_int64(stmt_, i); }
  std::string ColumnText(int i) const;
  bool ColumnIsNull(int i) const { return sqlite3_column_type(stmt_, i) == SQLITE_NULL; }
  // The bytes of a BLOB column of the current row (valid until the next Step or Reset).
  std::string_view ColumnBlob(int i) const {
    const void* data = sqlite3_column_blob(stmt_, i);
    return data == nullptr ? std::string_view()
                           : std::string_view(static_cast<const char*>(data),
                                              static_cast<size_t>(sqlite3_column_bytes(stmt_, i)));
  }
  void Reset();

 private:
  sqlite3* db_;
  sqlite3_stmt* stmt_ = nullptr;
  std::string error_;
};

class SqliteDb {
 public:
  SqliteDb() = default;
  SqliteDb(const SqliteDb&) = delete;
  SqliteDb& operator=(const SqliteDb&) = delete;
  ~SqliteDb() { Close(); }

  Status Open(const std::string& path);  // creates; tuned for one writer and bulk inserts
  Status Close();
  Status Exec(std::string_view sql);
  // Cached prepared statement (keyed by the SQL text); errors name the SQL.
  Statement* Prepare(std::string_view sql, Status* status);
  sqlite3* handle() { return db_; }

 private:
  sqlite3* db_ = nullptr;
  std::unordered_map<std::string, std::unique_ptr<Statement>> cache_;
};

}  // namespace gt::exporter
