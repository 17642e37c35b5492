#!/usr/bin/env bash
# The fixed cost of one small rank's Parquet conversion (issue 19, part 1): RANKS small simulated ranks
# (the 10,000-rank run's events per rank: STEPS=5 KERNELS=10, 515 records), each exported alone, then
# converted in one `--rank each` batch (python -m gtrace.parquet convert --each-rank, the catalog given,
# so the gtrace CLI's start is not in it) by the code of BEFORE (git revision, python/ only) and by this
# checkout, alternated REPEATS times: CPU seconds (user+sys) per rank, and bytes per rank by table.
#
#   bash bench/multi_rank/parquet_fixed.sh          (RANKS=200 REPEATS=3 BEFORE=7446466; BUILD_DIR=build)
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
BUILD=${BUILD_DIR:-build}
PY=${PYTHON:-$BUILD/parquet-venv/bin/python}
RANKS=${RANKS:-200}; STEPS=${STEPS:-5}; KERNELS=${KERNELS:-10}; REPEATS=${REPEATS:-3}; BEFORE=${BEFORE:-7446466}
work=$(mktemp -d /tmp/gtrace-parquet-fixed-XXXXXX)
trap 'rm -rf "$work"' EXIT
"$BUILD/bin/sim_ranks" "$work/streams" --ranks "$RANKS" --per-host 8 --steps "$STEPS" --kernels "$KERNELS" \
  --buckets 8 --cuda-api --straggler 37 --straggler-delay-us 2000 --imbalance 0.1 --offset-us 3000 --drift-ppm 5 \
  > "$work/sim.out"
records=$(sed -n 's/.* records=\([0-9]*\).*/\1/p' "$work/sim.out")
"$BUILD/bin/gtrace" export --per-rank -o "$work/dbs" "$work/streams" 2>/dev/null
"$BUILD/bin/gtrace" export --column-catalog > "$work/catalog.json"
mkdir -p "$work/before"
git archive "$BEFORE" python | tar -x -C "$work/before"
conv() {  # conv NAME PYTHONPATH: one timed batch -> $work/NAME.t (CPU s), dataset $work/ds-NAME
  rm -rf "$work/ds-$1"
  PYTHONPATH=$2 /usr/bin/time -f "%U %S %e" -o "$work/$1.one" "$PY" -m gtrace.parquet convert --each-rank \
    --catalog "$work/catalog.json" -o "$work/ds-$1" "$work"/dbs/*.sqlite 2>/dev/null
  awk '{printf "%.2f %.2f\n", $1 + $2, $3}' "$work/$1.one" >> "$work/$1.t"
}
for i in $(seq "$REPEATS"); do
  if [ $((i % 2)) = 1 ]; then conv before "$work/before/python"; conv after "$ROOT/python"
  else conv after "$ROOT/python"; conv before "$work/before/python"; fi
done
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
cb=$(cut -d' ' -f1 "$work/before.t" | median); ca=$(cut -d' ' -f1 "$work/after.t" | median)
echo "# $RANKS ranks, $records records ($((records / RANKS)) per rank); load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "before ($BEFORE): CPU s per batch $(tr '\n' ' ' < "$work/before.t" | sed 's/ $//') (cpu wall pairs)"
echo "after: CPU s per batch $(tr '\n' ' ' < "$work/after.t" | sed 's/ $//')"
awk -v b="$cb" -v a="$ca" -v n="$RANKS" 'BEGIN {printf "median CPU ms per rank: before %.1f, after %.1f, ratio %.2f\n", 1000*b/n, 1000*a/n, b/a}'
# The data are the same: every table of every file read back equal (schema and rows).
PYTHONPATH=$ROOT/python "$PY" - "$work/ds-before" "$work/ds-after" "$RANKS" <<'PYEOF'
import glob, os, sys
import pyarrow.parquet as pq
b, a, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
fb = sorted(os.path.relpath(f, b) for f in glob.glob(b + "/**/*.parquet", recursive=True))
fa = sorted(os.path.relpath(f, a) for f in glob.glob(a + "/**/*.parquet", recursive=True))
assert fb == fa, "different files"
by = {}
for f in fb:
    x, y = pq.read_table(os.path.join(b, f), partitioning=None), pq.read_table(os.path.join(a, f), partitioning=None)
    assert x.schema == y.schema and x.equals(y), f
    parts = f.split("/")
    key = parts[0] if parts[0] != "_meta" else ("_meta/" + parts[2][:-8] if parts[1] != "enums" else "_meta/enums")
    s = by.setdefault(key, [0, 0, 0])
    s[0] += os.path.getsize(os.path.join(b, f)); s[1] += os.path.getsize(os.path.join(a, f)); s[2] += 1
print("every file read back equal (%d files, schemas and rows)" % len(fb))
print("| table | files | bytes per rank before | after |")
print("|---|---|---|---|")
tb = ta = 0
for k in sorted(by):
    s = by[k]; tb += s[0]; ta += s[1]
    print("| %s | %d | %.0f | %.0f |" % (k, s[2], s[0] / n, s[1] / n))
print("| all files | %d | %.0f | %.0f |" % (len(fb), tb / n, ta / n))
PYEOF
