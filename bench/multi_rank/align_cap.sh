#!/usr/bin/env bash
# Accuracy of the clock alignment when the alignment pass thins its collectives (the cap of
# tools/export/anchor_scan.h, GTRACE_ALIGN_MAX_OPS): the rank simulator's streams (hosts with planted
# NTP offsets and drifts) exported merged without a cap and with each cap given, and for each:
#   - per clock domain: the applied correction (offsetNs at refNs, driftPpb), collectives used, and
#     how far offset, drift and refNs moved against the uncapped export (ns, ppb, ns: the offset is
#     taken at refNs, the anchors' centre, which moves with the subset);
#   - misalignment: the largest spread across ranks of a step's first compute kernel (all ranks
#     start it at the same true time in this simulation: no straggler), ns;
#   - how far every exported kernel start and NVTX range start moved against the uncapped export (ns).
#
#   bash bench/multi_rank/align_cap.sh BUILD [CAP...]     (default caps: 512 128)
#   RANKS=16 PER_HOST=4 STEPS=600 OFFSET_US=1500 DRIFT_PPM=10; WORK=dir (default a temp dir, removed)
# Needs BUILD/bin/sim_ranks, BUILD/bin/gtrace and sqlite3.
set -euo pipefail
BUILD=${1:?usage: align_cap.sh BUILD [CAP...]}
shift
CAPS=("$@")
[ ${#CAPS[@]} -gt 0 ] || CAPS=(512 128)
RANKS=${RANKS:-16} PER_HOST=${PER_HOST:-4} STEPS=${STEPS:-600}
for b in "$BUILD/bin/sim_ranks" "$BUILD/bin/gtrace"; do
  [ -x "$b" ] || { echo "align_cap.sh: $b is missing" >&2; exit 1; }
done
command -v sqlite3 >/dev/null || { echo "align_cap.sh: sqlite3 is missing" >&2; exit 1; }
if [ -n "${WORK:-}" ]; then mkdir -p "$WORK"; work=$WORK; else work=$(mktemp -d); trap 'rm -rf "$work"' EXIT; fi

"$BUILD/bin/sim_ranks" "$work/streams" --ranks "$RANKS" --per-host "$PER_HOST" --steps "$STEPS" \
  --offset-us "${OFFSET_US:-1500}" --drift-ppm "${DRIFT_PPM:-10}" >"$work/sim.txt"
echo "simulator: $(head -1 "$work/sim.txt")"
export_with() {  # CAP DB
  GTRACE_ALIGN_MAX_OPS=$1 "$BUILD/bin/gtrace" export -f -j 2 -o "$2" "$work/streams" 2>"$2.log" ||
    { cat "$2.log" >&2; exit 1; }
}
misalignment() {  # DB: largest spread across ranks of a step's first compute kernel
  local per_step
  per_step=$(sqlite3 "$1" "SELECT count(*) / (SELECT count(DISTINCT globalPid) FROM CUPTI_ACTIVITY_KIND_KERNEL) / $STEPS
    FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds n ON n.id = k.shortName WHERE n.value NOT LIKE '%nccl%'")
  sqlite3 "$1" "WITH k AS (SELECT k.globalPid AS p, k.start AS s, ROW_NUMBER() OVER (PARTITION BY k.globalPid
    ORDER BY k.start) - 1 AS i FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds n ON n.id = k.shortName
    WHERE n.value NOT LIKE '%nccl%') SELECT max(d) FROM (SELECT max(s) - min(s) AS d FROM k WHERE i % $per_step = 0
    GROUP BY i / $per_step)"
}
moved() {  # DB REF TABLE: largest |start difference| of the same rows (row order is the same)
  sqlite3 "$1" "ATTACH '$2' AS r; SELECT (SELECT count(*) FROM main.$3) = (SELECT count(*) FROM r.$3),
    max(abs(a.start - b.start)) FROM main.$3 a JOIN r.$3 b ON a.rowid = b.rowid" | tr '|' ' '
}
export_with 0 "$work/cap0.sqlite"
echo "uncapped: $(grep -c 'more than the alignment pass holds' "$work/cap0.sqlite.log" || true) streams thinned; misalignment $(misalignment "$work/cap0.sqlite") ns"
q="SELECT domain, offsetNs, driftPpb, instances, refNs FROM GTRACE_CLOCK_ALIGNMENT ORDER BY domain"
sqlite3 "$work/cap0.sqlite" "$q" | tr '|' ' ' >"$work/cap0.align"
echo "| cap | domain | collectives | offset ns | drift ppb | refNs | offset moved ns | drift moved ppb | refNs moved ns |"
echo "|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
while read -r d off dr n ref; do echo "| none | $d | $n | $off | $dr | $ref | - | - | - |"; done <"$work/cap0.align"
for cap in "${CAPS[@]}"; do
  export_with "$cap" "$work/cap$cap.sqlite"
  sqlite3 "$work/cap$cap.sqlite" "$q" | tr '|' ' ' | paste -d' ' - "$work/cap0.align" |
    while read -r d off dr n ref _ off0 dr0 _ ref0; do
      echo "| $cap | $d | $n | $off | $dr | $ref | $((off - off0)) | $((dr - dr0)) | $((ref - ref0)) |"
    done
done
echo
echo "| cap | streams thinned | every n-th collective | misalignment ns | kernel starts moved, max ns | NVTX starts moved, max ns |"
echo "|---:|---:|---:|---:|---:|---:|"
echo "| none | 0 | 1 | $(misalignment "$work/cap0.sqlite") | - | - |"
for cap in "${CAPS[@]}"; do
  db="$work/cap$cap.sqlite"
  thinned=$(grep -c 'more than the alignment pass holds' "$db.log" || true)
  nth=$(grep -o 'is a multiple of [0-9]*' "$db.log" | head -1 | awk '{print $NF}')
  read -r same_k kmax < <(moved "$db" "$work/cap0.sqlite" CUPTI_ACTIVITY_KIND_KERNEL)
  read -r same_n nmax < <(moved "$db" "$work/cap0.sqlite" NVTX_EVENTS)
  [ "$same_k" = 1 ] && [ "$same_n" = 1 ] || { echo "align_cap.sh: row counts differ at cap $cap" >&2; exit 1; }
  echo "| $cap | $thinned | ${nth:-1} | $(misalignment "$db") | $kmax | $nmax |"
done
