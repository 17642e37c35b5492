"""gtrace's columnar dataset: nsys-schema SQLite exports -> a hive-partitioned Parquet dataset.

    python -m gtrace.parquet convert -o DIR [--rank R] [--compression zstd] [--row-group-rows N] DB.sqlite...
    python -m gtrace.parquet check DIR
    (or: gtrace export --type parquet -o DIR streams... | DB.sqlite...; it runs this module)

Layout (docs/multi-rank.md, "Columnar dataset"):
    DIR/<TABLE>/rank=<r>/part-0.parquet   every table with a process column (globalPid or globalTid)
    DIR/_meta/<source>/<TABLE>.parquet    tables without one (StringIds, ENUM_*, TARGET_INFO_*, ...)
    DIR/_ranks/rank=<r>.json              one manifest per rank: host, its tables and their row counts
A table in which a rank has no rows has no partition and no manifest entry for it. Files of fewer
than SMALL_FILE_ROWS rows are not compressed; footers hold no serialized Arrow schema (_options).

Columns are the SQLite table's, in its order, plus `host` (GTRACE_RANKS.hostName) and, for every
column that holds a StringIds id (the merge catalog's kStringId columns), `<column>Value`, the
string itself, so cross-rank queries need no joins. The launcher rank is the partition key `rank`
(engines read it from the path); the NCCL tables' own `rank` column (the rank in the communicator)
is stored as `commRank`. Times are the database's session nanoseconds: a merged export's are
already clock-aligned; with --alignment (the in-job recipe, scripts/slurm-parquet.sh) this
module applies the rank's correction (GTRACE_RANKS' alignOffsetNs/DriftPpb/RefNs of a merge of
the per-rank summaries) to every time column.

The writer is Apache Arrow's (pyarrow.parquet); nothing here encodes Parquet. Single process;
one table of one rank in memory at a time (rows streamed from SQLite in batches).
"""
import argparse
import itertools
import json
import operator
import os
import shutil
import sqlite3
import subprocess
import sys

PID_MASK = -16777216  # globalTid -> globalPid (nsys: <hw:8><vm:8><pid:24><tid:24>)
DATASET_VERSION = 1
BATCH_ROWS = 65536
# The column a table's own `rank` has in the dataset: the partition key `rank` is the launcher rank.
RENAMED = {"rank": "commRank"}
LAUNCHER_RANK_TABLES = ("GTRACE_RANKS", "MPI_RANKS")  # their `rank` is the partition key itself
# Tables with a globalPid column whose rows are not per process (one per clock domain): under _meta.
NOT_PER_RANK = ("GTRACE_CLOCK_ALIGNMENT",)
# Ranks converted alone (--rank, --rank each): the ENUM_* tables (nsys's enumerations, the same in every
# export) go once into _meta/enums/ instead of into every rank's _meta/rank=<r>/ (24 of its 37 files,
# a fifth of a small rank's bytes).
SHARED_META_PREFIX = "ENUM_"
SHARED_META_SOURCE = "enums"
# Files of fewer rows are written uncompressed (_file_options); the data are the same.
SMALL_FILE_ROWS = 32


def corrected_sql(column, a, or_zero):
    """The correction of rank-local session ns `column` onto the merged, aligned time line, as an SQLite
    expression: shift onto the merge's time base, then ClockCorrection::At (tools/export/clock_align.h)
    in the same integer arithmetic (SQLite's integer division truncates toward zero, as C's does; the
    products stay far below 2^63). NULL stays NULL; a `time_or_zero` column's 0 (no time) stays 0.
    Done in the SELECT so that no Python code touches a value (it was a third of a rank's conversion)."""
    shift, offset, drift, ref = (int(x) for x in a)
    t = "(%s + (%d))" % (column, shift)
    d = "(%s - (%d))" % (t, ref)
    expr = "(%s + (%d) + ((%s / 1000000) * (%d)) / 1000 + ((%s - (%s / 1000000) * 1000000) * (%d)) / 1000000000)" % (
        t, offset, d, drift, d, d, drift)
    if or_zero:
        return "CASE WHEN %s = 0 THEN 0 ELSE %s END" % (column, expr)
    return expr


class DatasetError(Exception):
    """A bad input or a bad dataset: the message names the file or partition."""


def _arrow():
    try:
        import pyarrow  # noqa: F401
        import pyarrow.parquet  # noqa: F401
    except ImportError as e:
        raise DatasetError("pyarrow is needed for the Parquet dataset (pip install pyarrow): %s" % e)
    import pyarrow
    return pyarrow


def partition_path(root, table, rank):
    return os.path.join(root, table, "rank=%d" % rank, "part-0.parquet")


