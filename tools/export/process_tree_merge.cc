#include "tools/export/process_tree_merge.h"

namespace gt::exporter {

Status MergeProcessTreeRows(SqliteDb& db, const std::function<std::string(const std::string&)>& gid) {
  const std::string pid = gid("s.globalPid");
  // A process this source traced replaces another source's untraced row of it.
  Status st = db.Exec(
      "DELETE FROM main.GTRACE_PROCESS_TREE WHERE traced = 0 AND globalPid IN (SELECT " + pid +
      " FROM src.GTRACE_PROCESS_TREE s WHERE s.traced = 1)");
  if (!st.ok()) return st;
  return db.Exec("INSERT INTO main.GTRACE_PROCESS_TREE (globalPid, pid, parentGlobalPid, ppid, "
                 "tracedAncestorGlobalPid, traced, forkedWithoutExec, name, commandLine) SELECT " +
                 pid + ", s.pid, " + gid("s.parentGlobalPid") + ", s.ppid, " + gid("s.tracedAncestorGlobalPid") +
                 ", s.traced, s.forkedWithoutExec, s.name, s.commandLine FROM src.GTRACE_PROCESS_TREE s WHERE NOT "
                 "EXISTS (SELECT 1 FROM main.GTRACE_PROCESS_TREE t WHERE t.globalPid = " +
                 pid + ")");
}

Status ResolveTracedAncestors(SqliteDb& db) {
  // up(start, cur, depth): `cur` is an ancestor of `start`, reached through untraced rows only.
  // Depth is bounded: process chains are short, and a pid-reuse cycle must not loop.
  return db.Exec(
      "WITH RECURSIVE up(start, cur, depth) AS ("
      "  SELECT globalPid, parentGlobalPid, 1 FROM main.GTRACE_PROCESS_TREE"
      "   WHERE tracedAncestorGlobalPid IS NULL AND parentGlobalPid IS NOT NULL"
      "  UNION ALL"
      "  SELECT up.start, t.parentGlobalPid, up.depth + 1 FROM up JOIN main.GTRACE_PROCESS_TREE t"
      "   ON t.globalPid = up.cur AND t.traced = 0 WHERE t.parentGlobalPid IS NOT NULL AND up.depth < 64),"
      " found(start, ancestor) AS ("
      "  SELECT up.start, (SELECT u2.cur FROM up u2 JOIN main.GTRACE_PROCESS_TREE a ON a.globalPid = u2.cur"
      "   AND a.traced = 1 WHERE u2.start = up.start ORDER BY u2.depth LIMIT 1) FROM up GROUP BY up.start)"
      " UPDATE main.GTRACE_PROCESS_TREE SET tracedAncestorGlobalPid ="
      "  (SELECT ancestor FROM found WHERE found.start = GTRACE_PROCESS_TREE.globalPid)"
      " WHERE tracedAncestorGlobalPid IS NULL AND globalPid IN (SELECT start FROM found WHERE ancestor IS NOT NULL)");
}

}  // namespace gt::exporter
