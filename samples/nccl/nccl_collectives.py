#!/usr/bin/env python3
"""NCCL collectives of known sizes through torch.distributed, for scripts/gpu-check.d/20-nccl.sh.

    python3 -m torch.distributed.run --standalone --nproc_per_node=N nccl_collectives.py \
        --iters 20 --expect /tmp/expect-%d.json

Each iteration, on every rank (NCCL backend, one GPU per rank):
    all_reduce              float32 x 262144             (NCCL AllReduce, 1 MiB)
    all_gather_into_tensor  float32 x 65536 per rank      (NCCL AllGather, sendcount 65536)
    reduce_scatter_tensor   float32 x 65536 per rank out  (NCCL ReduceScatter, recvcount 65536)
    broadcast               float64 x 1024 from rank 0    (NCCL Broadcast)
With one rank it also tries a send/receive to itself (batch_isend_irecv): NCCL runs single-rank
collectives as plain copies that never reach a profiler plugin, point-to-point to self does.
No barrier and no warm-up: every NCCL call is one the checker expects. Rank r writes what it did to
the --expect path with %d replaced by r.
"""
import argparse
import json
import os

import torch
import torch.distributed as dist


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--expect", required=True)
    args = ap.parse_args()
    local = int(os.environ.get("LOCAL_RANK", "0"))
    device = torch.device("cuda", local % torch.cuda.device_count())
    torch.cuda.set_device(device)
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29531")
    os.environ.setdefault("RANK", "0")
    os.environ.setdefault("WORLD_SIZE", "1")
    dist.init_process_group("nccl", device_id=device)
    rank, world = dist.get_rank(), dist.get_world_size()
    ar = torch.ones(262144, dtype=torch.float32, device=device)
    ag_in = torch.ones(65536, dtype=torch.float32, device=device)
    ag_out = torch.empty(65536 * world, dtype=torch.float32, device=device)
    rs_in = torch.ones(65536 * world, dtype=torch.float32, device=device)
    rs_out = torch.empty(65536, dtype=torch.float32, device=device)
    bc = torch.ones(1024, dtype=torch.float64, device=device)
    for _ in range(args.iters):
        dist.all_reduce(ar)
        dist.all_gather_into_tensor(ag_out, ag_in)
        dist.reduce_scatter_tensor(rs_out, rs_in)
        dist.broadcast(bc, src=0)
    self_p2p = False
    if world == 1:
        try:
            a = torch.ones(4096, dtype=torch.float32, device=device)
            b = torch.empty(4096, dtype=torch.float32, device=device)
            ops = [dist.P2POp(dist.isend, a, 0), dist.P2POp(dist.irecv, b, 0)]
            for w in dist.batch_isend_irecv(ops):
                w.wait()
            self_p2p = True
        except Exception as e:  # torch may refuse a peer equal to the own rank
            print(f"nccl_collectives: send/receive to self not possible: {e}")
    torch.cuda.synchronize()
    expect = {
        "rank": rank,
        "world": world,
        "iters": args.iters,
        "nccl": ".".join(map(str, torch.cuda.nccl.version())),
        "ops": [
            {"func": "AllReduce", "count": 262144, "datatype": "ncclFloat32", "messageBytes": 1048576},
            {"func": "AllGather", "count": 65536, "datatype": "ncclFloat32", "messageBytes": 262144},
            {"func": "ReduceScatter", "count": 65536, "datatype": "ncclFloat32", "messageBytes": 262144},
            {"func": "Broadcast", "count": 1024, "datatype": "ncclFloat64", "messageBytes": 8192},
        ],
        "self_p2p": self_p2p,
    }
    with open(args.expect.replace("%d", str(rank)), "w") as f:
        json.dump(expect, f)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