# --- the column catalog (which columns are times and StringIds ids), from the gtrace CLI ----------

def find_gtrace(explicit=None):
    """The gtrace CLI: --gtrace, $GTRACE_BIN, the wheel's bundled one, or `gtrace` on PATH."""
    for c in (explicit, os.environ.get("GTRACE_BIN"),
              os.path.join(os.path.dirname(os.path.abspath(__file__)), "bin", "gtrace")):
        if c and os.access(c, os.X_OK):
            return c
    found = shutil.which("gtrace")
    if found:
        return found
    raise DatasetError("the gtrace CLI was not found: give --gtrace PATH or set GTRACE_BIN")


def load_catalog(path=None, gtrace=None):
    """{table: {"process_key": str, "columns": {name: kind}}} as `gtrace export --column-catalog` prints it."""
    if path:
        with open(path) as f:
            return json.load(f)
    out = subprocess.run([find_gtrace(gtrace), "export", "--column-catalog"], check=True,
                         stdout=subprocess.PIPE).stdout
    return json.loads(out)


def string_id_columns(catalog, table):
    rule = catalog.get(table)
    if rule is None:
        return []
    return [c for c, k in rule["columns"].items() if k == "string_id"]


def time_columns(catalog, table):
    rule = catalog.get(table)
    if rule is None:
        return []
    return [(c, k) for c, k in rule["columns"].items() if k in ("time", "time_or_zero")]


# --- reading the databases --------------------------------------------------------------------------

def _open(db):
    if not os.path.isfile(db):
        raise DatasetError("%s: no such file" % db)
    with open(db, "rb") as f:
        if f.read(16) != b"SQLite format 3\x00":
            raise DatasetError("%s is not an SQLite database" % db)
    con = sqlite3.connect("file:%s?mode=ro" % db, uri=True, factory=_Connection)
    con.execute("PRAGMA cache_size = -65536")
    return con


class _Connection(sqlite3.Connection):
    """A read-only input database (_open), which remembers its list of tables."""
    table_names = None


