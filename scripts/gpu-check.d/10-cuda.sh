#!/usr/bin/env bash
# 10-cuda: CUDA tracing on a real GPU. Runs samples/cuda/cuda_streams under gtrace in several modes
# and checks the exported rows exactly (counts per kernel, copy kind, memset, graph launch, event,
# sync and API name; correlation joins; timestamps; NVTX containment; TARGET_INFO against
# nvidia-smi; capture windows; graph node mode; memory usage; fork; CUDA_INJECTION64_PATH alone).
# Appends PASS/FAIL/SKIP lines to $GT_RESULTS. Environment: see scripts/gpu-check.d/README.md.
set -u
name=10-cuda
res() { echo "$1 $name/$2: $3" | tee -a "$GT_RESULTS"; }

if ! command -v nvidia-smi >/dev/null 2>&1; then
  res SKIP all "no NVIDIA driver (nvidia-smi missing)"
  exit 0
fi
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

# The SQL checks: python3 check.py MODE DB -> PASS/FAIL lines on stdout, exit 1 on any FAIL.
cat > "$work/check.py" <<'PY'
import sqlite3, sys
mode, db_path, gpu_name, gpu_uuid = sys.argv[1:5]
db = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True)
failed = False
def q(sql, *a):
    return db.execute(sql, a).fetchall()
def one(sql, *a):
    r = q(sql, *a)
    return r[0][0] if r else None
def check(label, got, want):
    global failed
    ok = got == want
    failed |= not ok
    print(f"{'PASS' if ok else 'FAIL'} {mode}/{label}: got {got!r}" + ("" if ok else f", want {want!r}"))
def info(label, got):
    print(f"INFO {mode}/{label}: {got!r}")
def table(name):
    return one("SELECT count(*) FROM sqlite_master WHERE name = ?", name) == 1
def kernels(short):
    return one("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON s.id = k.shortName WHERE s.value = ?", short)
def api(name):
    return one("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME r JOIN StringIds s ON s.id = r.nameId WHERE s.value = ?", name)
def copies(kind):
    return one("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_MEMCPY WHERE copyKind = ?", kind)

iters = {"full": 30, "window": 10, "node": 30, "nvtx": 3, "memory": 30, "inject": 30}[mode]
graph_kernels = iters if mode == "node" else 0
for t in ["CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET",
          "CUPTI_ACTIVITY_KIND_RUNTIME", "TARGET_INFO_GPU", "TARGET_INFO_CUDA_DEVICE",
          "TARGET_INFO_CUDA_CONTEXT_INFO", "TARGET_INFO_CUDA_STREAM", "StringIds", "ThreadNames"]:
    check(f"table {t}", table(t), True)
check("kernels scale", kernels("scale"), iters)
check("kernels offset", kernels("offset"), iters)
check("kernels graph_k1", kernels("graph_k1"), graph_kernels)
check("kernels graph_k2", kernels("graph_k2"), graph_kernels)
check("kernel rows", one("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL"), 2 * iters + 2 * graph_kernels)
if mode == "node":
    check("graph kernels carry graph ids", one("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE graphId IS NOT NULL AND graphNodeId IS NOT NULL"), 2 * iters)
    check("no GRAPH_TRACE table in node mode", table("CUPTI_ACTIVITY_KIND_GRAPH_TRACE"), False)
else:
    check("graph launches", one("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_GRAPH_TRACE") if table("CUPTI_ACTIVITY_KIND_GRAPH_TRACE") else 0, iters)
    if iters:
        check("graph exec ids", one("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_GRAPH_TRACE WHERE graphExecId = 0"), 0)
        check("one graph", one("SELECT count(DISTINCT graphId) FROM CUPTI_ACTIVITY_KIND_GRAPH_TRACE"), 1)
