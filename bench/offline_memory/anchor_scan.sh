#!/usr/bin/env bash
# Peak RSS and CPU of the clock-alignment scan of `gtrace export` (the pass over each stream that
# finds the ends of its NCCL collectives before many streams are aligned; tools/export/anchor_scan.h)
# against the number of NCCL events, each scan beside its floor (one read of the stream by the reader
# alone; the scan reads it four times), alternating in one run on the same stream; medians.
#
#   bash bench/offline_memory/anchor_scan.sh BUILD [EVENTS...]
#     BUILD   this build (BUILD/bin/anchor_scan_bench, BUILD/bin/make_stream)
#     EVENTS  stream sizes in NCCL events (default: 1000000 10000000)
#   ROUNDS=3 (runs per scan and size); WORK=dir (scratch; default a temp dir, removed at the end)
#   SCANS="floor uncapped capped" (the columns, in the order they alternate):
#     floor     the reader alone, counting NCCL records
#     uncapped  ScanAnchors without a cap (--max-ops 0: one entry per operation, as before the cap)
#     capped    ScanAnchors as gtrace export runs it (at most kAnchorScanMaxOps operations held;
#               MAX_OPS=N to give another cap)
#     held      the scan before 2026-11-26 (every NCCL event held: ~650 bytes per event)
#
# Streams: make_stream --kind nccl (each operation: CollApi, Coll, two KernelCh with GPU timers,
# ProxyOp with one state; the app thread's and the proxy thread's records in alternate chunks of 800
# operations; a clock pair per second). Peak RSS is /usr/bin/time's maximum resident set size; CPU its
# user + system seconds. Outputs (count and checksum of every collective end) must be identical
# between held and uncapped always, and between uncapped and capped when the cap thinned nothing
# (seq_shift=0): the script stops otherwise. The capped scan's "operations=N held=H seq_shift=K"
# line is printed per size.
set -euo pipefail
BUILD=${1:?usage: anchor_scan.sh BUILD [EVENTS...]}
shift
EVENTS=("$@")
[ ${#EVENTS[@]} -gt 0 ] || EVENTS=(1000000 10000000)
ROUNDS=${ROUNDS:-3}
read -r -a SCAN_LIST <<<"${SCANS:-floor uncapped capped}"
SCAN="$BUILD/bin/anchor_scan_bench"
MAKE="$BUILD/bin/make_stream"
for b in "$SCAN" "$MAKE" /usr/bin/time; do
  [ -x "$b" ] || { echo "anchor_scan.sh: $b is missing (build anchor_scan_bench and make_stream; apt-get install time)" >&2; exit 1; }
done
if [ -n "${WORK:-}" ]; then mkdir -p "$WORK"; work=$WORK; else work=$(mktemp -d); trap 'rm -rf "$work"' EXIT; fi

args_of() {  # the benchmark's flags for a scan
  case $1 in
    floor) echo --floor ;;
    held) echo --held ;;
    uncapped) echo --max-ops 0 ;;
    capped) [ -n "${MAX_OPS:-}" ] && echo --max-ops "$MAX_OPS" || true ;;
    *) echo "anchor_scan.sh: unknown scan '$1'" >&2; exit 1 ;;
  esac
}
# measure LABEL: appends "wall_s peak_kb cpu_s" of one run to $work/LABEL, its output to $work/LABEL.out
measure() {
  local label=$1
  # shellcheck disable=SC2046
  /usr/bin/time -f "%e %M %U %S" -o "$work/time.out" "$SCAN" $(args_of "$label") "$work/s.gtrace" \
    >"$work/$label.out" 2>"$work/$label.err" ||
    { echo "anchor_scan.sh: failed: $SCAN $(args_of "$label") $work/s.gtrace" >&2; cat "$work/$label.err" >&2; exit 1; }
  awk '{printf "%s %s %.2f\n", $1, $2, $3 + $4}' "$work/time.out" >>"$work/$label"
}
median() {  # median of column $2 of file $1
  sort -n -k"$2" "$1" | awk -v c="$2" '{v[NR]=$c} END {if (NR%2) print v[(NR+1)/2]; else printf "%.2f\n", (v[NR/2]+v[NR/2+1])/2}'
}
mib() { awk -v k="$1" 'BEGIN {printf "%.0f", k / 1024}'; }
has() { [[ " ${SCAN_LIST[*]} " == *" $1 "* ]]; }

head="| events | stream MB |"
sep="|---:|---:|"
for s in "${SCAN_LIST[@]}"; do head+=" $s peak RSS MB |"; sep+="---:|"; done
for s in "${SCAN_LIST[@]}"; do head+=" $s CPU s |"; sep+="---:|"; done
has floor && for s in "${SCAN_LIST[@]}"; do [ "$s" = floor ] || { head+=" $s/floor CPU |"; sep+="---:|"; }; done
has uncapped && has capped && { head+=" capped/uncapped CPU |"; sep+="---:|"; }
for s in "${SCAN_LIST[@]}"; do [ "$s" = floor ] || { head+=" $s wall s |"; sep+="---:|"; }; done
echo "$head"
echo "$sep"
for n in "${EVENTS[@]}"; do
  "$MAKE" "$work/s.gtrace" --events "$n" --kind nccl >/dev/null
  mb=$(( $(stat -c %s "$work/s.gtrace") / 1000000 ))
  for s in "${SCAN_LIST[@]}"; do rm -f "$work/$s"; done
  for ((r = 0; r < ROUNDS; ++r)); do
    for s in "${SCAN_LIST[@]}"; do measure "$s"; done
    if has held && has uncapped && ! cmp -s "$work/held.out" "$work/uncapped.out"; then
      echo "anchor_scan.sh: held and uncapped differ at $n events: $(cat "$work/held.out") / $(cat "$work/uncapped.out")" >&2
      exit 1
    fi
    if has uncapped && has capped && grep -q 'seq_shift=0$' "$work/capped.err" &&
      ! cmp -s "$work/uncapped.out" "$work/capped.out"; then
      echo "anchor_scan.sh: below the cap, uncapped and capped differ at $n events" >&2
      exit 1
    fi
  done
  for s in "${SCAN_LIST[@]}"; do
    [ "$s" = floor ] || echo "($n events, $s: $(cat "$work/$s.out") $(grep -h '^operations=' "$work/$s.err" || true))" >&2
  done
  row="| $n | $mb |"
  for s in "${SCAN_LIST[@]}"; do row+=" $(mib "$(median "$work/$s" 2)") |"; done
  for s in "${SCAN_LIST[@]}"; do row+=" $(median "$work/$s" 3) |"; done
  ratio() { awk -v a="$(median "$work/$1" 3)" -v b="$(median "$work/$2" 3)" 'BEGIN {if (b > 0) printf "%.2f", a / b; else print "-"}'; }
  has floor && for s in "${SCAN_LIST[@]}"; do [ "$s" = floor ] || row+=" $(ratio "$s" floor) |"; done
  has uncapped && has capped && row+=" $(ratio capped uncapped) |"
  for s in "${SCAN_LIST[@]}"; do [ "$s" = floor ] || row+=" $(median "$work/$s" 1) |"; done
  echo "$row"
  rm -f "$work/s.gtrace"
done
