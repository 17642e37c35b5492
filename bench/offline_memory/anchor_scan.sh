#!/usr/bin/env bash
# Peak RSS and CPU of the clock-alignment scan of `gtrace export` (the pass over each stream that
# finds the ends of its NCCL collectives before many streams are aligned; tools/export/anchor_scan.h)
# against the number of NCCL events: the held scan (every event in memory, as before 2026-11-26) and
# the bounded one, beside their floor (one read of the stream by the reader alone; the bounded scan
# reads it four times), alternating (floor, held, bounded, floor, ...) in one run on the same
# stream; medians.
#
#   bash bench/offline_memory/anchor_scan.sh BUILD [EVENTS...]
#     BUILD   this build (BUILD/bin/anchor_scan_bench, BUILD/bin/make_stream)
#     EVENTS  stream sizes in NCCL events (default: 1000000 10000000)
#   ROUNDS=3 (runs per scan and size); WORK=dir (scratch; default a temp dir, removed at the end)
#
# Streams: make_stream --kind nccl (each operation: CollApi, Coll, two KernelCh with GPU timers,
# ProxyOp with one state; the app thread's and the proxy thread's records in alternate chunks of 800
# operations; a clock pair per second). Peak RSS is /usr/bin/time's maximum resident set size; CPU its
# user + system seconds. The two scans' outputs (count and checksum of every collective end) must be
# identical: the script stops otherwise.
set -euo pipefail
BUILD=${1:?usage: anchor_scan.sh BUILD [EVENTS...]}
shift
EVENTS=("$@")
[ ${#EVENTS[@]} -gt 0 ] || EVENTS=(1000000 10000000)
ROUNDS=${ROUNDS:-3}
SCAN="$BUILD/bin/anchor_scan_bench"
MAKE="$BUILD/bin/make_stream"
for b in "$SCAN" "$MAKE" /usr/bin/time; do
  [ -x "$b" ] || { echo "anchor_scan.sh: $b is missing (build anchor_scan_bench and make_stream; apt-get install time)" >&2; exit 1; }
done
if [ -n "${WORK:-}" ]; then mkdir -p "$WORK"; work=$WORK; else work=$(mktemp -d); trap 'rm -rf "$work"' EXIT; fi

# measure LABEL ARGS...: appends "wall_s peak_kb cpu_s" of one run to $work/LABEL, its output to $work/LABEL.out
measure() {
  local label=$1
  shift
  /usr/bin/time -f "%e %M %U %S" -o "$work/time.out" "$SCAN" "$@" >"$work/$label.out" 2>"$work/stderr.out" ||
    { echo "anchor_scan.sh: failed: $SCAN $*" >&2; cat "$work/stderr.out" >&2; exit 1; }
  awk '{printf "%s %s %.2f\n", $1, $2, $3 + $4}' "$work/time.out" >>"$work/$label"
}
median() {  # median of column $2 of file $1
  sort -n -k"$2" "$1" | awk -v c="$2" '{v[NR]=$c} END {if (NR%2) print v[(NR+1)/2]; else printf "%.2f\n", (v[NR/2]+v[NR/2+1])/2}'
}
mib() { awk -v k="$1" 'BEGIN {printf "%.0f", k / 1024}'; }

echo "| events | stream MB | collective ends | floor peak RSS MB | held peak RSS MB | bounded peak RSS MB | floor CPU s | held CPU s | bounded CPU s | bounded/held CPU | bounded/floor CPU | held wall s | bounded wall s |"
echo "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
for n in "${EVENTS[@]}"; do
  "$MAKE" "$work/s.gtrace" --events "$n" --kind nccl >/dev/null
  mb=$(( $(stat -c %s "$work/s.gtrace") / 1000000 ))
  rm -f "$work"/floor "$work"/held "$work"/bounded
  for ((r = 0; r < ROUNDS; ++r)); do
    measure floor --floor "$work/s.gtrace"
    measure held --held "$work/s.gtrace"
    measure bounded "$work/s.gtrace"
    cmp -s "$work/held.out" "$work/bounded.out" ||
      { echo "anchor_scan.sh: outputs differ at $n events: $(cat "$work/held.out") / $(cat "$work/bounded.out")" >&2; exit 1; }
  done
  echo "($n events: both scans printed: $(cat "$work/bounded.out"))" >&2
  ends=$(sed -E 's/^ends=([0-9]+).*/\1/' "$work/bounded.out")
  fk=$(median "$work/floor" 2); hk=$(median "$work/held" 2); bk=$(median "$work/bounded" 2)
  hs=$(median "$work/held" 1); bs=$(median "$work/bounded" 1)
  fc=$(median "$work/floor" 3); hc=$(median "$work/held" 3); bc=$(median "$work/bounded" 3)
  ratio=$(awk -v a="$bc" -v b="$hc" 'BEGIN {printf "%.2f", a / b}')
  fratio=$(awk -v a="$bc" -v b="$fc" 'BEGIN {if (b > 0) printf "%.1f", a / b; else print "-"}')
  echo "| $n | $mb | $ends | $(mib "$fk") | $(mib "$hk") | $(mib "$bk") | $fc | $hc | $bc | $ratio | $fratio | $hs | $bs |"
done