def _tables(con):
    """The tables of a database; an input's (_open) read once (it is asked once per table converted)."""
    if getattr(con, "table_names", None) is not None:
        return con.table_names
    names = [r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
    if isinstance(con, _Connection):
        con.table_names = names
    return names


_COLUMN_CACHE = {}


def _forget_columns(con):
    """Called before a connection closes: its id() may be reused by the next one (--rank each opens many)."""
    for key in [k for k in _COLUMN_CACHE if k[0] == id(con)]:
        del _COLUMN_CACHE[key]


def _columns(con, table):
    """(name, type) of each column: the declared type, except that a TEXT column holding blobs (nsys
    declares NVTX_EVENTS.binaryData TEXT and stores bytes there) is BLOB."""
    key = (id(con), table)
    if key not in _COLUMN_CACHE:
        cols = [(r[1], (r[2] or "").upper()) for r in con.execute("PRAGMA table_info(\"%s\")" % table)]
        texts = [i for i, (_, decl) in enumerate(cols)
                 if "INT" not in decl and "REAL" not in decl and "FLOA" not in decl and "DOUB" not in decl]
        if texts:
            # One scan for all of the table's text columns (a query each was most of a small rank's queries).
            probe = con.execute("SELECT %s FROM \"%s\"" % (", ".join(
                "max(typeof(\"%s\") = 'blob')" % cols[i][0] for i in texts), table)).fetchone()
            for i, blob in zip(texts, probe):
                if blob:
                    cols[i] = (cols[i][0], "BLOB")
        _COLUMN_CACHE[key] = cols
    return _COLUMN_CACHE[key]


def _arrow_type(pa, decl):
    if "INT" in decl:
        return pa.int64()
    if "REAL" in decl or "FLOA" in decl or "DOUB" in decl:
        return pa.float64()
    if "BLOB" in decl:
        return pa.binary()
    return pa.string()


def read_ranks(con, db):
    """[(globalPid, rank, host, alignment row)] of one database, ranks numbered as `gtrace analyze` does
    (processes without a launcher rank take the next free numbers, in row order)."""
    names = _tables(con)
    rows = []
    if "GTRACE_RANKS" in names:
        for gpid, rank, host in con.execute("SELECT globalPid, rank, hostName FROM GTRACE_RANKS ORDER BY rowid"):
            rows.append([gpid, rank, host or ""])
    elif "PROCESSES" in names:
        mpi = {}
        if "MPI_RANKS" in names:
            for tid, rank in con.execute("SELECT globalTid, rank FROM MPI_RANKS"):
                mpi[tid & PID_MASK] = rank
        for (gpid,) in con.execute("SELECT DISTINCT globalPid FROM PROCESSES ORDER BY globalPid"):
            rows.append([gpid, mpi.get(gpid), ""])
    else:
        raise DatasetError("%s: no GTRACE_RANKS or PROCESSES table: not a gtrace/nsys export" % db)
    return rows


def _session(con):
    try:
        r = con.execute("SELECT sessionId FROM GTRACE_RANKS LIMIT 1").fetchone()
        return r[0] if r else ""
    except sqlite3.Error:
        return ""


# --- writing ------------------------------------------------------------------------------------------

class _Writers:
    """The open Parquet writer of one (table, rank) at a time: rows of one process are contiguous in
    gtrace's databases; a rank met again after another is an error the caller handles (regroup).
    A partition's file is created when its first row group is written: then its row count is known
    when it is small, and a small partition is written without compression (`_file_options`)."""

    def __init__(self, pq, root, table, schema, options, tmp_suffix, filesystem=None):
        self.pq, self.root, self.table, self.schema = pq, root, table, schema
        self.options, self.suffix, self.filesystem = options, tmp_suffix, filesystem
        self.rank, self.writer, self.rows = None, None, {}
        self.path = None
        self.written = []  # final paths
        self.pending, self.pending_rows = [], 0  # batches of the row group being collected

    def write(self, rank, batch):
        if rank != self.rank:
            self.close()
            if rank in self.rows:
                return False
            self.rank, self.path = rank, partition_path(self.root, self.table, rank)
            self.rows[rank] = 0
        # Batches are collected up to a row group: each write_table call ends a group.
        self.pending.append(batch)
        self.pending_rows += batch.num_rows
        if self.pending_rows >= self.options_rg:
            self._write_group(last=False)
        self.rows[rank] += batch.num_rows
        return True

    def _write_group(self, last):
        if self.writer is None:
            os.makedirs(os.path.dirname(self.path), exist_ok=True)
            self.writer = self.pq.ParquetWriter(self.path + self.suffix, self.schema, filesystem=self.filesystem,
                                                **_file_options(self.options, self.pending_rows if last else None))
        if self.pending:
            import pyarrow as pa
            self.writer.write_table(pa.concat_tables(self.pending), row_group_size=self.options_rg)
        self.pending, self.pending_rows = [], 0

    def close(self):
        if self.rank is not None:
            self._write_group(last=True)  # a rank met with no rows still gets its (empty) file
            self.writer.close()
            os.replace(self.path + self.suffix, self.path)
            self.written.append(self.path)
        self.writer, self.rank = None, None

    def abandon(self):
        self.pending, self.pending_rows = [], 0
        if self.writer is not None:
            self.writer.close()
            os.remove(self.path + self.suffix)
        for p in self.written:
            os.remove(p)
        self.writer, self.rank, self.rows, self.written = None, None, {}, []


def _file_options(options, rows):
    """The writer options of one file of `rows` rows (None: not known yet, the file has a full row group
    at least). Below SMALL_FILE_ROWS rows the file is not compressed: zstd's frame and its set-up per
    column chunk cost more than they save there (a 1-row file is smaller uncompressed), and most of a
    small rank's conversion was that set-up (bench/results/2026-11-26-parquet-scale-10000-analysis.md)."""
    if rows is not None and rows < SMALL_FILE_ROWS and options.get("compression"):
        return dict(options, compression=None)
    return options


class Converter:
    def __init__(self, out, catalog, compression="zstd", row_group_rows=1 << 20, rank=None, force=False,
                 alignment=None):
        self.pa = _arrow()
        import pyarrow.parquet as pq
        self.pq = pq
        self.out, self.catalog = out, catalog
        self.compression, self.row_group_rows = compression, row_group_rows
        self.only_rank, self.force = rank, force
        self.alignment = alignment or {}  # rank -> (shift_ns, offset_ns, drift_ppb, ref_ns)
        self.manifests = {}  # rank -> manifest dict
        # Temporary names: ranks on several hosts share the directory (and may share a pid).
        self.suffix = ".tmp-%d%s" % (os.getpid(), "" if rank is None else "-r%d" % rank)
        self.session_override = None
        self.warnings = []
        self.started = False  # output created or partitions written: discard() on failure
        self.open_writers = []

    def _schema(self, con, table, rank_key):
        pa = self.pa
        fields = []
        for name, decl in _columns(con, table):
            if name == "rank" and table in LAUNCHER_RANK_TABLES:
                continue
            fields.append(pa.field(RENAMED.get(name, name) if name == "rank" else name, _arrow_type(pa, decl)))
        if rank_key and "host" not in [f.name for f in fields]:
            fields.append(pa.field("host", pa.string()))
        for c in string_id_columns(self.catalog, table):
            if c in [n for n, _ in _columns(con, table)]:
                fields.append(pa.field(c + "Value", pa.string()))
        return pa.schema(fields)

    def _select(self, con, table, order_by_process, process_expr, align=False):
        """align: the rank's clock correction on the time columns (per-rank tables only; _meta tables
        are copied as the database has them, as before)."""
        cols = [n for n, _ in _columns(con, table)]
        a = self.alignment.get(self.only_rank) if align and self.only_rank is not None else None
        kinds = dict(time_columns(self.catalog, table)) if a is not None else {}
        sel = []
        for c in cols:
            if c == "rank" and table in LAUNCHER_RANK_TABLES:
                continue
            q = "t.\"%s\"" % c
            sel.append(corrected_sql(q, a, kinds[c] == "time_or_zero") if c in kinds else q)
        joins = []
        for i, c in enumerate(string_id_columns(self.catalog, table)):
            if c in cols:
                sel.append("s%d.value" % i)
                joins.append(" LEFT JOIN StringIds s%d ON s%d.id = t.\"%s\"" % (i, i, c))
        if process_expr:
            sel.insert(0, process_expr)
        has_strings = "StringIds" in _tables(con)
        sql = "SELECT %s FROM \"%s\" t%s" % (", ".join(sel), table, "".join(joins) if has_strings else "")
        if not has_strings and joins:
            raise DatasetError("table %s names strings but the database has no StringIds" % table)
        if order_by_process:
            sql += " ORDER BY 1"
        return sql

    def convert(self, dbs):
        if not dbs:
            raise DatasetError("no database given")
        session = None
        sources = []
        gpid_rank = {}
        for db in dbs:
            con = _open(db)
            ranks = read_ranks(con, db)
            s = _session(con)
            if session is None:
                session = s
            elif s != session or not s:
                raise DatasetError("%s and %s were exported separately (different sessions): merge them first "
                                   "(gtrace export -o merged.sqlite ...) or convert each with --rank" % (dbs[0], db))
            sources.append((db, con, ranks))
        # Launcher ranks; processes without one take the next free numbers (as gtrace analyze does).
        allr = [r for _, _, rs in sources for r in rs]
        nxt = max([r[1] + 1 for r in allr if r[1] is not None] + [0])
        for r in allr:
            if r[1] is None:
                r[1] = nxt
                nxt += 1
        for r in allr:
            if r[0] in gpid_rank:
                raise DatasetError("process %d is in two inputs" % ((r[0] >> 24) & 0xffffff))
            gpid_rank[r[0]] = (r[1], r[2])
        if self.only_rank is not None:
            if len(allr) != 1:
                raise DatasetError("--rank: the input must hold exactly one process (it holds %d)" % len(allr))
            gpid_rank = {allr[0][0]: (self.only_rank, allr[0][2])}
        self._prepare_output([r for r, _ in gpid_rank.values()])
        for rank, host in gpid_rank.values():
            self.manifests[rank] = {"version": DATASET_VERSION, "rank": rank, "host": host,
                                    "session": self.session_override or session,
                                    "compression": self.compression, "tables": {}}
        for si, (db, con, ranks) in enumerate(sources):
            source = "rank=%d" % self.only_rank if self.only_rank is not None else \
                ("session" if len(sources) == 1 else "db%d" % si)
            for table in _tables(con):
                cols = [n for n, _ in _columns(con, table)]
                if table in NOT_PER_RANK:
                    self._meta_table(con, table, source)
                elif "globalPid" in cols:
                    self._rank_table(con, table, "t.globalPid", gpid_rank)
                elif "globalTid" in cols:
                    self._rank_table(con, table, "t.globalTid & %d" % PID_MASK, gpid_rank)
                elif self.only_rank is not None and table.startswith(SHARED_META_PREFIX):
                    self._shared_meta_table(con, table)
                else:
                    self._meta_table(con, table, source)
            _forget_columns(con)
            con.close()
        for rank, m in self.manifests.items():
            path = os.path.join(self.out, "_ranks", "rank=%d.json" % rank)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path + self.suffix, "w") as f:
                json.dump(m, f, indent=1, sort_keys=True)
            os.replace(path + self.suffix, path)
        return sorted(self.manifests)

    def discard(self):
        """After a failure: remove what this conversion wrote (the whole new dataset; in per-rank mode
        this rank's partitions and manifest only)."""
        for w in self.open_writers:
            try:
                w.abandon()
            except OSError:
                pass
        if not self.started:
            return
        if self.only_rank is None:
            shutil.rmtree(self.out, ignore_errors=True)
            return
        for table in os.listdir(self.out):
            d = os.path.join(self.out, table, "rank=%d" % self.only_rank)
            if os.path.isdir(d):
                shutil.rmtree(d, ignore_errors=True)
        meta = os.path.join(self.out, "_meta", "rank=%d" % self.only_rank)
        shutil.rmtree(meta, ignore_errors=True)
        try:
            os.remove(os.path.join(self.out, "_ranks", "rank=%d.json" % self.only_rank))
        except OSError:
            pass

    def _prepare_output(self, ranks):
        if self.only_rank is None:
            if os.path.exists(self.out):
                if not self.force:
                    raise DatasetError("%s exists (use --force-overwrite to replace it)" % self.out)
                if not os.path.isfile(os.path.join(self.out, "_ranks", "")) and \
                        not os.path.isdir(os.path.join(self.out, "_ranks")) and os.listdir(self.out):
                    raise DatasetError("%s exists and is not a gtrace Parquet dataset: not replaced" % self.out)
                shutil.rmtree(self.out)
            os.makedirs(self.out)
            self.started = True
        else:
            os.makedirs(self.out, exist_ok=True)
            m = os.path.join(self.out, "_ranks", "rank=%d.json" % self.only_rank)
            if os.path.exists(m) and not self.force:
                raise DatasetError("%s: rank %d is already converted (use --force-overwrite to replace it)"
                                   % (self.out, self.only_rank))
            self.started = True

    def _options(self):
        # store_schema=False: no serialized Arrow schema (ARROW:schema, base64, in every footer: 40% of a
        # small rank's bytes); every column is int64, float64, string or binary, which a reader gets back
        # from the Parquet types alone, so the columns read back are the same (parquet.layout checks it).
        return {"compression": self.compression, "use_dictionary": True, "write_statistics": True,
                "store_schema": False}

    def _rank_table(self, con, table, process_expr, gpid_rank):
        """One table of the database -> its partitions. Rows arrive in the database's order; each fetched
        batch is cut into runs of one process by itertools.groupby and turned into Arrow columns by
        zip(*rows), so no Python statement runs per row (the row loop was the conversion's cost)."""
        pa = self.pa
        schema = self._schema(con, table, True)
        names = schema.names
        host_at = names.index("host")
        types = [schema.field(i).type for i in range(len(names))]
        process_of = operator.itemgetter(0)
        for order in (False, True):
            w = _Writers(self.pq, self.out, table, schema, self._options(), self.suffix, _local_fs())
            w.options_rg = self.row_group_rows
            self.open_writers = [w]
            regrouped = False
            cur = con.execute(self._select(con, table, order, process_expr, align=True))
            skipped = 0
            while not regrouped:
                rows = cur.fetchmany(BATCH_ROWS)
                if not rows:
                    break
                for g, run in itertools.groupby(rows, process_of):
                    if g not in gpid_rank:
                        skipped += sum(1 for _ in run)  # a process that is no rank (an untraced ancestor)
                        continue
                    rank, host = gpid_rank[g]
                    block = list(run)
                    cols = list(zip(*block))  # cols[0]: the process
                    arrays, ci = [], 1
                    for i, ty in enumerate(types):
                        if i == host_at:
                            arrays.append(pa.array([host] * len(block), type=ty))
                        else:
                            arrays.append(pa.array(cols[ci], type=ty))
                            ci += 1
                    if not w.write(rank, pa.Table.from_arrays(arrays, schema=schema)):
                        regrouped = True
                        break
            if regrouped:
                w.abandon()
                continue  # read again sorted by process
            w.close()
            self.open_writers = []
            break
        for rank, n in w.rows.items():
            self.manifests[rank]["tables"][table] = n
        if skipped:
            self.warnings.append("%s: %d row(s) of processes that are not ranks left out" % (table, skipped))

    def _shared_meta_table(self, con, table):
        """An ENUM_* table when ranks are converted alone: written by the first rank that finds it absent.
        Ranks converting at once in the job may both write it: each writes its own temporary file and
        renames it, so a reader sees one complete file either way (their contents are equal)."""
        if not os.path.isfile(os.path.join(self.out, "_meta", SHARED_META_SOURCE, table + ".parquet")):
            self._meta_table(con, table, SHARED_META_SOURCE)

    def _meta_table(self, con, table, source):
        pa = self.pa
        schema = self._schema(con, table, False)
        cur = con.execute(self._select(con, table, False, None))
        path = os.path.join(self.out, "_meta", source, table + ".parquet")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        rows = cur.fetchmany(BATCH_ROWS)
        # One batch that is all of the table: its size is known before the file is made (_file_options).
        known = len(rows) if len(rows) < BATCH_ROWS else None
        writer = self.pq.ParquetWriter(path + self.suffix, schema, filesystem=_local_fs(),
                                       **_file_options(self._options(), known))
        while rows:
            cols = list(zip(*rows))
            arrays = [pa.array(list(cols[i]), type=schema.field(i).type) for i in range(len(schema))]
            writer.write_table(pa.Table.from_arrays(arrays, schema=schema), row_group_size=self.row_group_rows)
            rows = cur.fetchmany(BATCH_ROWS) if known is None else None
        writer.close()
        os.replace(path + self.suffix, path)


