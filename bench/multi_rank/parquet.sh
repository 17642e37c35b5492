#!/usr/bin/env bash
# The Parquet dataset at many ranks, CPU only (docs/multi-rank.md, "Columnar dataset"): the rank
# simulator's RANKS streams -> merged database -> Parquet (zstd and snappy: bytes per kernel against
# the database's); the in-job route on a sample of ranks (per-rank export, summary, conversion with
# the alignment: seconds and bytes per rank); then the analysis: `gtrace analyze` of the database and
# `--engine duckdb` of the dataset alternated REPEATS times (wall seconds and peak RSS from
# /usr/bin/time, medians), one Dask LocalCluster run (WORKERS workers), every output compared.
#   bash bench/multi_rank/parquet.sh                  (1000 ranks; BUILD_DIR=build, PYTHON=build/parquet-venv/bin/python)
#   RANKS=100 REPEATS=1 bash bench/multi_rank/parquet.sh
#   STEPS=10 KERNELS=20 RANKS=10000 ...: many ranks, fewer events each
#   WORK=DIR KEEP=1 ...: scratch directory (about 3 GB for 1000 ranks), kept afterwards; OUT=FILE: results file
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
BUILD=${BUILD_DIR:-build}
PY=${PYTHON:-$BUILD/parquet-venv/bin/python}
RANKS=${RANKS:-1000}; PER_HOST=${PER_HOST:-8}; STEPS=${STEPS:-50}; KERNELS=${KERNELS:-100}; BUCKETS=${BUCKETS:-8}
REPEATS=${REPEATS:-3}; SAMPLE=${SAMPLE:-24}; WORKERS=${WORKERS:-2}
CODECS=${CODECS:-zstd snappy}; RG64K=${RG64K:-0}  # RG64K=1: also zstd with 64 Ki-row groups (big ranks)
G=$ROOT/$BUILD/bin/gtrace
export GTRACE_PYTHON=$ROOT/$PY PYTHONPATH=$ROOT/python
work=${WORK:-$(mktemp -d /tmp/gtrace-parquet-bench-XXXXXX)}
mkdir -p "$work"
trap '[ -z "${KEEP:-}" ] && rm -rf "$work"' EXIT
trap 'echo "== failed (line $LINENO): see $work/*.err"; tail -5 "$work"/*.err 2>/dev/null' ERR
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
timed() { local n=$1; shift; /usr/bin/time -f "%e %M" -o "$work/$n.one" "$@" >"$work/$n.out" 2>"$work/$n.err"; cat "$work/$n.one" >> "$work/$n.t"; }
secs() { cut -d' ' -f1 "$work/$1.t" | median; }
mib() { cut -d' ' -f2 "$work/$1.t" | median | awk '{printf "%.0f", $1 / 1024}'; }
bytes() { du -sb "$1" | cut -f1; }

echo "== simulate $RANKS ranks"
"$BUILD/bin/sim_ranks" "$work/streams" --ranks "$RANKS" --per-host "$PER_HOST" --steps "$STEPS" --kernels "$KERNELS" \
  --buckets "$BUCKETS" --cuda-api --straggler 37 --straggler-delay-us 2000 --imbalance 0.1 --offset-us 3000 \
  --drift-ppm 5 | tee "$work/truth.txt"
records=$(sed -n 's/.* records=\([0-9]*\).*/\1/p' "$work/truth.txt")
echo "== export the merged database"
timed export "$G" export -o "$work/merged.sqlite" "$work/streams"
kernels=$(sqlite3 "$work/merged.sqlite" "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL")
db_bytes=$(bytes "$work/merged.sqlite")
# The KERNEL table's own pages (b-tree, no index on it), from SQLite's dbstat.
k_db_bytes=$("$PY" -c "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); print(c.execute(\"SELECT sum(pgsize) FROM dbstat WHERE name='CUPTI_ACTIVITY_KIND_KERNEL'\").fetchone()[0])" "$work/merged.sqlite")
"$G" export --column-catalog > "$work/catalog.json"

echo "== convert: $CODECS (1 Mi-row groups)$([ "$RG64K" = 1 ] && echo ", zstd with 64 Ki-row groups")"
for c in $CODECS; do
  timed "convert_$c" "$G" export --type parquet --compression "$c" -o "$work/ds_$c" "$work/merged.sqlite"
done
[ "$RG64K" = 1 ] && timed convert_zstd_rg64k "$G" export --type parquet --row-group-rows 65536 -o "$work/ds_rg64k" "$work/merged.sqlite"
files=$(find "$work/ds_zstd" -name '*.parquet' | wc -l)

echo "== in the job: $SAMPLE ranks, each alone (export its stream, summary, conversion with the alignment)"
mkdir -p "$work/local" "$work/sums"
for i in $(seq 0 $((SAMPLE - 1))); do
  r=$(( i * RANKS / SAMPLE ))
  timed rank_export "$G" export -o "$work/local/rank-$r.sqlite" "$work/streams/rank-$r.gtrace"
  timed rank_summary "$PY" -m gtrace.parquet summary -o "$work/sums/rank-$r.sqlite" "$work/local/rank-$r.sqlite"
