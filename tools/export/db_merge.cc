#include "tools/export/db_merge.h"

#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstring>
#include <ctime>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>

#include "gtrace.pb.h"
#include "tools/export/align_session.h"
#include "tools/export/db_merge_images.h"
#include "tools/export/db_merge_source.h"
#include "tools/export/export_context.h"
#include "tools/export/exporter.h"
#include "tools/export/gpu_sharing.h"
#include "tools/export/lazy_tables.h"
#include "tools/export/merge_catalog.h"
#include "tools/export/process_tree_merge.h"
#include "tools/export/rank_tables.h"
#include "tools/export/sqlite_db.h"
#include "tools/nsys/nsys_schema.h"

namespace gt::exporter {
namespace {

using merge::ForEach;
using merge::OptInt;
using merge::Proc;
using merge::Source;
using merge::Text;

constexpr int64_t kPidMask = -16777216;        // 0xFFFFFFFFFF000000: globalTid -> globalPid
constexpr int64_t kLowBits = 281474976710655;  // 0x0000FFFFFFFFFFFF: below the host bits

std::string Quote(const std::string& name) {
  return "\"" + name + "\"";
}

// Runs `sql` on `db`, calling `row` for each result row.
std::string FormatTime(int64_t utc_ns, bool local) {
  time_t secs = static_cast<time_t>(utc_ns / 1000000000);
  struct tm tm_value;
  if (local) {
    localtime_r(&secs, &tm_value);
  } else {
    gmtime_r(&secs, &tm_value);
  }
  char buf[64];
  strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S", &tm_value);
  return buf;
}

// The SQL of one source's column transforms.
struct SourceMap {
  std::map<int64_t, int64_t> host;  // old host index -> new
  bool strings_identity = true;
  bool gpus_identity = true;  // every GPU id of this source keeps its number
  bool device_is_gpu = true;  // deviceId columns hold GPU ids (GTRACE_DEVICES present), not ordinals
  int64_t callchain_base = 0;
  int64_t osrt_callchain_base = 0;  // added to OSRT_CALLCHAINS ids other than 0
  int64_t sample_base = 0;  // COMPOSITE_EVENTS.id offset
  // Process transforms: old globalPid -> new correction applied to (t + shift).
  struct TimeMap {
    int64_t shift = 0;
    ClockCorrection corr;
    bool operator==(const TimeMap& o) const {
      return shift == o.shift && corr.offset_ns == o.corr.offset_ns && corr.drift_ppb == o.corr.drift_ppb &&
             corr.ref_ns == o.corr.ref_ns;
    }
  };
  std::vector<std::pair<int64_t, TimeMap>> times;  // (old globalPid, map)

  bool HostIdentity() const {
    for (const auto& [o, n] : host) {
      if (o != n)
        return false;
    }
    return true;
  }
  bool TimeIdentity() const {
    for (const auto& [g, m] : times) {
      if (m.shift != 0 || !m.corr.is_zero())
        return false;
    }
    return true;
  }
  static std::string One(const TimeMap& m, const std::string& col) {
    std::string t = m.shift == 0 ? col : "(" + col + " + (" + std::to_string(m.shift) + "))";
    return m.corr.SqlCorrected(t);
  }
  std::string Time(const std::string& col, const std::string& key) const {
    if (times.empty())
      return col;
    bool uniform = std::all_of(times.begin(), times.end(), [&](const auto& x) { return x.second == times[0].second; });
    if (uniform || key.empty())
      return One(times[0].second, col);
    std::string s = "(CASE (" + key + " & " + std::to_string(kPidMask) + ")";
    for (const auto& [g, m] : times)
      s += " WHEN " + std::to_string(g) + " THEN " + One(m, col);
    return s + " ELSE " + One(times[0].second, col) + " END)";
  }
  std::string Gid(const std::string& col) const {
    if (HostIdentity())
      return col;
    std::string s = "(CASE ((" + col + " >> 48) & 65535)";
    for (const auto& [o, n] : host) {
      s += " WHEN " + std::to_string((HostBits(static_cast<uint32_t>(o)) >> 48) & 65535) + " THEN ((" + col + " & " +
           std::to_string(kLowBits) + ") | (" + std::to_string(HostBits(static_cast<uint32_t>(n))) + "))";
    }
    return s + " ELSE " + col + " END)";
  }
  std::string HostIndex(const std::string& col) const {
    if (HostIdentity())
      return col;
    std::string s = "(CASE " + col;
    for (const auto& [o, n] : host)
      s += " WHEN " + std::to_string(o) + " THEN " + std::to_string(n);
    return s + " ELSE " + col + " END)";
  }
  std::string String(const std::string& col) const {
    return strings_identity ? col : "(SELECT new FROM temp.gt_smap WHERE old = " + col + ")";
  }
};

class Merger {
 public:
  Merger(const MergeOptions& o, MergeResult* r) : o_(o), r_(r) {}

