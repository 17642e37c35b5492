#!/usr/bin/env bash
# 00-quick: the highest-risk points, under 5 minutes: preload, injection, rows, windows, torch.
# Run it first on a GPU machine (gpu-check.sh --part 0); what fails here is fixed before anything else.
#  1. cuda_streams under LD_PRELOAD=libgtrace.so alone (no `gtrace profile`, no injection variable):
#     kernel, memcpy, memset, event, sync and runtime-API rows with exact counts; correlation ids
#     join every GPU row to its API call; GPU work starts after its API call and inside the
#     process's API span; TARGET_INFO against nvidia-smi (cuda_rows_check.py, mode full).
#  2. The same with CUDA_INJECTION64_PATH alone (the driver loads libgtrace.so in cuInit).
#  3. LD_PRELOAD + GTRACE_CAPTURE_RANGE=cudaProfilerApi, cuda_streams --window: only the window's
#     iterations, and the window's open/close diagnostics.
#  4. PyTorch under LD_PRELOAD with a cudaProfilerStart/Stop window (samples/cuda/torch_steps.py):
#     kernels recorded, every kernel joined to its launch, nothing from gtrace on stderr.
#  5. torch.profiler inside a gtrace process: the application runs to its end.
# Each step is independent: a failure is reported and the next step runs.
# expected-minutes: 1 (measured: 25 s on an NVIDIA H200, 2026-11-26; gpu-check.sh --list)
# limit-seconds: 290 (under 5 minutes, whatever happens)
set -u
. "$GT_SRC/scripts/gpu-check.d/common.bash"
gt_require_gpu 00-quick
name=00-quick

app=$GT_BUILD/bin/cuda_streams
gtrace=$GT_BUILD/bin/gtrace
lib=$GT_BUILD/lib/libgtrace.so
rows=$GT_SRC/scripts/gpu-check.d/cuda_rows_check.py
work=$GT_WORK/quick
rm -rf "$work" && mkdir -p "$work"
export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0}
py=$(command -v python3 || true)
if [ -z "$py" ]; then res FAIL setup "python3 is needed for the SQL checks (the GPU image has it)"; exit 1; fi
if [ ! -x "$app" ]; then res FAIL setup "$app missing (a kit made by scripts/gpu-kit.sh has it)"; exit 1; fi
gpu_name=$(nvidia-smi --query-gpu=name --format=csv,noheader -i 0 | head -1)
gpu_uuid=$(nvidia-smi --query-gpu=uuid --format=csv,noheader -i 0 | head -1 | sed 's/^GPU-//' | tr 'A-Z' 'a-z')
echo "GPU 0: $gpu_name $gpu_uuid; $(nvidia-smi --query-gpu=driver_version --format=csv,noheader -i 0 | head -1)"
# Which CUPTI gtrace will load (a wrong or missing one is the likeliest first failure).
ldconfig -p 2>/dev/null | grep -E 'libcupti|libcudart|libcuda\.so' | sed 's/^/== /'

# rows_check MODE DB: cuda_rows_check.py's FAIL lines into the results, one PASS line when all pass.
rows_check() {
  local out rc
  out=$("$py" "$rows" "$1" "$2" "$gpu_name" "$gpu_uuid" 2>&1)
  rc=$?
  echo "$out" | tee "$work/$1-rows.txt"
  echo "$out" | grep '^FAIL' | sed "s|^FAIL |FAIL $name/|" >>"$GT_RESULTS"
  if [ "$rc" -eq 0 ]; then
    res PASS "$1" "$(echo "$out" | grep -c '^PASS') row checks ($3)"
  elif ! echo "$out" | grep -q '^FAIL'; then
    res FAIL "$1" "checker failed: $(echo "$out" | tail -3 | tr '\n' ' ')"
  fi
}

