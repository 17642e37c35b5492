// The descriptive tables of an export: ThreadNames, PROCESSES, MPI_RANKS, ANALYSIS_DETAILS,
// TARGET_INFO_SESSION_START_TIME, TARGET_INFO_SYSTEM_ENV, META_DATA_CAPTURE, META_DATA_EXPORT.
// Written after all streams, when every thread that appears in an event table is known.
#include "tools/export/system_tables.h"

#include <pwd.h>
#include <unistd.h>

#include <climits>
#include <cstdio>
#include <cstdlib>
#include <ctime>

#include "tools/export/process_tree.h"
#include "tools/nsys/nsys_schema.h"

namespace gt::exporter {
namespace {

std::string FormatTime(int64_t utc_ns, bool local, bool with_zone) {
  time_t secs = static_cast<time_t>(utc_ns / 1000000000);
  struct tm tm_value;
  if (local) {
    localtime_r(&secs, &tm_value);
  } else {
    gmtime_r(&secs, &tm_value);
  }
  char buf[64];
  strftime(buf, sizeof(buf), with_zone ? "%Y-%m-%dT%H:%M:%S %z %Z" : "%Y-%m-%dT%H:%M:%S", &tm_value);
  return buf;
}

std::string BaseName(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string AbsolutePath(const std::string& path) {
  char buf[PATH_MAX];
  if (realpath(path.c_str(), buf) != nullptr) return buf;
  if (!path.empty() && path[0] == '/') return path;
  char cwd[PATH_MAX];
  if (getcwd(cwd, sizeof(cwd)) != nullptr) return std::string(cwd) + "/" + path;
  return path;
}

std::string ProcessName(const schema::StreamHeader& h) {
  if (!h.executable_path().empty()) return h.executable_path();
  if (h.command_line_size() > 0) return h.command_line(0);
  return "pid " + std::to_string(h.pid());
}

Status WriteThreads(ExportContext& ctx) {
  Status st;
  Statement* names =
      ctx.Insert("ThreadNames", "INSERT INTO ThreadNames (nameId, priority, globalTid) VALUES (?,?,?)", &st);
  if (names == nullptr) return st;
  Statement* procs = ctx.Insert("PROCESSES", "INSERT INTO PROCESSES (globalPid, pid, name) VALUES (?,?,?)", &st);
  if (procs == nullptr) return st;
  for (auto& sp : ctx.streams()) {
    StreamContext& s = *sp;
    if (!(st = procs->Int(1, s.GlobalPid()).Int(2, s.pid).Text(3, ProcessName(s.header)).Run()).ok()) return st;
    for (auto& [tid, t] : s.threads) {
      if (!t.used) continue;
      // The NVTX name wins; then the OS name; a thread we never saw named gets what the process is called.
      std::string name = !t.nvtx_name.empty() ? t.nvtx_name
                         : !t.os_name.empty() ? t.os_name
                         : tid == s.pid       ? BaseName(ProcessName(s.header)).substr(0, 15)
                                              : "thread " + std::to_string(tid);
      int64_t name_id = 0;
      if (!(st = ctx.StringId(name, &name_id)).ok()) return st;
      if (!(st = names->Int(1, name_id).Int(2, 20 + t.nice).Int(3, PackGlobalTid(s.hw_id, s.pid, tid)).Run()).ok()) {
        return st;
      }
    }
  }
  return Status::Ok();
}

Status WriteRanks(ExportContext& ctx) {
  Status st;
  for (auto& sp : ctx.streams()) {
    if (sp->header.rank() < 0) continue;
    Statement* ins = ctx.Insert("MPI_RANKS", "INSERT INTO MPI_RANKS (globalTid, rank) VALUES (?,?)", &st);
    if (ins == nullptr) return st;
    // The rank belongs to the process; nsys keys it by the main thread.
    if (!(st = ins->Int(1, sp->GlobalTid(sp->pid)).Int(2, sp->header.rank()).Run()).ok()) return st;
  }
  return Status::Ok();
}

Status KeyValues(ExportContext& ctx, const char* table, const std::vector<std::pair<std::string, std::string>>& rows) {
  Status st;
  std::string sql = std::string("INSERT INTO ") + table + " (name, value) VALUES (?,?)";
  Statement* ins = ctx.Insert(table, sql, &st);
  if (ins == nullptr) return st;
  for (const auto& [k, v] : rows) {
    if (!(st = ins->Text(1, k).Text(2, v).Run()).ok()) return st;
  }
  return Status::Ok();
}

Status WriteSystemEnv(ExportContext& ctx) {
  Status st;
  Statement* ins = ctx.Insert("TARGET_INFO_SYSTEM_ENV",
                              "INSERT INTO TARGET_INFO_SYSTEM_ENV (globalVid, devStateName, name, nameEnum, value) "
                              "VALUES (?,?,?,?,?)",
                              &st);
  if (ins == nullptr) return st;
  bool has_nvtx = false;
  {
    Statement* q = ctx.db().Prepare("SELECT count(*) FROM NVTX_EVENTS", &st);
    if (q != nullptr && q->Step()) has_nvtx = q->ColumnInt(0) > 0;
    if (q != nullptr) q->Reset();
  }
  std::vector<uint32_t> done;
  for (auto& sp : ctx.streams()) {
    const schema::StreamHeader& h = sp->header;
    bool seen = false;
    for (uint32_t d : done) seen |= d == sp->hw_id;
    if (seen) continue;
    done.push_back(sp->hw_id);
    int64_t vid = HostBits(sp->hw_id);
    // Names and nameEnum values as nsys writes them (shared notes, TARGET_INFO_SYSTEM_ENV).
    struct Row {
      const char* name;
      int64_t name_enum;
      std::string value;
    } rows[] = {
        {"CpuCores", 1, std::to_string(h.cpu_cores())},
        {"CpuArchitecture", 3, h.cpu_architecture()},
        {"OsDescription", 605, h.os_description()},
        {"Hostname", 619, h.host_name()},
        {"HasNvtxEvents", 809, has_nvtx ? "1" : "0"},
    };
    for (const Row& r : rows) {
      if (!(st = ins->Int(1, vid).Text(2, "Local (CLI)").Text(3, r.name).Int(4, r.name_enum).Text(5, r.value).Run()).ok()) {
        return st;
      }
    }
  }
  return Status::Ok();
}

}  // namespace

Status WriteSystemTables(ExportContext& ctx, double export_seconds) {
  Status st;
  if (!(st = WriteThreads(ctx)).ok()) return st;
  if (!(st = WriteProcessTree(ctx)).ok()) return st;
  if (!(st = WriteRanks(ctx)).ok()) return st;

  int64_t duration = ctx.max_time_ns();
  Statement* details = ctx.Insert("ANALYSIS_DETAILS",
                                  "INSERT INTO ANALYSIS_DETAILS (globalVid, duration, startTime, stopTime) VALUES "
                                  "(?,?,?,?)",
                                  &st);
  if (details == nullptr) return st;
  if (!(st = details->Int(1, kVmIdLocal)
                 .Int(2, duration)
                 .Int(3, ctx.system_clock_ns)
                 .Int(4, ctx.system_clock_ns + duration)
                 .Run())
           .ok()) {
    return st;
  }
  Statement* start = ctx.Insert("TARGET_INFO_SESSION_START_TIME",
                                "INSERT INTO TARGET_INFO_SESSION_START_TIME (utcEpochNs, utcTime, localTime, "
                                "systemClockNs) VALUES (?,?,?,?)",
                                &st);
  if (start == nullptr) return st;
  if (!(st = start->Int(1, ctx.session_utc_ns)
                 .Text(2, FormatTime(ctx.session_utc_ns, false, false))
                 .Text(3, FormatTime(ctx.session_utc_ns, true, false))
                 .Int(4, ctx.system_clock_ns)
                 .Run())
           .ok()) {
    return st;
  }
  if (!(st = WriteSystemEnv(ctx)).ok()) return st;

  // Capture settings, per process.
  std::vector<std::pair<std::string, std::string>> capture;
  for (auto& sp : ctx.streams()) {
    const schema::StreamHeader& h = sp->header;
    std::string p = "PROCESS_" + std::to_string(sp->index) + ":";
    std::string cmd;
    for (const std::string& a : h.command_line()) cmd += (cmd.empty() ? "" : " ") + a;
    capture.emplace_back(p + "PID", std::to_string(h.pid()));
    capture.emplace_back(p + "PPID", std::to_string(h.ppid()));
    if (h.forked_without_exec()) capture.emplace_back(p + "FORKED_WITHOUT_EXEC", "true");
    std::string ancestors;
    for (const schema::ProcessAncestor& a : h.ancestors()) {
      ancestors += (ancestors.empty() ? "" : " < ") + std::to_string(a.pid()) + " " + a.name();
    }
    if (!ancestors.empty()) capture.emplace_back(p + "ANCESTORS", ancestors);
    capture.emplace_back(p + "HOST", h.host_name());
    capture.emplace_back(p + "COMMAND_LINE", cmd);
    capture.emplace_back(p + "RANK", std::to_string(h.rank()));
    capture.emplace_back(p + "LOCAL_RANK", std::to_string(h.local_rank()));
    capture.emplace_back(p + "WORLD_SIZE", std::to_string(h.world_size()));
    capture.emplace_back(p + "STREAM_FILE", sp->path);
    capture.emplace_back(p + "GTRACE_VERSION", h.gtrace_version());
    capture.emplace_back(p + "TRACE", h.trace());
    capture.emplace_back(p + "OUTPUT", h.output_pattern());
    capture.emplace_back(p + "BUFFER_LIMIT_BYTES", std::to_string(h.buffer_limit_bytes()));
    capture.emplace_back(p + "FLUSH_INTERVAL_MS", std::to_string(h.flush_interval_ms()));
    capture.emplace_back(p + "DROPPED_RECORDS", std::to_string(sp->dropped_records));
    capture.emplace_back(p + "STREAM_COMPLETE", sp->end_of_stream ? "true" : "false");
    // How the process ended (issue 14): close_reason of its last end-of-stream chunk ("exit",
    // "_exit", "exec", "abort", "signal SIGSEGV", ...), or "cut" with the session time (ns) of the
    // last complete chunk when the stream has no end marker (SIGKILL, a crash gtrace did not see).
    capture.emplace_back(p + "END_REASON", sp->end_of_stream ? sp->stats.close_reason() : std::string("cut"));
    if (!sp->end_of_stream) {
      capture.emplace_back(p + "LAST_CHUNK_TIME", std::to_string(sp->ToSessionNs(sp->last_chunk_ns)));
    }
    for (const schema::KeyValue& kv : h.options()) capture.emplace_back(p + kv.key(), kv.value());
  }
  if (!(st = KeyValues(ctx, "META_DATA_CAPTURE", capture)).ok()) return st;

  // Export metadata: nsys's key set and order; product rows say honestly what wrote the file.
  const ExportOptions& o = ctx.options();
  std::string inputs, inputs_abs, input_files;
  for (const std::string& in : o.inputs) {
    inputs += (inputs.empty() ? "" : ",") + in;
    inputs_abs += (inputs_abs.empty() ? "" : ",") + AbsolutePath(in);
    input_files += (input_files.empty() ? "" : ",") + BaseName(in);
  }
  int64_t now_ns = static_cast<int64_t>(time(nullptr)) * 1000000000;
  char host[256] = {};
  gethostname(host, sizeof(host) - 1);
  // getpwuid_r: the parts of a many-rank export run this on several threads at once.
  const char* user = getenv("USER");
  char pw_buf[4096];
  if (user == nullptr) {
    struct passwd pw_entry;
    struct passwd* pw = nullptr;
    user = getpwuid_r(getuid(), &pw_entry, pw_buf, sizeof(pw_buf), &pw) == 0 && pw != nullptr ? pw->pw_name : "";
  }
  char elapsed[32];
  snprintf(elapsed, sizeof(elapsed), "%.2f sec", export_seconds);
  std::vector<std::pair<std::string, std::string>> meta = {
      {"EXPORT_PRODUCT_NAME", "gtrace"},
      {"EXPORT_PRODUCT_VERSION", GT_VERSION_STRING},
      {"EXPORT_PRODUCT_DATE", GT_VERSION_STRING},
      {"EXPORT_SCHEMA_VERSION", nsys::kSchemaVersion},
      {"EXPORT_SCHEMA_VERSION_MAJOR", nsys::kSchemaVersionMajor},
      {"EXPORT_SCHEMA_VERSION_MINOR", nsys::kSchemaVersionMinor},
      {"EXPORT_SCHEMA_VERSION_MICRO", nsys::kSchemaVersionMicro},
      {"EXPORT_SCHEMA_VERSION_CKSUM", ""},
      {"EXPORT_PLATFORM", "linux-desktop"},
      {"EXPORT_ARCH", "x64"},
      {"EXPORT_TIME_UTC", FormatTime(now_ns, false, false)},
      {"EXPORT_TIME_LOCAL", FormatTime(now_ns, true, true)},
      {"EXPORT_HOST", host},
      {"EXPORT_USER", user},
      {"EXPORT_PARAM_EXPORT_TYPE", "SQLite"},
      {"EXPORT_PARAM_INPUT_FILE", input_files},
      {"EXPORT_PARAM_OUTPUT_FILE", BaseName(o.output)},
      {"EXPORT_PARAM_INPUT_PATH", inputs},
      {"EXPORT_PARAM_OUTPUT_PATH", o.output},
      {"EXPORT_PARAM_INPUT_PATH_ABS", inputs_abs},
      {"EXPORT_PARAM_OUTPUT_PATH_ABS", AbsolutePath(o.output)},
      {"EXPORT_PARAM_PROGRESS", "false"},
      {"EXPORT_PARAM_OVERWRITE", o.force ? "true" : "false"},
      {"EXPORT_PARAM_APPEND", "false"},
      {"EXPORT_PARAM_LAZY", "true"},
      {"EXPORT_PARAM_USE_SHUFFLE", "false"},
      {"EXPORT_PARAM_INCLUDE_JSON", "false"},
      {"EXPORT_PARAM_INCLUDE_BLOBS", "false"},
      {"EXPORT_PARAM_TIME_NORMALIZE", "false"},
      {"EXPORT_PARAM_TIME_SHIFT", "0"},
      {"EXPORT_PARAM_TABLES_TO_EXPORT", ""},
      {"EXPORT_PARAM_TIMES_TO_EXPORT", ""},
      {"EXPORT_CONFIG_TIME_SHIFT", "0"},
      {"EXPORT_TIME", elapsed},
  };
  return KeyValues(ctx, "META_DATA_EXPORT", meta);
}

}  // namespace gt::exporter
