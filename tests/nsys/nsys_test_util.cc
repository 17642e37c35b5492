#include "nsys_test_util.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "tests/common/test_util.h"

namespace gt::nsys::testing {
namespace {

struct StatementDeleter {
  void operator()(sqlite3_stmt* stmt) const { sqlite3_finalize(stmt); }
};
using Statement = std::unique_ptr<sqlite3_stmt, StatementDeleter>;

Statement PrepareOrNull(sqlite3* db, const std::string& sql) {
  sqlite3_stmt* raw = nullptr;
  if (sqlite3_prepare_v2(db, sql.c_str(), -1, &raw, nullptr) != SQLITE_OK) {
    sqlite3_finalize(raw);
    return nullptr;
  }
  return Statement(raw);
}

std::string ColumnText(sqlite3_stmt* stmt, int i) {
  const unsigned char* text = sqlite3_column_text(stmt, i);
  return text == nullptr ? std::string() : std::string(reinterpret_cast<const char*>(text));
}

std::string QuoteIdentifier(std::string_view name) {
  std::string quoted = "\"";
  for (char c : name) {
    quoted += c;
    if (c == '"') {
      quoted += '"';
    }
  }
  return quoted + "\"";
}

}  // namespace

std::string ReferenceDir() { return gt::test::ConfiguredReferenceDir(); }

std::optional<std::string> ReferenceFile(std::string_view file_name, std::string* why) {
  const std::string dir = ReferenceDir();
  if (dir.empty()) {
    *why = "GT_TEST_REFERENCE_DIR is not set; reference comparisons skipped";
    return std::nullopt;
  }
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) {
    *why = "reference folder " + dir + " does not exist; reference comparisons skipped";
    return std::nullopt;
  }
  std::filesystem::path path = std::filesystem::path(dir) / file_name;
  if (!std::filesystem::is_regular_file(path, ec)) {
    *why = "reference file " + path.string() + " is absent; comparison skipped";
    return std::nullopt;
  }
  return path.string();
}

Db OpenMemory() {
  sqlite3* raw = nullptr;
  if (sqlite3_open(":memory:", &raw) != SQLITE_OK) {
    sqlite3_close(raw);
    return nullptr;
  }
  return Db(raw);
}

Db OpenReadOnly(const std::string& path, std::string* error) {
  sqlite3* raw = nullptr;
  const std::string uri = "file:" + path + "?mode=ro";
  if (sqlite3_open_v2(uri.c_str(), &raw, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, nullptr) != SQLITE_OK) {
    *error = "cannot open " + uri + ": " + (raw ? sqlite3_errmsg(raw) : "out of memory");
    sqlite3_close(raw);
    return nullptr;
  }
  return Db(raw);
}

Db LoadSqlFile(const std::string& path, std::string* error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    *error = "cannot read " + path;
    return nullptr;
  }
  std::stringstream text;
  text << in.rdbuf();
  Db db = OpenMemory();
  if (db == nullptr) {
    *error = "cannot open :memory:";
    return nullptr;
  }
  if (std::string message = Exec(db.get(), text.str()); !message.empty()) {
    *error = "loading " + path + ": " + message;
    return nullptr;
  }
  return db;
}

std::string Exec(sqlite3* db, const std::string& sql) {
  char* message = nullptr;
  if (sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &message) == SQLITE_OK) {
    return "";
  }
  std::string result = message ? message : "unknown error";
  sqlite3_free(message);
  return result;
}

void PrintTo(const Column& c, std::ostream* os) {
  *os << "{cid=" << c.cid << " name=" << c.name << " type=" << c.type << " notnull=" << c.notnull
      << " dflt=" << (c.dflt_value ? *c.dflt_value : "NULL") << " pk=" << c.pk << "}";
}

std::vector<Column> TableInfo(sqlite3* db, std::string_view table) {
  std::vector<Column> columns;
  Statement stmt = PrepareOrNull(db, "SELECT cid, name, type, \"notnull\", dflt_value, pk FROM pragma_table_info(?1)");
  if (stmt == nullptr) {
    return columns;
  }
  sqlite3_bind_text(stmt.get(), 1, table.data(), static_cast<int>(table.size()), SQLITE_TRANSIENT);
  while (sqlite3_step(stmt.get()) == SQLITE_ROW) {
    Column c;
    c.cid = sqlite3_column_int64(stmt.get(), 0);
    c.name = ColumnText(stmt.get(), 1);
    c.type = ColumnText(stmt.get(), 2);
    c.notnull = sqlite3_column_int64(stmt.get(), 3);
    if (sqlite3_column_type(stmt.get(), 4) != SQLITE_NULL) {
      c.dflt_value = ColumnText(stmt.get(), 4);
    }
    c.pk = sqlite3_column_int64(stmt.get(), 5);
    columns.push_back(std::move(c));
  }
  return columns;
}