check("HtoD copies", copies(1), 2 * iters)
check("DtoH copies", copies(2), iters)
check("DtoD copies", copies(8), iters)
check("pinned HtoD (srcKind 1 Pinned, dstKind 2 Device)", one("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_MEMCPY WHERE copyKind = 1 AND srcKind = 1 AND dstKind = 2"), iters)
check("pageable HtoD (srcKind 0 Pageable)", one("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_MEMCPY WHERE copyKind = 1 AND srcKind = 0"), iters)
check("memsets", one("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_MEMSET WHERE memKind = 2"), iters)
check("cuda events", one("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_CUDA_EVENT") if table("CUPTI_ACTIVITY_KIND_CUDA_EVENT") else 0, 2 * iters)
if table("CUPTI_ACTIVITY_KIND_SYNCHRONIZATION"):
    check("stream syncs (syncType 3)", one("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_SYNCHRONIZATION WHERE syncType = 3"), 2 * iters)
    info("stream-wait-event syncs (syncType 2; 1 per iteration expected)", one("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_SYNCHRONIZATION WHERE syncType = 2"))
else:
    check("stream syncs (syncType 3)", 0, 2 * iters)
launches = 2 * iters + (2 if mode in ("full", "node", "memory", "inject") else 0)  # + the 2 captured launches
check("cudaLaunchKernel calls", api("cudaLaunchKernel_v7000"), launches)
check("cudaGraphLaunch calls", api("cudaGraphLaunch_v10000"), iters)
check("cudaMemcpyAsync calls", api("cudaMemcpyAsync_v3020"), 3 * iters)
check("cudaMemcpy calls", api("cudaMemcpy_v3020"), iters)
check("cudaMemsetAsync calls", api("cudaMemsetAsync_v3020"), iters)
check("cudaEventRecord calls", api("cudaEventRecord_v3020"), 2 * iters)
check("cudaStreamWaitEvent calls", api("cudaStreamWaitEvent_v3020"), iters)
check("cudaStreamSynchronize calls", api("cudaStreamSynchronize_v3020"), 2 * iters)
check("runtime names keep the _vNNNN suffix", one("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME r JOIN StringIds s ON s.id = r.nameId WHERE r.eventClass = 0 AND s.value NOT GLOB '*_v[0-9][0-9][0-9][0-9]' AND s.value NOT GLOB '*_v[0-9][0-9][0-9][0-9][0-9]'"), 0)
for t in ["CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET",
          "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION", "CUPTI_ACTIVITY_KIND_CUDA_EVENT", "CUPTI_ACTIVITY_KIND_GRAPH_TRACE"]:
    if table(t):
        check(f"{t} rows without their API call (correlationId + globalPid)", one(
            f"SELECT count(*) FROM {t} g WHERE NOT EXISTS (SELECT 1 FROM CUPTI_ACTIVITY_KIND_RUNTIME r WHERE "
            f"r.correlationId = g.correlationId AND g.globalPid = (r.globalTid & 0xFFFFFFFFFF000000))"), 0)
check("kernels starting before their launch call", one(
    "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN CUPTI_ACTIVITY_KIND_RUNTIME r ON r.correlationId = k.correlationId "
    "WHERE k.start < r.start"), 0)
duration = one("SELECT duration FROM ANALYSIS_DETAILS")
for t in ["CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_RUNTIME"]:
    check(f"{t} rows outside [0, duration]", one(f"SELECT count(*) FROM {t} WHERE start < 0 OR end > ? OR end < start", duration), 0)
check("threads without ThreadNames row", one(
    "SELECT count(DISTINCT globalTid) FROM CUPTI_ACTIVITY_KIND_RUNTIME r WHERE NOT EXISTS (SELECT 1 FROM ThreadNames t WHERE t.globalTid = r.globalTid)"), 0)