# traced MODE VAR=VALUE... -- APP ARGS: run with only the given environment added; export the
# streams it wrote into $work/MODE.sqlite; 0 when there is a database to check.
traced() {
  local mode=$1 envs=()
  shift
  while [ "$1" != -- ]; do envs+=("$1"); shift; done
  shift
  rm -rf "${work:?}/$mode" && mkdir -p "$work/$mode"
  local t0
  t0=$(gt_now)
  # env sets the variables for the application alone (not for timeout).
  gt_timeout 150 env GTRACE_OUTPUT="$work/$mode/t-%p" "${envs[@]}" "$@" >"$work/$mode.out" 2>"$work/$mode.err"
  local rc=$?
  echo "== $mode: exit $rc after $(($(gt_now) - t0)) s; $(ls "$work/$mode" | wc -l) stream(s)"
  cat "$work/$mode.err"
  if [ "$rc" -ne 0 ]; then
    res FAIL "$mode" "the application exited $rc under gtrace: $(tail -3 "$work/$mode.err" | tr '\n' ' ')"
    return 1
  fi
  if grep '^gtrace:' "$work/$mode.err" | grep -v -e 'gtrace: wrote' -e 'capture window' | grep -q .; then
    res FAIL "$mode-quiet" "gtrace printed: $(grep '^gtrace:' "$work/$mode.err" | grep -v 'gtrace: wrote' | head -3 | tr '\n' ' ')"
  fi
  local streams=("$work/$mode"/*.gtrace)
  if [ ! -e "${streams[0]}" ]; then
    res FAIL "$mode" "no stream written (CUPTI did not attach? see $mode.err)"
    return 1
  fi
  if ! gt_timeout 60 "$gtrace" export -o "$work/$mode.sqlite" "${streams[@]}" >"$work/$mode.export" 2>&1; then
    res FAIL "$mode" "gtrace export failed: $(tail -2 "$work/$mode.export" | tr '\n' ' ')"
    return 1
  fi
}

# 1-3. The CUDA sample: preload alone, injection alone, a cudaProfilerStart/Stop window.
traced full LD_PRELOAD="$lib" -- "$app" --iterations 30 && rows_check full "$work/full.sqlite" "LD_PRELOAD alone"
traced inject CUDA_INJECTION64_PATH="$lib" -- "$app" --iterations 30 &&
  rows_check inject "$work/inject.sqlite" "CUDA_INJECTION64_PATH alone"
traced window LD_PRELOAD="$lib" GTRACE_CAPTURE_RANGE=cudaProfilerApi -- "$app" --iterations 30 --window &&
  rows_check window "$work/window.sqlite" "cudaProfilerStart/Stop window"
[ -f "$work/full.sqlite" ] && gt_timeout 60 "$gtrace" stats -r cuda_api_sum,cuda_gpu_kern_sum,cuda_gpu_mem_time_sum \
  "$work/full.sqlite" >"$work/full-stats.txt" 2>&1 && head -40 "$work/full-stats.txt"

# 4-5. PyTorch.
if ! gt_timeout 120 "$py" -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' >"$work/torch-probe.txt" 2>&1; then
  res SKIP torch "no PyTorch with CUDA for $py: $(tail -1 "$work/torch-probe.txt")"
  exit 0
fi
script=$GT_SRC/samples/cuda/torch_steps.py
if traced torch LD_PRELOAD="$lib" GTRACE_CAPTURE_RANGE=cudaProfilerApi -- "$py" "$script" --mode gtrace; then
  line=$("$py" - "$work/torch.sqlite" <<'PY'
import sqlite3, sys
db = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True)
one = lambda sql: db.execute(sql).fetchone()[0]
has = lambda t: one(f"SELECT count(*) FROM sqlite_master WHERE name = '{t}'") == 1
kernels = one("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL") if has("CUPTI_ACTIVITY_KIND_KERNEL") else 0
orphans = one("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL k WHERE NOT EXISTS (SELECT 1 FROM "
              "CUPTI_ACTIVITY_KIND_RUNTIME r WHERE r.correlationId = k.correlationId AND "
              "k.globalPid = (r.globalTid & 0xFFFFFFFFFF000000))") if kernels else 0
early = one("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN CUPTI_ACTIVITY_KIND_RUNTIME r ON "
            "r.correlationId = k.correlationId AND k.globalPid = (r.globalTid & 0xFFFFFFFFFF000000) "
            "WHERE k.start < r.start") if kernels else 0
ok = kernels > 0 and orphans == 0 and early == 0
print(f"{'PASS' if ok else 'FAIL'} {kernels} kernels in the window, {orphans} without their launch, "
      f"{early} starting before it")
PY
)
  res "${line%% *}" torch-under-gtrace "${line#* }"
fi
if GTRACE_OUTPUT="$work/both-%p" LD_PRELOAD="$lib" gt_timeout 150 "$py" "$script" --mode both --out "$work/both.json" \
     >"$work/both.out" 2>"$work/both.err" && grep -q '^ok$' "$work/both.out"; then
  res PASS torch-profiler-coexistence "application unaffected; gtrace said: $(grep '^gtrace:' "$work/both.err" | head -1)"
else
  res FAIL torch-profiler-coexistence "torch.profiler inside gtrace broke the app: $(tail -3 "$work/both.err" | tr '\n' ' ')"
fi
exit 0
