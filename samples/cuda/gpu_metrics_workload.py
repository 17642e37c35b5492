#!/usr/bin/env python3
"""Workload of the GPU-metrics check (scripts/gpu-check.d/30-metrics.sh).

Two phases, each inside an NVTX range that ends with a synchronize (so the range covers its GPU work):
  copy  a bandwidth-bound elementwise kernel: dst = -src over a large tensor (4 bytes read and 4
        written per element, like a copy; a plain dst.copy_(src) is a cudaMemcpy DtoD on the copy
        engine, no kernel at all: seen on an H200, where Nsight Compute then had nothing to measure)
  gemm  a tensor-core GEMM (fp16 matmul, 8192 x 8192)
and optionally
  h2d   pinned host-to-device copies (PCIe RX for the GPU), then d2h (PCIe TX).

--mode run   : --seconds S of each phase (for sampling)      prints "ok"
--mode ncu   : a few launches of each kernel (for Nsight Compute)
--mode time  : --iters N of copy+gemm, prints "elapsed_s=<wall seconds of the timed loop>"
"""
import argparse
import sys
import time

import torch


def nvtx_push(name):
    torch.cuda.nvtx.range_push(name)


def nvtx_pop():
    torch.cuda.nvtx.range_pop()


def copy_kernel(src, dst):
    torch.neg(src, out=dst)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--mode", choices=["run", "ncu", "time"], default="run")
    p.add_argument("--seconds", type=float, default=2.0)
    p.add_argument("--iters", type=int, default=200)
    p.add_argument("--copy-mib", type=int, default=1024)
    p.add_argument("--gemm-n", type=int, default=8192)
    p.add_argument("--pcie", action="store_true")
    a = p.parse_args()

    dev = torch.device("cuda:0")
    n_copy = a.copy_mib * (1 << 20) // 4
    src = torch.ones(n_copy, dtype=torch.float32, device=dev)
    dst = torch.empty_like(src)
    x = torch.randn(a.gemm_n, a.gemm_n, dtype=torch.float16, device=dev)
    y = torch.randn(a.gemm_n, a.gemm_n, dtype=torch.float16, device=dev)
    # Warm-up (cuBLAS heuristics, lazy module loading) outside the measured ranges.
    copy_kernel(src, dst)
    z = x @ y
    torch.cuda.synchronize()

    if a.mode == "ncu":
        for _ in range(3):
            copy_kernel(src, dst)
            z = x @ y
        torch.cuda.synchronize()
        print("ok")
        return 0

    if a.mode == "time":
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(a.iters):
            copy_kernel(src, dst)
            z = x @ y
        torch.cuda.synchronize()
        print(f"elapsed_s={time.perf_counter() - t0:.6f}")
        return 0

    for name, step in (("copy", lambda: copy_kernel(src, dst)), ("gemm", lambda: torch.matmul(x, y, out=z))):
        nvtx_push(name)
        t_end = time.perf_counter() + a.seconds
        launched = 0
        while time.perf_counter() < t_end or launched < 10:
            for _ in range(10):
                step()
            launched += 10
            torch.cuda.synchronize()  # keep the CPU range aligned with its GPU work
        nvtx_pop()
    if a.pcie:
        host = torch.empty(n_copy, dtype=torch.float32, pin_memory=True)
        for name, step in (("h2d", lambda: src.copy_(host, non_blocking=True)),
                           ("d2h", lambda: host.copy_(src, non_blocking=True))):
            nvtx_push(name)
            t_end = time.perf_counter() + a.seconds / 2
            while time.perf_counter() < t_end:
                step()
                torch.cuda.synchronize()
            nvtx_pop()
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