_LOCAL_FS = []


def _local_fs():
    """One pyarrow LocalFileSystem for every file of the process (a --rank each batch writes 26 per rank):
    pyarrow otherwise resolves each path to a new one."""
    if not _LOCAL_FS:
        import pyarrow.fs
        _LOCAL_FS.append(pyarrow.fs.LocalFileSystem())
    return _LOCAL_FS[0]


# --- checking a dataset -----------------------------------------------------------------------------------

def load_manifests(root):
    """{rank: manifest}; raises DatasetError naming what is missing or unreadable."""
    if not os.path.isdir(root):
        raise DatasetError("%s: no such directory" % root)
    d = os.path.join(root, "_ranks")
    if not os.path.isdir(d):
        raise DatasetError("%s is not a gtrace Parquet dataset (no _ranks/ directory)" % root)
    out = {}
    for name in sorted(os.listdir(d)):
        if not (name.startswith("rank=") and name.endswith(".json")):
            continue
        path = os.path.join(d, name)
        try:
            with open(path) as f:
                m = json.load(f)
            out[int(m["rank"])] = m
        except (OSError, ValueError, KeyError) as e:
            raise DatasetError("%s: unreadable rank manifest (%s)" % (path, e))
    if not out:
        raise DatasetError("%s: no ranks in the dataset (_ranks/ is empty)" % root)
    return out


