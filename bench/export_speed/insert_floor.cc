// insert_floor: the bare SQLite insert floor of `gtrace export` (issue 16): the same rows into the
// same tables, with nothing else — no stream to read, decode or interpret.
//
//   insert_floor SOURCE.sqlite OUT.sqlite [SOURCE2.sqlite OUT2.sqlite ...]
//
// SOURCE is a database `gtrace export` wrote. Untimed: every row of every table is read into memory.
// Timed (CLOCK_MONOTONIC, printed as "floor_s=...", and the process's CPU time over the same section,
// "floor_cpu_s=..."): for each pair, on its own thread (so two pairs
// use two cores, as `gtrace export -j 2 --per-rank` does), open OUT with the exporter's PRAGMAs
// (tools/export/sqlite_db.cc: journal off, synchronous off, temp_store memory, 64 MiB cache), create
// SOURCE's tables with SOURCE's DDL, BEGIN, insert the rows table by table in rowid order through
// one prepared statement per table (sqlite3_bind_*, step, reset), COMMIT, create SOURCE's indexes,
// close. The same SQLite library and build flags as the exporter (this program links the same
// SQLite::SQLite3).
#include <sqlite3.h>
#include <sys/resource.h>
#include <time.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

struct Value {
  int type = SQLITE_NULL;
  int64_t i = 0;
  double d = 0;
  uint32_t text_at = 0, text_len = 0;  // into Table::text
};

struct Table {
  std::string name, ddl;
  int columns = 0;
  std::vector<Value> values;  // row-major
  std::string text;           // every TEXT / BLOB value, back to back
};

struct Source {
  std::vector<Table> tables;
  std::vector<std::string> indexes;  // CREATE INDEX statements
  uint64_t rows = 0;
};

bool Load(const char* path, Source* out) {
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) {
    std::fprintf(stderr, "insert_floor: cannot open %s\n", path);
    return false;
  }
  sqlite3_stmt* m = nullptr;
  sqlite3_prepare_v2(db, "SELECT type, name, sql FROM sqlite_master WHERE sql IS NOT NULL ORDER BY rowid", -1, &m,
                     nullptr);
  while (sqlite3_step(m) == SQLITE_ROW) {
    std::string type = reinterpret_cast<const char*>(sqlite3_column_text(m, 0));
    std::string name = reinterpret_cast<const char*>(sqlite3_column_text(m, 1));
    std::string sql = reinterpret_cast<const char*>(sqlite3_column_text(m, 2));
    if (type == "index") {
      out->indexes.push_back(sql);
      continue;
    }
    if (type != "table") continue;
    Table t;
    t.name = name;
    t.ddl = sql;
    sqlite3_stmt* s = nullptr;
    std::string q = "SELECT * FROM \"" + name + "\" ORDER BY rowid";
    if (sqlite3_prepare_v2(db, q.c_str(), -1, &s, nullptr) != SQLITE_OK) {
      q = "SELECT * FROM \"" + name + "\"";  // WITHOUT ROWID tables
      sqlite3_prepare_v2(db, q.c_str(), -1, &s, nullptr);
    }
    t.columns = sqlite3_column_count(s);
    while (sqlite3_step(s) == SQLITE_ROW) {
      for (int c = 0; c < t.columns; ++c) {
        Value v;
        v.type = sqlite3_column_type(s, c);
        if (v.type == SQLITE_INTEGER) v.i = sqlite3_column_int64(s, c);
        if (v.type == SQLITE_FLOAT) v.d = sqlite3_column_double(s, c);
        if (v.type == SQLITE_TEXT || v.type == SQLITE_BLOB) {
          const void* p = v.type == SQLITE_TEXT ? static_cast<const void*>(sqlite3_column_text(s, c)) : sqlite3_column_blob(s, c);
          v.text_len = static_cast<uint32_t>(sqlite3_column_bytes(s, c));
          v.text_at = static_cast<uint32_t>(t.text.size());
          t.text.append(static_cast<const char*>(p), v.text_len);
        }
        t.values.push_back(v);
      }
      ++out->rows;
    }
    sqlite3_finalize(s);
    out->tables.push_back(std::move(t));
  }
  sqlite3_finalize(m);
  sqlite3_close(db);
  return true;
}

