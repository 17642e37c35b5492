#include "tools/export/sqlite_db.h"

namespace gt::exporter {

Statement::Statement(sqlite3* db, std::string_view sql) : db_(db) {
  if (sqlite3_prepare_v2(db, sql.data(), static_cast<int>(sql.size()), &stmt_, nullptr) != SQLITE_OK) {
    error_ = std::string(sqlite3_errmsg(db)) + " in: " + std::string(sql);
    stmt_ = nullptr;
  }
}

Statement::~Statement() {
  if (stmt_ != nullptr) sqlite3_finalize(stmt_);
}

Statement& Statement::Int(int index, int64_t value) {
  sqlite3_bind_int64(stmt_, index, value);
  return *this;
}
Statement& Statement::Null(int index) {
  sqlite3_bind_null(stmt_, index);
  return *this;
}
Statement& Statement::Real(int index, double value) {
  sqlite3_bind_double(stmt_, index, value);
  return *this;
}
Statement& Statement::Text(int index, std::string_view value) {
  sqlite3_bind_text(stmt_, index, value.data(), static_cast<int>(value.size()), SQLITE_TRANSIENT);
  return *this;
}
Statement& Statement::StaticText(int index, std::string_view value) {
  sqlite3_bind_text(stmt_, index, value.data(), static_cast<int>(value.size()), SQLITE_STATIC);
  return *this;
}
Statement& Statement::Blob(int index, const void* data, size_t size) {
  sqlite3_bind_blob(stmt_, index, data, static_cast<int>(size), SQLITE_TRANSIENT);
  return *this;
}

Status Statement::Run() {
  int rc = sqlite3_step(stmt_);
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
  if (rc != SQLITE_DONE && rc != SQLITE_ROW) {
    return Status::Error(std::string("sqlite: ") + sqlite3_errmsg(db_) + " (" + sqlite3_sql(stmt_) + ")");
  }
  return Status::Ok();
}

bool Statement::Step() { return sqlite3_step(stmt_) == SQLITE_ROW; }

void Statement::Reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

std::string Statement::ColumnText(int i) const {
  const unsigned char* t = sqlite3_column_text(stmt_, i);
  return t != nullptr ? std::string(reinterpret_cast<const char*>(t)) : std::string();
}

Status SqliteDb::Open(const std::string& path) {
  Close();
  // One connection used by one thread: no SQLite mutexes.
  int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX;
  if (sqlite3_open_v2(path.c_str(), &db_, flags, nullptr) != SQLITE_OK) {
    std::string msg = db_ != nullptr ? sqlite3_errmsg(db_) : "out of memory";
    Close();
    return Status::Error("cannot create " + path + ": " + msg);
  }
  // The output is written to a temporary file and renamed when complete, so durability inside
  // the conversion buys nothing: no journal, no fsync per transaction.
  return Exec("PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; PRAGMA temp_store=MEMORY; PRAGMA cache_size=-65536;");
}

Status SqliteDb::Close() {
  cache_.clear();
  if (db_ == nullptr) return Status::Ok();
  int rc = sqlite3_close(db_);
  db_ = nullptr;
  if (rc != SQLITE_OK) return Status::Error("sqlite close failed");
  return Status::Ok();
}

Status SqliteDb::Exec(std::string_view sql) {
  char* err = nullptr;
  std::string text(sql);
  if (sqlite3_exec(db_, text.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
    std::string msg = err != nullptr ? err : "unknown error";
    sqlite3_free(err);
    return Status::Error("sqlite: " + msg);
  }
  return Status::Ok();
}

Statement* SqliteDb::Prepare(std::string_view sql, Status* status) {
  auto it = cache_.find(std::string(sql));
  if (it != cache_.end()) return it->second.get();
  auto stmt = std::make_unique<Statement>(db_, sql);
  if (!stmt->valid()) {
    *status = Status::Error("sqlite: " + stmt->error());
    return nullptr;
  }
  Statement* raw = stmt.get();
  cache_.emplace(std::string(sql), std::move(stmt));
  return raw;
}

}  // namespace gt::exporter