  Status Run() {
    auto started = std::chrono::steady_clock::now();
    if (o_.inputs.empty())
      return Status::Error("no input databases given");
    if (o_.output.empty())
      return Status::Error("no output file given (-o)");
    struct stat sb;
    if (!o_.force && ::stat(o_.output.c_str(), &sb) == 0) {
      return Status::Error(o_.output + " exists; use --force to overwrite it");
    }
    sources_.resize(o_.inputs.size());
    for (size_t i = 0; i < o_.inputs.size(); ++i) {
      Status st = ReadSource(o_.inputs[i], &sources_[i]);
      if (!st.ok())
        return st;
    }
    Status st = Plan();
    if (!st.ok())
      return st;
    std::string temp = o_.output + ".tmp-" + std::to_string(::getpid());
    ::unlink(temp.c_str());
    auto fail = [&](Status s) {
      db_.Close();
      ::unlink(temp.c_str());
      return s;
    };
    if (!(st = db_.Open(temp)).ok())
      return fail(st);
    if (!(st = db_.Exec("CREATE TEMP TABLE gt_smap (old INTEGER PRIMARY KEY, new INTEGER NOT NULL)")).ok() ||
        !(st = db_.Exec("CREATE TEMP TABLE gt_gmap (old INTEGER PRIMARY KEY, new INTEGER NOT NULL)")).ok() ||
        !(st = db_.Exec("BEGIN")).ok() || !(st = nsys::WriteEnumTables(db_.handle())).ok() ||
        !(st = db_.Exec("COMMIT")).ok()) {
      return fail(st);
    }
    for (size_t i = 0; i < sources_.size(); ++i) {
      if (!(st = CopySource(i)).ok())
        return fail(Status::Error(sources_[i].path + ": " + st.message()));
    }
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    if (!(st = db_.Exec("BEGIN")).ok() || !(st = Finish(seconds)).ok() || !(st = db_.Exec("COMMIT")).ok() ||
        !(st = db_.Close()).ok()) {
      return fail(st);
    }
    if (::rename(temp.c_str(), o_.output.c_str()) != 0) {
      int err = errno;
      ::unlink(temp.c_str());
      return Status::Error("cannot move the merged database to " + o_.output + ": " + strerror(err));
    }
    r_->plan = plan_;
    r_->same_session = same_session_;
    return Status::Ok();
  }

