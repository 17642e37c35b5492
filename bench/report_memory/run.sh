#!/usr/bin/env bash
# Peak RSS and CPU time of `gtrace stats --report nccl_sum` and `--report cuda_api_callers` against
# the number of rows, for a baseline binary and this build, alternating (base, new, base, new, ...)
# in one run; medians; and a check that both binaries print byte-identical CSV.
#
#   bash bench/report_memory/run.sh BUILD BASE_GTRACE [ROWS...]
#     BUILD        this build (BUILD/bin/gtrace)
#     BASE_GTRACE  the baseline `gtrace` binary (e.g. main's HEAD built in another directory)
#     ROWS         NCCL operations and backtraced CUDA calls per database (default: 1000000 5000000)
#   ROUNDS=3 (runs per binary, report and size)   WORK=dir (scratch; default a temp dir, removed)
#
# The databases are generated here (python3's sqlite3): GTRACE_NCCL_OPERATIONS with ROWS operations
# (7 collectives, 4 ranks of 2- and 4-rank communicators, sizes over 30 buckets, 1 in 15 without GPU
# times) and ROWS eventClass-67 CUPTI_ACTIVITY_KIND_RUNTIME rows over 1000 call chains of 1-5 frames
# (CUDA_CALLCHAINS). Peak RSS is /usr/bin/time's maximum resident set size; CPU is user + system.
set -euo pipefail
BUILD=${1:?usage: run.sh BUILD BASE_GTRACE [ROWS...]}
BASE=${2:?usage: run.sh BUILD BASE_GTRACE [ROWS...]}
shift 2
SIZES=("$@")
[ ${#SIZES[@]} -gt 0 ] || SIZES=(1000000 5000000)
ROUNDS=${ROUNDS:-3}
NEW="$BUILD/bin/gtrace"
for b in "$NEW" "$BASE" /usr/bin/time; do
  [ -x "$b" ] || { echo "run.sh: $b is missing (build gtrace_cli; apt-get install time)" >&2; exit 1; }
done
command -v python3 >/dev/null || { echo "run.sh: python3 is missing" >&2; exit 1; }
if [ -n "${WORK:-}" ]; then mkdir -p "$WORK"; work=$WORK; else work=$(mktemp -d); trap 'rm -rf "$work"' EXIT; fi

generate() {  # generate PATH ROWS
  python3 - "$1" "$2" <<'PY'
import random, sqlite3, sys
path, n = sys.argv[1], int(sys.argv[2])
rng = random.Random(20261125)
db = sqlite3.connect(path)
db.executescript("""
CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE GTRACE_NCCL_OPERATIONS (globalPid INTEGER NOT NULL, eventId INTEGER NOT NULL, func TEXT NOT NULL,
  algBytes INTEGER, nRanks INTEGER, rank INTEGER, gpuStart INTEGER, gpuEnd INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER NOT NULL, end INTEGER NOT NULL, eventClass INTEGER NOT NULL,
  globalTid INTEGER, correlationId INTEGER, nameId INTEGER NOT NULL, returnValue INTEGER NOT NULL, callchainId INTEGER);
CREATE TABLE CUDA_CALLCHAINS (id INTEGER NOT NULL, symbol INTEGER NOT NULL, module INTEGER NOT NULL,
  unresolved INTEGER, originalIP INTEGER, stackDepth INTEGER NOT NULL, PRIMARY KEY (id, stackDepth));
""")
strings = ["cudaMemcpy_v3020", "cudaLaunchKernel_v7000", "cudaMalloc_v3020", "cuLaunchKernel",
           "/usr/lib/libcuda.so.1", "/usr/lib/libcudart.so.12", "/app/a.out", "/app/train.py"] + \
          ["fn_%d" % i for i in range(40)]
db.executemany("INSERT INTO StringIds VALUES (?, ?)", enumerate(strings))
funcs = ["AllReduce", "AllGather", "Broadcast", "Send", "Recv", "ReduceScatter", "AlltoAll"]
def ops():
    for i in range(n):
        n_ranks = 2 if rng.random() < 0.3 else 4
        start = i * 1000
        timed = rng.random() >= 1 / 15
        yield (1 + i % 4, i, rng.choice(funcs), (1 << rng.randrange(30)) + rng.randrange(100), n_ranks,
               rng.randrange(n_ranks), start if timed else None, start + rng.randrange(90000) if timed else None)
db.executemany("INSERT INTO GTRACE_NCCL_OPERATIONS VALUES (?,?,?,?,?,?,?,?)", ops())
frames = []
for chain in range(1000):
    for depth in range(rng.randrange(1, 6)):
        frames.append((chain, 8 + rng.randrange(40), 4 + rng.randrange(4), 0,
                       None if rng.random() < 0.1 else 4096 + depth, depth))
db.executemany("INSERT INTO CUDA_CALLCHAINS VALUES (?,?,?,?,?,?)", frames)
def calls():
    for i in range(n):
        yield (i * 100, i * 100 + rng.randrange(50000), 67, 1, i, rng.randrange(4), 0, rng.randrange(1000))
db.executemany("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (?,?,?,?,?,?,?,?)", calls())
db.commit()
PY
}

# measure LABEL CMD...: appends "wall_s peak_kb cpu_s" of one run to $work/LABEL
measure() {
  local label=$1
  shift
  /usr/bin/time -f "%e %M %U %S" -o "$work/time.out" "$@" >/dev/null 2>"$work/stderr.out" ||
    { echo "run.sh: failed: $*" >&2; cat "$work/stderr.out" >&2; exit 1; }
  awk '{printf "%s %s %.2f\n", $1, $2, $3 + $4}' "$work/time.out" >>"$work/$label"
}
median() {  # median of column $2 of file $1
  sort -n -k"$2" "$1" | awk -v c="$2" '{v[NR]=$c} END {if (NR%2) print v[(NR+1)/2]; else printf "%.2f\n", (v[NR/2]+v[NR/2+1])/2}'
}

echo "| rows | report | base peak RSS MB | new peak RSS MB | base CPU s | new CPU s | new/base CPU |"
echo "|---:|---|---:|---:|---:|---:|---:|"
for n in "${SIZES[@]}"; do
  rm -f "$work/db.sqlite"
  generate "$work/db.sqlite" "$n"
  for report in nccl_sum cuda_api_callers; do
    rm -f "$work"/run-*
    for ((r = 0; r < ROUNDS; ++r)); do
      measure run-base sh -c "'$BASE' stats --report $report --format csv '$work/db.sqlite' >'$work/base.csv'"
      measure run-new sh -c "'$NEW' stats --report $report --format csv '$work/db.sqlite' >'$work/new.csv'"
    done
    cmp -s "$work/base.csv" "$work/new.csv" || { echo "run.sh: $report outputs differ at $n rows" >&2; exit 1; }
    bk=$(median "$work/run-base" 2); nk=$(median "$work/run-new" 2)
    bc=$(median "$work/run-base" 3); nc=$(median "$work/run-new" 3)
    ratio=$(awk -v a="$nc" -v b="$bc" 'BEGIN {printf "%.2f", a / b}')
    mib() { awk -v k="$1" 'BEGIN {printf "%.0f", k / 1024}'; }
    echo "| $n | $report | $(mib "$bk") | $(mib "$nk") | $bc | $nc | $ratio |"
  done
done
