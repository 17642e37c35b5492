#include "tools/export/gpu_sharing.h"

#include <sqlite3.h>

#include <map>
#include <set>
#include <string>
#include <vector>

namespace gt::exporter {
namespace {

std::set<std::string> Columns(sqlite3* db, const std::string& table) {
  std::set<std::string> out;
  sqlite3_stmt* q = nullptr;
  std::string sql = "SELECT name FROM main.pragma_table_info('" + table + "')";
  if (sqlite3_prepare_v2(db, sql.c_str(), -1, &q, nullptr) != SQLITE_OK)
    return out;
  while (sqlite3_step(q) == SQLITE_ROW) {
    const unsigned char* t = sqlite3_column_text(q, 0);
    if (t != nullptr)
      out.insert(reinterpret_cast<const char*>(t));
  }
  sqlite3_finalize(q);
  return out;
}

// Host index of a global id (the exporter's HostBits: hw byte + 256 * (vm byte - 1)).
int64_t HostIndexOf(int64_t global_pid) {
  int64_t hw = (global_pid >> 56) & 0xff, vm = (global_pid >> 48) & 0xff;
  return hw + 256 * (vm - 1);
}

}  // namespace

Status MakeContextsUniquePerGpu(SqliteDb& db) {
  sqlite3* h = db.handle();
  if (Columns(h, "GTRACE_DEVICES").count("deviceId") == 0)
    return Status::Ok();
  // GPU -> the processes on it, in globalPid order.
  std::map<int64_t, std::vector<int64_t>> on_gpu;
  sqlite3_stmt* q = nullptr;
  if (sqlite3_prepare_v2(h, "SELECT DISTINCT deviceId, globalPid FROM main.GTRACE_DEVICES ORDER BY deviceId, globalPid",
                         -1, &q, nullptr) != SQLITE_OK) {
    return Status::Error(std::string("GTRACE_DEVICES: ") + sqlite3_errmsg(h));
  }
  while (sqlite3_step(q) == SQLITE_ROW)
    on_gpu[sqlite3_column_int64(q, 0)].push_back(sqlite3_column_int64(q, 1));
  sqlite3_finalize(q);

  static constexpr const char* kActivity[] = {"CUPTI_ACTIVITY_KIND_KERNEL",     "CUPTI_ACTIVITY_KIND_MEMCPY",
                                              "CUPTI_ACTIVITY_KIND_MEMSET",     "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION",
                                              "CUPTI_ACTIVITY_KIND_CUDA_EVENT", "CUPTI_ACTIVITY_KIND_GRAPH_TRACE",
                                              "CUDA_GPU_MEMORY_USAGE_EVENTS"};
  std::map<std::string, std::set<std::string>> cols;
  for (const char* t : kActivity)
    cols[t] = Columns(h, t);
  cols["TARGET_INFO_CUDA_CONTEXT_INFO"] = Columns(h, "TARGET_INFO_CUDA_CONTEXT_INFO");
  cols["TARGET_INFO_CUDA_STREAM"] = Columns(h, "TARGET_INFO_CUDA_STREAM");

  for (const auto& [gpu, pids] : on_gpu) {
    for (size_t k = 1; k < pids.size(); ++k) {
      const std::string off = std::to_string(static_cast<int64_t>(k) * kSharedGpuIdStride);
      const std::string gp = std::to_string(pids[k]), dev = std::to_string(gpu);
      const std::string pid = std::to_string((pids[k] >> 24) & 0xffffff), hw = std::to_string(HostIndexOf(pids[k]));
      Status st;
      for (const char* t : kActivity) {
        const std::set<std::string>& c = cols[t];
        if (c.count("globalPid") == 0 || c.count("deviceId") == 0)
          continue;
        std::string set;
        for (const char* name : {"contextId", "streamId"}) {
          if (c.count(name) != 0)
            set += std::string(set.empty() ? "" : ", ") + name + " = " + name + " + " + off;
        }
        if (set.empty())
          continue;
        st = db.Exec(std::string("UPDATE main.") + t + " SET " + set + " WHERE globalPid = " + gp +
                     " AND deviceId = " + dev);
        if (!st.ok())
          return st;
      }
      const std::string ctx_where = " WHERE hwId = " + hw + " AND processId = " + pid + " AND deviceId = " + dev;
      if (!cols["TARGET_INFO_CUDA_STREAM"].empty() && !cols["TARGET_INFO_CUDA_CONTEXT_INFO"].empty()) {
        st = db.Exec("UPDATE main.TARGET_INFO_CUDA_STREAM SET streamId = streamId + " + off +
                     ", contextId = contextId + " + off + " WHERE hwId = " + hw + " AND processId = " + pid +
                     " AND contextId IN (SELECT contextId FROM main.TARGET_INFO_CUDA_CONTEXT_INFO" + ctx_where + ")");
        if (!st.ok())
          return st;
      }
      if (!cols["TARGET_INFO_CUDA_CONTEXT_INFO"].empty()) {
        st = db.Exec("UPDATE main.TARGET_INFO_CUDA_CONTEXT_INFO SET contextId = contextId + " + off +
                     ", nullStreamId = nullStreamId + " + off + ctx_where);
        if (!st.ok())
          return st;
      }
    }
  }
  return Status::Ok();
}

}  // namespace gt::exporter
