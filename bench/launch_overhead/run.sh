#!/usr/bin/env bash
# Launch-overhead benchmark (GPU machine, run by hand):
#
#   bash bench/launch_overhead/run.sh [BUILD_DIR]     (default: build)
#
# Runs, in one go, the empty-kernel loop of launch_overhead.cu (N = 200000 launches x R = 5
# repetitions, medians) with:
#   none      no profiler
#   floor     a bare CUPTI subscriber enabling gtrace's activity kinds, no-op consumer
#   gtrace    the same binary under LD_PRELOAD=libgtrace.so (everything recorded)
#   window    gtrace with --capture-range=cudaProfilerApi around 10 % of the launches
# and a PyTorch op loop (x.add_(1)) with no profiler, torch.profiler and gtrace. Writes
# bench/launch_overhead/results/<host>-<utc time>.txt with the medians and the ratios, and checks:
#   - every measurement is valid: the floor and gtrace recorded exactly the kernels launched (or, for
#     window, exactly the window's), torch.profiler recorded every op's kernel — otherwise exit 1;
#   - target: gtrace's added cost (gtrace - none) <= 1.10 x the floor's (floor - none) — exit 3 if missed.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
build=$(cd "$src" && cd "${1:-build}" && pwd)
bin="$build/bin/launch_overhead"
lib="$build/lib/libgtrace.so"
gtrace="$build/bin/gtrace"
N=${LAUNCHES:-200000}
R=${REPS:-5}
W=1000
TORCH_OPS=${TORCH_OPS:-50000}
die() { echo "run.sh: $*" >&2; exit 1; }
command -v nvidia-smi >/dev/null || die "no NVIDIA driver on this machine"
[ -x "$bin" ] || die "$bin missing: build with nvcc available (CMake finds the CUDA compiler)"
[ -f "$lib" ] && [ -x "$gtrace" ] || die "libgtrace.so or gtrace missing in $build"
py=$(command -v python3 || true)
[ -n "$py" ] || die "python3 is needed"
work=$(mktemp -d /tmp/gtrace-bench-XXXXXX)
mkdir -p "$here/results"
out="$here/results/$(hostname)-$(date -u +%Y%m%dT%H%M%SZ).txt"
export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0}

median() { awk '/^median/ {for (i = 2; i < NF; i += 2) if ($i == "'"$2"'") print $(i + 1)}' "$1"; }
count_kernels() {  # DB -> KERNEL rows
  "$py" -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL").fetchone()[0])' "$1"
}

echo "== none"
"$bin" --mode none --launches "$N" --reps "$R" --warmup "$W" | tee "$work/none.txt"
echo "== floor"
"$bin" --mode floor --launches "$N" --reps "$R" --warmup "$W" | tee "$work/floor.txt"
got=$(awk '/^kernels_recorded/ {print $2}' "$work/floor.txt")
[ "$got" = "$((R * (N + W)))" ] || die "floor subscriber recorded $got kernels, expected $((R * (N + W))): invalid floor"

echo "== gtrace"
rm -f "$work"/g.*
GTRACE_OUTPUT="$work/g" LD_PRELOAD="$lib" "$bin" --mode none --launches "$N" --reps "$R" --warmup "$W" \
  2> "$work/gtrace.err" | tee "$work/gtrace.txt"
if grep -q '^gtrace:' "$work/gtrace.err"; then die "gtrace complained: $(grep '^gtrace:' "$work/gtrace.err" | head -3)"; fi
"$gtrace" export -o "$work/g.sqlite" "$work/g.gtrace" >/dev/null
got=$(count_kernels "$work/g.sqlite")
[ "$got" = "$((R * (N + W)))" ] || die "gtrace recorded $got kernels, expected $((R * (N + W))): invalid gtrace run"

echo "== window"
rm -f "$work"/w.*
GTRACE_OUTPUT="$work/w" GTRACE_CAPTURE_RANGE=cudaProfilerApi GTRACE_CAPTURE_RANGE_END=repeat LD_PRELOAD="$lib" \
  "$bin" --mode window --launches "$N" --reps "$R" --warmup "$W" 2> "$work/window.err" | tee "$work/window.txt"