def check_dataset(root, tables=None, world_size=None):
    """Every partition the manifests promise exists and is a readable Parquet file with the promised
    row count (footers only: cheap). `tables`: only these. Returns the manifests."""
    _arrow()
    import pyarrow.parquet as pq
    manifests = load_manifests(root)
    ranks = sorted(manifests)
    expect = world_size if world_size is not None else len(ranks)
    missing = [r for r in range(expect) if r not in manifests]
    if missing and world_size is not None:
        raise DatasetError("%s: rank(s) %s missing (no _ranks/rank=N.json): not converted, or conversion failed"
                           % (root, ", ".join(str(r) for r in missing[:20])))
    sessions = {m.get("session") for m in manifests.values()}
    if len(sessions) > 1:
        raise DatasetError("%s: ranks from different export sessions (not on one time line)" % root)
    for r in ranks:
        for table, n in sorted(manifests[r]["tables"].items()):
            if tables is not None and table not in tables:
                continue
            path = partition_path(root, table, r)
            if not os.path.isfile(path):
                raise DatasetError("%s: missing partition (rank %d, table %s: %d rows expected)" % (path, r, table, n))
            try:
                got = pq.read_metadata(path).num_rows
            except Exception as e:  # pyarrow raises several types for a damaged file
                raise DatasetError("%s: corrupt partition (rank %d, table %s): %s" % (path, r, table, e))
            if got != n:
                raise DatasetError("%s: partition has %d rows, the manifest says %d (rank %d, table %s)"
                                   % (path, got, n, r, table))
    return manifests


