#!/usr/bin/env python3
"""cuda_rows_check.py MODE DB GPU_NAME GPU_UUID: exact checks of a cuda_streams export (samples/cuda/
cuda_streams.cu run under gtrace) for scripts/gpu-check.d/00-quick.sh and 10-cuda.sh. MODE names how
it ran (full, window, node, nvtx, memory, inject). Prints PASS/FAIL/INFO lines; exit 1 on any FAIL.
Python's standard library only (the GPU kit carries no packages)."""
import sqlite3, sys
mode, db_path, gpu_name, gpu_uuid = sys.argv[1:5]
db = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True)
failed = False
def q(sql, *a):
    return db.execute(sql, a).fetchall()
def one(sql, *a):
    try:
        r = q(sql, *a)
    except sqlite3.Error as e:  # a missing table is one FAIL line, not a traceback that hides the rest
        return f"SQL error: {e}"
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
    "AND k.globalPid = (r.globalTid & 0xFFFFFFFFFF000000) WHERE k.start < r.start"), 0)
# Timestamps plausible: GPU work starts after the API call that issued it, and lies inside the span of
# its process's recorded API calls (cuda_streams synchronises before its last calls). A GPU clock
# mapped wrongly onto the host clock shows here first.
for t in ["CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET"]:
    check(f"{t} rows starting before their API call", one(
        f"SELECT count(*) FROM {t} g JOIN CUPTI_ACTIVITY_KIND_RUNTIME r ON r.correlationId = g.correlationId "
        f"AND g.globalPid = (r.globalTid & 0xFFFFFFFFFF000000) WHERE g.start < r.start"), 0)
for t in ["CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET"]:
    check(f"{t} rows outside their process's API span", one(
        f"SELECT count(*) FROM {t} g JOIN (SELECT r.globalTid & 0xFFFFFFFFFF000000 AS pid, min(r.start) AS lo, "
        f"max(r.end) AS hi FROM CUPTI_ACTIVITY_KIND_RUNTIME r GROUP BY pid) p ON p.pid = g.globalPid "
        f"WHERE g.start < p.lo OR g.end > p.hi"), 0)
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