std::string ColumnDiff(const std::vector<Column>& actual, const std::vector<Column>& expected) {
  std::ostringstream out;
  const size_t n = std::max(actual.size(), expected.size());
  for (size_t i = 0; i < n; ++i) {
    if (i < actual.size() && i < expected.size() && actual[i] == expected[i]) {
      continue;
    }
    out << "column " << i << ": ours ";
    if (i < actual.size()) {
      PrintTo(actual[i], &out);
    } else {
      out << "(none)";
    }
    out << " reference ";
    if (i < expected.size()) {
      PrintTo(expected[i], &out);
    } else {
      out << "(none)";
    }
    out << "\n";
  }
  return out.str();
}

std::vector<std::string> SchemaNames(sqlite3* db, std::string_view type, std::string_view like) {
  std::vector<std::string> names;
  Statement stmt = PrepareOrNull(db, "SELECT name FROM sqlite_master WHERE type = ?1 AND name LIKE ?2 ORDER BY rowid");
  if (stmt == nullptr) {
    return names;
  }
  sqlite3_bind_text(stmt.get(), 1, type.data(), static_cast<int>(type.size()), SQLITE_TRANSIENT);
  sqlite3_bind_text(stmt.get(), 2, like.data(), static_cast<int>(like.size()), SQLITE_TRANSIENT);
  while (sqlite3_step(stmt.get()) == SQLITE_ROW) {
    names.push_back(ColumnText(stmt.get(), 0));
  }
  return names;
}

bool HasTable(sqlite3* db, std::string_view table) {
  Statement stmt = PrepareOrNull(db, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?1");
  if (stmt == nullptr) {
    return false;
  }
  sqlite3_bind_text(stmt.get(), 1, table.data(), static_cast<int>(table.size()), SQLITE_TRANSIENT);
  return sqlite3_step(stmt.get()) == SQLITE_ROW;
}

void PrintTo(const Cell& cell, std::ostream* os) {
  switch (cell.type) {
    case SQLITE_INTEGER:
      *os << cell.integer;
      break;
    case SQLITE_FLOAT:
      *os << cell.real << "(real)";
      break;
    case SQLITE_TEXT:
      *os << "'" << cell.text << "'";
      break;
    case SQLITE_BLOB:
      *os << "blob[" << cell.text.size() << "]";
      break;
    default:
      *os << "NULL";
  }
}

std::vector<Row> TableRows(sqlite3* db, std::string_view table, std::string_view order_by, std::string* error) {
  std::vector<Row> rows;
  const std::string sql = "SELECT * FROM " + QuoteIdentifier(table) + " ORDER BY " + std::string(order_by);
  Statement stmt = PrepareOrNull(db, sql);
  if (stmt == nullptr) {
    *error = sql + ": " + sqlite3_errmsg(db);
    return rows;
  }
  const int n = sqlite3_column_count(stmt.get());
  int rc;
  while ((rc = sqlite3_step(stmt.get())) == SQLITE_ROW) {
    Row row(n);
    for (int i = 0; i < n; ++i) {
      Cell& cell = row[i];
      cell.type = sqlite3_column_type(stmt.get(), i);
      if (cell.type == SQLITE_INTEGER) {
        cell.integer = sqlite3_column_int64(stmt.get(), i);
      } else if (cell.type == SQLITE_FLOAT) {
        cell.real = sqlite3_column_double(stmt.get(), i);
      } else if (cell.type == SQLITE_TEXT || cell.type == SQLITE_BLOB) {
        const void* bytes = sqlite3_column_blob(stmt.get(), i);
        if (bytes != nullptr) {
          cell.text.assign(static_cast<const char*>(bytes), sqlite3_column_bytes(stmt.get(), i));
        }
      }
    }
    rows.push_back(std::move(row));
  }
  if (rc != SQLITE_DONE) {
    *error = sql + ": " + sqlite3_errmsg(db);
  }
  return rows;
}

int64_t QueryInt(sqlite3* db, const std::string& sql) {
  Statement stmt = PrepareOrNull(db, sql);
  if (stmt == nullptr || sqlite3_step(stmt.get()) != SQLITE_ROW) {
    return -1;
  }
  return sqlite3_column_int64(stmt.get(), 0);
}

}  // namespace gt::nsys::testing
