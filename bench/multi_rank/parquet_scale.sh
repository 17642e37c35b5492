#!/usr/bin/env bash
# Many ranks per conversion process, and the engine analysis before/after its GPU unions were made
# once (issue 19; docs/multi-rank.md, "Scale"). CPU only, on the rank simulator:
#   1. RANKS streams -> `gtrace export --per-rank` (one database per rank, one session, aligned)
#   2. in the job, on SAMPLE ranks each exported alone with the summaries' alignment (the recipe of
#      scripts/slurm-parquet.sh): one process per rank (`--rank R`, the floor) against one process for
#      all of them (`--rank each`), alternated REPEATS times; seconds per rank, medians, ratio
#   3. all RANKS databases -> one dataset by `--rank each` in one process (once): seconds, CPU seconds
#      and bytes per rank, peak RSS
#   4. `--engine duckdb` with the analysis code of BEFORE (git revision; the unions computed twice)
#      and of this checkout, alternated REPEATS times; both outputs compared with each other and with
#      `gtrace analyze` of the per-rank databases (native)
#   5. DASK=1: one `--engine dask --workers WORKERS` run (LocalCluster), output compared
#
#   RANKS=1000 bash bench/multi_rank/parquet_scale.sh
#   RANKS=10000 STEPS=10 KERNELS=20 REPEATS=1 ...        (scaled-down events: say so with the figures)
#   BUILD_DIR=build PYTHON=build/parquet-venv/bin/python WORK=DIR KEEP=1 OUT=FILE BEFORE=84f1adb
#   PARALLEL=P: step 3 as P processes at once, each converting every P-th rank (as P nodes would)
#   REUSE=1 (with WORK and KEEP): keep WORK's streams and per-rank databases (and their timings) from an
#   earlier run of the same RANKS/STEPS/KERNELS, redo the rest
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
BUILD=${BUILD_DIR:-build}
PY=${PYTHON:-$BUILD/parquet-venv/bin/python}
RANKS=${RANKS:-1000}; PER_HOST=${PER_HOST:-8}; STEPS=${STEPS:-50}; KERNELS=${KERNELS:-100}; BUCKETS=${BUCKETS:-8}
REPEATS=${REPEATS:-3}; SAMPLE=${SAMPLE:-12}; WORKERS=${WORKERS:-4}; DASK=${DASK:-1}; BEFORE=${BEFORE:-84f1adb}
PARALLEL=${PARALLEL:-1}; REUSE=${REUSE:-0}
G=$ROOT/$BUILD/bin/gtrace
export GTRACE_PYTHON=$ROOT/$PY
work=${WORK:-$(mktemp -d /tmp/gtrace-parquet-scale-XXXXXX)}
mkdir -p "$work"
trap '[ -z "${KEEP:-}" ] && rm -rf "$work"' EXIT
set -E
trap 'echo "== failed (line $LINENO): see $work/*.err"; tail -5 "$work"/*.err 2>/dev/null' ERR
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
# timed NAME CMD...: wall seconds, peak RSS (KiB; of the largest process), CPU seconds (user+sys) appended to NAME.t
timed() {
  local n=$1; shift
  /usr/bin/time -f "%e %M %U %S" -o "$work/$n.one" "$@" >"$work/$n.out" 2>"$work/$n.err"
  awk '{printf "%s %s %.2f\n", $1, $2, $3 + $4}' "$work/$n.one" >> "$work/$n.t"
}
secs() { cut -d' ' -f1 "$work/$1.t" | median; }
cpu() { cut -d' ' -f3 "$work/$1.t" | median; }
mib() { cut -d' ' -f2 "$work/$1.t" | median | awk '{printf "%.0f", $1 / 1024}'; }
bytes() { du -sb "$1" | cut -f1; }
div() { awk -v a="$1" -v b="$2" -v p="${3:-3}" 'BEGIN {printf "%.*f", p, a / b}'; }
now() { date +%s; }
t_start=$(now)

reuse=0
if [ "$REUSE" = 1 ] && [ -d "$work/streams" ] && [ -d "$work/dbs" ] && [ -f "$work/perrank.t" ]; then
  reuse=1
  rm -rf "$work/before" "$work/local" "$work/sums" "$work/align.sqlite" "$work/job1" "$work/jobN" "$work/ds"
  for f in "$work"/*.t; do case $f in */sim.t|*/perrank.t) ;; *) rm -f "$f" ;; esac; done
fi
# The analysis code before the change, from git (python/ only; the CLI and the dataset layout are the same).
mkdir -p "$work/before"
git archive "$BEFORE" python | tar -x -C "$work/before"

