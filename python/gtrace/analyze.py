"""`gtrace analyze` on the Parquet dataset, with an existing engine: DuckDB on one machine (default)
or Dask (a LocalCluster here, a dask.distributed scheduler on a cluster).

    python -m gtrace.analyze [--engine duckdb|dask] [--workers N] [--scheduler ADDR]
                             --step-range NAME [--skip-steps N] [--gap-min-us US] [--top N]
                             [-r REPORTS] [--format json|csv] DIR
    (or: gtrace analyze --engine duckdb|dask DIR ...; the CLI runs this module)

The reports and their numbers are those of `gtrace analyze` on the database the dataset came from
(summary, steps, step_ranks, stragglers, collectives, gpu_gaps, ranks; definitions in
docs/multi-rank.md). The queries are in analyze_sql.py, once: DuckDB runs them over all ranks;
on Dask each task runs the rank-local ones with DuckDB over its own ranks' partitions (no task reads
another rank's data), the collective instances are a Dask dataframe groupby over every rank's entries,
and the small per-step and per-rank results are finished on the client. Not here (yet): iterations
from the collective pattern (give --step-range), the `entries` report and the HTML heatmap.
"""
import argparse
import json
import math
import os
import sys

from gtrace import analyze_sql as Q
from gtrace.parquet import DatasetError, check_dataset, partition_path

NEEDED_TABLES = {t for t, _ in Q.VIEWS.values()}
REPORTS = ["summary", "steps", "step_ranks", "stragglers", "collectives", "gpu_gaps", "ranks"]
TITLES = {"summary": "Multi-Rank Efficiency (POP model)", "steps": "Iterations Across Ranks",
          "step_ranks": "Iterations per Rank", "stragglers": "Ranks by Time They Made Others Wait",
          "collectives": "Collective Instances by Waiting", "gpu_gaps": "Longest GPU Idle Gaps",
          "ranks": "GPU Time per Rank in the Window"}  # tools/analyze/report.cc


def _duckdb():
    try:
        import duckdb
    except ImportError as e:
        raise DatasetError("duckdb is needed for the analysis (pip install duckdb): %s" % e)
    return duckdb


def _quote(s):
    return "'" + s.replace("'", "''") + "'"


def bind_views(con, root, manifests, ranks):
    """The views of analyze_sql.py over the partitions of `ranks` (empty views for absent tables)."""
    for view, (table, cols) in Q.VIEWS.items():
        files = [partition_path(root, table, r) for r in ranks if manifests[r]["tables"].get(table)]
        names = ", ".join('"%s"' % c for c, _ in cols)
        if files:
            con.execute('CREATE OR REPLACE VIEW %s AS SELECT rank, %s FROM read_parquet([%s], hive_partitioning = true)'
                        % (view, names, ", ".join(_quote(f) for f in files)))
        else:
            typed = ", ".join('NULL::%s AS "%s"' % (t, c) for c, t in cols)
            con.execute("CREATE OR REPLACE VIEW %s AS SELECT NULL::BIGINT AS rank, %s WHERE false" % (view, typed))


def set_params(con, p):
    con.execute("CREATE OR REPLACE TABLE params AS SELECT ?::VARCHAR AS step_range, ?::BIGINT AS skip_steps, "
                "?::BIGINT AS gap_min_ns, ?::BIGINT AS keep, ?::BOOLEAN AS gpu_entries, "
                "?::BOOLEAN AS nccl_kernels, ?::BIGINT AS w0, ?::BIGINT AS w1",
                [p["step_range"], p["skip_steps"], p["gap_min_ns"], p["top"], p.get("gpu_entries", False),
                 p.get("nccl_kernels", False), p.get("w0", 0), p.get("w1", 0)])


def _empty_steps(con):
    con.execute("CREATE OR REPLACE TABLE steps AS SELECT NULL::BIGINT AS rank, NULL::BIGINT AS k, "
                "NULL::BIGINT AS start_ns, NULL::BIGINT AS end_ns WHERE false")


