#!/usr/bin/env bash
# 31-metrics-cost: GPU metrics' overhead at 10 kHz and the range profiler (split from 30-metrics).
# Workload: samples/cuda/gpu_metrics_workload.py (a copy kernel and a tensor-core GEMM, torch).
#  3. Overhead: the timed copy+GEMM loop under gtrace (-t cuda,nvtx) with and without 10 kHz sampling,
#     alternated, 3 runs each: the median slowdown is reported; FAIL above 5 %.
#  4. The range profiler: NVTX mode (DRAM bytes read in "copy" within 10 % of copies x size) and
#     kernel mode (every per-kernel row mapped to its kernel launch, its gpu__time_duration inside the
#     launch call; within 25 % of the traced kernel's duration where CUPTI gave the kernel timestamps --
#     on an H200 with CUDA 13.0 it gave the profiled kernels none: a SKIP that says so).
# Counters unavailable (no permission, DCGM holding them): SKIP with gtrace's own line.
# expected-minutes: 1 (measured: 46 s on an NVIDIA H200, 2026-11-26; gpu-check.sh --list)
set -u
. "$GT_SRC/scripts/gpu-check.d/common.bash"
gt_require_gpu 31-metrics-cost
name=31-metrics-cost
gt_metrics_setup 31-metrics-cost

# 3. Overhead of sampling at 10 kHz.
times_base=() times_pm=()
for i in 1 2 3; do
  for mode in base pm; do
    extra=()
    [ "$mode" = pm ] && extra=(--gpu-metrics-devices=0 --gpu-metrics-frequency=10000)
    out=$(gt_timeout 600 "$gtrace" profile -o "$work/t-$mode-$i" -t cuda,nvtx "${extra[@]}" \
          "$py" "$wl" --mode time --iters 300 --copy-mib "$copy_mib" 2>>"$work/time.err" | grep '^elapsed_s=')
    t=${out#elapsed_s=}
    if [ "$mode" = pm ] && grep -q '^gtrace: GPU metrics off' "$work/time.err"; then
      line=$(grep '^gtrace: GPU metrics off' "$work/time.err" | head -1)
      if grep -q 'INSUFFICIENT_PRIVILEGES\|held by another profiler' "$work/time.err"; then
        res SKIP all "counters unavailable here; gtrace said: $line"
      else
        res FAIL overhead "$line"
      fi
      exit 0
    fi
    [ -n "$t" ] || { res FAIL overhead "timed run $mode/$i failed: $(tail -2 "$work/time.err" | tr '\n' ' ')"; exit 1; }
    if [ "$mode" = base ]; then times_base+=("$t"); else times_pm+=("$t"); fi
  done
done
"$py" - "${times_base[@]}" "${times_pm[@]}" <<'PY' | relay
import statistics, sys
v = [float(x) for x in sys.argv[1:]]
base, pm = statistics.median(v[:3]), statistics.median(v[3:])
slow = (pm / base - 1) * 100
print(f"{'PASS' if slow <= 5.0 else 'FAIL'} overhead-10khz: copy+GEMM loop {base:.3f} s traced, {pm:.3f} s traced + "
      f"10 kHz sampling: {slow:+.2f} % (median of 3; budget 5 %)")
PY

# 4. Range profiler.
if gt_timeout 600 "$gtrace" profile -o "$work/rn" -t cuda,nvtx --gpu-metrics-ranges=nvtx:copy --export=sqlite \
     "$py" "$wl" --mode run --seconds 0.5 --copy-mib "$copy_mib" >"$work/rn.out" 2>"$work/rn.err"; then
  "$py" "$cmp" ranges "$work/rn.sqlite" "$copy_mib" | relay
else
  res FAIL range-profiler-nvtx "run failed: $(tail -3 "$work/rn.err" | tr '\n' ' ')"
fi
if gt_timeout 600 "$gtrace" profile -o "$work/rk" -t cuda,nvtx --gpu-metrics-ranges=kernel --export=sqlite \
     "$py" "$wl" --mode ncu --copy-mib 256 --gemm-n 2048 >"$work/rk.out" 2>"$work/rk.err"; then
  grep -q 'serialises every kernel launch' "$work/rk.err" ||
    res FAIL range-profiler-kernel-warning "no serialisation warning in: $(grep '^gtrace:' "$work/rk.err" | head -2)"
  "$py" "$cmp" kernels "$work/rk.sqlite" | relay
else
  res FAIL range-profiler-kernel "run failed: $(tail -3 "$work/rk.err" | tr '\n' ' ')"
fi
[ -n "${OUT:-}" ] && cp "$work"/*.txt "$OUT/" 2>/dev/null
exit 0
