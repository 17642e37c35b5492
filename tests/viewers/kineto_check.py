#!/usr/bin/env python3
"""Checks gtrace's Kineto-style JSON files and prints a summary the C++ tests compare exactly.

usage: kineto_check.py FILE.json|DIR

Rules checked for every file (exit 1 with one line per violation):
  - valid JSON (strict: no NaN), top-level keys schemaVersion, distributedInfo, deviceProperties,
    baseTimeNanoseconds, traceEvents; HTA's line regex finds the rank and it equals distributedInfo.rank;
  - every event has ph; X events have cat, name, pid, tid, ts >= 0, dur >= 0;
  - GPU events (kernel, gpu_memcpy, gpu_memset, cuda_sync) have args device == pid, stream, correlation;
    host events have no "stream" arg (HTA takes any event with a stream as GPU work);
  - every flow end 'f' (bp e) has a flow start 's' with the same id, no later, and lands on a GPU event
    starting at the same ts; every 's' lands on a cuda_runtime/cuda_driver event starting at its ts.
Summary lines: "file NAME rank=R world=W devices=[...]", "count NAME PH/CAT N", "event NAME CAT NAME TS DUR".
"""
import json
import os
import re
import sys

GPU_CATS = {"kernel", "gpu_memcpy", "gpu_memset", "cuda_sync"}
HTA_RANK_RE = re.compile(r'"rank":\s+(\d+)')


def reject_constant(name):
    raise ValueError("non-JSON constant " + name)


def check_file(path, errors, out):
    name = os.path.basename(path)
    with open(path, "r", encoding="utf-8") as f:
        text = f.read()
    data = json.loads(text, parse_constant=reject_constant)
    for key in ("schemaVersion", "distributedInfo", "deviceProperties", "baseTimeNanoseconds", "traceEvents"):
        if key not in data:
            errors.append(f"{name}: no {key}")
    info = data.get("distributedInfo", {})
    hta_rank = None
    for line in text.splitlines():
        m = HTA_RANK_RE.search(line)
        if m:
            hta_rank = int(m.group(1))
            break
    if hta_rank != info.get("rank"):
        errors.append(f"{name}: HTA's regex reads rank {hta_rank}, distributedInfo says {info.get('rank')}")
    devices = sorted(d["id"] for d in data.get("deviceProperties", []))
    out.append(f"file {name} rank={info.get('rank')} world={info.get('world_size')} devices={devices}")
    counts = {}
    slices = {}  # (pid, tid, ts) -> cat
    flows_s = {}
    flow_f = []
    for i, e in enumerate(data["traceEvents"]):
        ph = e.get("ph")
        if ph is None:
            errors.append(f"{name}: event {i} without ph")
            continue
        key = ph + "/" + e.get("cat", e.get("name", ""))
        counts[key] = counts.get(key, 0) + 1
        if ph == "X":
            for field in ("cat", "name", "pid", "tid", "ts", "dur"):
                if field not in e:
                    errors.append(f"{name}: event {i} without {field}")
            if e["ts"] < 0 or e["dur"] < 0:
                errors.append(f"{name}: event {i} negative time")
            args = e.get("args", {})
            if e["cat"] in GPU_CATS:
                if args.get("device") != e["pid"] or "stream" not in args or "correlation" not in args:
                    errors.append(f"{name}: GPU event {i} args {args} pid {e['pid']}")
                elif args["stream"] >= 0 and args["stream"] != e["tid"]:
                    errors.append(f"{name}: GPU event {i} on tid {e['tid']} but stream {args['stream']}")
            elif "stream" in args:
                errors.append(f"{name}: host event {i} has a stream arg")
            slices[(e["pid"], e["tid"], e["ts"])] = e["cat"]
            out.append(f"event {name} {e['cat']} {e['name']} {e['ts']:.3f} {e['dur']:.3f}")
        elif ph == "s":
            flows_s[e["id"]] = e
        elif ph == "f":
            flow_f.append(e)
            if e.get("bp") != "e":
                errors.append(f"{name}: flow end {i} without bp e")
    for e in flow_f:
        s = flows_s.get(e["id"])
        if s is None:
            errors.append(f"{name}: flow end {e['id']} without a start")
            continue
        if s["ts"] > e["ts"]:
            errors.append(f"{name}: flow {e['id']} ends before it starts")
        if slices.get((e["pid"], e["tid"], e["ts"])) not in GPU_CATS:
            errors.append(f"{name}: flow end {e['id']} not on a GPU event")
        if slices.get((s["pid"], s["tid"], s["ts"])) not in ("cuda_runtime", "cuda_driver"):
            errors.append(f"{name}: flow start {e['id']} not on an API call")
    for key in sorted(counts):
        out.append(f"count {name} {key} {counts[key]}")


def main():
    target = sys.argv[1]
    files = [target] if os.path.isfile(target) else sorted(
        os.path.join(target, f) for f in os.listdir(target) if f.endswith(".json"))
    errors, out = [], []
    for path in files:
        try:
            check_file(path, errors, out)
        except Exception as ex:  # noqa: BLE001 - any parse failure is a test failure
            errors.append(f"{os.path.basename(path)}: {type(ex).__name__}: {ex}")
    print("\n".join(out))
    for e in errors:
        print("ERROR " + e)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