# --- the work of one task: a group of ranks (Dask), or all of them (DuckDB) -------------------------------

def phase_a(root, manifests, ranks, params):
    """Rank-local: the ranks' collective operations, NVTX iterations and GPU span."""
    con = _duckdb().connect()
    bind_views(con, root, manifests, ranks)
    set_params(con, params)
    ops = con.execute(Q.A_OPS).df()
    steps = con.execute(Q.A_STEPS).df()
    span = con.execute(Q.A_GPU_SPAN).fetchone()
    con.close()
    return ops, steps, span


def phase_b(root, manifests, ranks, params, ops, instances, steps):
    """Rank-local, given the instances, the iterations and the window: waits, GPU time and gaps."""
    con = _duckdb().connect()
    bind_views(con, root, manifests, ranks)
    set_params(con, params)
    con.register("ops", ops)
    con.register("instances", instances)
    con.register("steps", steps)
    con.execute("CREATE TABLE entries AS " + Q.X_ENTRIES)
    out = _gpu_reports(con, params)
    con.close()
    return out


def _gpu_reports(con, params):
    """Phase B's queries on a connection that has the views, params, entries, instances and steps. The
    GPU interval unions are made once (gpu_islands) and read by both the GPU-time and the gaps query."""
    con.execute("CREATE OR REPLACE TEMP TABLE gpu_islands AS " + Q.B_ISLANDS)
    out = {
        "waits": con.execute(Q.B_WAITS).df(),
        "step_waits": con.execute(Q.B_STEP_WAITS).df(),
        "gpu": con.execute(Q.B_GPU_TIME).df(),
        "gaps": con.execute(Q.B_GAPS).df() if params["w1"] > params["w0"] else None,
    }
    con.execute("DROP TABLE gpu_islands")
    return out


# --- engines ------------------------------------------------------------------------------------------------

class DuckDbEngine:
    """Everything in one DuckDB over every rank's partitions (streamed from the files, not loaded)."""
    name = "duckdb"

    def __init__(self, args):
        self.threads = args.threads

    def run(self, root, manifests, params):
        con = _duckdb().connect()
        if self.threads:
            con.execute("SET threads = %d" % self.threads)
        ranks = sorted(manifests)
        bind_views(con, root, manifests, ranks)
        set_params(con, params)
        con.execute("CREATE TABLE ops AS " + Q.A_OPS)
        n, with_gpu = con.execute("SELECT count(*), count(gpuStart) FROM ops").fetchone()
        params["gpu_entries"] = n > 0 and n == with_gpu
        params["ops"] = n
        set_params(con, params)
        con.execute("CREATE TABLE entries AS " + Q.X_ENTRIES)
        con.execute("CREATE TABLE instances AS " + Q.X_INSTANCES)
        if params["step_range"]:
            con.execute("CREATE TABLE steps AS " + Q.A_STEPS)
        else:
            _empty_steps(con)
        span = con.execute(Q.A_GPU_SPAN).fetchone()
        return finish(con, params, span, lambda p: self._phase_b(con, p))

    @staticmethod
    def _phase_b(con, params):
        set_params(con, params)
        return _gpu_reports(con, params)