 private:
  // The merged session: kept (one session) or rebuilt from the clock pairs (several).
  Status Plan() {
    same_session_ = true;
    for (const Source& s : sources_) {
      if (s.session.empty() || s.session != sources_[0].session)
        same_session_ = false;
    }
    for (const Source& s : sources_) {
      for (const Proc& p : s.procs) {
        if (!same_session_ && !p.corr.is_zero()) {
          return Status::Error(s.path + ": its clocks were aligned within its own export (session " + s.session +
                               "); merging it with databases of other exports would mix two alignments. Merge the "
                               "streams instead, or export the parts with --no-align");
        }
      }
    }
    Status images = merge::CheckExecImages(&sources_, o_.input_names, &exec_images_);
    if (!images.ok())
      return images;
    std::vector<schema::StreamHeader> headers;
    for (Source& s : sources_) {
      for (Proc& p : s.procs) {
        p.index = headers.size();
        schema::StreamHeader h;
        h.set_host_name(p.host);
        h.set_boot_id(p.boot);
        h.mutable_start_clock()->set_stream_clock_ns(static_cast<uint64_t>(p.start_mono));
        h.mutable_start_clock()->set_realtime_ns(static_cast<uint64_t>(p.start_real));
        headers.push_back(std::move(h));
      }
    }
    r_->processes = headers.size();
    if (same_session_) {
      plan_.session_utc_ns = sources_[0].utc;
      plan_.system_clock_ns = sources_[0].sys;
      plan_.session_id = sources_[0].session;
      for (Source& s : sources_) {
        if (s.utc != plan_.session_utc_ns || s.sys != plan_.system_clock_ns) {
          return Status::Error(s.path + ": same session id as " + sources_[0].path + " but another time zero");
        }
      }
      maps_.resize(sources_.size());
      for (size_t i = 0; i < sources_.size(); ++i) {
        for (const Proc& p : sources_[i].procs)
          maps_[i].host[p.host_index] = p.host_index;
      }
      return Status::Ok();
    }
    std::vector<const schema::StreamHeader*> ptrs;
    for (const schema::StreamHeader& h : headers)
      ptrs.push_back(&h);
    plan_ = PlanSession(ptrs);
    std::vector<std::string> hosts, boots;
    std::vector<int64_t> new_gpids;
    for (const Source& s : sources_) {
      for (const Proc& p : s.procs) {
        hosts.push_back(p.host);
        boots.push_back(p.boot);
        new_gpids.push_back((p.gpid & kLowBits & kPidMask) | HostBits(plan_.streams[p.index].host_index));
      }
    }
    if (o_.align_domain == "rank")
      UsePerRankDomains(&plan_, hosts, boots, new_gpids);
    maps_.resize(sources_.size());
    std::vector<ProcessAnchors> anchors(headers.size());
    for (size_t i = 0; i < sources_.size(); ++i) {
      Source& s = sources_[i];
      std::map<int64_t, Proc*> by_gpid;
      for (Proc& p : s.procs) {
        const StreamPlacement& place = plan_.streams[p.index];
        p.shift = place.offset_ns - p.clock_offset;
        auto [it, added] = maps_[i].host.emplace(p.host_index, place.host_index);
        if (!added && it->second != place.host_index) {
          return Status::Error(s.path + ": two host numberings for host index " + std::to_string(p.host_index));
        }
        by_gpid[p.gpid] = &p;
        ProcessAnchors& a = anchors[p.index];
        a.start_ns = p.start_mono + place.offset_ns;
      }
      for (auto& [gpid, e] : s.ends) {
        auto it = by_gpid.find(gpid);
        if (it == by_gpid.end())
          continue;
        e.t_ns += it->second->shift;
        anchors[it->second->index].ends.push_back(std::move(e));
      }
      s.ends.clear();
    }
    if (o_.align && plan_.domains.size() > 1)
      AlignSession(anchors, &plan_);
    for (size_t i = 0; i < sources_.size(); ++i) {
      for (Proc& p : sources_[i].procs) {
        const StreamPlacement& place = plan_.streams[p.index];
        p.shift = place.offset_ns - p.clock_offset;  // the alignment may have moved time zero
        maps_[i].times.push_back({p.gpid, {p.shift, place.correction}});
      }
    }
    return Status::Ok();
  }

  Status Strings(size_t i, SourceMap* m) {
    std::vector<std::pair<int64_t, std::string>> rows;
    Status st = Ensure("StringIds", i);
    if (!st.ok())
      return st;
    st = ForEach(db_.handle(), "SELECT id, value FROM src.StringIds ORDER BY id",
                 [&](sqlite3_stmt* q) { rows.emplace_back(sqlite3_column_int64(q, 0), Text(q, 1)); });
    if (!st.ok())
      return st;
    std::vector<std::pair<int64_t, int64_t>> map;
    m->strings_identity = true;
    for (auto& [old, text] : rows) {
      auto it = string_ids_.find(text);
      int64_t id;
      if (it != string_ids_.end()) {
        id = it->second;
      } else {
        id = used_ids_.count(old) == 0 ? old : next_string_id_;
        next_string_id_ = std::max(next_string_id_, id + 1);
        used_ids_.insert(id);
        string_ids_.emplace(text, id);
        Statement* ins = db_.Prepare("INSERT INTO main.StringIds (id, value) VALUES (?, ?)", &st);
        if (ins == nullptr || !(st = ins->Int(1, id).Text(2, text).Run()).ok())
          return st;
      }
      m->strings_identity &= id == old;
      map.emplace_back(old, id);
    }
    if (m->strings_identity)
      return Status::Ok();
    if (!(st = db_.Exec("DELETE FROM temp.gt_smap")).ok())
      return st;
    Statement* ins = db_.Prepare("INSERT INTO temp.gt_smap (old, new) VALUES (?, ?)", &st);
    if (ins == nullptr)
      return st;
    for (auto [o, n] : map) {
      if (!(st = ins->Int(1, o).Int(2, n).Run()).ok())
        return st;
    }
    return Status::Ok();
  }

