"""The queries of `gtrace analyze` (tools/analyze/analysis.cc) over the Parquet dataset, written once in
SQL and run by DuckDB: over every rank at once (engine duckdb), or by each Dask task over its own
ranks' partitions (engine dask). Definitions: docs/multi-rank.md, "gtrace analyze"; the engines:
"Columnar dataset".

Two kinds of query:
  rank-local  (A_*, B_*): read one rank's rows only; every grouping and window is PARTITION BY rank,
              so the same text gives the same rows over one rank, a group of ranks or all of them.
  cross-rank  (X_*): over the small per-rank results (collective entries, step rows).

Views a query reads (bound by the engine to the rank partitions it covers):
  nccl_ops(rank, kind, func, commId, seqNumber, gpuStart, gpuEnd, apiStart, enqueueStart)
  nvtx(rank, eventType, start, "end", text, textIdValue)
  gpu_kernels(rank, start, "end", shortNameValue), gpu_copies(rank, start, "end")
and the tables the engine registers: entries, instances, steps (A_* results), params (one row), and
gpu_islands (B_ISLANDS, made once per run of phase B, read by B_GPU_TIME and B_GAPS).
"""

# Every column a view needs, with its type: an absent table binds to an empty view of these.
VIEWS = {
    "nccl_ops": ("GTRACE_NCCL_OPERATIONS",
                 [("kind", "VARCHAR"), ("func", "VARCHAR"), ("commId", "BIGINT"), ("seqNumber", "BIGINT"),
                  ("gpuStart", "BIGINT"), ("gpuEnd", "BIGINT"), ("apiStart", "BIGINT"), ("enqueueStart", "BIGINT")]),
    "nvtx": ("NVTX_EVENTS",
             [("eventType", "BIGINT"), ("start", "BIGINT"), ("end", "BIGINT"), ("text", "VARCHAR"),
              ("textIdValue", "VARCHAR")]),
    "gpu_kernels": ("CUPTI_ACTIVITY_KIND_KERNEL", [("start", "BIGINT"), ("end", "BIGINT"),
                                                   ("shortNameValue", "VARCHAR")]),
    "gpu_memcpy": ("CUPTI_ACTIVITY_KIND_MEMCPY", [("start", "BIGINT"), ("end", "BIGINT")]),
    "gpu_memset": ("CUPTI_ACTIVITY_KIND_MEMSET", [("start", "BIGINT"), ("end", "BIGINT")]),
}

# --- phase A (rank-local): what each rank did -----------------------------------------------------------

# Every collective operation of a rank that can belong to an instance (communicator, function and
# sequence number known); host = when its host called NCCL.
A_OPS = """
SELECT rank, commId, func, seqNumber AS seq, gpuStart, gpuEnd, coalesce(apiStart, enqueueStart) AS host_ns
FROM nccl_ops
WHERE kind = 'Coll' AND seqNumber IS NOT NULL AND commId IS NOT NULL
"""

# NVTX iterations: the k-th range named $step_range of a rank (in (start, end) order) after the first
# $skip_steps is step k - $skip_steps.
A_STEPS = """
SELECT rank, k, start_ns, end_ns FROM (
  SELECT rank, start AS start_ns, "end" AS end_ns,
         row_number() OVER (PARTITION BY rank ORDER BY start, "end") - 1 - (SELECT skip_steps FROM params) AS k
  FROM nvtx
  WHERE eventType IN (59, 60) AND "end" IS NOT NULL
    AND coalesce(text, textIdValue) = (SELECT step_range FROM params))
WHERE k >= 0
"""

# The span of all GPU activity, and whether any kernel is an NCCL kernel (SQLite's LIKE, which
# `gtrace analyze` uses, ignores ASCII case: ILIKE).
A_GPU_SPAN = """
SELECT min(s) AS first_ns, max(e) AS last_ns, bool_or(nccl) AS nccl_kernels FROM (
  SELECT start AS s, "end" AS e, shortNameValue ILIKE '%nccl%' AS nccl FROM gpu_kernels
  UNION ALL SELECT start, "end", false FROM gpu_memcpy
  UNION ALL SELECT start, "end", false FROM gpu_memset)
"""

# --- cross-rank: collective instances -------------------------------------------------------------------

