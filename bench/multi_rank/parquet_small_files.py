"""Where a small rank's Parquet write time goes: pyarrow alone rewriting one rank's 26 tables (read
from a converted dataset) with the converter's writer options, compression everywhere against files
under SMALL rows uncompressed, with and without the Arrow schema in the footer; alternated, CPU ms
per rank (all 26 files) and bytes. Diagnostic for bench/results/2026-11-26-parquet-scale-10000-analysis.md.

    python bench/multi_rank/parquet_small_files.py DATASET [RANK] [REPS]
"""
import glob
import os
import resource
import sys
import tempfile

import pyarrow.parquet as pq

root = sys.argv[1]
rank = int(sys.argv[2]) if len(sys.argv) > 2 else 0
reps = int(sys.argv[3]) if len(sys.argv) > 3 else 10
SMALL = 32
files = sorted(glob.glob("%s/[A-Z]*/rank=%d/*.parquet" % (root, rank))) + \
    sorted(glob.glob("%s/_meta/rank=%d/*.parquet" % (root, rank)))
tables = []
for f in files:
    t = pq.read_table(f, partitioning=None)
    tables.append(t.drop_columns(["rank"]) if "rank" in t.column_names else t)


def cpu_s():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def write(t, path, small_uncompressed, store_schema):
    codec = None if small_uncompressed and t.num_rows < SMALL else "zstd"
    w = pq.ParquetWriter(path, t.schema, compression=codec, use_dictionary=True, write_statistics=True,
                         store_schema=store_schema)
    w.write_table(t, row_group_size=1 << 20)
    w.close()
    return os.path.getsize(path)


variants = [("zstd everywhere, Arrow schema (before)", False, True),
            ("zstd everywhere, no Arrow schema", False, False),
            ("under %d rows uncompressed, Arrow schema" % SMALL, True, True),
            ("under %d rows uncompressed, no Arrow schema (after)" % SMALL, True, False)]
out = tempfile.mkdtemp()
res = {v[0]: [] for v in variants}
size = {}
for rep in range(reps):
    for name, small, schema in (variants if rep % 2 == 0 else variants[::-1]):
        t0 = cpu_s()
        size[name] = sum(write(t, os.path.join(out, "%d.parquet" % i), small, schema) for i, t in enumerate(tables))
        res[name].append((cpu_s() - t0) * 1000)
for name, _, _ in variants:
    v = sorted(res[name])
    print("| %s | %.1f | %d |" % (name, v[len(v) // 2], size[name]))
print("(%d files of rank %d, %d rows; median of %d, alternated)" % (len(tables), rank, sum(t.num_rows for t in tables), reps))