  // GPUs: one row per (host, UUID) over all sources, numbered in host order, then UUID (as one
  // export numbers them); this source's ids -> the merged ones in temp.gt_gmap.
  Status Gpus(size_t i, SourceMap& m) {
    if (gpu_ids_.empty()) {
      std::set<std::pair<int64_t, std::string>> all;
      for (size_t j = 0; j < sources_.size(); ++j) {
        for (const Source::Gpu& g : sources_[j].gpus)
          all.emplace(NewHost(j, g.vm), g.uuid);
      }
      int64_t next = 0;
      for (const auto& k : all)
        gpu_ids_[k] = next++;
    }
    const Source& s = sources_[i];
    m.gpus_identity = true;
    Status st = db_.Exec("DELETE FROM temp.gt_gmap");  // no stale ids of the previous source
    if (!st.ok() || s.gpus.empty())
      return st;
    if (!(st = Ensure("TARGET_INFO_GPU", i)).ok())
      return st;
    Statement* map = db_.Prepare("INSERT INTO temp.gt_gmap (old, new) VALUES (?, ?)", &st);
    if (map == nullptr)
      return st;
    for (const Source::Gpu& g : s.gpus) {
      int64_t host = NewHost(i, g.vm);
      int64_t id = gpu_ids_[{host, g.uuid}];
      m.gpus_identity &= id == g.id;
      if (!(st = map->Int(1, g.id).Int(2, id).Run()).ok())
        return st;
      if (!gpus_written_.insert(id).second)
        continue;
      std::vector<std::string> cols;
      if (!(st = Columns("src", "TARGET_INFO_GPU", &cols)).ok())
        return st;
      std::string sel;
      for (const std::string& c : cols) {
        std::string e = c == "vmId" ? m.Gid(Quote(c)) : c == "id" ? std::to_string(id) : Quote(c);
        sel += (sel.empty() ? "" : ", ") + e;
      }
      if (!(st = db_.Exec("INSERT INTO main.TARGET_INFO_GPU SELECT " + sel +
                          " FROM src.TARGET_INFO_GPU WHERE id = " + std::to_string(g.id) + " LIMIT 1"))
               .ok()) {
        return st;
      }
    }
    return Status::Ok();
  }
  int64_t NewHost(size_t i, int64_t vm_bits) {
    int64_t hw = (vm_bits >> 56) & 0xff, vm = (vm_bits >> 48) & 0xff;
    int64_t old = hw + 256 * (vm - 1);
    auto it = maps_[i].host.find(old);
    return it != maps_[i].host.end() ? it->second : old;
  }

  Status Columns(const std::string& schema, const std::string& table, std::vector<std::string>* cols) {
    cols->clear();
    return ForEach(db_.handle(), "SELECT name FROM " + schema + ".pragma_table_info('" + table + "')",
                   [&](sqlite3_stmt* q) { cols->push_back(Text(q, 0)); });
  }

  // Creates `table` in the output from source i's DDL (first time) and checks the columns match.
  Status Ensure(const std::string& table, size_t i) {
    if (created_.count(table) != 0) {
      std::vector<std::string> a, b;
      Status st = Columns("main", table, &a);
      if (st.ok())
        st = Columns("src", table, &b);
      if (!st.ok())
        return st;
      if (a != b)
        return Status::Error("table " + table + " has other columns than in " + sources_[0].path);
      return Status::Ok();
    }
    for (const auto& [name, sql] : sources_[i].tables) {
      if (name != table)
        continue;
      Status st = db_.Exec(sql);
      if (!st.ok())
        return st;
      created_.insert(table);
      return Status::Ok();
    }
    return Status::Error("no table " + table);
  }

  Status CopyTable(size_t i, const SourceMap& m, const std::string& table, const TableRule& rule) {
    Status st = Ensure(table, i);
    if (!st.ok())
      return st;
    std::vector<std::string> cols;
    if (!(st = Columns("src", table, &cols)).ok())
      return st;
    std::string key = rule.process_key.empty() ? "" : Quote(std::string(rule.process_key));
    const bool has_gpid = std::find(cols.begin(), cols.end(), "globalPid") != cols.end();
    std::string sel, names;
    bool identity = true;
    for (const std::string& c : cols) {
      ColumnKind kind = ColumnKind::kPlain;
      for (const ColumnRule& r : rule.columns) {
        if (r.column == c)
          kind = r.kind;
      }
      std::string q = Quote(c), e = q;
      switch (kind) {
        case ColumnKind::kTime:
          e = m.Time(q, key);
          break;
        case ColumnKind::kTimeOrZero:
          e = m.Time(q, key) == q ? q : "(CASE WHEN " + q + " = 0 THEN 0 ELSE " + m.Time(q, key) + " END)";
          break;
        case ColumnKind::kGlobalId:
          e = m.Gid(q);
          break;
        case ColumnKind::kHostIndex:
          e = m.HostIndex(q);
          break;
        case ColumnKind::kStringId:
          e = m.String(q);
          break;
        case ColumnKind::kCallchainId:
          e = m.callchain_base == 0 ? q : "(" + q + " + " + std::to_string(m.callchain_base) + ")";
          break;
        case ColumnKind::kOsrtCallchainId:
          if (m.osrt_callchain_base != 0)
            e = "(CASE WHEN " + q + " = 0 THEN 0 ELSE " + q + " + " + std::to_string(m.osrt_callchain_base) + " END)";
          break;
        case ColumnKind::kSampleId:
          e = m.sample_base == 0 ? q : "(" + q + " + " + std::to_string(m.sample_base) + ")";
          break;
        case ColumnKind::kGpuId:
          if (!m.device_is_gpu && c != "gpuId" && c != "id" && has_gpid) {
            // Databases of gtrace before GTRACE_DEVICES: deviceId columns hold the process's CUDA
            // ordinal; its GPU is TARGET_INFO_CUDA_DEVICE (pid, cudaId) -> gpuId.
            e = "coalesce((SELECT g.new FROM src.TARGET_INFO_CUDA_DEVICE d JOIN temp.gt_gmap g ON g.old = d.gpuId "
                "WHERE d.cudaId = " + q + " AND d.pid = ((\"globalPid\" >> 24) & 16777215) LIMIT 1), " + q + ")";
          } else if (!m.gpus_identity) {
            e = "coalesce((SELECT new FROM temp.gt_gmap WHERE old = " + q + "), " + q + ")";
          }
          break;
        case ColumnKind::kPlain:
          break;
      }
      identity &= e == q;
      sel += (sel.empty() ? "" : ", ") + e;
      names += (names.empty() ? "" : ", ") + q;
    }
    if (identity)
      return db_.Exec("INSERT INTO main." + Quote(table) + " SELECT * FROM src." + Quote(table));
    return db_.Exec("INSERT INTO main." + Quote(table) + " (" + names + ") SELECT " + sel + " FROM src." +
                    Quote(table));
  }

