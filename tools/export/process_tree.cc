// GTRACE_PROCESS_TREE: who started whom, for a database merged from the streams of several processes
// (torchrun workers, `bash -c` children, DataLoader workers forked without exec). nsys has no such
// table; the parent links of processes are otherwise only in META_DATA_CAPTURE (PROCESS_n:PPID).
// Each stream header carries the process's ppid and its ancestors (pid, ppid, comm) as /proc showed
// them when its session started, so a launcher that was not traced (it never used CUDA, NVTX or
// NCCL) still appears, as an untraced row between two traced processes, or as the parent of a
// traced process that has no traced ancestor.
#include "tools/export/process_tree.h"

#include <map>
#include <optional>
#include <set>
#include <utility>
#include <vector>

namespace gt::exporter {
namespace {

constexpr char kDdl[] = R"sql(CREATE TABLE GTRACE_PROCESS_TREE (
    -- gtrace: parentage of every traced process and of the untraced processes between them.
    globalPid                   INTEGER   NOT NULL,                    -- Serialized GlobalId (as PROCESSES.globalPid).
    pid                         INTEGER   NOT NULL,                    -- OS process id.
    parentGlobalPid             INTEGER,                               -- The parent's globalPid (traced or not); NULL when unknown.
    ppid                        INTEGER,                               -- OS parent process id when the session started.
    tracedAncestorGlobalPid     INTEGER,                               -- Nearest ancestor with a stream in this database; NULL when none.
    traced                      INTEGER   NOT NULL,                    -- 1: has a stream (and a PROCESSES row); 0: an untraced ancestor.
    forkedWithoutExec           INTEGER,                               -- 1: forked from a traced parent and recorded without exec.
    name                        TEXT,                                  -- Executable path (traced) or command name from /proc (untraced).
    commandLine                 TEXT                                   -- Arguments, space-separated (traced processes).
))sql";

constexpr char kInsert[] =
    "INSERT INTO GTRACE_PROCESS_TREE (globalPid, pid, parentGlobalPid, ppid, tracedAncestorGlobalPid, traced, "
    "forkedWithoutExec, name, commandLine) VALUES (?,?,?,?,?,?,?,?,?)";

struct Row {
  uint32_t hw_id = 0;
  uint32_t pid = 0;
  uint32_t ppid = 0;
  std::optional<int64_t> traced_ancestor;
  bool traced = false;
  bool forked = false;
  std::string name;
  std::string command_line;
};

}  // namespace

Status WriteProcessTree(ExportContext& ctx) {
  if (ctx.streams().empty())
    return Status::Ok();
  std::set<std::pair<uint32_t, uint32_t>> traced;  // (hw id, pid)
  for (auto& sp : ctx.streams())
    traced.insert({sp->hw_id, sp->pid});
  if (ctx.options().plan != nullptr) {  // one part of a larger export: the whole session's processes
    for (const auto& hp : ctx.options().plan->traced_processes)
      traced.insert(hp);
  }
  std::map<std::pair<uint32_t, uint32_t>, Row> rows;
  for (auto& sp : ctx.streams()) {
    const schema::StreamHeader& h = sp->header;
    Row& r = rows[{sp->hw_id, sp->pid}];
    r.hw_id = sp->hw_id;
    r.pid = sp->pid;
    r.ppid = h.ppid();
    r.traced = true;
    r.forked = h.forked_without_exec();
    r.name = !h.executable_path().empty() ? h.executable_path() : (h.command_line_size() > 0 ? h.command_line(0) : "");
    for (const std::string& a : h.command_line())
      r.command_line += (r.command_line.empty() ? "" : " ") + a;
    // Walk up: untraced ancestors until the first traced one (only the parent when none is traced).
    std::vector<const schema::ProcessAncestor*> between;
    std::optional<int64_t> nearest;
    for (const schema::ProcessAncestor& a : h.ancestors()) {
      if (traced.count({sp->hw_id, a.pid()})) {
        nearest = PackGlobalTid(sp->hw_id, a.pid(), 0);
        break;
      }
      between.push_back(&a);
    }
    if (!nearest && h.ancestors_size() == 0 && traced.count({sp->hw_id, h.ppid()})) {
      nearest = PackGlobalTid(sp->hw_id, h.ppid(), 0);  // a stream without the ancestor list
    }
    r.traced_ancestor = nearest;
    if (!nearest && between.size() > 1)
      between.resize(1);
    for (const schema::ProcessAncestor* a : between) {
      Row& u = rows[{sp->hw_id, a->pid()}];
      if (u.traced)
        continue;
      u.hw_id = sp->hw_id;
      u.pid = a->pid();
      u.ppid = a->ppid();
      u.name = a->name();
      u.traced_ancestor = nearest;
    }
  }
  Status st = ctx.db().Exec(kDdl);
  if (!st.ok())
    return st;
  Statement* ins = ctx.db().Prepare(kInsert, &st);
  if (ins == nullptr)
    return st;
  for (const auto& [key, r] : rows) {
    ins->Int(1, PackGlobalTid(r.hw_id, r.pid, 0)).Int(2, r.pid);
    ins->OptInt(3, r.ppid != 0 ? std::optional<int64_t>(PackGlobalTid(r.hw_id, r.ppid, 0)) : std::nullopt);
    ins->OptInt(4, r.ppid != 0 ? std::optional<int64_t>(r.ppid) : std::nullopt);
    ins->OptInt(5, r.traced_ancestor).Int(6, r.traced ? 1 : 0);
    ins->OptInt(7, r.traced ? std::optional<int64_t>(r.forked ? 1 : 0) : std::nullopt);
    if (r.name.empty()) {
      ins->Null(8);
    } else {
      ins->Text(8, r.name);
    }
    if (r.command_line.empty()) {
      ins->Null(9);
    } else {
      ins->Text(9, r.command_line);
    }
    if (!(st = ins->Run()).ok())
      return st;
  }
  return Status::Ok();
}

}  // namespace gt::exporter
