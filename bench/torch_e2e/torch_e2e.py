#!/usr/bin/env python3
"""torch_e2e.py: a small transformer training loop; prints the median step time.

  python3 torch_e2e.py [--steps 400] [--warmup 50] [--out FILE]

One process = one configuration (run.sh starts it bare, under gtrace, under nsys ...). Step times
are measured with CUDA events around each optimizer step after the warm-up steps; NVTX ranges
"step"/"forward"/"backward" mark every step, as a typical training script does.
"""
import argparse
import json
import statistics
import sys

import torch
import torch.nn as nn


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=400)
    ap.add_argument("--warmup", type=int, default=50)
    ap.add_argument("--out")
    a = ap.parse_args()
    if not torch.cuda.is_available():
        print("torch_e2e: no CUDA device", file=sys.stderr)
        return 2
    torch.manual_seed(0)
    dev = torch.device("cuda")
    model = nn.TransformerEncoder(
        nn.TransformerEncoderLayer(d_model=512, nhead=8, dim_feedforward=2048, batch_first=True), num_layers=6
    ).to(dev)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    x = torch.randn(16, 256, 512, device=dev)
    times = []
    for step in range(a.steps + a.warmup):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        torch.cuda.nvtx.range_push("step")
        start.record()
        torch.cuda.nvtx.range_push("forward")
        loss = model(x).float().pow(2).mean()
        torch.cuda.nvtx.range_pop()
        torch.cuda.nvtx.range_push("backward")
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        torch.cuda.nvtx.range_pop()
        end.record()
        torch.cuda.nvtx.range_pop()
        end.synchronize()
        if step >= a.warmup:
            times.append(start.elapsed_time(end))
    result = {"steps": a.steps, "median_ms": statistics.median(times), "mean_ms": statistics.fmean(times)}
    print(json.dumps(result))
    if a.out:
        with open(a.out, "w") as f:
            json.dump(result, f)
    return 0


if __name__ == "__main__":
    sys.exit(main())
