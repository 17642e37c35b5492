#!/usr/bin/env python3
"""torch_nvtx: torch's own NVTX ranges around GPU work, for scripts/gpu-check.d/11-torch.sh
(and scripts/gpu-check.d/torch_nvtx_check.py, which checks the export).

  torch.cuda.nvtx:  "step 0" (range_push/range_pop) around everything measured, "forward 1"
                    (torch.cuda.nvtx.range with a format argument) around the forward pass, a mark
                    "checkpoint".
  emit_nvtx():      torch.autograd.profiler.emit_nvtx() around a forward and backward pass of a
                    matrix product: one range per op in torch's spelling, "aten::mm, seq = N, op_id = M",
                    and in the backward pass "MmBackward0, seq = N, ..." with the same N.

Run it under gtrace with -t cuda,nvtx; `--device cpu` runs the same calls without a GPU (emit_nvtx's
torch.cuda.synchronize() calls, which need a driver, become no-ops then) so the checker's name
checks can be tried on CPU. Prints "ok" at the end.
"""
import argparse

import torch
import torch.cuda.nvtx as nvtx


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--device", default="cuda")
    p.add_argument("--size", type=int, default=1024)
    a = p.parse_args()
    dev = torch.device(a.device)
    if dev.type != "cuda":
        torch.cuda.synchronize = lambda *args, **kwargs: None
    torch.manual_seed(0)
    x = torch.randn(a.size, a.size, device=dev, requires_grad=True)
    w = torch.randn(a.size, a.size, device=dev)
    (x @ w).sum().backward()  # warm-up: cuBLAS handles, kernels loaded, outside every range
    x.grad = None
    if dev.type == "cuda":
        torch.cuda.synchronize()

    nvtx.range_push("step 0")
    with torch.autograd.profiler.emit_nvtx():
        with nvtx.range("forward {}", 1):
            y = torch.mm(x, w)
            loss = y.sum()
        nvtx.mark("checkpoint")
        loss.backward()
    if dev.type == "cuda":
        torch.cuda.synchronize()
    nvtx.range_pop()
    print("ok")


if __name__ == "__main__":
    main()
