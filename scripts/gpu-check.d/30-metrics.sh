#!/usr/bin/env bash
# 30-metrics: GPU metrics on a real GPU (docs/gpu-metrics.md). samples/cuda/gpu_metrics_workload.py runs
# a bandwidth-bound copy kernel and a tensor-core GEMM (torch), each inside an NVTX range, then pinned
# H2D/D2H copies.
#  1. PM sampling at the default 10 kHz (`gtrace profile --gpu-metrics-devices=0`): the sample rate,
#     the alignment of samples with kernels (tensor activity inside the GEMM kernels, none in the copy
#     kernels), the PCIe direction (H2D = RX), and gpu_metrics_sum against a re-computation from rows.
#  2. The same kernels under Nsight Compute (`ncu --clock-control none`, the metric names gtrace's
#     selection used on this chip): DRAM read/write bandwidth of the copy kernel within 15 %, tensor-pipe
#     activity of the GEMM within 10 percentage points of gtrace's time-weighted sample averages.
# (The sampling overhead and the range profiler: 31-metrics-cost.sh, a part of its own so that each
# ends within 8 minutes.)
# Counters unavailable (no permission, DCGM holding them): SKIP with gtrace's own line.
# expected-minutes: 4 (on one H100/H200; gpu-check.sh --list)
set -u
. "$GT_SRC/scripts/gpu-check.d/common.bash"
gt_require_gpu 30-metrics
name=30-metrics
gt_metrics_setup 30-metrics

# 1. PM sampling at 10 kHz.
if ! gt_timeout 600 "$gtrace" profile -o "$work/pm" -t cuda,nvtx --gpu-metrics-devices=0 --export=sqlite \
     "$py" "$wl" --mode run --seconds 2 --copy-mib "$copy_mib" --pcie >"$work/pm.out" 2>"$work/pm.err"; then
  res FAIL pm-run "workload under gtrace failed: $(tail -3 "$work/pm.err" | tr '\n' ' ')"
  exit 1
fi
if grep -q '^gtrace: GPU metrics off' "$work/pm.err"; then
  line=$(grep '^gtrace: GPU metrics off' "$work/pm.err" | head -1)
  if grep -q 'INSUFFICIENT_PRIVILEGES\|held by another profiler' "$work/pm.err"; then
    res SKIP all "counters unavailable here; gtrace said: $line"
  else
    res FAIL pm-run "$line"
  fi
  exit 0
fi
db="$work/pm.sqlite"
[ -f "$db" ] || db=$(ls "$work"/*.sqlite 2>/dev/null | head -1)
if [ -z "$db" ] || [ ! -f "$db" ]; then res FAIL pm-export "no database: $(tail -3 "$work/pm.err" | tr '\n' ' ')"; exit 1; fi
"$gtrace" stats --report gpu_metrics_sum --format csv "$db" >"$work/report.csv" 2>"$work/report.err" ||
  res FAIL report "gpu_metrics_sum failed: $(cat "$work/report.err")"
# (python3's sqlite3: the GPU image need not have the sqlite3 shell.)
"$py" - "$db" <<'PY' 2>&1 | tee "$work/config.txt"
import sqlite3, sys
db = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True)
for sql in ["SELECT cudaId, chipName, state, triggerMode, samples, droppedSamples, hwBufferOverflows FROM GTRACE_GPU_METRICS_DEVICES",
            "SELECT metricKey, cuptiName, accepted, reason FROM GTRACE_GPU_METRICS_CONFIG"]:
    for row in db.execute(sql):
        print("|".join("" if v is None else str(v) for v in row))
PY
"$py" "$cmp" gtrace "$db" "$work/report.csv" 10000 | tee "$work/gtrace.txt" | relay

# 2. Nsight Compute on the same kernels.
if command -v ncu >/dev/null 2>&1; then
  metrics=$("$py" "$cmp" names "$db")
  if gt_timeout 900 ncu --clock-control none --metrics "$metrics" --print-kernel-base function --print-units base --csv --page raw \
       "$py" "$wl" --mode ncu --copy-mib "$copy_mib" >"$work/ncu.csv" 2>"$work/ncu.err"; then
    "$py" "$cmp" ncu "$db" "$work/ncu.csv" | tee "$work/ncu.txt" | relay
  else
    res FAIL ncu "ncu failed: $(tail -3 "$work/ncu.err" | tr '\n' ' ')"
  fi
else
  res SKIP ncu-comparison "ncu not installed"
fi

[ -n "${OUT:-}" ] && cp "$work"/*.txt "$work"/*.csv "$OUT/" 2>/dev/null
exit 0