done
timed align "$G" export -o "$work/align.sqlite" "$work"/sums/*.sqlite
for r in $(ls "$work/local" | sed 's/rank-\([0-9]*\).sqlite/\1/'); do
  timed rank_convert "$PY" -m gtrace.parquet convert --catalog "$work/catalog.json" --rank "$r" \
    --alignment "$work/align.sqlite" -o "$work/injob" "$work/local/rank-$r.sqlite"
done
rank_db=$(( $(bytes "$work/local") / SAMPLE )); rank_sum=$(( $(bytes "$work/sums") / SAMPLE ))
rank_pq=$(( $(bytes "$work/injob") / SAMPLE ))

echo "== analyze: native on the database / duckdb on the dataset, alternated, $REPEATS times"
args=(--step-range train_step --format json --top 100000 -r summary,steps,step_ranks,stragglers,collectives,gpu_gaps,ranks)
for i in $(seq "$REPEATS"); do
  timed native "$G" analyze "$work/merged.sqlite" "${args[@]}"
  timed duckdb "$G" analyze --engine duckdb "$work/ds_zstd" "${args[@]}"
  cmp -s "$work/native.out" "$work/duckdb.out" || { echo "duckdb result differs from gtrace analyze"; exit 1; }
done
echo "== analyze: dask LocalCluster, $WORKERS workers"
timed dask "$G" analyze --engine dask --workers "$WORKERS" "$work/ds_zstd" "${args[@]}"
cmp -s "$work/native.out" "$work/dask.out" && dask_same=identical || dask_same=DIFFERENT
summary=$("$PY" -c "import json,sys; d=json.load(open(sys.argv[1])); print('; '.join('%s %s' % (r['Metric'].strip(), r['Value']) for r in d['summary'][:5])); print('straggler ranked first: rank %d' % d['stragglers'][0]['Rank'])" "$work/native.out")

per() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.1f", a / b}'; }
row() {  # a table row for the dataset in $work/$2 (if it was made), converted by timed step $3
  [ -d "$work/$2" ] || return 0
  local k; k=$(bytes "$work/$2/CUPTI_ACTIVITY_KIND_KERNEL")
  echo "| Parquet $1 | $k | $(per "$k" "$kernels") | $(bytes "$work/$2") | $(per "$(bytes "$work/$2")" "$records") | $(secs "$3") | $(mib "$3") |"
}
out=${OUT:-bench/results/$(date -u +%Y-%m-%d)-parquet.md}
mkdir -p "$(dirname "$out")"
cpu=$(lscpu | sed -n 's/^Model name: *//p' | head -1)
cat > "$out" <<MD
# gtrace Parquet dataset and engine analyses — $(date -u +%Y-%m-%dT%H:%MZ)

- machine: ${cpu:-unknown CPU}, $(nproc) cores (shared with other builds while this ran; load average at the end:
  $(cut -d' ' -f1-3 /proc/loadavg)), $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo); $(uname -sr)
- commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet 2>/dev/null || echo " (with uncommitted changes)"); \`bench/multi_rank/parquet.sh\`, RANKS=$RANKS STEPS=$STEPS KERNELS=$KERNELS REPEATS=$REPEATS SAMPLE=$SAMPLE WORKERS=$WORKERS
- $("$PY" -c 'import pyarrow, duckdb, dask; print("pyarrow %s, duckdb %s, dask %s" % (pyarrow.__version__, duckdb.__version__, dask.__version__))')

## Input
$RANKS simulated ranks ($PER_HOST per host), $STEPS steps of $KERNELS kernels + $((BUCKETS + 1)) all-reduces:
$records records; merged database $db_bytes bytes, $kernels kernel rows.

## Size on disk (bytes per kernel row: the KERNEL table / directory; whole: everything / records)

| form | KERNEL bytes | per kernel | whole bytes | per record | convert s | peak RSS MiB |
|---|---|---|---|---|---|---|
| SQLite (merged export; KERNEL pages from dbstat) | $k_db_bytes | $(per "$k_db_bytes" "$kernels") | $db_bytes | $(per "$db_bytes" "$records") | $(secs export) (export) | $(mib export) |
| Parquet zstd, 1 Mi-row groups (default) | $(bytes "$work/ds_zstd/CUPTI_ACTIVITY_KIND_KERNEL") | $(per "$(bytes "$work/ds_zstd/CUPTI_ACTIVITY_KIND_KERNEL")" "$kernels") | $(bytes "$work/ds_zstd") | $(per "$(bytes "$work/ds_zstd")" "$records") | $(secs convert_zstd) | $(mib convert_zstd) |
$(row "snappy" ds_snappy convert_snappy; row "zstd, 64 Ki-row groups" ds_rg64k convert_zstd_rg64k)

The zstd dataset has $files files. (Convert s: \`gtrace export --type parquet\` of the merged database, once each.)

## In the job, per rank (median of $SAMPLE ranks, each its own process, one after another)

| step | seconds | peak RSS MiB | bytes |
|---|---|---|---|
| \`gtrace export -o local.sqlite rank.gtrace\` | $(secs rank_export) | $(mib rank_export) | $rank_db (database) |
| \`python -m gtrace.parquet summary\` | $(secs rank_summary) | $(mib rank_summary) | $rank_sum (summary) |
| merge of the $SAMPLE summaries (the alignment; once) | $(secs align) | $(mib align) | $(bytes "$work/align.sqlite") |
| \`python -m gtrace.parquet convert --rank R --alignment\` | $(secs rank_convert) | $(mib rank_convert) | $rank_pq (partitions) |

## Analysis (the same reports, all rows; outputs compared byte for byte)

| engine | seconds (median of $REPEATS, alternated) | peak RSS MiB | result |
|---|---|---|---|
| \`gtrace analyze merged.sqlite\` (native, SQLite) | $(secs native) | $(mib native) | reference |
| \`gtrace analyze --engine duckdb DIR\` | $(secs duckdb) | $(mib duckdb) | identical |
| \`gtrace analyze --engine dask --workers $WORKERS DIR\` (LocalCluster; once; RSS: the largest process) | $(secs dask) | $(mib dask) | $dask_same |

Answers: $summary.
MD
echo "== wrote $out"
cat "$out"