bool Exec(sqlite3* db, const std::string& sql) {
  char* err = nullptr;
  if (sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
    std::fprintf(stderr, "insert_floor: %s: %s\n", sql.substr(0, 80).c_str(), err != nullptr ? err : "?");
    sqlite3_free(err);
    return false;
  }
  return true;
}

bool Insert(const Source& src, const char* path, bool* ok) {
  std::remove(path);
  sqlite3* db = nullptr;
  *ok = false;
  if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr) != SQLITE_OK) {
    return false;
  }
  if (!Exec(db, "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; PRAGMA temp_store=MEMORY; PRAGMA cache_size=-65536;")) {
    return false;
  }
  for (const Table& t : src.tables) {
    if (!Exec(db, t.ddl)) return false;
  }
  if (!Exec(db, "BEGIN")) return false;
  for (const Table& t : src.tables) {
    if (t.values.empty()) continue;
    std::string sql = "INSERT INTO \"" + t.name + "\" VALUES (";
    for (int c = 0; c < t.columns; ++c) sql += c == 0 ? "?" : ",?";
    sql += ")";
    sqlite3_stmt* s = nullptr;
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &s, nullptr) != SQLITE_OK) {
      std::fprintf(stderr, "insert_floor: %s\n", sqlite3_errmsg(db));
      return false;
    }
    size_t rows = t.values.size() / static_cast<size_t>(t.columns);
    const Value* v = t.values.data();
    for (size_t r = 0; r < rows; ++r) {
      for (int c = 1; c <= t.columns; ++c, ++v) {
        switch (v->type) {
          case SQLITE_INTEGER: sqlite3_bind_int64(s, c, v->i); break;
          case SQLITE_FLOAT: sqlite3_bind_double(s, c, v->d); break;
          case SQLITE_TEXT: sqlite3_bind_text(s, c, t.text.data() + v->text_at, static_cast<int>(v->text_len), SQLITE_STATIC); break;
          case SQLITE_BLOB: sqlite3_bind_blob(s, c, t.text.data() + v->text_at, static_cast<int>(v->text_len), SQLITE_STATIC); break;
          default: sqlite3_bind_null(s, c); break;
        }
      }
      if (sqlite3_step(s) != SQLITE_DONE) {
        std::fprintf(stderr, "insert_floor: %s: %s\n", t.name.c_str(), sqlite3_errmsg(db));
        return false;
      }
      sqlite3_reset(s);
    }
    sqlite3_finalize(s);
  }
  if (!Exec(db, "COMMIT")) return false;
  for (const std::string& i : src.indexes) {
    if (!Exec(db, i)) return false;
  }
  *ok = sqlite3_close(db) == SQLITE_OK;
  return *ok;
}

// CPU time (user + system) of the whole process, all threads.
double CpuNow() {
  rusage u;
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-6;
}

double Now() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3 || (argc - 1) % 2 != 0) {
    std::fprintf(stderr, "usage: insert_floor SOURCE.sqlite OUT.sqlite [SOURCE2.sqlite OUT2.sqlite ...]\n");
    return 2;
  }
  size_t n = static_cast<size_t>(argc - 1) / 2;
  std::vector<Source> sources(n);
  uint64_t rows = 0;
  for (size_t i = 0; i < n; ++i) {
    if (!Load(argv[1 + 2 * i], &sources[i])) return 1;
    rows += sources[i].rows;
  }
  std::vector<char> ok(n, 0);
  double t0 = Now();
  double c0 = CpuNow();
  if (n == 1) {
    bool b = false;
    Insert(sources[0], argv[2], &b);
    ok[0] = b;
  } else {
    std::vector<std::thread> threads;
    for (size_t i = 0; i < n; ++i) {
      threads.emplace_back([&, i] {
        bool b = false;
        Insert(sources[i], argv[2 + 2 * i], &b);
        ok[i] = b;
      });
    }
    for (auto& t : threads) t.join();
  }
  double seconds = Now() - t0;
  double cpu_seconds = CpuNow() - c0;
  for (size_t i = 0; i < n; ++i) {
    if (!ok[i]) {
      std::fprintf(stderr, "insert_floor: inserting into %s failed\n", argv[2 + 2 * i]);
      return 1;
    }
  }
  std::printf("floor_s=%.3f floor_cpu_s=%.3f rows=%llu\n", seconds, cpu_seconds, static_cast<unsigned long long>(rows));
  return 0;
}
