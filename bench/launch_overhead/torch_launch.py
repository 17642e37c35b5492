#!/usr/bin/env python3
"""torch_launch: per-op cost of a tiny PyTorch op loop (x.add_(1) on a one-element CUDA tensor, one
kernel each) with no profiler, inside torch.profiler, or under gtrace (run with LD_PRELOAD). Used by
bench/launch_overhead/run.sh. Prints "rep <i> ns_per_op <x>" lines and "median ns_per_op <x>";
with --profiler torch it also prints "kernels_recorded <n>" (must equal reps x ops)."""
import argparse
import json
import os
import statistics
import sys
import tempfile
import time

import torch


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--ops", type=int, default=200000)
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--profiler", choices=["none", "torch"], default="none")
    a = p.parse_args()
    x = torch.zeros(1, device="cuda")
    for _ in range(1000):
        x.add_(1)
    torch.cuda.synchronize()
    prof = None
    if a.profiler == "torch":
        from torch.profiler import ProfilerActivity, profile
        prof = profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA])
        prof.__enter__()
    per_op = []
    for r in range(a.reps):
        t0 = time.perf_counter_ns()
        for _ in range(a.ops):
            x.add_(1)
        torch.cuda.synchronize()
        per_op.append((time.perf_counter_ns() - t0) / a.ops)
        print(f"rep {r} ns_per_op {per_op[-1]:.1f}", flush=True)
    print(f"median ns_per_op {statistics.median(per_op):.1f}")
    if prof is not None:
        prof.__exit__(None, None, None)
        fd, path = tempfile.mkstemp(suffix=".json")
        os.close(fd)
        prof.export_chrome_trace(path)
        with open(path) as f:
            trace = json.load(f)
        os.unlink(path)
        events = trace["traceEvents"] if isinstance(trace, dict) else trace
        print(f"kernels_recorded {sum(1 for e in events if e.get('cat') == 'kernel')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
