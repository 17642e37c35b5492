"""The Parquet dataset and the engine analyses on the rank simulator's streams (run by parquet_test.sh in
a scratch directory, with GTRACE_PYTHON and PYTHONPATH set).

    python parquet_check.py BUILD_DIR dataset|analyze|errors|injob

dataset  `gtrace export --type parquet` of a merged database and of the streams: the documented
         layout and columns (exact lists), row counts per rank and table equal the database's, the
         kernel count the simulator planted, values equal row for row; read with pyarrow and DuckDB.
analyze  `gtrace analyze --engine duckdb` and `--engine dask` (LocalCluster, 2 workers) print exactly
         what `gtrace analyze` prints for the database (JSON, every report, all rows; CSV).
errors   a missing partition, a corrupt partition, a missing rank, an existing output, bad inputs:
         a clear error naming the file or rank and a non-zero exit.
injob    the in-job recipe (scripts/slurm-parquet.sh): per-rank databases, summaries, their merge for
         the clock alignment, each rank converted alone: times equal the merged databases' to the ns,
         and the analysis equals gtrace analyze's of that merge.
batch    many ranks per process (`export --type parquet --rank each`, `summary -d`): every file equals
         the one-process-per-rank conversion's byte for byte, from databases and from streams; a bad
         input among good ones is named and only its own partitions are missing; a rank already
         converted is refused and kept; the recipe with RANKS_PER_TASK=3 equals the per-rank one.
slurm    scripts/slurm-parquet.sh with a stand-in srun.
"""
import glob
import json
import os
import shutil
import sqlite3
import subprocess
import sys

BUILD = os.path.abspath(sys.argv[1])
PART = sys.argv[2]
G = os.path.join(BUILD, "bin", "gtrace")
RANKS = 8
KERNEL_COLUMNS = [
    "start", "end", "deviceId", "contextId", "greenContextId", "streamId", "correlationId", "globalPid",
    "demangledName", "shortName", "mangledName", "launchType", "cacheConfig", "registersPerThread", "gridX", "gridY",
    "gridZ", "blockX", "blockY", "blockZ", "staticSharedMemory", "dynamicSharedMemory", "localMemoryPerThread",
    "localMemoryTotal", "gridId", "sharedMemoryExecuted", "graphNodeId", "sharedMemoryLimitConfig",
    "qmdBulkReleaseDone", "qmdPreexitDone", "qmdLastCtaDone", "graphId", "clusterX", "clusterY", "clusterZ",
    "clusterSchedulingPolicy", "maxPotentialClusterSize", "maxActiveClusters", "sharedMemoryRequestedPercentage",
    "tensorSizeMinusOneElements", "host", "demangledNameValue", "shortNameValue", "mangledNameValue", "rank"]
FAILS = []


def check(cond, what):
    print(("ok    " if cond else "FAIL  ") + what)
    if not cond:
        FAILS.append(what)


def run(args, expect_rc=0):
    p = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if expect_rc is not None and p.returncode != expect_rc:
        print("command: %s\nrc %d\nstdout: %s\nstderr: %s" % (" ".join(args), p.returncode, p.stdout[-2000:],
                                                               p.stderr[-3000:]))
        sys.exit(1)
    return p


def simulate():
    out = run([os.path.join(BUILD, "bin", "sim_ranks"), "streams", "--ranks", str(RANKS), "--per-host", "4",
               "--steps", "12", "--kernels", "6", "--buckets", "2", "--cuda-api", "--straggler", "3",
               "--straggler-delay-us", "2000", "--imbalance", "0.1", "--offset-us", "1500", "--drift-ppm", "5"]).stdout
    truth = dict(kv.split("=") for kv in out.split("\n")[0].split())
    return truth


def table_columns(db, table):
    return [r[1] for r in db.execute('PRAGMA table_info("%s")' % table)]


def rank_of_gpid(db):
    return {g: r for g, r in db.execute("SELECT globalPid, rank FROM GTRACE_RANKS")}


