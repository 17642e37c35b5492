#include "tools/export/lazy_tables.h"

#include <sqlite3.h>

namespace gt::exporter {

bool AlwaysWritten(std::string_view table) {
  static constexpr std::string_view kAlways[] = {"StringIds",
                                                 "ThreadNames",
                                                 "PROCESSES",
                                                 "ANALYSIS_DETAILS",
                                                 "META_DATA_CAPTURE",
                                                 "META_DATA_EXPORT",
                                                 "TARGET_INFO_SYSTEM_ENV",
                                                 "TARGET_INFO_SESSION_START_TIME",
                                                 "GTRACE_RANKS"};
  if (table.substr(0, 5) == "ENUM_")
    return true;
  for (std::string_view t : kAlways) {
    if (t == table)
      return true;
  }
  return false;
}

Status DropEmptyTables(SqliteDb& db, std::vector<std::string>* dropped) {
  std::vector<std::string> tables;
  sqlite3_stmt* q = nullptr;
  if (sqlite3_prepare_v2(db.handle(), "SELECT name FROM main.sqlite_master WHERE type = 'table' ORDER BY name", -1, &q,
                         nullptr) != SQLITE_OK) {
    return Status::Error(std::string("listing tables: ") + sqlite3_errmsg(db.handle()));
  }
  while (sqlite3_step(q) == SQLITE_ROW) {
    const unsigned char* name = sqlite3_column_text(q, 0);
    if (name != nullptr)
      tables.emplace_back(reinterpret_cast<const char*>(name));
  }
  sqlite3_finalize(q);
  for (const std::string& t : tables) {
    if (AlwaysWritten(t))
      continue;
    std::string quoted = "\"" + t + "\"";
    bool empty = true;
    if (sqlite3_prepare_v2(db.handle(), ("SELECT 1 FROM main." + quoted + " LIMIT 1").c_str(), -1, &q, nullptr) !=
        SQLITE_OK) {
      return Status::Error("probing " + t + ": " + sqlite3_errmsg(db.handle()));
    }
    empty = sqlite3_step(q) != SQLITE_ROW;
    sqlite3_finalize(q);
    if (!empty)
      continue;
    Status st = db.Exec("DROP TABLE main." + quoted);
    if (!st.ok())
      return st;
    if (dropped != nullptr)
      dropped->push_back(t);
  }
  return Status::Ok();
}

}  // namespace gt::exporter
