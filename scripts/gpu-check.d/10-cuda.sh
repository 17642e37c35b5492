#!/usr/bin/env bash
# 10-cuda: CUDA tracing on a real GPU. Runs samples/cuda/cuda_streams under gtrace in several modes
# and checks the exported rows exactly (counts per kernel, copy kind, memset, graph launch, event,
# sync and API name; correlation joins; timestamps; NVTX containment; TARGET_INFO against
# nvidia-smi; capture windows; graph node mode; memory usage; fork; CUDA_INJECTION64_PATH alone).
# Appends PASS/FAIL/SKIP lines to $GT_RESULTS. Environment: see scripts/gpu-check.d/README.md.
# expected-minutes: 1 (measured: 4 s on an NVIDIA H200, 2026-11-26; gpu-check.sh --list)
set -u
. "$GT_SRC/scripts/gpu-check.d/common.bash"
gt_require_gpu 10-cuda
name=10-cuda

app="$GT_BUILD/bin/cuda_streams"
gtrace="$GT_BUILD/bin/gtrace"
lib="$GT_BUILD/lib/libgtrace.so"
if [ ! -x "$app" ]; then
  res FAIL build "$app missing: was the build configured with nvcc on PATH (CMake finds the CUDA compiler)?"
  exit 1
fi
py=$(command -v python3 || true)
if [ -z "$py" ]; then res FAIL setup "python3 is needed for the SQL checks"; exit 1; fi
work="$GT_WORK/10-cuda"
mkdir -p "$work"
gpu_name=$(nvidia-smi --query-gpu=name --format=csv,noheader -i 0 | head -1)
gpu_uuid=$(nvidia-smi --query-gpu=uuid --format=csv,noheader -i 0 | head -1 | sed 's/^GPU-//' | tr 'A-Z' 'a-z')
echo "GPU 0: $gpu_name $gpu_uuid"
export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0}

# The SQL checks: cuda_rows_check.py MODE DB -> PASS/FAIL lines on stdout, exit 1 on any FAIL.

run_check() {  # MODE DB
  out=$("$py" "$GT_SRC/scripts/gpu-check.d/cuda_rows_check.py" "$1" "$2" "$gpu_name" "$gpu_uuid" 2>&1)
  rc=$?
  echo "$out"
  echo "$out" | grep '^FAIL' | sed "s|^FAIL |FAIL $name/|" >> "$GT_RESULTS"
  if [ "$rc" -eq 0 ]; then
    res PASS "$1" "$(echo "$out" | grep -c '^PASS') checks ($(echo "$out" | grep '^INFO' | sed 's/^INFO //' | tr '\n' ';'))"
  elif [ -z "$(echo "$out" | grep '^FAIL')" ]; then
    res FAIL "$1" "checker failed: $(echo "$out" | tail -3 | tr '\n' ' ')"
  fi
}

# profile MODE [gtrace flags...] -- [app args...]
profile() {
  local mode=$1
  shift
  rm -f "$work/$mode".*
  gt_timeout 300 "$gtrace" profile -t cuda,nvtx -o "$work/$mode" --export sqlite "$@" >"$work/$mode.out" 2>"$work/$mode.err"
  local rc=$?
  cat "$work/$mode.out" "$work/$mode.err"
  if [ "$rc" -ne 0 ] || ! grep -q '^ok$' "$work/$mode.out"; then
    res FAIL "$mode" "cuda_streams under gtrace exited $rc (see $work/$mode.err)"
    return 1
  fi
  if grep '^gtrace:' "$work/$mode.err" | grep -v 'gtrace: wrote' | grep -q .; then
    res FAIL "$mode" "unexpected gtrace messages: $(grep '^gtrace:' "$work/$mode.err" | grep -v 'wrote' | head -3 | tr '\n' ' ')"
  fi
  run_check "$mode" "$work/$mode.sqlite"
}

# Baseline without gtrace: the sample itself must work (including its forked child).
if gt_timeout 120 "$app" --iterations 30 --fork >"$work/baseline.out" 2>&1 && grep -q '^child status 0$' "$work/baseline.out"; then
  res PASS baseline "cuda_streams runs without gtrace"
else
  res FAIL baseline "cuda_streams fails without gtrace: $(tail -3 "$work/baseline.out" | tr '\n' ' ')"
  exit 1
fi

profile full -- "$app" --iterations 30
profile window --capture-range=cudaProfilerApi -- "$app" --iterations 30 --window
profile node --cuda-graph-trace=node -- "$app" --iterations 30
profile nvtx --capture-range=nvtx --nvtx-capture=iteration --capture-range-end=repeat:3 -- "$app" --iterations 30
profile memory --cuda-memory-usage -- "$app" --iterations 30

# Reports run on the real export.
if "$gtrace" stats -r cuda_api_sum,cuda_gpu_kern_sum,cuda_gpu_mem_time_sum,cuda_gpu_mem_size_sum,cuda_gpu_trace,cuda_api_trace,nvtx_gpu_proj_sum \
     "$work/full.sqlite" >"$work/stats.txt" 2>&1; then
  ops=$("$gtrace" stats -r nvtx_gpu_proj_sum --format csv "$work/full.sqlite" | awk -F, '$1==":iteration"{print $11}')
  # 30 iterations x (2 kernels + 4 copies + 1 memset); graph launches are not in the report's op tables.
  if [ "$ops" = "210" ]; then res PASS stats "7 reports ran; nvtx_gpu_proj_sum :iteration has 210 GPU ops"
  else res FAIL stats "nvtx_gpu_proj_sum :iteration GPU ops = '$ops', want 210"; fi
else
  res FAIL stats "a report failed: $(tail -3 "$work/stats.txt" | tr '\n' ' ')"
fi

# LD_PRELOAD alone, with a forked child after CUDA was initialized: CUPTI must be inert in the child
# (a CUPTI flush there hangs), the parent's trace complete, exit codes unchanged.
rm -rf "$work/fork" && mkdir -p "$work/fork"
if GTRACE_OUTPUT="$work/fork/t-%p" LD_PRELOAD="$lib" gt_timeout 120 "$app" --iterations 30 --fork >"$work/fork.out" 2>"$work/fork.err" &&
   grep -q '^child status 0$' "$work/fork.out" && grep -q '^ok$' "$work/fork.out"; then
  n=$(ls "$work/fork/"*.gtrace 2>/dev/null | wc -l)
  if [ "$n" -eq 2 ] && "$gtrace" export -o "$work/fork.sqlite" "$work/fork/"*.gtrace >/dev/null 2>&1; then
    res PASS fork "child exited 0, 2 streams exported"
    run_check full "$work/fork.sqlite"
  else
    res FAIL fork "expected 2 streams that export, got $n"
  fi
else
  res FAIL fork "preloaded run with fork failed or hung: $(tail -3 "$work/fork.err" | tr '\n' ' ')"
fi

# CUDA_INJECTION64_PATH alone (no preload): the driver loads libgtrace.so in cuInit.
rm -rf "$work/inject" && mkdir -p "$work/inject"
if GTRACE_OUTPUT="$work/inject/t" CUDA_INJECTION64_PATH="$lib" gt_timeout 120 "$app" --iterations 30 >"$work/inject.out" 2>"$work/inject.err" &&
   "$gtrace" export -o "$work/inject.sqlite" "$work/inject/t.gtrace" >/dev/null 2>&1; then
  run_check inject "$work/inject.sqlite"
else
  res FAIL inject "CUDA_INJECTION64_PATH run wrote no usable stream: $(tail -3 "$work/inject.err" | tr '\n' ' ')"
fi
exit 0