  Status CopySource(size_t i) {
    Source& s = sources_[i];
    SourceMap& m = maps_[i];
    // By path (ReadSource opened it, so ATTACH cannot create a new file); nothing writes to src.
    Status st;
    Statement* attach = db_.Prepare("ATTACH DATABASE ? AS src", &st);
    if (attach == nullptr || !(st = attach->Text(1, s.path).Run()).ok())
      return st;
    if (!(st = db_.Exec("BEGIN")).ok())
      return st;
    if (!(st = Strings(i, &m)).ok())
      return st;
    bool has_callchains = false, has_osrt_callchains = false;
    for (const auto& [name, sql] : s.tables) {
      has_callchains |= name == "CUDA_CALLCHAINS";
      has_osrt_callchains |= name == "OSRT_CALLCHAINS";
    }
    m.osrt_callchain_base = 0;
    if (has_osrt_callchains && created_.count("OSRT_CALLCHAINS") != 0) {
      st = ForEach(db_.handle(), "SELECT coalesce(max(id), 0) FROM main.OSRT_CALLCHAINS",
                   [&](sqlite3_stmt* q) { m.osrt_callchain_base = sqlite3_column_int64(q, 0); });
      if (!st.ok())
        return st;
    }
    m.callchain_base = 0;
    if (has_callchains && created_.count("CUDA_CALLCHAINS") != 0) {
      st = ForEach(db_.handle(), "SELECT coalesce(max(id) + 1, 0) FROM main.CUDA_CALLCHAINS",
                   [&](sqlite3_stmt* q) { m.callchain_base = sqlite3_column_int64(q, 0); });
      if (!st.ok())
        return st;
    }
    bool has_samples = false;
    for (const auto& [name, sql] : s.tables)
      has_samples |= name == "COMPOSITE_EVENTS";
    m.sample_base = 0;
    if (has_samples && created_.count("COMPOSITE_EVENTS") != 0) {
      st = ForEach(db_.handle(), "SELECT coalesce(max(id) + 1, 0) FROM main.COMPOSITE_EVENTS",
                   [&](sqlite3_stmt* q) { m.sample_base = sqlite3_column_int64(q, 0); });
      if (!st.ok())
        return st;
    }
    if (has_samples && created_.count("ENUM_SAMPLING_THREAD_STATE") == 0) {
      // ENUM_* tables are skipped per source (written once); this one only exists with samples.
      if (!(st = nsys::WriteEnumTable(db_.handle(), nsys::SamplingThreadStateEnum())).ok())
        return st;
      created_.insert("ENUM_SAMPLING_THREAD_STATE");
    }
    m.device_is_gpu = s.gpus.empty();
    for (const auto& [name, sql] : s.tables)
      m.device_is_gpu |= name == "GTRACE_DEVICES";
    if (!(st = Gpus(i, m)).ok())
      return st;
    for (const auto& [name, sql] : s.tables) {
      const TableRule* rule = FindTableRule(name);
      if (rule == nullptr)
        return Status::Error("no merge rule for table " + name + " (see tools/export/merge_catalog.cc)");
      if (rule->mode == TableMode::kSkip)
        continue;
      if (rule->mode == TableMode::kCopy) {
        if (!(st = CopyTable(i, m, name, *rule)).ok())
          return Status::Error(name + ": " + st.message());
        continue;
      }
      if (name == "TARGET_INFO_SYSTEM_ENV") {
        if (!(st = Ensure(name, i)).ok())
          return st;
        std::string vid = m.Gid("s.globalVid");
        st = db_.Exec("INSERT INTO main.TARGET_INFO_SYSTEM_ENV SELECT " + vid +
                      ", s.devStateName, s.name, s.nameEnum, s.value FROM src.TARGET_INFO_SYSTEM_ENV s WHERE NOT "
                      "EXISTS (SELECT 1 FROM main.TARGET_INFO_SYSTEM_ENV t WHERE t.globalVid IS " +
                      vid + " AND t.name = s.name)");
      } else if (name == "META_DATA_CAPTURE") {
        st = Capture(i);
      } else if (name == "META_DATA_EXPORT" && export_rows_.empty()) {
        st = ForEach(db_.handle(), "SELECT name, value FROM src.META_DATA_EXPORT ORDER BY rowid",
                     [&](sqlite3_stmt* q) { export_rows_.emplace_back(Text(q, 0), Text(q, 1)); });
      } else if (name == "GTRACE_RANKS" && same_session_) {
        if (!(st = Ensure(name, i)).ok())
          return st;
        st = db_.Exec("INSERT INTO main.GTRACE_RANKS SELECT * FROM src.GTRACE_RANKS");
      } else if (name == "GTRACE_PROCESS_TREE") {
        if (!(st = Ensure(name, i)).ok())
          return st;
        st = MergeProcessTreeRows(db_, [&](const std::string& c) { return m.Gid(c); });
      } else if (name == "GTRACE_CLOCK_ALIGNMENT" && same_session_ && created_.count(name) == 0) {
        if (!(st = Ensure(name, i)).ok())
          return st;
        st = db_.Exec("INSERT INTO main.GTRACE_CLOCK_ALIGNMENT SELECT * FROM src.GTRACE_CLOCK_ALIGNMENT");
      }
      if (!st.ok())
        return Status::Error(name + ": " + st.message());
    }
    if (!(st = db_.Exec("COMMIT")).ok())
      return st;
    processes_before_ += s.procs.size();
    return db_.Exec("DETACH DATABASE src");
  }