class DaskEngine:
    """Tasks of a few ranks each; the instances are a Dask dataframe groupby."""
    name = "dask"

    def __init__(self, args):
        self.workers, self.scheduler, self.ranks_per_task = args.workers, args.scheduler, args.ranks_per_task

    def run(self, root, manifests, params):
        try:
            import dask
            import dask.dataframe as dd
            from dask.distributed import Client, LocalCluster
        except ImportError as e:
            raise DatasetError("dask[dataframe] and distributed are needed for --engine dask: %s" % e)
        import pandas as pd
        if self.scheduler:
            client, cluster = Client(self.scheduler), None
        else:
            cluster = LocalCluster(n_workers=self.workers, threads_per_worker=1, processes=True,
                                   dashboard_address=None, silence_logs=40)
            client = Client(cluster)
        try:
            ranks = sorted(manifests)
            per = self.ranks_per_task or max(1, math.ceil(len(ranks) / (4 * max(1, self.workers))))
            groups = [ranks[i:i + per] for i in range(0, len(ranks), per)]
            parts = [{r: manifests[r] for r in g} for g in groups]
            a = [dask.delayed(phase_a, nout=3)(root, m, g, dict(params)) for m, g in zip(parts, groups)]
            ops_parts = [x[0] for x in a]
            meta = pd.DataFrame({"rank": pd.Series([], dtype="int64"), "commId": pd.Series([], dtype="Int64"),
                                 "func": pd.Series([], dtype="object"), "seq": pd.Series([], dtype="Int64"),
                                 "gpuStart": pd.Series([], dtype="Int64"), "gpuEnd": pd.Series([], dtype="Int64"),
                                 "host_ns": pd.Series([], dtype="Int64")})
            ops = dd.from_delayed([dask.delayed(_typed_ops)(o) for o in ops_parts], meta=meta, verify_meta=False)
            n, with_gpu = dask.compute(ops["rank"].count(), ops["gpuStart"].count())
            params["gpu_entries"] = bool(n > 0 and n == with_gpu)
            params["ops"] = int(n)
            instances = _dask_instances(ops, params["gpu_entries"])
            steps_parts, spans = dask.compute([x[1] for x in a], [x[2] for x in a])
            steps = pd.concat(steps_parts, ignore_index=True) if steps_parts else pd.DataFrame()
            span = _merge_spans(spans)
            con = _duckdb().connect()
            con.register("steps_in", steps)
            if params["step_range"] and len(steps):
                con.execute("CREATE TABLE steps AS SELECT rank::BIGINT AS rank, k::BIGINT AS k, start_ns::BIGINT "
                            "AS start_ns, end_ns::BIGINT AS end_ns FROM steps_in")
            else:
                _empty_steps(con)
            steps_df = con.execute("SELECT * FROM steps").df()

            def run_b(p):
                b = [dask.delayed(phase_b)(root, m, g, dict(p), o, instances,
                                           steps_df[steps_df["rank"].isin(g)].reset_index(drop=True))
                     for m, g, o in zip(parts, groups, ops_parts)]
                res = dask.compute(*b)
                out = {}
                for key in ("waits", "step_waits", "gpu", "gaps"):
                    frames = [x[key] for x in res if x[key] is not None]
                    out[key] = pd.concat(frames, ignore_index=True) if frames else None
                return out

            con.register("instances_df", instances)
            con.execute("CREATE TABLE instances AS SELECT * FROM instances_df")
            return finish(con, params, span, run_b)
        finally:
            client.close()
            if cluster is not None:
                cluster.close()


def _typed_ops(df):
    import pandas as pd
    out = pd.DataFrame({"rank": df["rank"].astype("int64")})
    for c in ("commId", "seq", "gpuStart", "gpuEnd", "host_ns"):
        out[c] = df[c].astype("Int64")
    out["func"] = df["func"].astype("object")
    return out[["rank", "commId", "func", "seq", "gpuStart", "gpuEnd", "host_ns"]]


