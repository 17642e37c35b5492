"""One of several training processes sharing one GPU (scripts/gpu-check.d/50-multiproc.sh).

Each process is its own NCCL world of size 1 (NCCL refuses two ranks of one communicator on one
GPU), so the NCCL profiler plugin sees no collective (docs/nccl.md: NCCL runs 1-rank collectives as
copies); NCCL's own NVTX ranges and the CUDA kernels are recorded. The launcher's RANK / LOCAL_RANK /
WORLD_SIZE variables give each process its place in the "job" (gtrace reads them like torchrun's).

  RANK=i LOCAL_RANK=i WORLD_SIZE=n python multiproc_train.py --steps 20 --pg-file DIR/pg-i [--slow-ms 5]
"""
import argparse
import os
import time

import torch
import torch.distributed as dist


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--size", type=int, default=2048)
    ap.add_argument("--pg-file", required=True)
    ap.add_argument("--slow-ms", type=float, default=0.0, help="host delay per step (a planted straggler)")
    a = ap.parse_args()
    torch.cuda.set_device(0)
    # World of size 1, by file: the launcher's RANK/WORLD_SIZE describe the job, not this group.
    dist.init_process_group("nccl", init_method="file://" + a.pg_file, rank=0, world_size=1)
    x = torch.randn(a.size, a.size, device="cuda")
    w = torch.randn(a.size, a.size, device="cuda")
    grad = torch.zeros(a.size * a.size // 4, device="cuda")
    for _ in range(a.steps):
        torch.cuda.nvtx.range_push("train_step")
        if a.slow_ms > 0:
            time.sleep(a.slow_ms / 1000.0)
        y = x @ w
        y = torch.relu(y) @ w
        grad.add_(y.flatten()[: grad.numel()])
        dist.all_reduce(grad)
        torch.cuda.synchronize()
        torch.cuda.nvtx.range_pop()
    dist.destroy_process_group()
    print("rank", os.environ.get("RANK"), "done")


if __name__ == "__main__":
    main()