if [ "$reuse" = 0 ]; then
echo "== simulate $RANKS ranks ($STEPS steps of $KERNELS kernels)"
timed sim "$BUILD/bin/sim_ranks" "$work/streams" --ranks "$RANKS" --per-host "$PER_HOST" --steps "$STEPS" \
  --kernels "$KERNELS" --buckets "$BUCKETS" --cuda-api --straggler 37 --straggler-delay-us 2000 --imbalance 0.1 \
  --offset-us 3000 --drift-ppm 5
records=$(sed -n 's/.* records=\([0-9]*\).*/\1/p' "$work/sim.out")
streams_bytes=$(bytes "$work/streams")
echo "== export --per-rank ($RANKS databases, one session)"
timed perrank "$G" export --per-rank -o "$work/dbs" "$work/streams"
else
  echo "== reusing $work/streams and $work/dbs (REUSE=1)"
fi
dbs_bytes=$(bytes "$work/dbs")
"$G" export --column-catalog > "$work/catalog.json"

echo "== in the job, $SAMPLE ranks: one process per rank against one process for all, $REPEATS times"
mkdir -p "$work/local"
sample=()
for i in $(seq 0 $((SAMPLE - 1))); do
  r=$(( i * RANKS / SAMPLE )); sample+=("$r")
  "$G" export -o "$work/local/rank-$r.sqlite" "$work/streams/rank-$r.gtrace" 2>/dev/null
done
PYTHONPATH=$ROOT/python "$PY" -m gtrace.parquet summary -d "$work/sums" "$work"/local/*.sqlite 2>/dev/null
"$G" export -o "$work/align.sqlite" "$work"/sums/*.sqlite 2>/dev/null
# One process per sampled rank (as scripts/slurm-parquet.sh with RANKS_PER_TASK=1), in one timed shell.
job_one="for r in ${sample[*]}; do '$G' export --type parquet --rank \$r --alignment '$work/align.sqlite' \
  -o '$work/job1' '$work/local/rank-'\$r'.sqlite' || exit 1; done"
for i in $(seq "$REPEATS"); do
  rm -rf "$work/job1"
  timed job_one bash -c "$job_one"
  rm -rf "$work/jobN"
  timed job_each "$G" export --type parquet --rank each --alignment "$work/align.sqlite" -o "$work/jobN" "$work"/local/*.sqlite
  diff -r "$work/job1" "$work/jobN" >/dev/null || { echo "--rank each differs from --rank R per process"; exit 1; }
done

echo "== all $RANKS databases -> one dataset, --rank each, $PARALLEL process(es)"
if [ "$PARALLEL" = 1 ]; then
  timed convert "$G" export --type parquet --rank each -o "$work/ds" "$work"/dbs/*.sqlite
else
  # Every P-th rank to each process, all at once; the wall time is the slowest's, CPU the sum.
  for p in $(seq 0 $((PARALLEL - 1))); do
    ls "$work/dbs" | awk -v p="$p" -v n="$PARALLEL" -v d="$work/dbs" '{r = $0; gsub(/[^0-9]/, "", r); if (r % n == p) print d "/" $0}' > "$work/group$p.txt"
  done
  timed convert bash -c "for p in \$(seq 0 $((PARALLEL - 1))); do xargs -s 1500000 -a '$work/group'\$p'.txt' '$G' export --type parquet --rank each -o '$work/ds' > '$work/convert'\$p'.log' 2>&1 & done; fail=0; for j in \$(jobs -p); do wait \$j || fail=1; done; exit \$fail"
fi
ds_bytes=$(bytes "$work/ds"); files=$(find "$work/ds" -name '*.parquet' | wc -l)
PYTHONPATH=$ROOT/python "$PY" -m gtrace.parquet check "$work/ds" --world-size "$RANKS" > "$work/check.out"

echo "== analyze: native (per-rank databases), then duckdb before/after alternated, $REPEATS times"
args=(--step-range train_step --format json --top 100000 -r summary,steps,step_ranks,stragglers,collectives,gpu_gaps,ranks)
timed native "$G" analyze "$work"/dbs/*.sqlite "${args[@]}"
for i in $(seq "$REPEATS"); do
  PYTHONPATH=$work/before/python timed duck_before "$PY" -m gtrace.analyze --engine duckdb "$work/ds" "${args[@]}"
  PYTHONPATH=$ROOT/python timed duck_after "$PY" -m gtrace.analyze --engine duckdb "$work/ds" "${args[@]}"
  cmp -s "$work/duck_before.out" "$work/duck_after.out" || { echo "duckdb before/after outputs differ"; exit 1; }
done
cmp -s "$work/native.out" "$work/duck_after.out" && duck_same=identical || duck_same=DIFFERENT
dask_row="| \`--engine dask\` | not run (DASK=0) | | | |"
if [ "$DASK" = 1 ]; then
  echo "== analyze: dask LocalCluster, $WORKERS workers"
  PYTHONPATH=$ROOT/python timed dask "$PY" -m gtrace.analyze --engine dask --workers "$WORKERS" "$work/ds" "${args[@]}"
  cmp -s "$work/native.out" "$work/dask.out" && dask_same=identical || dask_same=DIFFERENT
  dask_row="| \`--engine dask --workers $WORKERS\` (LocalCluster; once; RSS: the largest process) | $(secs dask) | $(cpu dask) | $(mib dask) | $dask_same |"
fi
summary=$("$PY" -c "import json,sys; d=json.load(open(sys.argv[1])); print('; '.join('%s %s' % (r['Metric'].strip(), r['Value']) for r in d['summary'][:5])); print('straggler ranked first: rank %d' % d['stragglers'][0]['Rank'])" "$work/native.out")
t_total=$(( $(now) - t_start ))

out=${OUT:-bench/results/$(date -u +%Y-%m-%d)-parquet-scale-$RANKS.md}
mkdir -p "$(dirname "$out")"
cpu_model=$(lscpu | sed -n 's/^Model name: *//p' | head -1)
one=$(secs job_one); each=$(secs job_each)
cat > "$out" <<MD
# Parquet at $RANKS ranks: many ranks per conversion process, engine analysis before/after — $(date -u +%Y-%m-%dT%H:%MZ)

