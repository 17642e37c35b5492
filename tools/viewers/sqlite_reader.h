// SqliteReader: a read-only connection to an nsys-schema SQLite export (ours or a real `nsys export`),
// for the viewer exporters. The file is never written: it is opened with mode=ro; the lookup tables
// the exporters build (launch -> GPU activity) go to SQLite's TEMP database, which is private to the
// connection and spills to a temporary file, so memory stays bounded on large exports.
//
// One thread uses a reader and its queries at a time; the reader owns its sqlite3 handle and must
// outlive every Query prepared on it.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "schema/status.h"

struct sqlite3;
struct sqlite3_stmt;

namespace gt::viewers {

class Query {
 public:
  Query() = default;
  Query(const Query&) = delete;
  Query& operator=(const Query&) = delete;
  ~Query();

  // Advances to the next row; *has_row is false at the end.
  Status Step(bool* has_row);
  void BindInt(int index, int64_t value);  // 1-based, as in SQLite

  bool IsNull(int column) const;
  int64_t Int(int column) const;  // NULL reads as 0
  std::optional<int64_t> OptInt(int column) const;
  double Double(int column) const;
  std::string Text(int column) const;  // NULL reads as ""

 private:
  friend class SqliteReader;
  sqlite3_stmt* stmt_ = nullptr;
  sqlite3* db_ = nullptr;
};

class SqliteReader {
 public:
  SqliteReader(const SqliteReader&) = delete;
  SqliteReader& operator=(const SqliteReader&) = delete;
  ~SqliteReader();

  // Opens `path` read-only and checks that it is an nsys-schema export (has StringIds). Errors name
  // the file.
  static Status Open(const std::string& path, std::unique_ptr<SqliteReader>* out);

  const std::string& path() const { return path_; }
  Status Prepare(std::string_view sql, Query* query);
  Status Exec(const std::string& sql);  // statements without results (TEMP tables)

  // Presence in the main schema (nsys creates tables lazily, so absence is normal).
  bool HasTable(const std::string& table);
  bool HasColumn(const std::string& table, const std::string& column);
  // First tables of the main schema whose names start with `prefix`, sorted.
  std::vector<std::string> TablesWithPrefix(const std::string& prefix);
  // First column of the first row as an integer; nullopt for no row or NULL (or an error).
  std::optional<int64_t> ScalarInt(const std::string& sql);

 private:
  SqliteReader(std::string path, sqlite3* db) : path_(std::move(path)), db_(db) {}
  const std::vector<std::string>& ColumnsOf(const std::string& table);

  std::string path_;
  sqlite3* db_;
  std::vector<std::pair<std::string, std::vector<std::string>>> columns_cache_;
};

// SQL text quoting for identifiers we did not write ourselves (table names found by prefix).
std::string QuoteIdentifier(const std::string& name);

}  // namespace gt::viewers
