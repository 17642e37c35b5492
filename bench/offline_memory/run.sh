#!/usr/bin/env bash
# Peak RSS and time of `gtrace export` and `gtrace stats --report nvtx_sum` against input size, for a
# baseline binary and this build, alternating (base, new, base, new, ...) in one run; medians.
#
#   bash bench/offline_memory/run.sh BUILD BASE_GTRACE [EVENTS...]
#     BUILD        this build (BUILD/bin/gtrace, BUILD/bin/make_stream)
#     BASE_GTRACE  the baseline `gtrace` binary (e.g. main's HEAD built in another directory)
#     EVENTS       stream sizes in NVTX events (default: 1000000 10000000 50000000)
#   ROUNDS=3 (export rounds per size; stats runs once per binary: it is slower and its RSS is the point)
#   KIND=nvtx (make_stream --kind: nvtx, graph for CUDA graph-trace rows with their launches, nccl for
#   NCCL plugin events, ranges for range-profiler result rows with their kernels; with
#   a kind other than nvtx, only the export step runs, and the two binaries' outputs are compared with `sqlite3 .dump`
#   at the first size, when sqlite3 is installed, all but the rows of META_DATA_EXPORT and GTRACE_RANKS, which hold the export's time, path and session id)
#   WORK=dir (scratch; default a temp dir, removed at the end)
#
# Streams come from bench/export_speed/make_stream (push/pop pairs on 8 threads, 101 distinct names,
# 8192 events per chunk). Peak RSS is /usr/bin/time's maximum resident set size of the command; CPU
# is its user + system seconds (on a shared machine the wall time also measures the neighbours).
# Prints one markdown table row per (size, step) and checks that the two binaries' nvtx_sum outputs
# are byte-identical.
set -euo pipefail
BUILD=${1:?usage: run.sh BUILD BASE_GTRACE [EVENTS...]}
BASE=${2:?usage: run.sh BUILD BASE_GTRACE [EVENTS...]}
shift 2
EVENTS=("$@")
[ ${#EVENTS[@]} -gt 0 ] || EVENTS=(1000000 10000000 50000000)
ROUNDS=${ROUNDS:-3}
KIND=${KIND:-nvtx}
NEW="$BUILD/bin/gtrace"
MAKE="$BUILD/bin/make_stream"
for b in "$NEW" "$BASE" "$MAKE" /usr/bin/time; do
  [ -x "$b" ] || { echo "run.sh: $b is missing (build gtrace_cli and make_stream; apt-get install time)" >&2; exit 1; }
done
if [ -n "${WORK:-}" ]; then mkdir -p "$WORK"; work=$WORK; else work=$(mktemp -d); trap 'rm -rf "$work"' EXIT; fi

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

echo "| events | stream MB | step | base peak RSS MB | new peak RSS MB | base wall s | new wall s | base CPU s | new CPU s | new/base CPU |"
echo "|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|"
for n in "${EVENTS[@]}"; do
  "$MAKE" "$work/s.gtrace" --events "$n" --kind "$KIND" >/dev/null
  mb=$(( $(stat -c %s "$work/s.gtrace") / 1000000 ))
  rm -f "$work"/export-* "$work"/stats-*
  for ((r = 0; r < ROUNDS; ++r)); do
    rm -f "$work/base.sqlite" "$work/new.sqlite"
    measure export-base "$BASE" export -o "$work/base.sqlite" "$work/s.gtrace"
    measure export-new "$NEW" export -o "$work/new.sqlite" "$work/s.gtrace"
  done
  steps="export stats"
  if [ "$KIND" != nvtx ]; then
    steps=export
    if [ "$n" = "${EVENTS[0]}" ] && command -v sqlite3 >/dev/null; then
      # META_DATA_EXPORT (export time and duration, output path) and GTRACE_RANKS (its sessionId is
      # new for every export) differ by design.
      sqlite3 "$work/base.sqlite" .dump | grep -Ev '^INSERT INTO (META_DATA_EXPORT|GTRACE_RANKS) ' >"$work/base.dump"
      sqlite3 "$work/new.sqlite" .dump | grep -Ev '^INSERT INTO (META_DATA_EXPORT|GTRACE_RANKS) ' >"$work/new.dump"
      cmp -s "$work/base.dump" "$work/new.dump" || { echo "run.sh: export dumps differ at $n events" >&2; exit 1; }
      echo "(sqlite3 .dump of both exports identical, META_DATA_EXPORT and GTRACE_RANKS rows aside, at $n events: $(wc -l <"$work/new.dump") lines)" >&2
      rm -f "$work/base.dump" "$work/new.dump"
    fi
  fi
  if [ "$KIND" = nvtx ]; then
    measure stats-base sh -c "'$BASE' stats --report nvtx_sum --format csv '$work/base.sqlite' >'$work/base.csv'"
    measure stats-new sh -c "'$NEW' stats --report nvtx_sum --format csv '$work/new.sqlite' >'$work/new.csv'"
    cmp -s "$work/base.csv" "$work/new.csv" || { echo "run.sh: nvtx_sum outputs differ at $n events" >&2; exit 1; }
  fi
  for step in $steps; do
    bk=$(median "$work/$step-base" 2); nk=$(median "$work/$step-new" 2)
    bs=$(median "$work/$step-base" 1); ns=$(median "$work/$step-new" 1)
    bc=$(median "$work/$step-base" 3); nc=$(median "$work/$step-new" 3)
    ratio=$(awk -v a="$nc" -v b="$bc" 'BEGIN {printf "%.2f", a / b}')
    mib() { awk -v k="$1" 'BEGIN {printf "%.0f", k / 1024}'; }
    echo "| $n | $mb | $step | $(mib "$bk") | $(mib "$nk") | $bs | $ns | $bc | $nc | $ratio |"
  done
done
