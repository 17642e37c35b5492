#!/usr/bin/env bash
# nccl-hostid.bash PROGRAM ARGS...: run PROGRAM as this rank's own NCCL "host" (20-nccl.sh: two ranks on
# one GPU). torchrun --no-python starts it once per rank with LOCAL_RANK set; NCCL_HOSTID replaces
# NCCL's host hash, so the ranks no longer look like two ranks on one GPU of one host.
export NCCL_HOSTID="gtrace-gpu-check-rank-${LOCAL_RANK:?torchrun sets LOCAL_RANK}"
exec "$@"
