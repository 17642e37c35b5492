#!/usr/bin/env python3
"""Checks a gtrace export of samples/nccl/nccl_collectives.py (scripts/gpu-check.d/20-nccl.sh).

    check_nccl_export.py DB EXPECT_JSON... [--tolerance-ns N]

Prints one line per check, "PASS <detail>", "FAIL <detail>" or "SKIP <detail>"; exits 1 on any FAIL.
Checks, per process (rank):
  - the communicator: NCCL's init reached gtrace's plugin (GTRACE_NCCL_COMMUNICATORS, nRanks);
  - operations (world size >= 2): per function exactly `iters` rows in GTRACE_NCCL_OPERATIONS with
    the expected count, datatype and messageBytes, each with kernel-channel GPU times;
  - single rank: no operations (NCCL runs 1-rank collectives as copies, without profiler events);
    the send/receive to self, when torch allowed it, as P2p operations with GPU times;
  - NCCL's own NVTX ranges (domain "NCCL"): `iters` ranges per API call name;
  - kernel channels inside NCCL kernels: every KernelCh [gpuStart, gpuEnd] of the process lies inside
    an ncclDevKernel_* / ncclKernel_* row of CUPTI_ACTIVITY_KIND_KERNEL of the same process (within
    --tolerance-ns); SKIP when the export has no kernel table (CUDA tracing absent);
  - the GPU clock: the calibration method and bounds of GTRACE_NCCL_GPU_CLOCK (reported).
"""
import json
import sqlite3
import sys

