#!/usr/bin/env bash
# Peak RSS and CPU time of the reports issue 20 left holding rows — cuda_api_trace, cuda_gpu_trace,
# nvtx_gpu_proj_sum, gpu_metrics_sum, osrt_sum — against the number of rows, for a baseline binary
# and this build, alternating (base, new, base, new, ...) in one run; medians; and a check that both
# binaries print byte-identical output. (nccl_sum and cuda_api_callers: run.sh beside this file.)
#
#   bash bench/report_memory/rows.sh BUILD BASE_GTRACE [ROWS...]
#     BUILD        this build (BUILD/bin/gtrace)
#     BASE_GTRACE  the baseline `gtrace` binary (e.g. main's HEAD built in another directory)
#     ROWS         rows per table (default: 1000000 10000000)
#   ROUNDS=2 (runs per binary, report and size)   FORMAT=csv (or table, json)
#   REPORTS="cuda_api_trace ..." (default: the five)   CAP_MB=4096 (address-space cap of each run)
#   WORK=dir (scratch; default a temp dir, removed)
#
# One database per size, generated inside SQLite (recursive CTEs, python3's sqlite3): ROWS API calls
# on 4 threads of 2 processes (ThreadNames), ROWS/2 kernels, ROWS/4 memcpys and ROWS/4 memsets
# launched by them (2 GPUs), ROWS NVTX push/pop ranges (two levels) on the same threads, ROWS
# GPU_METRICS rows (2 GPUs x 4 metrics), ROWS OSRT_API calls of 20 functions. Peak RSS is
# /usr/bin/time's maximum resident set size; CPU is user + system. A run that exceeds CAP_MB of
# address space (the old reports at 10 M rows would take several GB of a shared machine) is
# killed and shown as ">CAP" — the new one must never hit it.
set -euo pipefail
BUILD=${1:?usage: rows.sh BUILD BASE_GTRACE [ROWS...]}
BASE=${2:?usage: rows.sh BUILD BASE_GTRACE [ROWS...]}
shift 2
SIZES=("$@")
[ ${#SIZES[@]} -gt 0 ] || SIZES=(1000000 10000000)
ROUNDS=${ROUNDS:-2}
FORMAT=${FORMAT:-csv}
CAP_MB=${CAP_MB:-4096}
read -r -a REPORT_LIST <<<"${REPORTS:-cuda_api_trace cuda_gpu_trace nvtx_gpu_proj_sum gpu_metrics_sum osrt_sum}"
NEW="$BUILD/bin/gtrace"
for b in "$NEW" "$BASE" /usr/bin/time; do
  [ -x "$b" ] || { echo "rows.sh: $b is missing (build gtrace_cli; apt-get install time)" >&2; exit 1; }
done
command -v python3 >/dev/null || { echo "rows.sh: python3 is missing" >&2; exit 1; }
if [ -n "${WORK:-}" ]; then mkdir -p "$WORK"; work=$WORK; else work=$(mktemp -d); trap 'rm -rf "$work"' EXIT; fi

generate() {  # generate PATH ROWS
  python3 - "$1" "$2" <<'PY'
import sqlite3, sys
path, n = sys.argv[1], int(sys.argv[2])
db = sqlite3.connect(path)
db.executescript("""
PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF;
CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE ThreadNames (nameId INTEGER NOT NULL, priority INTEGER, globalTid INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER NOT NULL, end INTEGER NOT NULL, eventClass INTEGER NOT NULL,
  globalTid INTEGER, correlationId INTEGER, nameId INTEGER NOT NULL, returnValue INTEGER NOT NULL, callchainId INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL,
  contextId INTEGER NOT NULL, greenContextId INTEGER, streamId INTEGER NOT NULL, correlationId INTEGER,
  globalPid INTEGER, demangledName INTEGER NOT NULL, shortName INTEGER NOT NULL, gridX INTEGER NOT NULL,
  gridY INTEGER NOT NULL, gridZ INTEGER NOT NULL, blockX INTEGER NOT NULL, blockY INTEGER NOT NULL,
  blockZ INTEGER NOT NULL, registersPerThread INTEGER NOT NULL, staticSharedMemory INTEGER NOT NULL,
  dynamicSharedMemory INTEGER NOT NULL);
CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL,
  contextId INTEGER NOT NULL, greenContextId INTEGER, streamId INTEGER NOT NULL, correlationId INTEGER,
  globalPid INTEGER, bytes INTEGER NOT NULL, copyKind INTEGER NOT NULL, srcKind INTEGER, dstKind INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_MEMSET (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL,
  contextId INTEGER NOT NULL, greenContextId INTEGER, streamId INTEGER NOT NULL, correlationId INTEGER,
  globalPid INTEGER, value INTEGER NOT NULL, bytes INTEGER NOT NULL, memKind INTEGER);
CREATE TABLE ENUM_CUDA_MEMCPY_OPER (id INTEGER NOT NULL PRIMARY KEY, name TEXT NOT NULL, label TEXT NOT NULL);
CREATE TABLE ENUM_CUDA_MEM_KIND (id INTEGER NOT NULL PRIMARY KEY, name TEXT NOT NULL, label TEXT NOT NULL);
CREATE TABLE TARGET_INFO_GPU (vmId INTEGER NOT NULL, id INTEGER NOT NULL, name TEXT, cuDevice INTEGER);
CREATE TABLE TARGET_INFO_CUDA_DEVICE (gpuId INTEGER, cudaId INTEGER, pid INTEGER, uuid TEXT,
  numMultiprocessors INTEGER);
CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL, rangeId INTEGER,
  category INTEGER, color INTEGER, text TEXT, globalTid INTEGER, endGlobalTid INTEGER, textId INTEGER,
  domainId INTEGER, uint64Value INTEGER, int64Value INTEGER, doubleValue REAL, uint32Value INTEGER,
  int32Value INTEGER, floatValue REAL, jsonTextId INTEGER, jsonText TEXT, binaryData TEXT);
CREATE TABLE GPU_METRICS (rawTimestamp INTEGER, timestamp INTEGER, typeId INTEGER NOT NULL,
  metricId INTEGER NOT NULL, value INTEGER NOT NULL);
CREATE TABLE TARGET_INFO_GPU_METRICS (typeId INTEGER NOT NULL, sourceId INTEGER NOT NULL, typeName TEXT NOT NULL,
  metricId INTEGER NOT NULL, metricName TEXT NOT NULL);
CREATE TABLE OSRT_API (start INTEGER NOT NULL, end INTEGER NOT NULL, eventClass INTEGER NOT NULL,
  globalTid INTEGER, nameId INTEGER NOT NULL, returnValue INTEGER NOT NULL, nestingLevel INTEGER,
  callchainId INTEGER NOT NULL, argumentsId INTEGER NOT NULL);
INSERT INTO ENUM_CUDA_MEMCPY_OPER VALUES (1, 'HTOD', 'Host-to-Device'), (2, 'DTOH', 'Device-to-Host'),
  (8, 'DTOD', 'Device-to-Device');
INSERT INTO ENUM_CUDA_MEM_KIND VALUES (0, 'PAGEABLE', 'Pageable'), (1, 'PINNED', 'Pinned'), (2, 'DEVICE', 'Device');
INSERT INTO TARGET_INFO_GPU VALUES (281474976710656, 0, 'NVIDIA H100 80GB HBM3', 0),
  (281474976710656, 1, 'NVIDIA H100 80GB HBM3', 1);
INSERT INTO TARGET_INFO_CUDA_DEVICE VALUES (0, 0, 100, 'u0', 132), (1, 1, 100, 'u1', 132),
  (0, 0, 200, 'u0', 132), (1, 1, 200, 'u1', 132);
""")
# Strings: 0-4 API names, 5-44 kernel names, 45-64 osrt functions, 65-68 thread names.
strings = ["cudaLaunchKernel_v7000", "cudaMemcpyAsync_v3020", "cudaMemsetAsync_v3020", "cuLaunchKernel",
           "cudaGraphLaunch_v10000"] + ["void kernel_%d<float>(float*, int)" % i for i in range(40)] + \
          ["osrt_fn_%d" % i for i in range(20)] + ["main", "worker", "main", "worker"]
db.executemany("INSERT INTO StringIds VALUES (?, ?)", enumerate(strings))
# globalTid of thread t (0-3): processes 100 and 200, threads 1 and 2 of each.
tid = "((1 << 48) | ((100 + 100 * ((%s) / 2)) << 24) | (1 + (%s) %% 2))"
db.executemany("INSERT INTO ThreadNames VALUES (?, 20, ?)",
               [(65 + t, (1 << 48) | ((100 + 100 * (t // 2)) << 24) | (1 + t % 2)) for t in range(4)])
seq = "WITH RECURSIVE i(x) AS (SELECT 0 UNION ALL SELECT x + 1 FROM i WHERE x + 1 < %d) "
t = "(x % 4)"
db.execute(seq % n + "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME SELECT x * 100, x * 100 + 20 + (x * 7919) % 500, 0, " +
           tid % (t, t) + ", x, x % 5, 0, NULL FROM i")
# GPU work of call x: kernels for x % 4 in (0, 1), memcpy for 2, memset for 3; pid of its thread.
pid = "((1 << 48) | ((100 + 100 * (%s / 2)) << 24))" % t
db.execute(seq % n + "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL SELECT x * 100 + 300, x * 100 + 300 + (x * 104729) % 20000, "
           "x % 2, 1, 0, 7 + x % 3, x, " + pid + ", 5 + x % 40, 5 + x % 40, 1 + x % 1024, 1, 1, 256, 1, 1, 32, "
           "(x % 3) * 1024, 0 FROM i WHERE x % 4 < 2")
db.execute(seq % n + "INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY SELECT x * 100 + 300, x * 100 + 300 + (x * 31) % 9000, "
           "x % 2, 1, 0, 7, x, " + pid + ", 1 + (x * 7) % 1000000, 1 + (x / 4) % 2, 0, 2 FROM i WHERE x % 4 = 2")
db.execute(seq % n + "INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET SELECT x * 100 + 300, x * 100 + 300 + (x * 17) % 3000, "
           "x % 2, 1, 0, 7, x, " + pid + ", 0, 1 + (x * 13) % 100000, 2 FROM i WHERE x % 4 = 3")
# NVTX: pairs of an outer range (15 calls long) and an inner one inside it, on thread (x / 2) % 4.
t2 = "((x / 2) % 4)"
db.execute(seq % n + "INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, domainId) SELECT "
           "CASE WHEN x % 2 = 0 THEN x * 100 ELSE x * 100 - 90 END, "
           "CASE WHEN x % 2 = 0 THEN x * 100 + 1500 ELSE x * 100 + 60 END, 59, "
           "CASE WHEN x % 2 = 0 THEN 'step_' || (x % 16) ELSE 'op_' || (x % 50) END, " + tid % (t2, t2) + ", 0 FROM i")
# GPU metrics: 2 GPUs x 4 metrics, a sample every 2000 ns per GPU.
db.execute("INSERT INTO TARGET_INFO_GPU_METRICS SELECT g.t, 1, 'GPU', m.x, 'metric ' || m.x FROM "
           "(SELECT (1 << 48) | (1 << 32) AS t UNION ALL SELECT (1 << 48) | (1 << 32) | 1) AS g, "
           "(SELECT 0 AS x UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3) AS m")
db.execute(seq % n + "INSERT INTO GPU_METRICS SELECT (x / 8) * 2000, (x / 8) * 2000, (1 << 48) | (1 << 32) | ((x / 4) % 2), "
           "x % 4, (x * 2654435761) % 101 FROM i")
db.execute(seq % n + "INSERT INTO OSRT_API SELECT x * 100, x * 100 + 1000 + (x * 7919) % 100000, 27, " + tid % (t, t) +
           ", 45 + (x * 31) % 20, 0, 0, 0, 0 FROM i")
db.commit()
PY
}

# measure LABEL CMD...: appends "wall_s peak_kb cpu_s" of one run to $work/LABEL ("- cap -" when the
# run died at the address-space cap)
measure() {
  local label=$1
  shift
  if (ulimit -v $((CAP_MB * 1024)); /usr/bin/time -f "%e %M %U %S" -o "$work/time.out" "$@" >/dev/null 2>"$work/stderr.out"); then
    awk '{printf "%s %s %.2f\n", $1, $2, $3 + $4}' "$work/time.out" >>"$work/$label"
  else
    echo "rows.sh: $label failed (cap ${CAP_MB} MB?): $(tail -1 "$work/stderr.out")" >&2
    echo "- cap -" >>"$work/$label"
  fi
}
median() {  # median of column $2 of file $1 ("cap" when any run hit the cap)
  grep -q cap "$1" && { echo cap; return; }
  sort -n -k"$2" "$1" | awk -v c="$2" '{v[NR]=$c} END {if (NR%2) print v[(NR+1)/2]; else printf "%.2f\n", (v[NR/2]+v[NR/2+1])/2}'
}
mib() { [ "$1" = cap ] && echo ">$CAP_MB" || awk -v k="$1" 'BEGIN {printf "%.0f", k / 1024}'; }

echo "| rows | report | base peak RSS MB | new peak RSS MB | base CPU s | new CPU s | new/base CPU |"
echo "|---:|---|---:|---:|---:|---:|---:|"
for n in "${SIZES[@]}"; do
  rm -f "$work/db.sqlite"
  generate "$work/db.sqlite" "$n"
  for report in "${REPORT_LIST[@]}"; do
    rm -f "$work"/run-*
    for ((r = 0; r < ROUNDS; ++r)); do
      measure run-base sh -c "'$BASE' stats --report $report --format $FORMAT '$work/db.sqlite' >'$work/base.out'"
      measure run-new sh -c "'$NEW' stats --report $report --format $FORMAT '$work/db.sqlite' >'$work/new.out'"
    done
    if ! grep -q cap "$work/run-base" "$work/run-new"; then
      cmp -s "$work/base.out" "$work/new.out" || { echo "rows.sh: $report outputs differ at $n rows" >&2; exit 1; }
    fi
    bk=$(median "$work/run-base" 2); nk=$(median "$work/run-new" 2)
    bc=$(median "$work/run-base" 3); nc=$(median "$work/run-new" 3)
    ratio=$( [ "$bc" = cap ] || [ "$nc" = cap ] && echo - || awk -v a="$nc" -v b="$bc" 'BEGIN {printf "%.2f", a / b}')
    echo "| $n | $report | $(mib "$bk") | $(mib "$nk") | $bc | $nc | $ratio |"
  done
done