check("GPU name", one("SELECT name FROM TARGET_INFO_GPU WHERE id = 0"), gpu_name)
check("GPU uuid", one("SELECT uuid FROM TARGET_INFO_GPU WHERE id = 0"), gpu_uuid)
check("CUDA device -> GPU", q("SELECT gpuId, cudaId FROM TARGET_INFO_CUDA_DEVICE"), [(0, 0)])
check("NULL stream described", one("SELECT count(*) FROM TARGET_INFO_CUDA_STREAM s JOIN TARGET_INFO_CUDA_CONTEXT_INFO c ON c.contextId = s.contextId AND c.nullStreamId = s.streamId WHERE s.flag = 3"), 1)
check("kernel streams described", one("SELECT count(DISTINCT k.streamId) FROM CUPTI_ACTIVITY_KIND_KERNEL k WHERE NOT EXISTS (SELECT 1 FROM TARGET_INFO_CUDA_STREAM s WHERE s.streamId = k.streamId)"), 0)
if mode != "inject":
    check("NVTX iteration ranges", one("SELECT count(*) FROM NVTX_EVENTS WHERE text = 'iteration' AND eventType = 59"), iters)
    check("launch calls inside their NVTX iteration", one(
        "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME r JOIN StringIds s ON s.id = r.nameId JOIN NVTX_EVENTS n ON "
        "n.text = 'iteration' AND n.globalTid = r.globalTid AND r.start >= n.start AND r.end <= n.end WHERE s.value = 'cudaLaunchKernel_v7000'"), 2 * iters)
if mode == "window":
    check("window diagnostics", [r[0] for r in q("SELECT text FROM DIAGNOSTIC_EVENT WHERE text LIKE 'capture window%' ORDER BY timestamp")],
          ["capture window 1 opened (cudaProfilerStart/Stop)", "capture window 1 closed (cudaProfilerStart/Stop); capture finished"])
if mode == "memory":
    check("device allocations of cudaMalloc", one(
        "SELECT count(*) FROM CUDA_GPU_MEMORY_USAGE_EVENTS m JOIN CUPTI_ACTIVITY_KIND_RUNTIME r ON r.correlationId = m.correlationId "
        "JOIN StringIds s ON s.id = r.nameId WHERE s.value = 'cudaMalloc_v3020' AND m.memoryOperationType = 0 AND m.memKind = 2"), 2)
    check("device releases of cudaFree", one(
        "SELECT count(*) FROM CUDA_GPU_MEMORY_USAGE_EVENTS m JOIN CUPTI_ACTIVITY_KIND_RUNTIME r ON r.correlationId = m.correlationId "
        "JOIN StringIds s ON s.id = r.nameId WHERE s.value = 'cudaFree_v3020' AND m.memoryOperationType = 1 AND m.memKind = 2"), 2)
drops = one("SELECT value FROM META_DATA_CAPTURE WHERE name = 'PROCESS_0:DROPPED_RECORDS'")
check("dropped records", drops, "0")
sys.exit(1 if failed else 0)
PY

run_check() {  # MODE DB
  out=$("$py" "$work/check.py" "$1" "$2" "$gpu_name" "$gpu_uuid" 2>&1)
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
  timeout 300 "$gtrace" profile -t cuda,nvtx -o "$work/$mode" --export sqlite "$@" >"$work/$mode.out" 2>"$work/$mode.err"
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
if timeout 120 "$app" --iterations 30 --fork >"$work/baseline.out" 2>&1 && grep -q '^child status 0$' "$work/baseline.out"; then
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
if GTRACE_OUTPUT="$work/fork/t-%p" LD_PRELOAD="$lib" timeout 120 "$app" --iterations 30 --fork >"$work/fork.out" 2>"$work/fork.err" &&
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
if GTRACE_OUTPUT="$work/inject/t" CUDA_INJECTION64_PATH="$lib" timeout 120 "$app" --iterations 30 >"$work/inject.out" 2>"$work/inject.err" &&
   "$gtrace" export -o "$work/inject.sqlite" "$work/inject/t.gtrace" >/dev/null 2>&1; then
  run_check inject "$work/inject.sqlite"
else
  res FAIL inject "CUDA_INJECTION64_PATH run wrote no usable stream: $(tail -3 "$work/inject.err" | tr '\n' ' ')"
fi
exit 0