API = {"AllReduce": "ncclAllReduce", "AllGather": "ncclAllGather", "ReduceScatter": "ncclReduceScatter",
       "Broadcast": "ncclBroadcast"}


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    tol = 0
    for a in sys.argv[1:]:
        if a.startswith("--tolerance-ns="):
            tol = int(a.split("=", 1)[1])
    db = sqlite3.connect(f"file:{args[0]}?mode=ro", uri=True)
    expects = [json.load(open(p)) for p in args[1:]]
    failed = False

    def out(kind, text):
        nonlocal failed
        failed |= kind == "FAIL"
        print(f"{kind} {text}")

    tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if "GTRACE_NCCL_COMMUNICATORS" not in tables:
        out("FAIL", "no GTRACE_NCCL_COMMUNICATORS table: the NCCL profiler plugin never ran")
        return 1
    comms = db.execute("SELECT globalPid, rank, nRanks, pluginVersion, commIdHex FROM GTRACE_NCCL_COMMUNICATORS").fetchall()
    world = expects[0]["world"]
    iters = expects[0]["iters"]
    pids = sorted({c[0] for c in comms})
    if len(pids) == world and all(c[2] == world for c in comms):
        out("PASS", f"communicators: {len(comms)} in {len(pids)} processes, nRanks {world}, plugin ABI "
                    f"v{comms[0][3]} (NCCL {expects[0]['nccl']})")
    else:
        out("FAIL", f"communicators: {comms} (expected one per rank with nRanks {world})")
    # rank of each process = the communicator rank
    pid_rank = {c[0]: c[1] for c in comms}
    ops = db.execute("SELECT globalPid, func, count, datatype, messageBytes, gpuStart, gpuEnd, kernelChannels "
                     "FROM GTRACE_NCCL_OPERATIONS").fetchall() if "GTRACE_NCCL_OPERATIONS" in tables else []
    if world >= 2:
        for pid in pids:
            for e in expects[0]["ops"]:
                rows = [o for o in ops if o[0] == pid and o[1] == e["func"]]
                good = [o for o in rows if (o[2], o[3], o[4]) == (e["count"], e["datatype"], e["messageBytes"])]
                timed = [o for o in rows if o[5] is not None and o[6] is not None and o[6] >= o[5] and o[7] >= 1]
                if len(rows) == iters and len(good) == iters and len(timed) == iters:
                    out("PASS", f"rank {pid_rank[pid]} {e['func']}: {iters} x count {e['count']} {e['datatype']} "
                                f"({e['messageBytes']} B), all with kernel-channel GPU times")
                else:
                    out("FAIL", f"rank {pid_rank[pid]} {e['func']}: {len(rows)} rows, {len(good)} with count/"
                                f"datatype/bytes as expected, {len(timed)} timed (expected {iters}); sample "
                                f"{rows[:2]}")
    else:
        colls = [o for o in ops if o[1] in API]
        if not colls:
            out("PASS", "single rank: no collective reached the plugin (NCCL runs 1-rank collectives as copies)")
        else:
            out("FAIL", f"single rank: {len(colls)} collectives reached the plugin; NCCL's single-rank path "
                        f"changed: re-check the expectations ({colls[:2]})")
        if expects[0]["self_p2p"]:
            p2p = [o for o in ops if o[1] in ("Send", "Recv")]
            ok = sorted(o[1] for o in p2p) == ["Recv", "Send"] and all(
                o[2] == 4096 and o[3] == "ncclFloat32" and o[4] == 16384 for o in p2p)
            timed = all(o[5] is not None and o[7] >= 1 for o in p2p)
            if ok and timed:
                out("PASS", "send/receive to self: Send and Recv of 4096 ncclFloat32 with kernel-channel GPU times")
            elif ok:
                # NCCL 2.28.9 on an H200 (2026-11-26): the plugin got the P2p events and the
                # SendRecv kernel ran, but NCCL started no KernelCh event (a copy to self has no
                # proxy operation, which is where NCCL starts them); the export had the P2p and
                # P2pApi rows and no KernelCh row at all.
                out("PASS", "send/receive to self: Send and Recv of 4096 ncclFloat32 recorded; NCCL gives a "
                            "send/receive to self no kernel-channel events, so they have no GPU times")
            else:
                out("FAIL", f"send/receive to self: {p2p}")
        else:
            out("SKIP", "send/receive to self: torch refused it, so no NCCL operation could reach the plugin")
    # NCCL's own NVTX ranges (captured by the NVTX injection).
    if "NVTX_EVENTS" in tables:
        rows = db.execute(
            "SELECT e.globalTid >> 24, coalesce(e.text, s.value), count(*) FROM NVTX_EVENTS e "
            "JOIN (SELECT DISTINCT domainId, globalTid >> 24 AS p FROM NVTX_EVENTS WHERE eventType = 75 AND "
            "text = 'NCCL') d ON d.domainId = e.domainId AND d.p = e.globalTid >> 24 "
            "LEFT JOIN StringIds s ON s.id = e.textId WHERE e.eventType = 59 GROUP BY 1, 2").fetchall()
        counts = {}
        for p, name, n in rows:
            counts.setdefault(p, {})[name] = n
        want = {API[e["func"]]: iters for e in expects[0]["ops"]}
        # One rank: torch calls no NCCL for some collectives (ReduceScatter on an H200 with NCCL
        # 2.28.9, 2026-11-26), so an API may have no range at all; any it has must be complete.
        bad = [(p, {k: c.get(k) for k in want}) for p, c in counts.items()
               if any(c.get(k) != v and not (world == 1 and c.get(k) is None) for k, v in want.items())]
        if counts and not bad:
            out("PASS", f"NCCL NVTX ranges: {iters} per API call in each of {len(counts)} processes")
        elif not counts:
            out("SKIP", "no NVTX ranges in domain NCCL (NCCL_NVTX_DISABLE set, or NVTX not traced)")
        else:
            out("FAIL", f"NCCL NVTX ranges per process: {bad} (expected {want})")
    # Kernel channels inside the NCCL kernels CUPTI recorded.
    if "CUPTI_ACTIVITY_KIND_KERNEL" not in tables:
        out("SKIP", "kernel channels vs CUPTI kernels: no CUPTI_ACTIVITY_KIND_KERNEL table in this export "
                    "(CUDA tracing not available in this build)")
    else:
        kernels = db.execute(
            "SELECT k.globalPid, k.start, k.\"end\" FROM CUPTI_ACTIVITY_KIND_KERNEL k "
            "LEFT JOIN StringIds s ON s.id = k.shortName LEFT JOIN StringIds d ON d.id = k.demangledName "
            "WHERE coalesce(s.value, d.value) LIKE 'ncclDevKernel%' OR coalesce(s.value, d.value) LIKE 'ncclKernel%' "
            "OR d.value LIKE '%ncclDevKernel_%' OR d.value LIKE '%ncclKernel_%'").fetchall()
        chans = db.execute("SELECT globalPid, gpuStart, gpuEnd FROM GTRACE_NCCL_EVENTS WHERE eventType = 'KernelCh' "
                           "AND gpuStart IS NOT NULL AND gpuEnd IS NOT NULL").fetchall()
        by_pid = {}
        for pid, s, e in kernels:
            by_pid.setdefault(pid, []).append((s, e))
        outside, worst = 0, 0
        for pid, s, e in chans:
            best = None
            for ks, ke in by_pid.get(pid, []):
                miss = max(0, ks - s) + max(0, e - ke)
                best = miss if best is None else min(best, miss)
            if best is None or best > tol:
                outside += 1
            worst = max(worst, best if best is not None else 10**18)
        if not chans:
            out("SKIP" if world == 1 else "FAIL",
                f"kernel channels vs CUPTI kernels: no kernel-channel events ({len(kernels)} NCCL kernels)")
        elif outside == 0:
            out("PASS", f"kernel channels vs CUPTI kernels: all {len(chans)} channels inside one of {len(kernels)} "
                        f"NCCL kernels (largest excess {worst} ns, tolerance {tol} ns)")
        else:
            out("FAIL", f"kernel channels vs CUPTI kernels: {outside} of {len(chans)} channels outside every NCCL "
                        f"kernel by more than {tol} ns (largest excess {worst} ns)")
    if "GTRACE_NCCL_GPU_CLOCK" in tables:
        for pid, method, corr, lo, hi, n in db.execute(
                "SELECT globalPid, method, correction, lowerBound, upperBound, samples FROM GTRACE_NCCL_GPU_CLOCK"):
            print(f"INFO GPU clock, rank {pid_rank.get(pid)}: method {method}, correction {corr} ns, "
                  f"bounds [{lo}, {hi}] ns, {n} samples")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
