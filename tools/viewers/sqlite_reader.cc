#include "tools/viewers/sqlite_reader.h"

#include <sqlite3.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <system_error>

namespace gt::viewers {
namespace {

// "file:<path>?mode=ro" with the characters SQLite's URI parser treats specially escaped; an
// absolute path gets an empty authority so "//x" is never read as a host name.
std::string ReadOnlyUri(const std::string& path) {
  std::string uri = path.rfind('/', 0) == 0 ? "file://" : "file:";
  for (unsigned char c : path) {
    if (c == '%' || c == '?' || c == '#' || c < 0x20 || c == 0x7F) {
      char escaped[4];
      std::snprintf(escaped, sizeof(escaped), "%%%02X", c);
      uri += escaped;
    } else {
      uri += static_cast<char>(c);
    }
  }
  return uri + "?mode=ro";
}

}  // namespace

std::string QuoteIdentifier(const std::string& name) {
  std::string out = "\"";
  for (char c : name) {
    if (c == '"')
      out += '"';
    out += c;
  }
  return out + "\"";
}

Query::~Query() {
  sqlite3_finalize(stmt_);
}

Status Query::Step(bool* has_row) {
  const int rc = sqlite3_step(stmt_);
  *has_row = rc == SQLITE_ROW;
  if (rc == SQLITE_ROW || rc == SQLITE_DONE)
    return Status::Ok();
  return Status::Error(std::string("SQLite error: ") + sqlite3_errmsg(db_));
}

void Query::BindInt(int index, int64_t value) {
  sqlite3_bind_int64(stmt_, index, value);
}

bool Query::IsNull(int column) const {
  return sqlite3_column_type(stmt_, column) == SQLITE_NULL;
}

int64_t Query::Int(int column) const {
  return sqlite3_column_int64(stmt_, column);
}

std::optional<int64_t> Query::OptInt(int column) const {
  if (IsNull(column))
    return std::nullopt;
  return sqlite3_column_int64(stmt_, column);
}

double Query::Double(int column) const {
  return sqlite3_column_double(stmt_, column);
}

std::string Query::Text(int column) const {
  const unsigned char* text = sqlite3_column_text(stmt_, column);
  if (text == nullptr)
    return std::string();
  return std::string(reinterpret_cast<const char*>(text), static_cast<size_t>(sqlite3_column_bytes(stmt_, column)));
}

SqliteReader::~SqliteReader() {
  sqlite3_close_v2(db_);
}

Status SqliteReader::Open(const std::string& path, std::unique_ptr<SqliteReader>* out) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(status))
    return Status::Error("cannot open " + path + ": no such file");
  if (std::filesystem::is_directory(status)) {
    return Status::Error("cannot open " + path + ": is a directory, not an SQLite file");
  }
  sqlite3* db = nullptr;
  const int rc = sqlite3_open_v2(ReadOnlyUri(path).c_str(), &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, nullptr);
  if (rc != SQLITE_OK) {
    std::string message = db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
    sqlite3_close_v2(db);
    return Status::Error("cannot open " + path + ": " + message);
  }
  std::unique_ptr<SqliteReader> reader(new SqliteReader(path, db));
  // SQLite reads the header lazily: the first query is where a non-database file shows up.
  Query probe;
  Status st = reader->Prepare("SELECT count(*) FROM sqlite_master", &probe);
  bool has_row = false;
  if (st.ok())
    st = probe.Step(&has_row);
  if (!st.ok())
    return Status::Error(path + " is not a readable SQLite database (" + st.message() + ")");
  if (!reader->HasTable("StringIds")) {
    return Status::Error(path +
                         " is not an Nsight Systems SQLite export (no StringIds table); create one with "
                         "`gtrace export --type sqlite` or `nsys export --type sqlite`");
  }
  *out = std::move(reader);
  return Status::Ok();
}

Status SqliteReader::Prepare(std::string_view sql, Query* query) {
  sqlite3_finalize(query->stmt_);
  query->stmt_ = nullptr;
  query->db_ = db_;
  const int rc = sqlite3_prepare_v2(db_, sql.data(), static_cast<int>(sql.size()), &query->stmt_, nullptr);
  if (rc != SQLITE_OK)
    return Status::Error(std::string("SQLite error: ") + sqlite3_errmsg(db_));
  return Status::Ok();
}

Status SqliteReader::Exec(const std::string& sql) {
  char* error = nullptr;
  if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &error) != SQLITE_OK) {
    std::string message = error != nullptr ? error : "unknown error";
    sqlite3_free(error);
    return Status::Error("SQLite error: " + message);
  }
  return Status::Ok();
}

bool SqliteReader::HasTable(const std::string& table) {
  Query q;
  if (!Prepare("SELECT 1 FROM main.sqlite_master WHERE type IN ('table','view') AND name = ?1", &q).ok())
    return false;
  sqlite3_bind_text(q.stmt_, 1, table.data(), static_cast<int>(table.size()), SQLITE_TRANSIENT);
  bool has_row = false;
  return q.Step(&has_row).ok() && has_row;
}

const std::vector<std::string>& SqliteReader::ColumnsOf(const std::string& table) {
  for (const auto& [name, columns] : columns_cache_) {
    if (name == table)
      return columns;
  }
  std::vector<std::string> columns;
  Query q;
  if (Prepare("SELECT name FROM pragma_table_info(?1)", &q).ok()) {
    sqlite3_bind_text(q.stmt_, 1, table.data(), static_cast<int>(table.size()), SQLITE_TRANSIENT);
    bool has_row = false;
    while (q.Step(&has_row).ok() && has_row)
      columns.push_back(q.Text(0));
  }
  columns_cache_.emplace_back(table, std::move(columns));
  return columns_cache_.back().second;
}

bool SqliteReader::HasColumn(const std::string& table, const std::string& column) {
  const auto& columns = ColumnsOf(table);
  return std::find(columns.begin(), columns.end(), column) != columns.end();
}

std::vector<std::string> SqliteReader::TablesWithPrefix(const std::string& prefix) {
  std::vector<std::string> out;
  Query q;
  if (!Prepare("SELECT name FROM main.sqlite_master WHERE type = 'table' ORDER BY name", &q).ok())
    return out;
  bool has_row = false;
  while (q.Step(&has_row).ok() && has_row) {
    std::string name = q.Text(0);
    if (name.compare(0, prefix.size(), prefix) == 0)
      out.push_back(name);
  }
  return out;
}

std::optional<int64_t> SqliteReader::ScalarInt(const std::string& sql) {
  Query q;
  bool has_row = false;
  if (!Prepare(sql, &q).ok() || !q.Step(&has_row).ok() || !has_row)
    return std::nullopt;
  return q.OptInt(0);
}

}  // namespace gt::viewers