# entries(rank, commId, func, seq, entry_ns, gpuEnd): A_OPS with the entry chosen (NCCL kernel start
# when every operation has one, else the host call), rows without an entry dropped.
X_ENTRIES = """
SELECT rank, commId, func, seq,
       CASE WHEN (SELECT gpu_entries FROM params) THEN gpuStart ELSE host_ns END AS entry_ns, gpuEnd
FROM ops
WHERE (CASE WHEN (SELECT gpu_entries FROM params) THEN gpuStart ELSE host_ns END) IS NOT NULL
"""

# One row per instance seen by two or more ranks: first and last arriver (ties: the lower rank),
# and the total wait for the last arriver.
X_INSTANCES = """
WITH g AS (
  SELECT commId, func, seq, count(*) AS ranks, min(entry_ns) AS first_ns, max(entry_ns) AS last_ns,
         max(gpuEnd) AS end_ns
  FROM entries GROUP BY commId, func, seq HAVING count(*) >= 2)
SELECT g.commId, g.func, g.seq, g.ranks, g.first_ns, g.last_ns, g.end_ns,
       min(e.rank) FILTER (WHERE e.entry_ns = g.first_ns) AS first_rank,
       min(e.rank) FILTER (WHERE e.entry_ns = g.last_ns) AS last_rank,
       sum(g.last_ns - e.entry_ns) AS total_wait_ns
FROM g JOIN entries e USING (commId, func, seq)
GROUP BY g.commId, g.func, g.seq, g.ranks, g.first_ns, g.last_ns, g.end_ns
"""

# --- phase B (rank-local, given the instances, the steps and the window) -------------------------------

# Per rank: collectives in instances, its waiting, and the waiting inside each of its steps (an entry
# belongs to the step with the latest start at or before it, if it ends after the entry).
B_WAITS = """
WITH w AS (
  SELECT e.rank, e.entry_ns, i.last_ns - e.entry_ns AS wait_ns
  FROM entries e JOIN instances i USING (commId, func, seq))
SELECT rank, count(*) AS collectives, sum(wait_ns) AS waited_ns FROM w GROUP BY rank
"""

B_STEP_WAITS = """
WITH w AS (
  SELECT e.rank, e.entry_ns, i.last_ns - e.entry_ns AS wait_ns
  FROM entries e JOIN instances i USING (commId, func, seq))
SELECT w.rank, s.k, sum(w.wait_ns) AS wait_ns
FROM w ASOF JOIN steps s ON w.rank = s.rank AND w.entry_ns >= s.start_ns
WHERE w.entry_ns < s.end_ns
GROUP BY w.rank, s.k
"""

# GPU intervals clipped to the window [w0, w1): their unions (class 0 busy, 1 computation, 2 NCCL
# kernels; NCCL operations' GPU spans stand in when no kernel is an NCCL kernel), per rank and class.
_INTERVALS = """
iv AS (
  SELECT rank, start AS s, "end" AS e, shortNameValue ILIKE '%nccl%' AS comm FROM gpu_kernels
  UNION ALL SELECT rank, start, "end", false FROM gpu_memcpy
  UNION ALL SELECT rank, start, "end", false FROM gpu_memset
  UNION ALL SELECT rank, gpuStart, gpuEnd, true FROM nccl_ops
    WHERE NOT (SELECT nccl_kernels FROM params) AND kind = 'Coll' AND seqNumber IS NOT NULL
      AND commId IS NOT NULL AND gpuStart IS NOT NULL AND gpuEnd IS NOT NULL),
clipped AS (
  SELECT rank, greatest(s, (SELECT w0 FROM params)) AS a, least(e, (SELECT w1 FROM params)) AS b, comm
  FROM iv WHERE least(e, (SELECT w1 FROM params)) > greatest(s, (SELECT w0 FROM params))),
classed AS (
  SELECT rank, 0 AS cls, a, b FROM clipped
  UNION ALL SELECT rank, CASE WHEN comm THEN 2 ELSE 1 END, a, b FROM clipped),
marked AS (
  SELECT rank, cls, a, b,
         max(b) OVER (PARTITION BY rank, cls ORDER BY a, b ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS prev
  FROM classed),
grouped AS (
  SELECT rank, cls, a, b,
         sum(CASE WHEN prev IS NULL OR a > prev THEN 1 ELSE 0 END)
           OVER (PARTITION BY rank, cls ORDER BY a, b ROWS UNBOUNDED PRECEDING) AS g
  FROM marked),
islands AS (SELECT rank, cls, min(a) AS a, max(b) AS b FROM grouped GROUP BY rank, cls, g)
"""