def _dask_instances(ops, gpu_entries):
    """X_ENTRIES + X_INSTANCES as Dask dataframe operations: a groupby over every rank's entries (tree
    reduction across the tasks), then the arrivers and waits per instance with the (small) instance
    table broadcast to every partition -- no shuffle of the entries."""
    import pandas as pd
    e = ops.assign(entry_ns=ops["gpuStart"] if gpu_entries else ops["host_ns"])
    e = e[e["entry_ns"].notnull()]
    key = ["commId", "func", "seq"]
    grouped = e.groupby(key)
    g = grouped["entry_ns"].count().rename("ranks").to_frame()
    g["first_ns"] = grouped["entry_ns"].min()
    g["last_ns"] = grouped["entry_ns"].max()
    g["end_ns"] = grouped["gpuEnd"].max()
    g = g[g["ranks"] >= 2].reset_index().compute()
    g["func"] = g["func"].astype(object)

    def arrivals(part, inst):
        part = part.assign(func=part["func"].astype(object))
        m = part.merge(inst, on=key)
        m["w"] = m["last_ns"] - m["entry_ns"]
        big = 1 << 62
        m["fr"] = m["rank"].where(m["entry_ns"] == m["first_ns"], big)
        m["lr"] = m["rank"].where(m["entry_ns"] == m["last_ns"], big)
        return m.groupby(key, as_index=False).agg(fr=("fr", "min"), lr=("lr", "min"), w=("w", "sum"))

    meta = pd.DataFrame({"commId": pd.Series([], dtype="int64"), "func": pd.Series([], dtype=object),
                         "seq": pd.Series([], dtype="int64"), "fr": pd.Series([], dtype="int64"),
                         "lr": pd.Series([], dtype="int64"), "w": pd.Series([], dtype="int64")})
    per_part = e.map_partitions(arrivals, g[key + ["first_ns", "last_ns"]], meta=meta).compute()
    agg = per_part.groupby(key, as_index=False).agg(first_rank=("fr", "min"), last_rank=("lr", "min"),
                                                    total_wait_ns=("w", "sum"))
    out = g.merge(agg, on=key)
    return out[["commId", "func", "seq", "ranks", "first_ns", "last_ns", "end_ns", "first_rank", "last_rank",
                "total_wait_ns"]].astype({c: "int64" for c in ("commId", "seq", "ranks", "first_ns", "last_ns",
                                                                 "first_rank", "last_rank", "total_wait_ns")})


def _merge_spans(spans):
    first = [s[0] for s in spans if s[0] is not None]
    last = [s[1] for s in spans if s[1] is not None]
    return (min(first) if first else None, max(last) if last else None, any(bool(s[2]) for s in spans))


# --- the shared part: iterations, window, phase B, results --------------------------------------------------

def finish(con, params, span, run_b):
    """con holds `steps` and `instances`; run_b(params) runs phase B. Returns the analysis as a dict."""
    res = {"notes": [], "params": params}
    counts = con.execute("SELECT rank, count(*) AS n, min(start_ns) AS first FROM steps GROUP BY rank").fetchall()
    ranks_with = len(counts)
    common = min((c[1] for c in counts), default=0)
    res["common"] = common
    w0 = w1 = 0
    if common > 0:
        w0, w1 = con.execute("SELECT min(start_ns) FILTER (WHERE k = 0), max(end_ns) FILTER (WHERE k = ?) FROM steps",
                             [common - 1]).fetchone()
    if not (w1 > w0) and span[0] is not None and span[1] > span[0]:
        w0, w1 = span[0], span[1]
        res["notes"].append("no iterations: POP factors and gaps over the span of all GPU activity")
    params.update(w0=w0, w1=w1, nccl_kernels=bool(span[2]))
    res["ranks_with_steps"] = ranks_with
    res["instances"] = con.execute("SELECT * FROM instances ORDER BY first_ns, commId, func, seq").df()
    b = run_b(params)
    res.update(b)
    con.register("step_waits_in", b["step_waits"])
    con.execute("CREATE OR REPLACE TABLE step_rows AS SELECT s.rank, s.k, s.end_ns - s.start_ns AS step_ns, "
                "coalesce(w.wait_ns, 0)::BIGINT AS wait_ns, s.start_ns FROM steps s "
                "LEFT JOIN step_waits_in w ON w.rank = s.rank AND w.k = s.k WHERE s.k < ?", [common])
    res["step_table"] = con.execute(Q.X_STEP_TABLE).df()
    res["step_ranks"] = con.execute("SELECT rank, count(*) AS steps, sum(step_ns) AS step_total_ns, "
                                    "sum(wait_ns) AS wait_total_ns FROM step_rows GROUP BY rank").df()
    con.close()
    return res


# --- reports: the tables of tools/analyze/report.cc, value for value ----------------------------------------

def _pct(part, whole):
    if whole <= 0:
        return None
    return _fixed2(part / whole)


