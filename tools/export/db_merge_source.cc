#include "tools/export/db_merge_source.h"

namespace gt::exporter::merge {

Status ForEach(sqlite3* db, const std::string& sql, const std::function<void(sqlite3_stmt*)>& row) {
  sqlite3_stmt* st = nullptr;
  if (sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr) != SQLITE_OK) {
    return Status::Error(std::string(sqlite3_errmsg(db)) + " in: " + sql.substr(0, 200));
  }
  int rc;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW)
    row(st);
  sqlite3_finalize(st);
  if (rc != SQLITE_DONE)
    return Status::Error(std::string(sqlite3_errmsg(db)) + " in: " + sql.substr(0, 200));
  return Status::Ok();
}

std::string Text(sqlite3_stmt* st, int i) {
  const unsigned char* t = sqlite3_column_text(st, i);
  return t != nullptr ? reinterpret_cast<const char*>(t) : "";
}
std::optional<int64_t> OptInt(sqlite3_stmt* st, int i) {
  if (sqlite3_column_type(st, i) == SQLITE_NULL)
    return std::nullopt;
  return sqlite3_column_int64(st, i);
}

Status ReadSource(const std::string& path, Source* s) {
  s->path = path;
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) {
    std::string e = db != nullptr ? sqlite3_errmsg(db) : "cannot open";
    sqlite3_close(db);
    return Status::Error(path + ": " + e);
  }
  Status st = ForEach(db, "SELECT name, sql FROM sqlite_master WHERE type = 'table' ORDER BY rowid",
                      [&](sqlite3_stmt* q) { s->tables.emplace_back(Text(q, 0), Text(q, 1)); });
  auto has = [&](const char* t) {
    for (const auto& [name, sql] : s->tables) {
      if (name == t)
        return true;
    }
    return false;
  };
  if (st.ok() && !has("GTRACE_RANKS")) {
    st = Status::Error(path + ": no GTRACE_RANKS table: not a gtrace export of this version (export its streams)");
  }
  // Databases written before the end-reason columns existed still merge: their streams' ends are
  // unknown (so such a process is never taken for the image before an exec).
  bool has_end_columns = false;
  for (const auto& [name, sql] : s->tables) {
    if (name == "GTRACE_RANKS")
      has_end_columns = sql.find("endReason") != std::string::npos;
  }
  const std::string rank_query =
      std::string("SELECT globalPid, pid, rank, localRank, worldSize, rankSource, hostName, bootId, hostIndex, "
                  "clockDomain, streamFile, startMonotonicNs, startRealtimeNs, clockOffsetNs, alignOffsetNs, "
                  "alignDriftPpb, alignRefNs, alignMethod, clockPairs, realtimeDriftPpb, sessionId, ") +
      (has_end_columns ? "endReason, endMonotonicNs" : "'unknown', NULL") + " FROM GTRACE_RANKS ORDER BY rowid";
  if (st.ok()) {
    st = ForEach(db, rank_query,
                 [&](sqlite3_stmt* q) {
                   Proc p;
                   p.gpid = sqlite3_column_int64(q, 0);
                   p.pid = sqlite3_column_int64(q, 1);
                   p.rank = OptInt(q, 2);
                   p.local_rank = OptInt(q, 3);
                   p.world_size = OptInt(q, 4);
                   p.rank_source = Text(q, 5);
                   p.host = Text(q, 6);
                   p.boot = Text(q, 7);
                   p.host_index = sqlite3_column_int64(q, 8);
                   p.clock_domain = sqlite3_column_int64(q, 9);
                   p.stream_file = Text(q, 10);
                   p.start_mono = sqlite3_column_int64(q, 11);
                   p.start_real = sqlite3_column_int64(q, 12);
                   p.clock_offset = sqlite3_column_int64(q, 13);
                   p.corr = {sqlite3_column_int64(q, 14), sqlite3_column_int64(q, 15), sqlite3_column_int64(q, 16)};
                   p.method = Text(q, 17);
                   p.clock_pairs = sqlite3_column_int64(q, 18);
                   p.drift_ppb = OptInt(q, 19);
                   s->session = Text(q, 20);
                   p.end_reason = Text(q, 21);
                   p.end_mono = OptInt(q, 22);
                   s->procs.push_back(p);
                 });
  }
  if (st.ok()) {
    st = ForEach(db, "SELECT utcEpochNs, systemClockNs FROM TARGET_INFO_SESSION_START_TIME", [&](sqlite3_stmt* q) {
      s->utc = sqlite3_column_int64(q, 0);
      s->sys = sqlite3_column_int64(q, 1);
    });
  }
  if (st.ok() && has("ANALYSIS_DETAILS")) {
    st = ForEach(db, "SELECT max(duration) FROM ANALYSIS_DETAILS",
                 [&](sqlite3_stmt* q) { s->duration = sqlite3_column_int64(q, 0); });
  }
  if (st.ok() && has("TARGET_INFO_GPU")) {
    st = ForEach(db, "SELECT id, vmId, uuid FROM TARGET_INFO_GPU ORDER BY rowid", [&](sqlite3_stmt* q) {
      s->gpus.push_back({sqlite3_column_int64(q, 0), sqlite3_column_int64(q, 1), Text(q, 2)});
    });
  }
  if (st.ok() && has("GTRACE_NCCL_OPERATIONS")) {
    st = ForEach(db,
                 "SELECT globalPid, commId, func, seqNumber, gpuEnd FROM GTRACE_NCCL_OPERATIONS WHERE kind = 'Coll' "
                 "AND gpuEnd IS NOT NULL AND commId IS NOT NULL AND seqNumber IS NOT NULL",
                 [&](sqlite3_stmt* q) {
                   ProcessAnchors::End e{static_cast<uint64_t>(sqlite3_column_int64(q, 1)), Text(q, 2),
                                         static_cast<uint64_t>(sqlite3_column_int64(q, 3)), sqlite3_column_int64(q, 4)};
                   s->ends.emplace_back(sqlite3_column_int64(q, 0), std::move(e));
                 });
  }
  sqlite3_close(db);
  if (!st.ok() && st.message().rfind(path, 0) != 0)
    return Status::Error(path + ": " + st.message());
  return st;
}

}  // namespace gt::exporter::merge