# The unions, computed once per run and kept as the table gpu_islands(rank, cls, a, b): the islands of
# each class, plus one row (cls -1, no times) per rank with any GPU activity, also outside the window.
# B_GPU_TIME and B_GAPS both read it: the window-function sort of every interval (the analysis's
# cost) happens once, not once per report (bench/results/2026-11-26-parquet-10k.md: before/after).
B_ISLANDS = """
WITH """ + _INTERVALS + """,
has AS (SELECT DISTINCT rank FROM iv)
SELECT rank, cls, a, b FROM islands
UNION ALL SELECT rank, -1 AS cls, NULL::BIGINT AS a, NULL::BIGINT AS b FROM has
"""

# Per rank: whether it has GPU activity at all, and its union lengths.
B_GPU_TIME = """
SELECT rank,
       coalesce(sum(b - a) FILTER (WHERE cls = 0), 0) AS busy_ns,
       coalesce(sum(b - a) FILTER (WHERE cls = 1), 0) AS compute_ns,
       coalesce(sum(b - a) FILTER (WHERE cls = 2), 0) AS comm_ns
FROM gpu_islands
GROUP BY rank
"""

# Idle gaps of each rank with GPU activity: the window's stretches between its busy islands, from
# $gap_min_ns; per rank count, total, the largest (earliest of equals) and its $keep longest.
B_GAPS = """
WITH has AS (SELECT rank FROM gpu_islands WHERE cls = -1),
busy AS (
  SELECT rank, a, b, lag(b) OVER (PARTITION BY rank ORDER BY a) AS pb,
         row_number() OVER (PARTITION BY rank ORDER BY a DESC) AS from_end
  FROM gpu_islands WHERE cls = 0),
raw AS (
  SELECT rank, coalesce(pb, (SELECT w0 FROM params)) AS start_ns, a - coalesce(pb, (SELECT w0 FROM params)) AS d
  FROM busy
  UNION ALL SELECT rank, b, (SELECT w1 FROM params) - b FROM busy WHERE from_end = 1
  UNION ALL SELECT rank, (SELECT w0 FROM params), (SELECT w1 - w0 FROM params) FROM has
    WHERE rank NOT IN (SELECT rank FROM busy)),
gaps AS (SELECT * FROM raw WHERE d > 0 AND d >= (SELECT gap_min_ns FROM params)),
ranked AS (SELECT rank, start_ns, d,
                  row_number() OVER (PARTITION BY rank ORDER BY d DESC, start_ns) AS pos,
                  count(*) OVER (PARTITION BY rank) AS gaps, sum(d) OVER (PARTITION BY rank) AS gap_ns
           FROM gaps)
SELECT rank, start_ns, d AS duration_ns, pos, gaps, gap_ns
FROM ranked WHERE pos <= greatest((SELECT keep FROM params), 1)
"""

# --- cross-rank: the iterations table ---------------------------------------------------------------------

# step_rows(rank, k, step_ns, wait_ns) for k below the common step count: per step the spread, the
# median (the upper one of an even count, as `gtrace analyze`), and the rank with the most work
# (ties: the lower rank).
X_STEP_TABLE = """
WITH r AS (SELECT rank, k, step_ns, wait_ns, step_ns - wait_ns AS work_ns, start_ns FROM step_rows),
t AS (
  SELECT k, min(start_ns) AS start_ns, count(*) AS ranks, min(step_ns) AS min_ns, max(step_ns) AS max_ns,
         list_sort(list(step_ns))[count(*) // 2 + 1] AS median_ns,
         list_sort(list(work_ns))[count(*) // 2 + 1] AS median_work_ns,
         max(work_ns) AS slowest_work_ns
  FROM r GROUP BY k)
SELECT t.*, (SELECT min(rank) FROM r WHERE r.k = t.k AND r.work_ns = t.slowest_work_ns) AS slowest_rank
FROM t ORDER BY k
"""
