#!/usr/bin/env bash
# 90-bench: the GPU benchmarks issue 13 asks for, each in one run with its floor (results come back in
# this part's files and its summary lines):
#  1. bench/launch_overhead/run.sh: ns added per empty-kernel launch with no profiler, a bare CUPTI
#     subscriber with gtrace's activity kinds (the floor), gtrace, a capture window over 10 % of the
#     loop, and the torch op loop with torch.profiler and gtrace (targets: <= 1.10x the floor's added
#     cost, <= 0.5x torch.profiler's). Needs bin/launch_overhead in the kit (built where nvcc is).
#  2. bench/torch_e2e/run.sh: a small transformer's step time bare, under gtrace -t cuda,nvtx,nccl and
#     with 10 kHz GPU metrics (targets: <= 2 %, <= 5 %), alternating, 3 processes each.
# Each benchmark's own output file is copied to $OUT. Env: see scripts/gpu-check.sh.
# expected-minutes: 5 (not yet measured on a GPU; gpu-check.sh --list)
set -u
. "$GT_SRC/scripts/gpu-check.d/common.bash"
gt_require_gpu 90-bench
name=90-bench
work=$GT_WORK/bench
mkdir -p "$work"

# 1. Launch overhead.
missing=""
if [ -x "$GT_BUILD/bin/launch_overhead.bin" ]; then  # the kit's program, with its wrapper's library path
  cuda=${CUDA_HOME:-/usr/local/cuda}
  missing=$(LD_LIBRARY_PATH="$GT_BUILD/lib:$cuda/lib64:$cuda/extras/CUPTI/lib64:$cuda/targets/x86_64-linux/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
    ldd "$GT_BUILD/bin/launch_overhead.bin" 2>&1 | awk '/not found/ {print $1}' | tr '\n' ' ')
fi
if [ ! -x "$GT_BUILD/bin/launch_overhead" ]; then
  res SKIP launch-overhead "bin/launch_overhead is not in the kit (make the kit where nvcc and libcupti are)"
elif ! python3 -c 'import ctypes; ctypes.CDLL("libcuda.so.1")' 2>/dev/null; then
  res SKIP launch-overhead "no CUDA driver library (libcuda.so.1) on this machine"
elif [ -n "$missing" ]; then
  res SKIP launch-overhead "libraries the benchmark needs are not found here: $missing(set CUDA_HOME)"
else
  touch "$work/start"
  LAUNCHES=${LAUNCHES:-100000} REPS=${REPS:-5} TORCH_OPS=${TORCH_OPS:-20000} \
    gt_timeout 240 bash "$GT_SRC/bench/launch_overhead/run.sh" "$GT_BUILD" >"$work/launch.log" 2>&1
  rc=$?
  find "$GT_SRC/bench/launch_overhead/results" -name '*.txt' -newer "$work/start" -exec cp {} "$OUT/" \; 2>/dev/null
  summary=$(grep -E "^(gtrace|floor|window|torch|TARGET)" "$work/launch.log" | tr '\n' ';' | cut -c1-600)
  case $rc in
    0) res PASS launch-overhead "$summary" ;;
    3) res FAIL launch-overhead "target missed: $summary" ;;
    *) res FAIL launch-overhead "run.sh exited $rc: $(tail -3 "$work/launch.log" | tr '\n' ' ')" ;;
  esac
fi

# 2. Training-loop slowdown.
if ! python3 -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
  res SKIP torch-e2e "no PyTorch with a usable CUDA device"
else
  touch "$work/start2"
  gt_timeout 300 bash "$GT_SRC/bench/torch_e2e/run.sh" "$GT_BUILD" 3 >"$work/torch.log" 2>&1
  rc=$?
  find "$GT_SRC/bench/results" -name '*-gpu-torch.md' -newer "$work/start2" -exec cp {} "$OUT/" \; 2>/dev/null
  rows=$(grep -E '^\| (bare|gtrace|metrics|nsys) ' "$work/torch.log" | tr '\n' ' ' | cut -c1-400)
  if [ "$rc" -eq 0 ] && [ -n "$rows" ]; then res PASS torch-e2e "$rows"; else res FAIL torch-e2e "run.sh exited $rc: $(tail -3 "$work/torch.log" | tr '\n' ' ')"; fi
fi
exit 0