  // META_DATA_CAPTURE: PROCESS_<i>: keys are renumbered into the merged process order (one session:
  // they already are); other keys once.
  Status Capture(size_t i) {
    Status st = Ensure("META_DATA_CAPTURE", i);
    if (!st.ok())
      return st;
    if (same_session_)
      return db_.Exec("INSERT INTO main.META_DATA_CAPTURE SELECT * FROM src.META_DATA_CAPTURE");
    std::vector<std::pair<std::string, std::string>> rows;
    st = ForEach(db_.handle(), "SELECT name, value FROM src.META_DATA_CAPTURE ORDER BY rowid",
                 [&](sqlite3_stmt* q) { rows.emplace_back(Text(q, 0), Text(q, 1)); });
    if (!st.ok())
      return st;
    Statement* ins = db_.Prepare("INSERT INTO main.META_DATA_CAPTURE (name, value) VALUES (?, ?)", &st);
    if (ins == nullptr)
      return st;
    for (auto& [name, value] : rows) {
      if (name.rfind("PROCESS_", 0) == 0) {
        size_t colon = name.find(':');
        char* end = nullptr;
        long idx = std::strtol(name.c_str() + 8, &end, 10);
        if (colon != std::string::npos && end == name.c_str() + colon) {
          name = "PROCESS_" + std::to_string(processes_before_ + static_cast<size_t>(idx)) + name.substr(colon);
        }
      } else if (!capture_keys_.insert(name).second) {
        continue;
      }
      if (!(st = ins->Text(1, name).Text(2, value).Run()).ok())
        return st;
    }
    return Status::Ok();
  }