def _fixed2(fraction):
    x = fraction * 10000.0
    scaled = int(math.floor(abs(x) + 0.5)) * (1 if x >= 0 else -1)  # llround: half away from zero
    return Fixed(scaled)


class Fixed:
    """A number with two decimals, printed as report.cc prints Cell::Fixed(v, 2)."""

    def __init__(self, scaled):
        self.scaled = scaled

    def __str__(self):
        m = abs(self.scaled)
        return "%s%d.%02d" % ("-" if self.scaled < 0 else "", m // 100, m % 100)


def build_tables(res, hosts, args):
    p = res["params"]
    ranks = sorted(hosts)
    top = args.top
    by = lambda df: {int(r["rank"]): r for _, r in df.iterrows()} if df is not None and len(df) else {}
    waits, gpu, sr = by(res["waits"]), by(res["gpu"]), by(res["step_ranks"])
    inst = res["instances"]
    times_last, caused = {}, {}
    for _, i in inst.iterrows():
        lr = int(i["last_rank"])
        times_last[lr] = times_last.get(lr, 0) + 1
        caused[lr] = caused.get(lr, 0) + int(i["total_wait_ns"])
    st = res["step_table"]
    slowest = {}
    for _, s in st.iterrows():
        slowest[int(s["slowest_rank"])] = slowest.get(int(s["slowest_rank"]), 0) + 1
    gaps_by_rank = {}
    if res["gaps"] is not None:
        for _, g in res["gaps"].iterrows():
            gaps_by_rank.setdefault(int(g["rank"]), []).append(g)
    w = p["w1"] - p["w0"]
    # POP (analysis.cc Pop(): doubles, summed in rank order).
    n = 0
    sum_c = sum_b = max_c = comm = overlap = 0.0
    rank_gpu = {}
    for r in ranks:
        if r not in gpu:
            continue
        g = gpu[r]
        c, bu, cm = int(g["compute_ns"]), int(g["busy_ns"]), int(g["comm_ns"])
        rank_gpu[r] = (c, bu, cm, c + cm - bu)
        n += 1
        sum_c += float(c)
        sum_b += float(bu)
        max_c = max(max_c, float(c))
        comm += float(cm)
        overlap += float(c + cm - bu)
    notes = list(res["notes"])
    if p["step_range"] and res["ranks_with_steps"] == 0:
        notes.insert(0, "no rank has an NVTX range named '%s'" % p["step_range"])
    if 0 < res["ranks_with_steps"] < len(ranks):
        notes.append("%d rank(s) have no iterations; left out of the step tables" % (len(ranks) - res["ranks_with_steps"]))
    if p["ops"] == 0:
        notes.insert(0, "no NCCL collectives (GTRACE_NCCL_OPERATIONS): no straggler analysis")
    valid = n > 0 and w > 0 and max_c > 0 and sum_b > 0
    if not valid:
        notes.append("no GPU activity in the window: no POP factors")
    tables = {}
    if valid:
        lb = sum_c / n / max_c
        ce = max_c / (sum_b / n)
        oe = sum_b / n / float(w)
        pe = lb * ce * oe
        ov = overlap / comm if comm > 0 else 0.0
    pct = (lambda x: _fixed2(x)) if valid else (lambda x: None)
    step_source = "NVTX range '%s' (%d of %d ranks)" % (p["step_range"], res["ranks_with_steps"], len(ranks))
    entry = "-" if p["ops"] == 0 else ("a rank enters a collective when its NCCL kernel starts (GPU)"
                                      if p["gpu_entries"] else "a rank enters a collective when it calls NCCL (host)")
    rows = [("Parallel efficiency (%)", pct(pe) if valid else None, "LB x CE x OE = mean(compute) / window"),
            ("  Load balance (%)", pct(lb) if valid else None, "mean(compute) / max(compute) over ranks"),
            ("  Communication efficiency (%)", pct(ce) if valid else None, "max(compute) / mean(GPU busy)"),
            ("  Orchestration efficiency (%)", pct(oe) if valid else None,
             "mean(GPU busy) / window: GPU idle = host gave no work"),
            ("Communication overlapped (%)", pct(ov) if valid else None,
             "NCCL kernel time during computation / NCCL kernel time"),
            ("Ranks", n, "with GPU activity, of %d" % len(ranks)),
            ("Window (ns)", w, "from %d ns: the analysed iterations of all ranks" % p["w0"]),
            ("Iterations", len(st), step_source),
            ("Collective entry", None, entry)]
    rows += [("Note", None, x) for x in notes]
    tables["summary"] = (["Metric", "Value", "Definition"], rows)
    rows = []
    for _, s in st.iterrows():
        mn, md, mx = int(s["min_ns"]), int(s["median_ns"]), int(s["max_ns"])
        rows.append((int(s["k"]) + p["skip_steps"], int(s["start_ns"]), int(s["ranks"]), mn, md, mx, mx - mn,
                     _pct(mx - mn, md), int(s["slowest_rank"]), int(s["slowest_work_ns"]), int(s["median_work_ns"])))
    tables["steps"] = (["Step", "Start (ns)", "Ranks", "Min (ns)", "Med (ns)", "Max (ns)", "Spread (ns)", "Spread (%)",
                        "Slowest Rank", "Slowest Work (ns)", "Med Work (ns)"], rows)
    rows = []
    for r in ranks:
        if r not in sr:
            continue
        k, tot, wt = int(sr[r]["steps"]), int(sr[r]["step_total_ns"]), int(sr[r]["wait_total_ns"])
        rows.append((r, hosts[r], k, tot // k, (tot - wt) // k, wt // k, slowest.get(r, 0)))
    tables["step_ranks"] = (["Rank", "Host", "Steps", "Avg Step (ns)", "Avg Work (ns)", "Avg Wait (ns)",
                             "Times Slowest"], rows)
    v = [r for r in ranks if r in waits and int(waits[r]["collectives"]) > 0]
    total = sum(caused.get(r, 0) for r in v)
    v.sort(key=lambda r: (-caused.get(r, 0), r))
    if top > 0:
        v = v[:top]
    tables["stragglers"] = (["Rank", "Host", "Times Last", "Collectives", "Wait Caused (ns)", "Share (%)",
                             "Own Wait (ns)"],
                            [(r, hosts[r], times_last.get(r, 0), int(waits[r]["collectives"]), caused.get(r, 0),
                              _pct(caused.get(r, 0), total), int(waits[r]["waited_ns"])) for r in v])
    il = [i for _, i in inst.iterrows()]
    il.sort(key=lambda i: -int(i["total_wait_ns"]))  # stable: time order among equals
    if top > 0:
        il = il[:top]
    tables["collectives"] = (["Communicator", "Func", "Seq", "Ranks", "First Entry (ns)", "First Rank",
                              "Last Entry (ns)", "Last Rank", "Skew (ns)", "Total Wait (ns)"],
                             [("0x%016x" % (int(i["commId"]) & 0xffffffffffffffff), i["func"], int(i["seq"]),
                               int(i["ranks"]), int(i["first_ns"]), int(i["first_rank"]), int(i["last_ns"]),
                               int(i["last_rank"]), int(i["last_ns"]) - int(i["first_ns"]), int(i["total_wait_ns"]))
                              for i in il])
    allg = []
    if top > 0:
        for r, gl in gaps_by_rank.items():
            allg += [(int(g["duration_ns"]), r, int(g["start_ns"])) for g in gl if int(g["pos"]) <= top]
    allg.sort(key=lambda x: (-x[0], x[1], x[2]))
    tables["gpu_gaps"] = (["Rank", "Host", "Start (ns)", "Duration (ns)"],
                          [(r, hosts[r], s, d) for d, r, s in allg[:top]])
    rows = []
    for r in ranks:
        if r not in rank_gpu:
            rows.append((r, hosts[r]) + (None,) * 9)
            continue
        c, bu, cm, ovl = rank_gpu[r]
        gl = gaps_by_rank.get(r, [])
        first = [g for g in gl if int(g["pos"]) == 1]
        rows.append((r, hosts[r], _pct(bu, w), _pct(c, w), _pct(cm, w), _pct(ovl, cm), _pct(w - bu, w),
                     int(gl[0]["gaps"]) if gl else 0, int(gl[0]["gap_ns"]) if gl else 0,
                     int(first[0]["duration_ns"]) if first else 0, int(first[0]["start_ns"]) if first else 0))
    tables["ranks"] = (["Rank", "Host", "Busy (%)", "Compute (%)", "NCCL (%)", "Overlap (%)", "Idle (%)", "Gaps",
                        "Gap Time (ns)", "Largest Gap (ns)", "Largest Gap At (ns)"], rows)
    return tables


def _json_value(v):
    if v is None:
        return "null"
    if isinstance(v, Fixed):
        return str(v)
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)
    return str(int(v))


def write_reports(tables, reports, fmt, out):
    if fmt == "json":
        out.write("{\n")
        for i, name in enumerate(reports):
            cols, rows = tables[name]
            out.write(json.dumps(name) + ": " + ("[]\n" if not rows else "[\n"))
            for j, row in enumerate(rows):
                out.write("  {" + ", ".join("%s: %s" % (json.dumps(c), _json_value(v)) for c, v in zip(cols, row)))
                out.write("},\n" if j + 1 < len(rows) else "}\n")
            if rows:
                out.write("]\n")
            if i + 1 < len(reports):
                out.write(",\n")
        out.write("}\n")
        return
    import csv
    for i, name in enumerate(reports):
        cols, rows = tables[name]
        if len(reports) > 1:
            out.write(("\n" if i else "") + "# %s (%s)\n" % (TITLES[name], name))
        w = csv.writer(out, lineterminator="\n")
        w.writerow(cols)
        for row in rows:
            w.writerow(["" if v is None else str(v) for v in row])


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m gtrace.analyze", description=__doc__.split("\n\n")[0])
    ap.add_argument("dataset")
    ap.add_argument("--engine", default="duckdb", choices=["duckdb", "dask"])
    ap.add_argument("--workers", type=int, default=2, help="dask: LocalCluster worker processes (default 2)")
    ap.add_argument("--scheduler", help="dask: address of a running dask.distributed scheduler instead")
    ap.add_argument("--ranks-per-task", type=int, default=0, help="dask: ranks per task (default: 4 tasks per worker)")
    ap.add_argument("--threads", type=int, default=0, help="duckdb: threads (default: DuckDB's, one per core)")
    ap.add_argument("--step-range", required=True, help="NVTX range that marks one iteration")
    ap.add_argument("--skip-steps", type=int, default=0)
    ap.add_argument("--gap-min-us", type=int, default=100)
    ap.add_argument("--top", type=int, default=10)
    ap.add_argument("-r", "--report", default=",".join(REPORTS))
    ap.add_argument("--format", default="json", choices=["json", "csv"])
    ap.add_argument("--world-size", type=int, help="ranks 0..N-1 must all be in the dataset")
    a = ap.parse_args(argv)
    reports = [r for r in a.report.split(",") if r]
    for r in reports:
        if r not in REPORTS:
            sys.stderr.write("gtrace: analyze: unknown report '%s' (known here: %s)\n" % (r, ", ".join(REPORTS)))
            return 2
    try:
        manifests = check_dataset(a.dataset, tables=NEEDED_TABLES, world_size=a.world_size)
        hosts = {r: m.get("host", "") for r, m in manifests.items()}
        params = {"step_range": a.step_range, "skip_steps": a.skip_steps, "gap_min_ns": a.gap_min_us * 1000,
                  "top": a.top}
        engine = DuckDbEngine(a) if a.engine == "duckdb" else DaskEngine(a)
        res = engine.run(os.path.abspath(a.dataset), manifests, params)
        tables = build_tables(res, hosts, a)
    except DatasetError as e:
        sys.stderr.write("gtrace: analyze: %s\n" % e)
        return 1
    write_reports(tables, reports, a.format, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
