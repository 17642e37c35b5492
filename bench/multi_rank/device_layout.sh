#!/usr/bin/env bash
# What giving each GPU its own deviceId costs the export (issue 15): the same simulated job exported
# with one rank per host (CUDA ordinal 0 = the part's GPU id 0: the floor, deviceId = ordinal) and
# with PER_HOST ranks per host (ordinal = local rank != the part's GPU id 0 in most parts: deviceId
# mapped, tools/export/cuda_target_info.h DeviceColumn), alternating, REPEATS times each; the medians
# and their ratio go to bench/results/<date>-device-layout.md. CPU only.
#   RANKS=64 STEPS=40 REPEATS=5 bash bench/multi_rank/device_layout.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${BUILD_DIR:-build}
RANKS=${RANKS:-64}; PER_HOST=${PER_HOST:-8}; STEPS=${STEPS:-40}; KERNELS=${KERNELS:-100}; REPEATS=${REPEATS:-5}
JOBS=${JOBS:-2}
G="$BUILD/bin/gtrace"
work=$(mktemp -d /tmp/gtrace-devlayout-XXXXXX)
trap 'rm -rf "$work"' EXIT
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
for layout in 1 "$PER_HOST"; do
  "$BUILD/bin/sim_ranks" "$work/s$layout" --ranks "$RANKS" --per-host "$layout" --steps "$STEPS" \
    --kernels "$KERNELS" --cuda-api >/dev/null
done
for ((i = 0; i < REPEATS; ++i)); do
  for layout in 1 "$PER_HOST"; do
    s=$(date +%s%N)
    "$G" export -j "$JOBS" --force -o "$work/s$layout.sqlite" "$work/s$layout" >/dev/null 2>&1
    e=$(date +%s%N)
    echo $(((e - s) / 1000000)) >>"$work/t$layout"
  done
done
kernels=$(sqlite3 "$work/s$PER_HOST.sqlite" "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL")
gpus=$(sqlite3 "$work/s$PER_HOST.sqlite" "SELECT count(DISTINCT deviceId) FROM CUPTI_ACTIVITY_KIND_KERNEL")
m1=$(median <"$work/t1"); mp=$(median <"$work/t$PER_HOST")
ratio=$(awk -v a="$mp" -v b="$m1" 'BEGIN {printf "%.2f", a / b}')
out=bench/results/$(date -u +%F)-device-layout.md
{
  echo "# Export cost of one deviceId per GPU ($(date -u +%FT%H:%MZ))"
  echo
  echo "\`bash bench/multi_rank/device_layout.sh\` (RANKS=$RANKS STEPS=$STEPS KERNELS=$KERNELS REPEATS=$REPEATS JOBS=$JOBS),"
  echo "$(nproc) CPUs shared with other builds; $kernels kernel rows, $gpus GPUs in the merged database."
  echo
  echo "| layout | export ms (runs) | median ms |"
  echo "|---|---|---|"
  echo "| 1 rank per host (floor: deviceId = ordinal) | $(tr '\n' ' ' <"$work/t1") | $m1 |"
  echo "| $PER_HOST ranks per host (ordinal != GPU id in $((RANKS - RANKS / PER_HOST)) of $RANKS parts) | $(tr '\n' ' ' <"$work/t$PER_HOST") | $mp |"
  echo
  echo "Ratio (mapped / floor): **$ratio**."
} >"$out"
cat "$out"