  Status Finish(double seconds) {
    Status st;
    if (exec_images_) {
      // One row per process and per thread, as nsys keeps one PID across exec: the last image's
      // (sources were copied in start order, so the highest rowid).
      for (const auto& [table, key] : {std::pair<const char*, const char*>{"PROCESSES", "globalPid"},
                                       std::pair<const char*, const char*>{"ThreadNames", "globalTid"}}) {
        if (created_.count(table) == 0)
          continue;
        if (!(st = db_.Exec(std::string("DELETE FROM main.") + table + " WHERE rowid NOT IN (SELECT max(rowid) FROM main." +
                            table + " GROUP BY " + key + ")"))
                 .ok()) {
          return st;
        }
      }
    }
    // Time extent: each source's, moved into the merged session.
    int64_t duration = 0;
    for (size_t i = 0; i < sources_.size(); ++i) {
      const SourceMap& m = maps_[i];
      if (m.times.empty()) {
        duration = std::max(duration, sources_[i].duration);
        continue;
      }
      for (const auto& [g, t] : m.times)
        duration = std::max(duration, t.corr.Apply(sources_[i].duration + t.shift));
    }
    for (const char* t : {"ANALYSIS_DETAILS", "TARGET_INFO_SESSION_START_TIME", "META_DATA_EXPORT"}) {
      if (created_.count(t) == 0) {
        if (!(st = nsys::CreateTable(db_.handle(), t)).ok())
          return st;
        created_.insert(t);
      }
    }
    Statement* d =
        db_.Prepare("INSERT INTO ANALYSIS_DETAILS (globalVid, duration, startTime, stopTime) VALUES (?,?,?,?)", &st);
    if (d == nullptr)
      return st;
    int64_t sys = plan_.system_clock_ns;
    if (!(st = d->Int(1, kVmIdLocal).Int(2, duration).Int(3, sys).Int(4, sys + duration).Run()).ok())
      return st;
    Statement* t = db_.Prepare(
        "INSERT INTO TARGET_INFO_SESSION_START_TIME (utcEpochNs, utcTime, localTime, systemClockNs) VALUES (?,?,?,?)",
        &st);
    if (t == nullptr)
      return st;
    int64_t utc = plan_.session_utc_ns;
    if (!(st = t->Int(1, utc).Text(2, FormatTime(utc, false)).Text(3, FormatTime(utc, true)).Int(4, sys).Run()).ok()) {
      return st;
    }
    if (created_.count("NVTX_EVENTS") != 0 && created_.count("TARGET_INFO_SYSTEM_ENV") != 0) {
      st = db_.Exec(
          "UPDATE TARGET_INFO_SYSTEM_ENV SET value = (SELECT CASE WHEN count(*) > 0 THEN '1' ELSE '0' END "
          "FROM (SELECT 1 FROM NVTX_EVENTS LIMIT 1)) WHERE name = 'HasNvtxEvents'");
      if (!st.ok())
        return st;
    }
    if (created_.count("GTRACE_PROCESS_TREE") != 0 && !(st = ResolveTracedAncestors(db_)).ok())
      return Status::Error("GTRACE_PROCESS_TREE: " + st.message());
    if (!(st = ExportRows(seconds)).ok())
      return st;
    if (!same_session_ && !(st = RankRows()).ok())
      return st;
    // Parts written by this version have no empty tables; older parts (and tables no source had
    // rows for after all) may: the merged file has only what nsys would write.
    if (!(st = MakeContextsUniquePerGpu(db_)).ok())
      return st;
    return DropEmptyTables(db_);
  }

  Status ExportRows(double seconds) {
    Status st;
    std::vector<std::string> names = o_.input_names.empty() ? o_.inputs : o_.input_names;
    std::string files, paths;
    for (const std::string& n : names) {
      files += (files.empty() ? "" : ",") + n.substr(n.rfind('/') == std::string::npos ? 0 : n.rfind('/') + 1);
      paths += (paths.empty() ? "" : ",") + n;
    }
    char elapsed[32];
    snprintf(elapsed, sizeof(elapsed), "%.2f sec", seconds);
    int64_t now = static_cast<int64_t>(time(nullptr)) * 1000000000;
    std::map<std::string, std::string> patch = {
        {"EXPORT_PARAM_INPUT_FILE", files},
        {"EXPORT_PARAM_INPUT_PATH", paths},
        {"EXPORT_PARAM_INPUT_PATH_ABS", paths},
        {"EXPORT_PARAM_OUTPUT_PATH", o_.output},
        {"EXPORT_PARAM_OUTPUT_PATH_ABS", o_.output},
        {"EXPORT_PARAM_OUTPUT_FILE",
         o_.output.substr(o_.output.rfind('/') == std::string::npos ? 0 : o_.output.rfind('/') + 1)},
        {"EXPORT_TIME_UTC", FormatTime(now, false)},
        {"EXPORT_TIME", elapsed}};
    Statement* ins = db_.Prepare("INSERT INTO META_DATA_EXPORT (name, value) VALUES (?, ?)", &st);
    if (ins == nullptr)
      return st;
    for (const auto& [k, v] : export_rows_) {
      auto it = patch.find(k);
      if (!(st = ins->Text(1, k).Text(2, it != patch.end() ? it->second : v).Run()).ok())
        return st;
    }
    return Status::Ok();
  }

