#!/usr/bin/env python3
"""Overhead of gtrace's NCCL profiler plugin on a small-message all_reduce loop (GPU, by hand).

    python3 bench/nccl_overhead/nccl_overhead.py --gtrace build/bin/gtrace [--nproc 2] [--rounds 5]
        [--iters 2000] [--elements 2] [--out bench/nccl_overhead/results-gpu.md]

One run measures, in alternating order over --rounds rounds (so drift of the machine hits every
mode alike), torchrun --nproc_per_node=N of this same file in worker mode:
    baseline        NCCL_PROFILER_PLUGIN=none, no gtrace
    gtrace-default  gtrace profile -t nccl                      (group,coll,p2p,kernel,api,ce)
    gtrace-anchor   gtrace profile -t nccl --nccl-trace=group,coll,p2p,kernel
                    (the mask of NVIDIA/nccl#2355's measurement of NCCL's example plugin:
                    0.1-1.1 % on small all-reduces)
Each worker times `iters` all_reduce calls of `elements` float32 in blocks of 100 (CUDA synchronize
at the end of each block) after 200 warm-up calls; rank 0 reports the median us per call over the
blocks. The script prints and writes (--out, markdown) the median over rounds per mode and the
overhead in % against the baseline.

Needs 2+ GPUs: with one rank NCCL runs all_reduce as a copy that never reaches a profiler plugin
(docs/nccl.md), so a 1-GPU measurement says nothing about the plugin (the script refuses unless
--allow-single-rank).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time


def worker(args):
    import torch
    import torch.distributed as dist
    local = int(os.environ.get("LOCAL_RANK", "0"))
    device = torch.device("cuda", local % torch.cuda.device_count())
    torch.cuda.set_device(device)
    dist.init_process_group("nccl", device_id=device)
    x = torch.ones(args.elements, dtype=torch.float32, device=device)
    for _ in range(200):
        dist.all_reduce(x)
    torch.cuda.synchronize()
    blocks = []
    for _ in range(max(1, args.iters // 100)):
        t0 = time.perf_counter()
        for _ in range(100):
            dist.all_reduce(x)
        torch.cuda.synchronize()
        blocks.append((time.perf_counter() - t0) / 100 * 1e6)
    if dist.get_rank() == 0:
        with open(args.result, "w") as f:
            json.dump({"us_per_call": statistics.median(blocks), "blocks": len(blocks)}, f)
    dist.destroy_process_group()


def run_mode(args, mode, tmp):
    result = os.path.join(tmp, f"{mode}-{time.time_ns()}.json")
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", f"--nproc_per_node={args.nproc}",
           os.path.abspath(__file__), "--worker", "--iters", str(args.iters), "--elements", str(args.elements),
           "--result", result]
    env = dict(os.environ)
    if mode == "baseline":
        env["NCCL_PROFILER_PLUGIN"] = "none"
        env.pop("LD_PRELOAD", None)
    else:
        env.pop("NCCL_PROFILER_PLUGIN", None)
        nccl = ["--nccl-trace=group,coll,p2p,kernel"] if mode == "gtrace-anchor" else []
        cmd = [args.gtrace, "profile", "-t", "nccl", *nccl, "-o", os.path.join(tmp, f"{mode}-%p"), "-f", "--"] + cmd
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"nccl_overhead: {mode} failed:\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}")
    with open(result) as f:
        return json.load(f)["us_per_call"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--worker", action="store_true")
    ap.add_argument("--result")
    ap.add_argument("--gtrace", default="build/bin/gtrace")
    ap.add_argument("--nproc", type=int, default=0)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--iters", type=int, default=2000)
    ap.add_argument("--elements", type=int, default=2)
    ap.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "results-gpu.md"))
    ap.add_argument("--allow-single-rank", action="store_true")
    args = ap.parse_args()
    if args.worker:
        worker(args)
        return
    import torch
    ngpu = torch.cuda.device_count()
    args.nproc = args.nproc or min(ngpu, 2)
    if args.nproc < 2 and not args.allow_single_rank:
        sys.exit("nccl_overhead: needs 2+ GPUs (a 1-rank all_reduce never reaches the plugin); "
                 "--allow-single-rank to measure anyway")
    modes = ["baseline", "gtrace-default", "gtrace-anchor"]
    samples = {m: [] for m in modes}
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(args.rounds):
            order = modes if r % 2 == 0 else list(reversed(modes))
            for m in order:
                samples[m].append(run_mode(args, m, tmp))
                print(f"round {r + 1} {m}: {samples[m][-1]:.2f} us/call", flush=True)
    base = statistics.median(samples["baseline"])
    lines = [
        f"# NCCL plugin overhead: all_reduce of {args.elements} float32, {args.nproc} ranks",
        "",
        f"{torch.cuda.get_device_name(0)}, torch {torch.__version__}, NCCL "
        f"{'.'.join(map(str, torch.cuda.nccl.version()))}; {args.rounds} rounds x {args.iters} calls "
        f"(median of 100-call blocks per run, median over rounds).",
        "",
        "| mode | us/call (median) | overhead | rounds |",
        "|---|---|---|---|",
    ]
    for m in modes:
        med = statistics.median(samples[m])
        over = "-" if m == "baseline" else f"{(med - base) / base * 100:+.2f} %"
        lines.append(f"| {m} | {med:.2f} | {over} | {', '.join(f'{v:.2f}' for v in samples[m])} |")
    text = "\n".join(lines) + "\n"
    print(text)
    with open(args.out, "w") as f:
        f.write(text)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