# --- command line -------------------------------------------------------------------------------------------

_ALIGN_COLUMNS = "clockOffsetNs, alignOffsetNs, alignDriftPpb, alignRefNs, sessionId"


def alignment_rows(path):
    """{launcher rank: (clockOffsetNs, alignOffsetNs, alignDriftPpb, alignRefNs, sessionId)} of GTRACE_RANKS
    in a merge of the ranks' summaries (`gtrace export -o align.sqlite summaries/*.sqlite`); read once,
    however many ranks are converted against it (the first row of a rank, in row order)."""
    con = _open(path)
    try:
        rows = {}
        for r in con.execute("SELECT rank, %s FROM GTRACE_RANKS ORDER BY rowid" % _ALIGN_COLUMNS):
            rows.setdefault(r[0], tuple(r[1:]))
    except sqlite3.Error as e:
        raise DatasetError("%s: not a merge of summaries (%s)" % (path, e))
    finally:
        con.close()
    return rows


def _own_clock(rank_db):
    """(launcher rank, clockOffsetNs) of a database exported from one rank's stream."""
    own = _open(rank_db)
    try:
        row = own.execute("SELECT rank, clockOffsetNs FROM GTRACE_RANKS").fetchone()
    except sqlite3.Error:
        row = None
    finally:
        own.close()
    if row is None:
        raise DatasetError("%s: no GTRACE_RANKS row: not a gtrace database of one rank" % rank_db)
    return row


