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
#  3. Record once (docs/capture.md, "GPU metrics"): with GTRACE_RAW_CAPTURE_DIR, the PM-sampling
#     counter-data images of the copy phase (10 kHz, the NVTX range "copy" as capture window) and the
#     range profiler's image of one "copy" range (nvtx:copy), each with its manifest.json, checked by
#     metrics_capture_check.py and copied to $OUT/capture/<kind>/metrics-{pm,range}/: commit them as
#     tests/data/gpu/<kind>/metrics-{pm,range}/ and replay.RealMetricsCapture replays them on CPU.
# (The sampling overhead and the range profiler: 31-metrics-cost.sh, a part of its own so that each
# ends within 8 minutes.)
# Counters unavailable (no permission, DCGM holding them): SKIP with gtrace's own line.
# expected-minutes: 1 (measured: 37 s on an NVIDIA H200, 2026-11-26; gpu-check.sh --list)
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

# 3. Record once: the raw counter-data images of a known workload (about 30 s of GPU-machine time).
gpu_name=$(nvidia-smi --query-gpu=name --format=csv,noheader -i 0 | head -1)
driver=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader -i 0 | head -1)
cuda_version=$(nvidia-smi | grep -o 'CUDA Version: [0-9.]*' | head -1 | awk '{print $3}')
kind=$(printf '%s-cuda%s' "$gpu_name" "${cuda_version:-unknown}" | tr 'A-Z ' 'a-z-' | tr -cd 'a-z0-9.-')
capture_root="$work/capture/$kind"
for what in pm range; do
  if [ "$what" = pm ]; then
    flags=(--gpu-metrics-devices=0 --capture-range=nvtx --nvtx-capture=copy)
  else
    flags=(--gpu-metrics-ranges=nvtx:copy)
  fi
  # 0.5 s: on an H200 (2026-11-26) a 0.1 s "copy" window gave PM sampling no completed sample at all
  # (the first samples came about 100 ms after the GPU got busy); a 0.5 s one gave 4,015.
  args=(--mode run --seconds 0.5 --copy-mib 512)
  scenario="samples/cuda/gpu_metrics_workload.py ${args[*]}; gtrace profile -t cuda,nvtx ${flags[*]}"
  rm -rf "$work/cap-$what" "$capture_root/metrics-$what"
  mkdir -p "$capture_root/metrics-$what"
  if ! GTRACE_RAW_CAPTURE_DIR="$work/cap-$what" GTRACE_RAW_CAPTURE_SCENARIO="$scenario" \
       gt_timeout 300 "$gtrace" profile -o "$work/cap-$what" -t cuda,nvtx "${flags[@]}" "$py" "$wl" "${args[@]}" \
       >"$work/cap-$what.out" 2>"$work/cap-$what.err"; then
    res FAIL "capture-$what" "workload with raw capture failed: $(tail -3 "$work/cap-$what.err" | tr '\n' ' ')"
    continue
  fi
  cap=$(ls "$work/cap-$what"/metrics-*.gtcap 2>/dev/null | head -1)
  if [ -z "$cap" ]; then
    res FAIL "capture-$what" "no metrics-*.gtcap: $(grep '^gtrace:' "$work/cap-$what.err" | head -3 | tr '\n' ' ')"
    continue
  fi
  cp "$cap" "$capture_root/metrics-$what/"  # the CUPTI capture-*.gtcap of this run stays behind (15-capture's job)
  "$py" "$GT_SRC/scripts/gpu-check.d/metrics_capture_check.py" "$capture_root/metrics-$what/$(basename "$cap")" \
    "$what" "$kind" "$gpu_name" "$driver" "${cuda_version:-unknown}" "$scenario" | relay
done
if [ -n "${OUT:-}" ] && [ -d "$capture_root" ]; then
  mkdir -p "$OUT/capture"
  cp -r "$capture_root" "$OUT/capture/"
  echo "GPU-metrics captures copied to $OUT/capture/$kind: commit metrics-pm/ and metrics-range/ as tests/data/gpu/$kind/"
fi

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
