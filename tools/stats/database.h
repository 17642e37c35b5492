// A read-only SQLite connection to an nsys-schema export and a thin statement wrapper. Internal to
// gt_stats. One report at a time on the calling thread; the Database owns its sqlite3 handle.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "schema/status.h"

struct sqlite3;
struct sqlite3_stmt;

namespace gt::stats {

class Statement {
 public:
  Statement() = default;
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  ~Statement();

  // Advances to the next row; *has_row is false at the end.
  gt::Status Step(bool* has_row);
  // For a statement run many times (an INSERT): binds parameter ?index, and runs it to its end and
  // resets it (bindings stay).
  void BindInt(int index, int64_t value);
  gt::Status Execute();
  void Reset();  // ends a read before its last row

  bool IsNull(int column) const;
  int64_t Int(int column) const;  // NULL reads as 0; check IsNull/OptInt where NULL matters
  std::optional<int64_t> OptInt(int column) const;
  std::string Text(int column) const;  // NULL reads as ""
  // The same text without a copy; valid until the next Step or another call on this column.
  std::string_view TextView(int column) const;

 private:
  friend class Database;
  sqlite3_stmt* stmt_ = nullptr;
  sqlite3* db_ = nullptr;
};

class Database {
 public:
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;
  ~Database();

  // Opens `path` read-only (URI mode=ro; the file is never written) and checks that it is an SQLite
  // database with the nsys export's StringIds table. Errors name the file.
  static gt::Status Open(const std::string& path, std::unique_ptr<Database>* out);

  const std::string& path() const { return path_; }

  gt::Status Prepare(std::string_view sql, Statement* statement);
  // The connection, for registering SQL functions (grouped_summary.cc); owned by this Database.
  sqlite3* handle() { return db_; }

  // Table and column presence (nsys creates tables lazily, so absence is normal).
  bool HasTable(std::string_view table);
  bool HasColumn(std::string_view table, std::string_view column);

 private:
  Database(std::string path, sqlite3* db) : path_(std::move(path)), db_(db) {}
  std::string path_;
  sqlite3* db_;
};

// "file:<path>?mode=ro" with the characters SQLite's URI parser treats specially percent-encoded.
std::string ReadOnlyUri(const std::string& path);

}  // namespace gt::stats