def part_dataset():
    import duckdb
    import pyarrow.dataset as pads
    import pyarrow.parquet as pq
    truth = simulate()
    run([G, "export", "-o", "job.sqlite", "streams"])
    p = run([G, "export", "--type", "parquet", "-o", "ds", "job.sqlite"])
    check("gtrace: wrote ds (Parquet, 8 ranks)" in p.stderr, "export from the database: " + p.stderr.strip()[-80:])
    run([G, "export", "--type", "parquet", "--compression", "snappy", "--row-group-rows", "100", "-o", "ds_streams",
         "streams"])
    db = sqlite3.connect("job.sqlite")
    ranks = rank_of_gpid(db)
    hosts = {r: "node%d" % (r // 4) for r in range(RANKS)}
    tables = [t for (t,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
    catalog = json.loads(run([G, "export", "--column-catalog"]).stdout)
    # Layout: a directory per rank table, a partition per rank; the others under _meta/session.
    rank_tables = [t for t in tables if {"globalPid", "globalTid"} & set(table_columns(db, t))
                   and t != "GTRACE_CLOCK_ALIGNMENT"]  # one row per clock domain: under _meta
    meta_tables = [t for t in tables if t not in rank_tables]
    check(sorted(d for d in os.listdir("ds") if not d.startswith("_")) ==
          sorted(t for t in rank_tables if db.execute('SELECT count(*) FROM "%s"' % t).fetchone()[0] > 0),
          "one directory per non-empty rank table")
    check(sorted(os.listdir("ds/_meta/session")) == sorted(t + ".parquet" for t in meta_tables),
          "every other table under _meta/session (%d tables)" % len(meta_tables))
    check(sorted(os.listdir("ds/_ranks")) == ["rank=%d.json" % r for r in range(RANKS)], "a manifest per rank")
    # Columns: exactly the database's (launcher rank -> partition key, communicator rank -> commRank),
    # host, and <column>Value for each StringIds column; the partition key `rank` from the path.
    k = pads.dataset("ds/CUPTI_ACTIVITY_KIND_KERNEL", format="parquet", partitioning="hive")
    check(k.schema.names == KERNEL_COLUMNS, "KERNEL columns (pyarrow): %s" % k.schema.names[-6:])
    for t in rank_tables:
        if not os.path.isdir("ds/" + t):
            continue
        cols = table_columns(db, t)
        want = [("commRank" if c == "rank" else c) for c in cols if not (c == "rank" and t in ("GTRACE_RANKS",
                                                                                               "MPI_RANKS"))]
        if "host" not in want:
            want.append("host")
        want += [c + "Value" for c, kind in catalog.get(t, {"columns": {}})["columns"].items()
                 if kind == "string_id" and c in cols]
        got = pq.read_schema(glob.glob("ds/%s/rank=*/part-0.parquet" % t)[0]).names
        check(got == want, "%s: columns as documented (%d)" % (t, len(want)))
        key = "globalPid" if "globalPid" in cols else "globalTid & -16777216"
        want_rows = {ranks[g]: n for g, n in db.execute('SELECT %s, count(*) FROM "%s" GROUP BY 1' % (key, t))
                     if g in ranks}
        got_rows = {int(r): n for r, n in duckdb.sql(
            "SELECT rank, count(*) FROM read_parquet('ds/%s/*/*.parquet', hive_partitioning = true) GROUP BY rank"
            % t).fetchall()}
        check(got_rows == want_rows, "%s: rows per rank equal the database's (%d rows)" % (t, sum(want_rows.values())))
    for t in meta_tables:
        n = db.execute('SELECT count(*) FROM "%s"' % t).fetchone()[0]
        check(pq.read_metadata("ds/_meta/session/%s.parquet" % t).num_rows == n, "_meta %s: %d rows" % (t, n))
    # DuckDB: the planted kernel count, hosts without joins, values row for row.
    kq = "read_parquet('ds/CUPTI_ACTIVITY_KIND_KERNEL/*/*.parquet', hive_partitioning = true)"
    n = duckdb.sql("SELECT count(*) FROM " + kq).fetchall()[0][0]
    check(n == int(truth["kernels"]), "DuckDB: %d kernels, the simulator planted %s" % (n, truth["kernels"]))
    got_hosts = dict(duckdb.sql("SELECT rank, any_value(host) FROM %s GROUP BY rank" % kq).fetchall())
    check(got_hosts == hosts, "DuckDB: host per rank, no join")
    want = sorted((ranks[g], s, e, name) for g, s, e, name in db.execute(
        "SELECT k.globalPid, k.start, k.end, s.value FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s "
        "ON s.id = k.shortName"))
    got = sorted(duckdb.sql("SELECT rank, start, \"end\", shortNameValue FROM " + kq).fetchall())
    check(got == want, "kernels equal the database's row for row (rank, start, end, resolved short name)")
    nvtx = duckdb.sql("SELECT count(*) FROM read_parquet('ds/NVTX_EVENTS/*/*.parquet', hive_partitioning = true) "
                      "WHERE coalesce(text, textIdValue) = 'train_step'").fetchall()[0][0]
    check(nvtx == RANKS * 12, "NVTX: %d train_step ranges (8 ranks x 12 steps)" % nvtx)
    # From the streams (another export: same rows).
    for t in ("CUPTI_ACTIVITY_KIND_KERNEL", "GTRACE_NCCL_OPERATIONS", "NVTX_EVENTS"):
        a = duckdb.sql("SELECT count(*) FROM read_parquet('ds/%s/*/*.parquet')" % t).fetchall()[0][0]
        b = duckdb.sql("SELECT count(*) FROM read_parquet('ds_streams/%s/*/*.parquet')" % t).fetchall()[0][0]
        check(a == b, "from the streams: %s has the same %d rows" % (t, a))
    codec = pq.read_metadata(glob.glob("ds_streams/CUPTI_ACTIVITY_KIND_KERNEL/*/*.parquet")[0]).row_group(0).column(0)
    check(codec.compression == "SNAPPY", "--compression snappy: %s" % codec.compression)
    meta = pq.read_metadata("ds_streams/CUPTI_ACTIVITY_KIND_KERNEL/rank=0/part-0.parquet")
    groups = [meta.row_group(i).num_rows for i in range(meta.num_row_groups)]
    per_rank = int(truth["kernels"]) // RANKS
    check(groups == [100] * (per_rank // 100) + ([per_rank % 100] if per_rank % 100 else []),
          "--row-group-rows 100: %d groups for %d kernels" % (len(groups), per_rank))
    meta = pq.read_metadata("ds/CUPTI_ACTIVITY_KIND_KERNEL/rank=0/part-0.parquet")
    check(meta.num_row_groups == 1, "default row groups (1 Mi rows): one group for %d kernels" % meta.num_rows)
    codec = pq.read_metadata(glob.glob("ds/CUPTI_ACTIVITY_KIND_KERNEL/*/*.parquet")[0]).row_group(0).column(0)
    check(codec.compression == "ZSTD", "default compression zstd: %s" % codec.compression)
    # A file of fewer than 32 rows is not compressed (zstd's frame costs more than it saves there): a
    # rank's one GTRACE_RANKS row, and the session's TARGET_INFO_GPU rows.
    for f in ("ds/GTRACE_RANKS/rank=0/part-0.parquet", "ds/_meta/session/TARGET_INFO_GPU.parquet"):
        meta = pq.read_metadata(f)
        codecs = {meta.row_group(0).column(i).compression for i in range(meta.num_columns)}
        check(meta.num_rows < 32 and codecs == {"UNCOMPRESSED"}, "%s: %d rows, %s" % (f, meta.num_rows, codecs))
    # No serialized Arrow schema in the footers: the columns read back with their types from the Parquet
    # types alone (SQLite INTEGER -> int64, REAL -> double, TEXT -> string; the partition key from the path).
    meta = pq.read_metadata("ds/CUPTI_ACTIVITY_KIND_KERNEL/rank=0/part-0.parquet")
    check(not (meta.metadata or {}).get(b"ARROW:schema"), "no ARROW:schema in the footer")
    types = {f.name: str(f.type) for f in k.schema}
    want_types = {c: {"INTEGER": "int64", "REAL": "double", "TEXT": "string"}[d.upper()] for _, c, d, *_ in
                  db.execute('PRAGMA table_info("CUPTI_ACTIVITY_KIND_KERNEL")')}
    want_types.update({"host": "string", "shortNameValue": "string", "demangledNameValue": "string",
                       "mangledNameValue": "string", "rank": "int32"})
    check(types == want_types, "KERNEL types read back (pyarrow): %s" %
          sorted((n, t, want_types.get(n)) for n, t in types.items() if want_types.get(n) != t))
    p = run([sys.executable, "-m", "gtrace.parquet", "check", "ds", "--world-size", str(RANKS)])
    check("8 ranks" in p.stdout and "every partition readable" in p.stdout, "check: " + p.stdout.strip())


def part_analyze():
    simulate()
    run([G, "export", "-o", "job.sqlite", "streams"])
    run([G, "export", "--type", "parquet", "-o", "ds", "job.sqlite"])
    reports = "summary,steps,step_ranks,stragglers,collectives,gpu_gaps,ranks"
    for extra in (["--top", "100000"], ["--skip-steps", "2", "--gap-min-us", "50", "--top", "7"]):
        args = ["--step-range", "train_step", "-r", reports, "--format", "json"] + extra
        native = run([G, "analyze", "job.sqlite"] + args).stdout
        j = json.loads(native)
        duck = run([G, "analyze", "--engine", "duckdb", "ds"] + args).stdout
        check(duck == native, "duckdb == gtrace analyze %s (%d steps, %d instances, %d gaps)"
              % (" ".join(extra), len(j["steps"]), len(j["collectives"]), len(j["gpu_gaps"])))
        if duck != native:
            open("native.json", "w").write(native)
            open("duck.json", "w").write(duck)
            subprocess.run(["diff", "native.json", "duck.json"])
    check(j["stragglers"][0]["Rank"] == 3, "the planted straggler (rank 3) first")
    args = ["--step-range", "train_step", "-r", reports, "--format", "json", "--top", "100000"]
    native = run([G, "analyze", "job.sqlite"] + args).stdout
    dask = run([G, "analyze", "--engine", "dask", "--workers", "2", "ds"] + args).stdout
    check(dask == native, "dask (LocalCluster, 2 workers) == gtrace analyze, every report and row")
    if dask != native:
        open("native.json", "w").write(native)
        open("dask.json", "w").write(dask)
        subprocess.run(["diff", "native.json", "dask.json"])
    csv_native = run([G, "analyze", "job.sqlite", "--step-range", "train_step", "--format", "csv", "-r",
                      "stragglers,collectives,ranks"]).stdout
    csv_duck = run([G, "analyze", "--engine", "duckdb", "ds", "--step-range", "train_step", "--format", "csv", "-r",
                    "stragglers,collectives,ranks"]).stdout
    check(csv_duck == csv_native, "CSV equal (three reports, titles and rows)")


def part_errors():
    simulate()
    run([G, "export", "-o", "job.sqlite", "streams"])
    run([G, "export", "--type", "parquet", "-o", "ds", "job.sqlite"])
    args = ["--step-range", "train_step", "-r", "summary"]
    # A missing partition.
    shutil.copytree("ds", "d1")
    miss = os.path.abspath("d1/CUPTI_ACTIVITY_KIND_KERNEL/rank=5/part-0.parquet")
    os.remove("d1/CUPTI_ACTIVITY_KIND_KERNEL/rank=5/part-0.parquet")
    p = run([G, "analyze", "--engine", "duckdb", "d1"] + args, expect_rc=1)
    check("d1/CUPTI_ACTIVITY_KIND_KERNEL/rank=5/part-0.parquet: missing partition (rank 5, table "
          "CUPTI_ACTIVITY_KIND_KERNEL" in p.stderr and p.stdout == "", "missing partition named: " + p.stderr.strip())
    # A corrupt partition (truncated: no footer).
    shutil.copytree("ds", "d2")
    f = "d2/GTRACE_NCCL_OPERATIONS/rank=2/part-0.parquet"
    data = open(f, "rb").read()
    open(f, "wb").write(data[: len(data) // 2])
    p = run([G, "analyze", "--engine", "dask", "d2"] + args, expect_rc=1)
    check("d2/GTRACE_NCCL_OPERATIONS/rank=2/part-0.parquet: corrupt partition (rank 2, table "
          "GTRACE_NCCL_OPERATIONS)" in p.stderr, "corrupt partition named: " + p.stderr.strip()[:160])
    p = run([sys.executable, "-m", "gtrace.parquet", "check", "d2"], expect_rc=1)
    check("corrupt partition (rank 2" in p.stderr, "check names it too")
    # A rank that was never converted.
    shutil.copytree("ds", "d3")
    os.remove("d3/_ranks/rank=6.json")
    for d in glob.glob("d3/*/rank=6"):
        shutil.rmtree(d)
    p = run([G, "analyze", "--engine", "duckdb", "--world-size", "8", "d3"] + args, expect_rc=1)
    check("rank(s) 6 missing" in p.stderr, "missing rank named: " + p.stderr.strip())
    # Not a dataset; an existing output is kept; bad inputs.
    os.makedirs("empty")
    p = run([G, "analyze", "--engine", "duckdb", "empty"] + args, expect_rc=1)
    check("not a gtrace Parquet dataset" in p.stderr, "not a dataset: " + p.stderr.strip())
    before = open("ds/_ranks/rank=0.json").read()
    p = run([G, "export", "--type", "parquet", "-o", "ds", "job.sqlite"], expect_rc=1)
    check("ds exists (use --force-overwrite" in p.stderr and open("ds/_ranks/rank=0.json").read() == before,
          "existing dataset kept: " + p.stderr.strip())
    open("bad.sqlite", "w").write("not a database")
    p = run([G, "export", "--type", "parquet", "-o", "out", "bad.sqlite"], expect_rc=None)
    check(p.returncode != 0 and "bad.sqlite" in p.stderr and not os.path.exists("out"),
          "not a database: rc %d, %s" % (p.returncode, p.stderr.strip()))
    p = run([G, "export", "--type", "parquet", "--rank", "0", "-o", "one", "job.sqlite"], expect_rc=1)
    check("exactly one process (it holds 8)" in p.stderr and not os.path.exists("one/_ranks"),
          "--rank with 8 processes refused: " + p.stderr.strip())
    p = run([G, "analyze", "--engine", "spark", "ds"], expect_rc=2)
    check("'spark' is not native, duckdb or dask" in p.stderr, "unknown engine: " + p.stderr.strip())
    p = run([G, "export", "--rank", "1", "-o", "x.sqlite", "streams"], expect_rc=2)
    check("go with --type parquet" in p.stderr, "parquet flags without --type parquet: " + p.stderr.strip())


def part_injob():
    import duckdb
    simulate()
    os.makedirs("local")
    os.makedirs("sums")
    for r in range(RANKS):
        run([G, "export", "-o", "local/rank-%d.sqlite" % r, "streams/rank-%d.gtrace" % r])
        run([sys.executable, "-m", "gtrace.parquet", "summary", "-o", "sums/rank-%d.sqlite" % r,
             "local/rank-%d.sqlite" % r])
    n_ops = sqlite3.connect("sums/rank-0.sqlite").execute("SELECT count(*) FROM GTRACE_NCCL_OPERATIONS").fetchone()[0]
    n_k = sqlite3.connect("sums/rank-0.sqlite").execute("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL").fetchone()[0]
    check(n_ops == 36 and n_k == 0, "summary: the 36 collectives of rank 0, no kernels")
    run([G, "export", "-o", "align.sqlite"] + ["sums/rank-%d.sqlite" % r for r in range(RANKS)])
    run([G, "export", "-o", "merged.sqlite"] + ["local/rank-%d.sqlite" % r for r in range(RANKS)])
    for r in range(RANKS):
        run([G, "export", "--type", "parquet", "--rank", str(r), "--alignment", "align.sqlite", "-o", "ds",
             "local/rank-%d.sqlite" % r])
    p = run([G, "export", "--type", "parquet", "--rank", "3", "-o", "ds", "local/rank-3.sqlite"], expect_rc=1)
    check("rank 3 is already converted" in p.stderr, "a rank converted twice refused: " + p.stderr.strip())
    run([sys.executable, "-m", "gtrace.parquet", "check", "ds", "--world-size", str(RANKS)])
    db = sqlite3.connect("merged.sqlite")
    ranks = rank_of_gpid(db)
    want = sorted((ranks[g], s, e) for g, s, e in db.execute("SELECT globalPid, start, end FROM "
                                                             "CUPTI_ACTIVITY_KIND_KERNEL"))
    got = sorted(duckdb.sql("SELECT rank, start, \"end\" FROM read_parquet('ds/CUPTI_ACTIVITY_KIND_KERNEL/*/*.parquet',"
                            " hive_partitioning = true)").fetchall())
    check(got == want, "aligned in the job: %d kernel times equal the merged databases' to the ns" % len(want))
    args = ["--step-range", "train_step", "--format", "json", "--top", "100000"]
    native = run([G, "analyze", "merged.sqlite"] + args).stdout
    duck = run([G, "analyze", "--engine", "duckdb", "ds"] + args).stdout
    check(duck == native, "analysis of the in-job dataset == gtrace analyze of the merged databases")
    # Without the alignment the ranks are on their own time lines: refused.
    for r in range(2):
        run([G, "export", "--type", "parquet", "--rank", str(r), "-o", "raw", "local/rank-%d.sqlite" % r])
    p = run([G, "analyze", "--engine", "duckdb", "raw", "--step-range", "train_step"], expect_rc=1)
    check("different export sessions" in p.stderr, "unaligned per-rank partitions refused: " + p.stderr.strip())


def part_slurm():
    here = os.path.dirname(os.path.abspath(__file__))
    simulate()
    os.makedirs("local")
    for r in range(RANKS):
        run([G, "export", "-o", "local/rank-%d.sqlite" % r, "streams/rank-%d.gtrace" % r])
    run([G, "export", "-o", "merged.sqlite"] + ["local/rank-%d.sqlite" % r for r in range(RANKS)])
    env = dict(os.environ, GTRACE=G, SRUN=os.path.join(here, "fake_srun.sh"), NTASKS=str(RANKS))
    script = os.path.join(here, "..", "..", "scripts", "slurm-parquet.sh")
    p = subprocess.run(["bash", script, "streams/rank-{rank}.gtrace", "ds"], env=env, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True)
    check(p.returncode == 0 and "8 ranks" in p.stdout, "slurm-parquet.sh with a stand-in srun: rc %d" % p.returncode)
    if p.returncode != 0:
        print(p.stdout[-3000:])
    check(os.listdir("ds.work/local") == [], "the per-rank databases removed after conversion")
    args = ["--step-range", "train_step", "--format", "json", "--top", "100000"]
    native = run([G, "analyze", "merged.sqlite"] + args).stdout
    duck = run([G, "analyze", "--engine", "duckdb", "ds"] + args).stdout
    check(duck == native, "dataset of the recipe analysed == gtrace analyze of the merged per-rank databases")
    os.remove("streams/rank-5.gtrace")
    p = subprocess.run(["bash", script, "streams/rank-{rank}.gtrace", "ds2"], env=env, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True)
    check(p.returncode != 0 and "rank 5: streams/rank-5.gtrace: no such stream" in p.stdout and
          "step 1 (per-rank export) failed" in p.stdout, "a missing stream named, the recipe stops: rc %d"
          % p.returncode)


def tree_files(root, skip_meta=False):
    """{relative path: bytes} of every file under root (_meta/ left out when skip_meta)."""
    out = {}
    for d, _, files in os.walk(root):
        for f in files:
            rel = os.path.relpath(os.path.join(d, f), root)
            if skip_meta and rel.startswith("_meta"):
                continue
            out[rel] = open(os.path.join(d, f), "rb").read()
    return out


def dataset_content(root):
    """Every rank partition's rows and every manifest, without the export session (a new one each time a
    stream is exported: GTRACE_RANKS.sessionId, the manifest's session): {relative path: content}."""
    import pyarrow.parquet as pq
    out = {}
    for rel, data in tree_files(root, skip_meta=True).items():
        if rel.endswith(".json"):
            m = json.loads(data)
            m.pop("session", None)
            out[rel] = m
        else:
            rows = pq.read_table(os.path.join(root, rel)).to_pylist()
            out[rel] = [{k: v for k, v in r.items() if k != "sessionId"} for r in rows]
    return out


def part_batch():
    here = os.path.dirname(os.path.abspath(__file__))
    simulate()
    os.makedirs("local")
    dbs = ["local/rank-%d.sqlite" % r for r in range(RANKS)]
    for r in range(RANKS):
        run([G, "export", "-o", dbs[r], "streams/rank-%d.gtrace" % r])
    # Summaries: one process for all equals one process each, byte for byte.
    run([sys.executable, "-m", "gtrace.parquet", "summary", "-d", "sums", *dbs])
    os.makedirs("sums1")
    for r in range(RANKS):
        run([sys.executable, "-m", "gtrace.parquet", "summary", "-o", "sums1/rank-%d.sqlite" % r, dbs[r]])
    check(tree_files("sums") == tree_files("sums1") and len(os.listdir("sums")) == RANKS,
          "summary -d of %d databases == one summary process per rank, byte for byte" % RANKS)
    run([G, "export", "-o", "align.sqlite"] + ["sums/rank-%d.sqlite" % r for r in range(RANKS)])
    run([G, "export", "-o", "merged.sqlite"] + dbs)
    # One process per rank (the recipe so far) against one process for all.
    for r in range(RANKS):
        run([G, "export", "--type", "parquet", "--rank", str(r), "--alignment", "align.sqlite", "-o", "one", dbs[r]])
    p = run([G, "export", "--type", "parquet", "--rank", "each", "--alignment", "align.sqlite", "-o", "batch"] + dbs)
    check("8 of 8 rank(s) converted one by one" in p.stderr, "--rank each: " + p.stderr.strip())
    one, batch = tree_files("one"), tree_files("batch")
    check(one == batch and len(one) > 100, "--rank each == --rank R per process: %d files, equal byte for byte (%s)"
          % (len(one), "same names" if sorted(one) == sorted(batch) else "names differ"))
    check(len(glob.glob("batch/_meta/enums/ENUM_*.parquet")) > 10 and not glob.glob("batch/_meta/rank=0/ENUM_*"),
          "ENUM tables once per dataset (_meta/enums), not in each rank's _meta")
    check(sorted(os.listdir("batch/_meta/rank=0")) == sorted(
        ["ANALYSIS_DETAILS.parquet", "GTRACE_CLOCK_ALIGNMENT.parquet", "META_DATA_CAPTURE.parquet",
         "META_DATA_EXPORT.parquet", "NVTX_PAYLOAD_SCHEMAS.parquet", "NVTX_PAYLOAD_SCHEMA_ENTRIES.parquet",
         "StringIds.parquet", "TARGET_INFO_CUDA_CONTEXT_INFO.parquet", "TARGET_INFO_CUDA_DEVICE.parquet",
         "TARGET_INFO_CUDA_STREAM.parquet", "TARGET_INFO_GPU.parquet", "TARGET_INFO_SESSION_START_TIME.parquet",
         "TARGET_INFO_SYSTEM_ENV.parquet"]), "a rank's own _meta: its 13 tables")
    args = ["--step-range", "train_step", "--format", "json", "--top", "100000"]
    native = run([G, "analyze", "merged.sqlite"] + args).stdout
    duck = run([G, "analyze", "--engine", "duckdb", "batch"] + args).stdout
    check(duck == native, "analysis of the --rank each dataset == gtrace analyze of the merged databases")
    # Streams in: each exported alone (as the job does), the same partitions.
    p = run([G, "export", "--type", "parquet", "--rank", "each", "--alignment", "align.sqlite", "-o", "fromstreams"]
            + ["streams/rank-%d.gtrace" % r for r in range(RANKS)])
    check(dataset_content("fromstreams") == dataset_content("batch") and not glob.glob("fromstreams.gtrace-tmp-*"),
          "--rank each of the 8 streams: the same rows and manifests (but the session), temporary databases removed")
    # A bad input among good ones: named, the others converted, nothing of it left.
    open("bad.sqlite", "wb").write(b"SQLite format 3\x00" + b"\x01" * 200)  # a header, then nothing readable
    p = run([G, "export", "--type", "parquet", "--rank", "each", "--alignment", "align.sqlite", "-o", "mixed",
             dbs[0], "bad.sqlite", "merged.sqlite", dbs[1]], expect_rc=1)
    ranks = sorted(os.listdir("mixed/_ranks"))
    check("bad.sqlite: DatabaseError" in p.stderr and
          "merged.sqlite: --rank each: the input must hold exactly one process (it holds 8)" in p.stderr and
          "2 of 4 rank(s)" in p.stderr and ranks == ["rank=0.json", "rank=1.json"],
          "bad inputs named, the good ranks kept: %s / %s" % (ranks, p.stderr.strip().replace("\n", " | ")))
    run([sys.executable, "-m", "gtrace.parquet", "check", "mixed"])
    # Converted again: refused, and what was there is kept.
    before = tree_files("batch")
    p = run([G, "export", "--type", "parquet", "--rank", "each", "--alignment", "align.sqlite", "-o", "batch",
             dbs[2], dbs[3]], expect_rc=1)
    check("rank 2 is already converted" in p.stderr and "rank 3 is already converted" in p.stderr and
          tree_files("batch") == before, "ranks converted twice refused, their partitions kept: "
          + p.stderr.strip().replace("\n", " | "))
    p = run([G, "export", "--type", "parquet", "--alignment", "align.sqlite", "-o", "x", dbs[0]], expect_rc=2)
    check("--alignment goes with --rank" in p.stderr, "--alignment without --rank: " + p.stderr.strip())
    # The recipe with three ranks per task (3 tasks for 8 ranks) == one task per rank.
    env = dict(os.environ, GTRACE=G, SRUN=os.path.join(here, "fake_srun.sh"), NTASKS=str(RANKS))
    script = os.path.join(here, "..", "..", "scripts", "slurm-parquet.sh")
    outs = {}
    for k in ("1", "3"):
        p = subprocess.run(["bash", script, "streams/rank-{rank}.gtrace", "rec%s" % k], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True, env=dict(env, RANKS_PER_TASK=k))
        outs[k] = p
        if p.returncode != 0:
            print(p.stdout[-3000:])
    check(outs["3"].returncode == 0 and "(3 tasks)" in outs["3"].stdout and os.listdir("rec3.work/local") == [],
          "slurm-parquet.sh RANKS_PER_TASK=3: 3 tasks, per-rank databases removed")
    check(outs["1"].returncode == 0 and dataset_content("rec1") == dataset_content("rec3"),
          "RANKS_PER_TASK=3 gives the partitions and manifests of one task per rank, row for row")
    duck = run([G, "analyze", "--engine", "duckdb", "rec3"] + args).stdout
    check(duck == native, "analysis of the batched recipe's dataset == gtrace analyze of the merged databases")


{"dataset": part_dataset, "analyze": part_analyze, "errors": part_errors, "injob": part_injob,
 "slurm": part_slurm, "batch": part_batch}[PART]()
if FAILS:
    print("%d check(s) failed" % len(FAILS))
    sys.exit(1)
print("all checks passed")
