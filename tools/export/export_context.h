// ExportContext and StreamContext: what every export module shares while one `gtrace export`
// converts streams into one nsys-schema SQLite database. Single-threaded (the exporter's thread).
//
// Ids follow nsys (see shared notes, "globalTid / globalPid layout"):
//   globalTid = <hw id:8><vm id:8 = 1><pid:24><tid:24>, globalPid = globalTid with tid bits 0.
// The hw byte is the host's index in this export (0 for the first host), so processes of
// different nodes with the same pid stay distinct in a merged database.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "gtrace.pb.h"
#include "schema/status.h"
#include "tools/export/clock_align.h"
#include "tools/export/session_plan.h"
#include "tools/export/sqlite_db.h"

namespace gt::exporter {

inline constexpr int64_t kVmIdLocal = int64_t{1} << 48;

// The top 16 bits of a global id of host index `hw_id`: <hw:8><vm:8>. nsys writes vm 1 for local
// processes; an export of more than 256 hosts carries hw_id / 256 in the vm byte (vm = 1 + hw_id /
// 256), so that every process of a merged thousand-rank export keeps a distinct globalPid.
inline int64_t HostBits(uint32_t hw_id) {
  return static_cast<int64_t>((uint64_t{hw_id & 0xffu} << 56) | (uint64_t{(1u + (hw_id >> 8)) & 0xffu} << 48));
}

inline int64_t PackGlobalTid(uint32_t hw_id, uint32_t pid, uint32_t tid) {
  return HostBits(hw_id) | (static_cast<int64_t>(pid & 0xffffff) << 24) | static_cast<int64_t>(tid & 0xffffff);
}

struct ThreadState {
  std::string os_name;    // ThreadInfo.name
  int32_t nice = 0;
  bool has_os_info = false;
  std::string nvtx_name;  // nvtxNameOsThread: wins over the OS name
  bool used = false;      // appears in an event table: needs a ThreadNames row
};

// One input stream (one process).
struct StreamContext {
  size_t index = 0;
  std::string path;
  schema::StreamHeader header;
  uint32_t pid = 0;
  uint32_t hw_id = 0;
  int64_t offset_ns = 0;  // session-relative ns = stream clock ns + offset_ns (+ correction)
  ClockCorrection correction;  // cross-host clock alignment (clock_align.h); zero when not aligned
  ClockPairFit clock_pairs;    // the stream's clock pairs (header + snapshots), for GTRACE_RANKS
  std::unordered_map<uint64_t, std::string> strings;  // interned id -> text
  std::map<uint32_t, ThreadState> threads;
  uint64_t dropped_records = 0;
  uint64_t clamped_timestamps = 0;
  bool end_of_stream = false;  // the last chunk read so far is an end-of-stream chunk
  schema::StreamStats stats;    // of the last end-of-stream chunk
  uint64_t last_chunk_ns = 0;   // latest stream-clock time of a complete chunk (base, clock, end)

  int64_t GlobalPid() const { return PackGlobalTid(hw_id, pid, 0); }
  // Also marks the thread as used (it gets a ThreadNames row).
  int64_t GlobalTid(uint32_t tid) {
    threads[tid].used = true;
    return PackGlobalTid(hw_id, pid, tid);
  }
  int64_t ToSessionNs(uint64_t stream_ns) {
    int64_t rel = static_cast<int64_t>(stream_ns) + offset_ns;
    if (!correction.is_zero()) rel = correction.Apply(rel);
    if (rel < 0) {
      ++clamped_timestamps;
      return 0;
    }
    return rel;
  }
  // Text of an interned string id ("" when unknown; 0 is "no string").
  std::string_view Text(uint64_t id) const {
    auto it = strings.find(id);
    return it != strings.end() ? std::string_view(it->second) : std::string_view();
  }
  bool HasText(uint64_t id) const { return strings.count(id) != 0; }
};

struct ExportOptions {
  std::string output;
  std::vector<std::string> inputs;
  bool force = false;
  // A damaged stream (a chunk whose checksum or framing is wrong) fails the export; without it the
  // intact chunks are kept and each damaged span is a warning and a DIAGNOSTIC_EVENT row.
  bool strict = false;
  // Set when this export is one part of a larger one (multi_export.h): the shared time base,
  // host numbering and clock alignment (one placement per input), and a string table shared by
  // the parts converted concurrently. Null: the inputs are the whole session.
  const SessionPlan* plan = nullptr;
  SharedStrings* shared_strings = nullptr;
};

class ExportContext {
 public:
  explicit ExportContext(const ExportOptions& options) : options_(options) {}
  ExportContext(const ExportContext&) = delete;
  ExportContext& operator=(const ExportContext&) = delete;

