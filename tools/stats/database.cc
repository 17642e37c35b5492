#include "tools/stats/database.h"

#include <sqlite3.h>

#include <cstdio>
#include <filesystem>
#include <string_view>
#include <system_error>

#include "tools/stats/statistics.h"

namespace gt::stats {

Statement::~Statement() {
  sqlite3_finalize(stmt_);
}

gt::Status Statement::Step(bool* has_row) {
  const int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) {
    *has_row = true;
    return gt::Status::Ok();
  }
  *has_row = false;
  if (rc == SQLITE_DONE)
    return gt::Status::Ok();
  return gt::Status::Error(std::string("SQLite error: ") + sqlite3_errmsg(db_));
}

void Statement::BindInt(int index, int64_t value) {
  sqlite3_bind_int64(stmt_, index, value);
}

gt::Status Statement::Execute() {
  const int rc = sqlite3_step(stmt_);
  sqlite3_reset(stmt_);
  if (rc == SQLITE_DONE || rc == SQLITE_ROW)
    return gt::Status::Ok();
  return gt::Status::Error(std::string("SQLite error: ") + sqlite3_errmsg(db_));
}

void Statement::Reset() {
  sqlite3_reset(stmt_);
}

bool Statement::IsNull(int column) const {
  return sqlite3_column_type(stmt_, column) == SQLITE_NULL;
}

int64_t Statement::Int(int column) const {
  return sqlite3_column_int64(stmt_, column);
}

std::optional<int64_t> Statement::OptInt(int column) const {
  if (IsNull(column))
    return std::nullopt;
  return sqlite3_column_int64(stmt_, column);
}

std::string Statement::Text(int column) const {
  const unsigned char* text = sqlite3_column_text(stmt_, column);
  if (text == nullptr)
    return std::string();
  return std::string(reinterpret_cast<const char*>(text), static_cast<size_t>(sqlite3_column_bytes(stmt_, column)));
}

namespace {

// gt_strip_api_version(name): StripApiVersionSuffix in SQL, so reports can group by the printed API
// name inside SQLite. Byte-based like the C++ (SQLite's length()/substr() count characters).
void StripApiVersionSql(sqlite3_context* context, int argc, sqlite3_value** argv) {
  if (argc != 1 || sqlite3_value_type(argv[0]) == SQLITE_NULL) {
    sqlite3_result_null(context);
    return;
  }
  const unsigned char* text = sqlite3_value_text(argv[0]);
  const int bytes = sqlite3_value_bytes(argv[0]);
  if (text == nullptr) {
    sqlite3_result_null(context);
    return;
  }
  const std::string stripped =
      StripApiVersionSuffix(std::string_view(reinterpret_cast<const char*>(text), static_cast<size_t>(bytes)));
  sqlite3_result_text(context, stripped.data(), static_cast<int>(stripped.size()), SQLITE_TRANSIENT);
}

}  // namespace

std::string_view Statement::TextView(int column) const {
  const unsigned char* text = sqlite3_column_text(stmt_, column);
  if (text == nullptr)
    return std::string_view();
  return std::string_view(reinterpret_cast<const char*>(text),
                          static_cast<size_t>(sqlite3_column_bytes(stmt_, column)));
}

Database::~Database() {
  sqlite3_close_v2(db_);
}

std::string ReadOnlyUri(const std::string& path) {
  // An absolute path gets an empty authority ("file:///abs"), so a path starting with "//" is never
  // read as a host name.
  std::string uri = path.rfind('/', 0) == 0 ? "file://" : "file:";
  for (unsigned char c : path) {
    // '?' and '#' would end the path, '%' starts an escape; control bytes are escaped for safety.
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

gt::Status Database::Open(const std::string& path, std::unique_ptr<Database>* out) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(status)) {
    return gt::Status::Error("cannot open " + path + ": no such file");
  }
  if (std::filesystem::is_directory(status)) {
    return gt::Status::Error("cannot open " + path + ": is a directory, not an SQLite file");
  }
  sqlite3* db = nullptr;
  const int rc = sqlite3_open_v2(ReadOnlyUri(path).c_str(), &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, nullptr);
  if (rc != SQLITE_OK) {
    std::string message = db ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
    sqlite3_close_v2(db);
    return gt::Status::Error("cannot open " + path + ": " + message);
  }
  std::unique_ptr<Database> database(new Database(path, db));
  sqlite3_create_function_v2(db, "gt_strip_api_version", 1, SQLITE_UTF8 | SQLITE_DETERMINISTIC, nullptr,
                             StripApiVersionSql, nullptr, nullptr, nullptr);
  // SQLite reads the header lazily: the first query is where a non-database file shows up.
  Statement probe;
  gt::Status status_probe = database->Prepare("SELECT count(*) FROM sqlite_master", &probe);
  bool has_row = false;
  if (status_probe.ok())
    status_probe = probe.Step(&has_row);
  if (!status_probe.ok()) {
    return gt::Status::Error(path + " is not a readable SQLite database (" + status_probe.message() + ")");
  }
  if (!database->HasTable("StringIds")) {
    return gt::Status::Error(path +
                             " is not an Nsight Systems SQLite export (no StringIds table); "
                             "create one with `gtrace export` or `nsys export --type sqlite`");
  }
  *out = std::move(database);
  return gt::Status::Ok();
}

gt::Status Database::Prepare(std::string_view sql, Statement* statement) {
  sqlite3_finalize(statement->stmt_);
  statement->stmt_ = nullptr;
  statement->db_ = db_;
  const int rc = sqlite3_prepare_v2(db_, sql.data(), static_cast<int>(sql.size()), &statement->stmt_, nullptr);
  if (rc != SQLITE_OK)
    return gt::Status::Error(std::string("SQLite error: ") + sqlite3_errmsg(db_));
  return gt::Status::Ok();
}

bool Database::HasTable(std::string_view table) {
  Statement statement;
  if (!Prepare("SELECT 1 FROM sqlite_master WHERE type IN ('table', 'view') AND name = ?1", &statement).ok()) {
    return false;
  }
  sqlite3_bind_text(statement.stmt_, 1, table.data(), static_cast<int>(table.size()), SQLITE_TRANSIENT);
  bool has_row = false;
  return statement.Step(&has_row).ok() && has_row;
}

bool Database::HasColumn(std::string_view table, std::string_view column) {
  Statement statement;
  if (!Prepare("SELECT 1 FROM pragma_table_info(?1) WHERE name = ?2", &statement).ok())
    return false;
  sqlite3_bind_text(statement.stmt_, 1, table.data(), static_cast<int>(table.size()), SQLITE_TRANSIENT);
  sqlite3_bind_text(statement.stmt_, 2, column.data(), static_cast<int>(column.size()), SQLITE_TRANSIENT);
  bool has_row = false;
  return statement.Step(&has_row).ok() && has_row;
}

}  // namespace gt::stats