def rank_alignment(rows, path, rank_db):
    """The in-job recipe: this rank's correction from the merged summaries' rows (alignment_rows); the
    shift re-bases its own session onto the merge's. Returns (the merge's session, (shift, offset,
    drift, ref)), looked up by the database's own launcher rank."""
    own_rank, own_off = _own_clock(rank_db)
    row = rows.get(own_rank)
    if row is None:
        raise DatasetError("%s: rank %s is not in the alignment database" % (path, own_rank))
    return row[4], (row[0] - own_off, row[1] or 0, row[2] or 0, row[3] or 0)


def _alignment_from(path, rank_db):
    return rank_alignment(alignment_rows(path), path, rank_db)


def convert_each(inputs, out, catalog, alignment=None, compression="zstd", row_group_rows=1 << 20, force=False,
                 log=sys.stderr):
    """--rank each: every input is one rank's database, exported alone (its own session, as in the job);
    its launcher rank names its partitions, and with `alignment` (the merged summaries) its times get
    that rank's correction -- exactly what `convert --rank R --alignment A` does for each, in one process,
    so that Python's and pyarrow's start (most of a small rank's conversion) is paid once per batch.
    A rank that fails is discarded (its partitions only) and named; the others are kept.
    Returns (converted ranks, [failure lines])."""
    rows = alignment_rows(alignment) if alignment else None
    done, failed = [], []
    for db in inputs:
        conv = None
        try:
            con = _open(db)
            try:
                procs = read_ranks(con, db)
            finally:
                con.close()
            if len(procs) != 1:
                raise DatasetError("%s: --rank each: the input must hold exactly one process (it holds %d)"
                                   % (db, len(procs)))
            rank = procs[0][1]
            if rank is None:
                raise DatasetError("%s: no launcher rank in the database: convert it with --rank R" % db)
            corr, session = None, None
            if rows is not None:
                session, corr = rank_alignment(rows, alignment, db)
            conv = Converter(out, catalog, compression=compression, row_group_rows=row_group_rows, rank=rank,
                             force=force, alignment={rank: corr} if corr else None)
            if corr:
                conv.session_override = session
            conv.convert([db])
            for w in conv.warnings:
                log.write("gtrace: warning: %s: %s\n" % (db, w))
            done.append(rank)
        except Exception as e:  # one rank's failure must not lose the others'
            if conv is not None and conv.started:
                conv.discard()
            msg = str(e) if isinstance(e, DatasetError) else "%s: %s: %s" % (db, type(e).__name__, e)
            failed.append(msg if db in msg else "%s: %s" % (db, msg))
    return done, failed


# Tables a summary keeps whole: what a merge needs to place and align a rank (GTRACE_RANKS: its clock
# pair and offset; GTRACE_NCCL_OPERATIONS: its collective ends, the anchors) and the small
# per-process tables; every other table keeps its schema and loses its rows.
SUMMARY_EMPTIED_PREFIXES = ("CUPTI_ACTIVITY_KIND_", "NVTX_EVENTS", "GTRACE_NCCL_EVENTS", "GTRACE_NCCL_EVENT_STATES",
                            "GPU_METRICS", "CUDA_GPU_MEMORY_", "CUDA_GRAPH_EVENTS", "CUDA_CALLCHAINS",
                            "GTRACE_RANGE_METRICS", "DIAGNOSTIC_EVENT", "PROFILER_OVERHEAD", "OSRT_", "SCHED_")