"$gtrace" export -o "$work/w.sqlite" "$work/w.gtrace" >/dev/null
in_window=$((N * 55 / 100 - N * 45 / 100))
got=$(count_kernels "$work/w.sqlite")
[ "$got" = "$((R * in_window))" ] || die "window run recorded $got kernels, expected $((R * in_window)): invalid window run"
echo "== window, no profiler (the same loop with cudaProfilerStart/Stop calls only)"
"$bin" --mode window --launches "$N" --reps "$R" --warmup "$W" | tee "$work/window-none.txt"

torch_line="torch: not measured (no PyTorch with CUDA)"
if "$py" -c 'import torch,sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
  echo "== torch: none / torch.profiler / gtrace"
  "$py" "$here/torch_launch.py" --ops "$TORCH_OPS" --reps "$R" | tee "$work/t-none.txt"
  "$py" "$here/torch_launch.py" --ops "$TORCH_OPS" --reps "$R" --profiler torch | tee "$work/t-prof.txt"
  got=$(awk '/^kernels_recorded/ {print $2}' "$work/t-prof.txt")
  [ "$got" -ge "$((R * TORCH_OPS))" ] || die "torch.profiler recorded $got kernels, expected at least $((R * TORCH_OPS))"
  rm -f "$work"/tg.*
  GTRACE_OUTPUT="$work/tg" LD_PRELOAD="$lib" "$py" "$here/torch_launch.py" --ops "$TORCH_OPS" --reps "$R" \
    2> "$work/t-gtrace.err" | tee "$work/t-gtrace.txt"
  "$gtrace" export -o "$work/tg.sqlite" "$work/tg.gtrace" >/dev/null
  got=$(count_kernels "$work/tg.sqlite")
  [ "$got" -ge "$((R * TORCH_OPS))" ] || die "gtrace recorded $got kernels in the torch loop, expected at least $((R * TORCH_OPS))"
  tn=$(median "$work/t-none.txt" ns_per_op); tp=$(median "$work/t-prof.txt" ns_per_op); tg=$(median "$work/t-gtrace.txt" ns_per_op)
  torch_line=$(awk -v n="$tn" -v p="$tp" -v g="$tg" 'BEGIN { printf "torch x.add_(1): none %.1f ns/op, torch.profiler %.1f (x%.3f), gtrace %.1f (x%.3f); added: torch.profiler %.1f, gtrace %.1f ns/op", n, p, p / n, g, g / n, p - n, g - n }')
fi

for m in none floor gtrace; do
  eval "h_$m=$(median "$work/$m.txt" host_ns_per_launch)"
  eval "t_$m=$(median "$work/$m.txt" total_ns_per_launch)"
done
w_out=$(median "$work/window.txt" outside_ns_per_launch)
w_in=$(median "$work/window.txt" inside_ns_per_launch)
wn_out=$(median "$work/window-none.txt" outside_ns_per_launch)
summary=$(awk -v hn="$h_none" -v hf="$h_floor" -v hg="$h_gtrace" -v tn="$t_none" -v tf="$t_floor" -v tg="$t_gtrace" \
  -v wo="$w_out" -v wi="$w_in" -v wno="$wn_out" 'BEGIN {
  printf "host ns/launch (median of %s reps of %s launches): none %.1f, floor %.1f, gtrace %.1f\n", "'"$R"'", "'"$N"'", hn, hf, hg
  printf "total ns/launch (until cudaDeviceSynchronize):     none %.1f, floor %.1f, gtrace %.1f\n", tn, tf, tg
  fa = hf - hn; ga = hg - hn
  printf "added host cost: floor %.1f ns, gtrace %.1f ns; gtrace/floor added = %.3f (target <= 1.10)\n", fa, ga, (fa > 0 ? ga / fa : 0)
  printf "ratios to none: floor x%.3f, gtrace x%.3f\n", hf / hn, hg / hn
  printf "window (10%% of launches): outside %.1f ns/launch (same loop without gtrace: %.1f, x%.3f), inside %.1f\n", wo, wno, wo / wno, wi
  if (fa > 0 && ga / fa <= 1.10) print "TARGET MET"; else print "TARGET MISSED"
}')
{
  echo "launch_overhead $(date -u +%FT%TZ) on $(hostname)"
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | sed 's/^/GPU: /'
  echo "gtrace: $("$gtrace" --version 2>/dev/null || echo "$build")"
  echo "$summary"
  echo "$torch_line"
} | tee "$out"
echo "results: $out"
rm -rf "$work"
grep -q '^TARGET MET' "$out" || exit 3