- machine: ${cpu_model:-unknown CPU}, $(nproc) cores, shared with other engineers' builds while this ran (load
  average at the end: $(cut -d' ' -f1-3 /proc/loadavg)): wall seconds are pessimistic, CPU seconds (user+sys) steadier;
  $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo); $(uname -sr)
- commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet 2>/dev/null || echo " (with uncommitted changes)"); \`bench/multi_rank/parquet_scale.sh\`, RANKS=$RANKS STEPS=$STEPS KERNELS=$KERNELS REPEATS=$REPEATS SAMPLE=$SAMPLE WORKERS=$WORKERS BEFORE=$BEFORE; the whole run took $t_total s
- $("$PY" -c 'import pyarrow, duckdb, dask; print("pyarrow %s, duckdb %s, dask %s" % (pyarrow.__version__, duckdb.__version__, dask.__version__))')

## Input
$RANKS simulated ranks ($PER_HOST per host), $STEPS steps of $KERNELS kernels + $((BUCKETS + 1)) all-reduces: $records records
($(div "$records" "$RANKS" 0) per rank); streams $streams_bytes bytes; per-rank databases $dbs_bytes bytes
($(div "$dbs_bytes" "$RANKS" 0) per rank). Simulation $(secs sim) s; \`gtrace export --per-rank\` $(secs perrank) s ($(cpu perrank) CPU s, $(mib perrank) MiB).

## Conversion in the job: one process per rank (floor) against one process for many ($SAMPLE ranks, median of $REPEATS, alternated)

| route | seconds for $SAMPLE ranks | per rank | CPU s per rank | peak RSS MiB |
|---|---|---|---|---|
| \`gtrace export --type parquet --rank R --alignment A\`, one process per rank | $one | $(div "$one" "$SAMPLE") | $(div "$(cpu job_one)" "$SAMPLE") | $(mib job_one) |
| \`gtrace export --type parquet --rank each --alignment A\`, one process | $each | $(div "$each" "$SAMPLE") | $(div "$(cpu job_each)" "$SAMPLE") | $(mib job_each) |

Ratio (per process / batched, wall): $(div "$one" "$each" 2). Outputs compared: every file equal (\`diff -r\`).

## All $RANKS ranks (\`--rank each\` of the per-rank databases; $PARALLEL process(es) at once; once)

| seconds ($PARALLEL process(es)) | per rank | CPU s per rank | peak RSS MiB (largest process) | dataset bytes | per rank | per record | files |
|---|---|---|---|---|---|---|---|
| $(secs convert) | $(div "$(secs convert)" "$RANKS") | $(div "$(cpu convert)" "$RANKS") | $(mib convert) | $ds_bytes | $(div "$ds_bytes" "$RANKS" 0) | $(div "$ds_bytes" "$records" 1) | $files |

$(cat "$work/check.out")

## Analysis (the same reports, all rows)

| engine | seconds (median of $REPEATS, alternated) | CPU s | peak RSS MiB | result |
|---|---|---|---|---|
| \`gtrace analyze\` of the $RANKS per-rank databases (native, once) | $(secs native) | $(cpu native) | $(mib native) | reference |
| \`--engine duckdb\`, before ($BEFORE: GPU unions computed twice) | $(secs duck_before) | $(cpu duck_before) | $(mib duck_before) | equal to after |
| \`--engine duckdb\`, after (unions once, \`gpu_islands\`) | $(secs duck_after) | $(cpu duck_after) | $(mib duck_after) | $duck_same |
$dask_row

Ratio (before / after, wall): $(div "$(secs duck_before)" "$(secs duck_after)" 2).
Answers: $summary.
MD
echo "== wrote $out (whole run $t_total s)"
cat "$out"