def write_summary(db, out, force=False):
    """A small copy of one rank's database for the clock alignment: its collectives and process
    tables only (kilobytes where the database has gigabytes)."""
    src = _open(db)
    if os.path.exists(out) and not force:
        raise DatasetError("%s exists (use --force-overwrite to replace it)" % out)
    tmp = out + ".tmp-%d" % os.getpid()
    dst = sqlite3.connect(tmp)
    src.backup(dst)
    src.close()
    for t in _tables(dst):
        if t.startswith(SUMMARY_EMPTIED_PREFIXES):
            dst.execute('DELETE FROM "%s"' % t)
    if "GTRACE_NCCL_OPERATIONS" in _tables(dst):
        dst.execute("DELETE FROM GTRACE_NCCL_OPERATIONS WHERE kind IS NOT 'Coll'")
    dst.commit()
    dst.execute("VACUUM")
    dst.close()
    os.replace(tmp, out)


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m gtrace.parquet", description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("convert", help="SQLite export(s) of one session -> Parquet dataset")
    c.add_argument("-o", "--output", required=True)
    c.add_argument("--rank", type=int, help="per-rank mode: the input holds one process; write only its partitions "
                   "into DIR (which may already hold other ranks')")
    c.add_argument("--each-rank", action="store_true", help="every input is one rank's database, exported alone "
                   "(as in the job): each is converted as --rank <its launcher rank> would, all in this process")
    c.add_argument("--alignment", help="with --rank or --each-rank: a merge of the ranks' summaries, whose clock "
                   "correction each rank's times get (scripts/slurm-parquet.sh)")
    c.add_argument("--compression", default="zstd", choices=["zstd", "snappy", "gzip", "lz4", "none"])
    c.add_argument("--row-group-rows", type=int, default=1 << 20)
    c.add_argument("--catalog", help="column catalog JSON (default: asks `gtrace export --column-catalog`)")
    c.add_argument("--gtrace", help="the gtrace CLI (for the catalog)")
    c.add_argument("-f", "--force-overwrite", action="store_true")
    c.add_argument("inputs", nargs="+")
    m = sub.add_parser("summary", help="one rank's database -> its small summary for the clock alignment")
    m.add_argument("-o", "--output", help="the summary of the one database")
    m.add_argument("-d", "--output-dir", help="several databases: each one's summary as DIR/<its file name>")
    m.add_argument("-f", "--force-overwrite", action="store_true")
    m.add_argument("database", nargs="+")
    k = sub.add_parser("check", help="every partition present and readable, row counts as promised")
    k.add_argument("dataset")
    k.add_argument("--world-size", type=int, help="ranks 0..N-1 must all be there")
    a = ap.parse_args(argv)
    try:
        if a.cmd == "summary":
            if (a.output is None) == (a.output_dir is None) or (a.output and len(a.database) != 1):
                raise DatasetError("summary: give -o OUT for one database, or -d DIR for one or more")
            if a.output_dir:
                os.makedirs(a.output_dir, exist_ok=True)
            for db in a.database:
                out = a.output or os.path.join(a.output_dir, os.path.basename(db))
                write_summary(db, out, a.force_overwrite)
                if a.output:
                    sys.stderr.write("gtrace: wrote %s (summary of %s, %d bytes)\n" % (out, db, os.path.getsize(out)))
            if a.output_dir:
                sys.stderr.write("gtrace: wrote %d summaries into %s\n" % (len(a.database), a.output_dir))
            return 0
        if a.cmd == "check":
            m = check_dataset(a.dataset, world_size=a.world_size)
            rows = sum(sum(x["tables"].values()) for x in m.values())
            print("gtrace: %s: %d ranks, %d rows, every partition readable" % (a.dataset, len(m), rows))
            return 0
        catalog = load_catalog(a.catalog, a.gtrace)
        if a.each_rank:
            if a.rank is not None:
                raise DatasetError("--each-rank and --rank exclude each other")
            done, failed = convert_each(a.inputs, a.output, catalog, a.alignment,
                                        None if a.compression == "none" else a.compression, a.row_group_rows,
                                        a.force_overwrite)
            for f in failed:
                sys.stderr.write("gtrace: %s\n" % f)
            sys.stderr.write("gtrace: wrote %s (Parquet, %d of %d rank(s) converted one by one%s)\n" % (
                a.output, len(done), len(a.inputs), "; %d failed, named above" % len(failed)
                if failed else ""))
            return 1 if failed else 0
        alignment = None
        if a.alignment:
            if a.rank is None or len(a.inputs) != 1:
                raise DatasetError("--alignment needs --rank and one database")
            session, corr = _alignment_from(a.alignment, a.inputs[0])
            alignment = {a.rank: corr}
        conv = Converter(a.output, catalog, compression=None if a.compression == "none" else a.compression,
                         row_group_rows=a.row_group_rows, rank=a.rank, force=a.force_overwrite, alignment=alignment)
        if alignment:
            conv.session_override = session  # on the merged summaries' time line: their session
        try:
            ranks = conv.convert(a.inputs)
        except Exception as e:
            if isinstance(e, DatasetError) and not conv.started:
                raise
            conv.discard()
            raise DatasetError("conversion to %s failed, nothing of it kept: %s: %s" % (a.output, type(e).__name__, e))
        for w in conv.warnings:
            sys.stderr.write("gtrace: warning: %s\n" % w)
        sys.stderr.write("gtrace: wrote %s (Parquet, %d rank%s%s)\n" % (
            a.output, len(ranks), "" if len(ranks) == 1 else "s", ", rank %d" % a.rank if a.rank is not None else ""))
        return 0
    except DatasetError as e:
        sys.stderr.write("gtrace: %s\n" % e)
        return 1


if __name__ == "__main__":
    sys.exit(main())