  // Several sessions: GTRACE_RANKS and GTRACE_CLOCK_ALIGNMENT of the new session.
  Status RankRows() {
    Status st = CreateRankTables(db_);
    if (!st.ok())
      return st;
    Statement* ins = db_.Prepare(
        "INSERT INTO GTRACE_RANKS (globalPid, pid, rank, localRank, worldSize, rankSource, hostName, bootId, "
        "hostIndex, clockDomain, streamFile, startMonotonicNs, startRealtimeNs, clockOffsetNs, alignOffsetNs, "
        "alignDriftPpb, alignRefNs, alignMethod, anchors, residualRmsNs, residualMaxNs, alignErrorNs, clockPairs, "
        "realtimeDriftPpb, sessionId, endReason, endMonotonicNs) VALUES "
        "(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
        &st);
    if (ins == nullptr)
      return st;
    for (const Source& s : sources_) {
      for (const Proc& p : s.procs) {
        const StreamPlacement& pl = plan_.streams[p.index];
        ins->Int(1, (p.gpid & kLowBits) | HostBits(pl.host_index)).Int(2, p.pid).OptInt(3, p.rank);
        ins->OptInt(4, p.local_rank).OptInt(5, p.world_size);
        if (!p.rank_source.empty())
          ins->Text(6, p.rank_source);
        ins->Text(7, p.host).Text(8, p.boot).Int(9, pl.host_index).Int(10, pl.clock_domain).Text(11, p.stream_file);
        ins->Int(12, p.start_mono).Int(13, p.start_real).Int(14, pl.offset_ns);
        ins->Int(15, pl.correction.offset_ns).Int(16, pl.correction.drift_ppb).Int(17, pl.correction.ref_ns);
        ins->Text(18, plan_.aligned ? pl.method : "not-aligned").Int(19, static_cast<int64_t>(pl.residual.anchors));
        if (pl.residual.anchors > 0)
          ins->Int(20, pl.residual.rms_ns).Int(21, pl.residual.max_abs_ns);
        if (plan_.aligned)
          ins->Int(22, pl.align_error_ns);
        ins->Int(23, p.clock_pairs).OptInt(24, p.drift_ppb).Text(25, plan_.session_id);
        ins->Text(26, p.end_reason).OptInt(27, p.end_mono);
        if (!(st = ins->Run()).ok())
          return st;
      }
    }
    Statement* dom = db_.Prepare(
        "INSERT INTO GTRACE_CLOCK_ALIGNMENT (domain, hostName, bootId, hostIndex, globalPid, method, alignedTo, "
        "offsetNs, driftPpb, refNs, driftEstimated, anchors, outliers, instances, residualRmsNs, stderrNs) VALUES "
        "(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
        &st);
    if (dom == nullptr)
      return st;
    for (size_t i = 0; i < plan_.domains.size(); ++i) {
      const ClockDomain& d = plan_.domains[i];
      const DomainAlignment& a = d.alignment;
      dom->Int(1, static_cast<int64_t>(i)).Text(2, d.host_name).Text(3, d.boot_id).Int(4, d.host_index);
      if (d.global_pid != 0)
        dom->Int(5, d.global_pid);
      dom->Text(6, plan_.aligned ? a.method : "not-aligned").Int(7, a.aligned_to);
      dom->Int(8, a.correction.offset_ns).Int(9, a.correction.drift_ppb).Int(10, a.correction.ref_ns);
      dom->Int(11, a.drift_estimated ? 1 : 0).Int(12, static_cast<int64_t>(a.anchors));
      dom->Int(13, static_cast<int64_t>(a.outliers)).Int(14, static_cast<int64_t>(a.instances));
      if (a.anchors > 0)
        dom->Int(15, a.residual_rms_ns).Int(16, a.stderr_ns);
      if (!(st = dom->Run()).ok())
        return st;
    }
    return Status::Ok();
  }

  const MergeOptions& o_;
  MergeResult* r_;
  std::vector<Source> sources_;
  std::vector<SourceMap> maps_;
  SessionPlan plan_;
  bool same_session_ = true;
  bool exec_images_ = false;  // some pid is in several inputs as images around an exec (CheckExecImages)
  SqliteDb db_;
  std::set<std::string> created_;
  std::unordered_map<std::string, int64_t> string_ids_;
  std::set<int64_t> used_ids_;
  int64_t next_string_id_ = 0;
  std::map<std::pair<int64_t, std::string>, int64_t> gpu_ids_;
  std::set<int64_t> gpus_written_;
  std::vector<std::pair<std::string, std::string>> export_rows_;
  std::set<std::string> capture_keys_;
  size_t processes_before_ = 0;
};

}  // namespace

Status MergeDatabases(const MergeOptions& options, MergeResult* result) {
  Merger m(options, result);
  return m.Run();
}

}  // namespace gt::exporter
