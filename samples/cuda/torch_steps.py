#!/usr/bin/env python3
"""torch_steps: a small PyTorch training loop for comparing gtrace with torch.profiler
(scripts/gpu-check.d/11-torch.sh). The same steps run after the same warm-up in every mode:

  --mode gtrace   the measured steps sit between torch.cuda.profiler.start()/stop()
                  (cudaProfilerStart/Stop): run it under gtrace with --capture-range=cudaProfilerApi.
  --mode torch    the measured steps sit inside torch.profiler.profile(activities=[CUDA]); the GPU
                  kernels it recorded (chrome-trace events of category "kernel") are written to --out
                  as JSON {"kernels": [name, ...]} in start order.
  --mode both     torch.profiler inside a gtrace process (CUPTI has one subscriber: one of them must
                  give way without hurting the application).

torch.profiler and gtrace cannot both hold CUPTI in one process, hence separate processes for the
comparison. Exits 0 when the steps ran.
"""
import argparse
import json
import os
import sys
import tempfile

import torch


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--mode", choices=["gtrace", "torch", "both"], required=True)
    p.add_argument("--steps", type=int, default=5)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--out", default="")
    a = p.parse_args()
    if not torch.cuda.is_available():
        print("torch_steps: no CUDA device", file=sys.stderr)
        return 3
    torch.manual_seed(0)
    dev = torch.device("cuda:0")
    model = torch.nn.Sequential(
        torch.nn.Linear(256, 512), torch.nn.ReLU(), torch.nn.Linear(512, 256), torch.nn.LayerNorm(256)
    ).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    x = torch.randn(64, 256, device=dev)

    def step():
        opt.zero_grad(set_to_none=True)
        loss = model(x).square().mean()
        loss.backward()
        opt.step()

    for _ in range(a.warmup):
        step()
    torch.cuda.synchronize()

    if a.mode == "gtrace":
        torch.cuda.profiler.start()
        for _ in range(a.steps):
            step()
        torch.cuda.synchronize()
        torch.cuda.profiler.stop()
    else:
        from torch.profiler import ProfilerActivity, profile

        prof = None
        try:
            with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
                for _ in range(a.steps):
                    step()
                torch.cuda.synchronize()
        except Exception as e:  # --mode both: torch.profiler may refuse (CUPTI is taken); the steps must still run
            if a.mode != "both":
                raise
            print(f"torch_steps: torch.profiler failed: {e}", file=sys.stderr)
            prof = None
            for _ in range(a.steps):
                step()
            torch.cuda.synchronize()
        if a.out and prof is not None:
            fd, path = tempfile.mkstemp(suffix=".json")
            os.close(fd)
            prof.export_chrome_trace(path)
            with open(path) as f:
                trace = json.load(f)
            os.unlink(path)
            events = trace["traceEvents"] if isinstance(trace, dict) else trace
            kernels = sorted((e for e in events if e.get("cat") == "kernel"), key=lambda e: e.get("ts", 0))
            with open(a.out, "w") as f:
                json.dump({"kernels": [e["name"] for e in kernels]}, f)
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