  const ExportOptions& options() const { return options_; }
  SqliteDb& db() { return db_; }

  // Creates an nsys table (exact 3.25.0 DDL from tools/nsys) the first time it is asked for.
  Status EnsureTable(std::string_view name);
  bool HasTable(std::string_view name) const { return created_.count(name) != 0; }
  // StringIds: dense ids from 0, each text once per database.
  Status StringId(std::string_view text, int64_t* id);
  // The spill database, attached as schema `gt_spill` before the export's transaction begins (ATTACH
  // is refused inside one): modules keep rows there that they can only finish at a stream's end
  // (CUDA graph-trace rows and launches), so the export's memory does not grow with them. Its own
  // small page cache; journal and sync off like the output. The exporter removes the file.
  Status AttachSpill(const std::string& path);
  // Prepared statement for `sql`, after EnsureTable(table).
  Statement* Insert(std::string_view table, std::string_view sql, Status* status);

  // Time base (set by the exporter before streams are read).
  int64_t session_utc_ns = 0;     // UTC of time zero
  int64_t system_clock_ns = 0;    // CLOCK_MONOTONIC of time zero on the first host
  void NoteTime(int64_t rel_ns) {
    if (rel_ns > max_time_ns_) max_time_ns_ = rel_ns;
  }
  int64_t max_time_ns() const { return max_time_ns_; }

  std::vector<std::unique_ptr<StreamContext>>& streams() { return streams_; }
  void Warn(std::string text) { warnings_.push_back(std::move(text)); }
  const std::vector<std::string>& warnings() const { return warnings_; }
  // Host index for hw id packing.
  uint32_t HostIndex(const std::string& host, const std::string& boot_id);
  size_t host_count() const { return hosts_.size(); }

 private:
  const ExportOptions& options_;
  SqliteDb db_;
  // Looked up once per exported row (Insert, StringId): std::less<> and a transparent hash find a
  // string_view without building a std::string (a malloc and free per row; issue 16's export floor).
  struct TextHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>()(s); }
  };
  std::set<std::string, std::less<>> created_;
  std::unordered_map<std::string, int64_t, TextHash, std::equal_to<>> string_ids_;
  // The statements Insert returned last, by SQL text (rows come from a handful of statements; a hit
  // skips EnsureTable and the prepared-statement cache's key copy and hash).
  struct RecentInsert {
    std::string sql;
    Statement* statement = nullptr;
  };
  static constexpr size_t kRecentInserts = 8;
  RecentInsert recent_inserts_[kRecentInserts];
  size_t recent_next_ = 0;
  int64_t next_string_id_ = 0;
  int64_t max_time_ns_ = 0;
  std::vector<std::unique_ptr<StreamContext>> streams_;
  std::vector<std::string> warnings_;
  std::vector<std::pair<std::string, std::string>> hosts_;
};

// A part of the conversion (NVTX, CUDA, NCCL, ...). The exporter calls, in order: Begin once,
// then for each stream BeginStream, OnChunk for every chunk in file order, EndStream; then Finish.
class ExportModule {
 public:
  virtual ~ExportModule() = default;
  virtual const char* name() const = 0;
  virtual Status Begin(ExportContext& ctx) { return Status::Ok(); }
  virtual Status BeginStream(ExportContext& ctx, StreamContext& stream) { return Status::Ok(); }
  virtual Status OnChunk(ExportContext& ctx, StreamContext& stream, const schema::Chunk& chunk) = 0;
  virtual Status EndStream(ExportContext& ctx, StreamContext& stream) { return Status::Ok(); }
  virtual Status Finish(ExportContext& ctx) { return Status::Ok(); }
};

}  // namespace gt::exporter
