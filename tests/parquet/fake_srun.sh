#!/usr/bin/env bash
# A stand-in for Slurm's srun in tests (parquet.slurm): `fake_srun.sh --ntasks=N [other options] CMD...`
# runs CMD once per task with SLURM_PROCID=0..N-1, SLURM_NTASKS=N, two at a time, and fails when any
# task fails (as --kill-on-bad-exit would report). Not Slurm: no nodes, no placement.
set -u
n=1
while [ $# -gt 0 ]; do
  case $1 in
    --ntasks=*) n=${1#--ntasks=}; shift ;;
    --*) shift ;;
    *) break ;;
  esac
done
fail=0
pids=()
for i in $(seq 0 $((n - 1))); do
  SLURM_PROCID=$i SLURM_NTASKS=$n "$@" &
  pids+=($!)
  if [ ${#pids[@]} -ge 2 ]; then wait "${pids[0]}" || fail=1; pids=("${pids[@]:1}"); fi
done
for p in "${pids[@]}"; do wait "$p" || fail=1; done
exit $fail
