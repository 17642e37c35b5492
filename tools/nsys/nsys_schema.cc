// Lookup and SQLite writers for gt::nsys. The table data itself is in nsys_tables.cc and nsys_enums.cc.
#include "tools/nsys/nsys_schema.h"

#include <sqlite3.h>

#include <climits>
#include <memory>
#include <string>

namespace gt::nsys {
namespace {

struct StatementDeleter {
  void operator()(sqlite3_stmt* stmt) const { sqlite3_finalize(stmt); }
};
using Statement = std::unique_ptr<sqlite3_stmt, StatementDeleter>;

gt::Status SqliteError(sqlite3* db, std::string_view what) {
  std::string message = "nsys schema: ";
  message += what;
  message += ": ";
  message += sqlite3_errmsg(db);
  return gt::Status::Error(std::move(message));
}

// Prepares `sql` by explicit length (a string_view need not be NUL-terminated) and insists it is exactly one
// statement, so a malformed table entry cannot smuggle a second statement in.
gt::Status Prepare(sqlite3* db, std::string_view sql, Statement* out) {
  if (sql.size() > static_cast<size_t>(INT_MAX)) {
    return gt::Status::Error("nsys schema: statement too long");
  }
  sqlite3_stmt* raw = nullptr;
  const char* tail = nullptr;
  if (sqlite3_prepare_v2(db, sql.data(), static_cast<int>(sql.size()), &raw, &tail) != SQLITE_OK) {
    sqlite3_finalize(raw);
    return SqliteError(db, "prepare");
  }
  out->reset(raw);
  if (raw == nullptr) {
    return gt::Status::Error("nsys schema: empty statement");
  }
  for (const char* p = tail; p < sql.data() + sql.size(); ++p) {
    if (*p != ' ' && *p != '\n' && *p != '\t' && *p != '\r' && *p != ';') {
      return gt::Status::Error("nsys schema: more than one statement in '" + std::string(sql) + "'");
    }
  }
  return gt::Status::Ok();
}

gt::Status ExecOne(sqlite3* db, std::string_view sql) {
  Statement stmt;
  if (gt::Status status = Prepare(db, sql, &stmt); !status.ok()) {
    return status;
  }
  int rc;
  while ((rc = sqlite3_step(stmt.get())) == SQLITE_ROW) {
  }
  if (rc != SQLITE_DONE) {
    return SqliteError(db, "executing '" + std::string(sql.substr(0, 80)) + "'");
  }
  return gt::Status::Ok();
}

gt::Status BindText(sqlite3* db, sqlite3_stmt* stmt, int index, const char* text) {
  // SQLITE_STATIC: the rows are string literals that outlive the statement.
  int rc = text == nullptr ? sqlite3_bind_null(stmt, index) : sqlite3_bind_text(stmt, index, text, -1, SQLITE_STATIC);
  return rc == SQLITE_OK ? gt::Status::Ok() : SqliteError(db, "bind");
}

gt::Status WriteOneEnumTable(sqlite3* db, const EnumTable& table) {
  std::string name(table.name);
  std::string create = "CREATE TABLE " + name + " (" + std::string(kEnumTableColumns) + ")";
  if (gt::Status status = ExecOne(db, create); !status.ok()) {
    return status;
  }
  Statement insert;
  if (gt::Status status = Prepare(db, "INSERT INTO " + name + " (id, name, label) VALUES (?1, ?2, ?3)", &insert);
      !status.ok()) {
    return status;
  }
  for (const EnumRow& row : table.rows) {
    if (sqlite3_bind_int64(insert.get(), 1, row.id) != SQLITE_OK) {
      return SqliteError(db, "bind");
    }
    if (gt::Status status = BindText(db, insert.get(), 2, row.name); !status.ok()) {
      return status;
    }
    if (gt::Status status = BindText(db, insert.get(), 3, row.label); !status.ok()) {
      return status;
    }
    if (sqlite3_step(insert.get()) != SQLITE_DONE) {
      return SqliteError(db, "inserting into " + name);
    }
    sqlite3_reset(insert.get());
  }
  return gt::Status::Ok();
}

constexpr std::string_view kEnumSavepoint = "gt_nsys_enum_tables";

}  // namespace

const TableDef* FindTable(std::string_view name) {
  for (const TableDef& table : Tables()) {
    if (table.name == name) {
      return &table;
    }
  }
  return nullptr;
}

const EnumTable* FindEnumTable(std::string_view name) {
  for (const EnumTable& table : EnumTables()) {
    if (table.name == name) {
      return &table;
    }
  }
  return nullptr;
}

gt::Status CreateTable(sqlite3* db, std::string_view name) {
  if (db == nullptr) {
    return gt::Status::Error("nsys schema: CreateTable: no database");
  }
  const TableDef* table = FindTable(name);
  if (table == nullptr) {
    std::string message = "nsys schema: unknown table '" + std::string(name) + "'";
    if (FindEnumTable(name) != nullptr) {
      message += " (ENUM tables are written by WriteEnumTables)";
    }
    return gt::Status::Error(std::move(message));
  }
  return ExecOne(db, table->create_sql);
}

gt::Status WriteEnumTable(sqlite3* db, const EnumTable& table) {
  if (db == nullptr) {
    return gt::Status::Error("nsys schema: WriteEnumTable: no database");
  }
  return WriteOneEnumTable(db, table);
}

gt::Status WriteEnumTables(sqlite3* db) {
  if (db == nullptr) {
    return gt::Status::Error("nsys schema: WriteEnumTables: no database");
  }
  // A savepoint rather than BEGIN: it nests inside a transaction the caller may hold, and acts as one when there is
  // none, so either all 24 tables land or none does.
  const std::string savepoint(kEnumSavepoint);
  if (gt::Status status = ExecOne(db, "SAVEPOINT " + savepoint); !status.ok()) {
    return status;
  }
  gt::Status result = gt::Status::Ok();
  for (const EnumTable& table : EnumTables()) {
    result = WriteOneEnumTable(db, table);
    if (!result.ok()) {
      break;
    }
  }
  if (result.ok()) {
    result = ExecOne(db, "RELEASE " + savepoint);
    if (result.ok()) {
      return result;
    }
  }
  // Best effort: the first error is the one worth reporting.
  ExecOne(db, "ROLLBACK TO " + savepoint);
  ExecOne(db, "RELEASE " + savepoint);
  return result;
}

}  // namespace gt::nsys
