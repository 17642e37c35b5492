#!/usr/bin/env bash
# Inside a Slurm allocation, at the end of the job: every rank converts its own gtrace stream into its
# partition of one Parquet dataset, so no node ever reads another rank's data (docs/multi-rank.md,
# "Columnar dataset", "Inside the job").
#
#   bash scripts/slurm-parquet.sh STREAMS_PATTERN DATASET_DIR [WORK_DIR]
#
#   STREAMS_PATTERN  rank R's stream, {rank} standing for R: e.g. traces/run-{rank}.gtrace
#                    (what GTRACE_OUTPUT=traces/run-%q{SLURM_PROCID} writes)
#   DATASET_DIR      the dataset to write (on a shared file system); must not exist yet
#   WORK_DIR         shared scratch for the per-rank databases and summaries (default DATASET_DIR.work)
#
# Run it in the batch script after the training step, e.g.
#   srun --ntasks-per-node=8 env LD_PRELOAD=$GT/lib/libgtrace.so GTRACE_OUTPUT=traces/run-%q{SLURM_PROCID} python train.py
#   bash scripts/slurm-parquet.sh 'traces/run-{rank}.gtrace' dataset/
#   gtrace analyze --engine duckdb dataset/ --step-range train_step        # or --engine dask, anywhere
#
# Three job steps, each rank's work in its own task (SLURM_NTASKS tasks, as the training):
#   1. each rank: its stream -> its own database (its own session: unaligned) and a summary of it
#      (its NCCL collectives and process tables, kilobytes: python -m gtrace.parquet summary)
#   2. one task: merge the summaries -> the clock alignment of every host from the collective ends
#      (the summaries only; the full databases stay where they are)
#   3. each rank: its database -> its partitions, every time column corrected onto the aligned time
#      line (gtrace export --type parquet --rank R --alignment ...); its database is then removed
# then `python -m gtrace.parquet check DATASET_DIR --world-size N` confirms every partition.
#
# RANKS_PER_TASK=K (default 1): steps 1 and 3 run ceil(N/K) tasks, task i doing ranks iK..iK+K-1 in one
# process each (`summary -d`, `export --type parquet --rank each`): Python and pyarrow start once per K
# ranks instead of once per rank (most of a small rank's conversion; bench/results/2026-11-26-parquet-10k.md).
# With K = ranks per node and `--ntasks-per-node=1`-style placement (SRUN="srun --ntasks-per-node=1"),
# task i runs on node i, which with Slurm's block distribution holds exactly those ranks.
#
# Environment: GTRACE (the gtrace CLI, default `gtrace` on PATH), GTRACE_PYTHON (a Python with
# pyarrow; default python3), SRUN (default srun; tests/parquet use a stand-in), NTASKS (default
# $SLURM_NTASKS). Exit status: non-zero, with the failing step named, if any rank fails.
set -euo pipefail
G=${GTRACE:-gtrace}
PY=${GTRACE_PYTHON:-python3}
# The gtrace Python package of this checkout, when the script runs from one (else: pip install gtrace).
pkg=$(cd "$(dirname "$0")/.." && pwd)/python
[ -f "$pkg/gtrace/parquet.py" ] && export PYTHONPATH=$pkg${PYTHONPATH:+:$PYTHONPATH}

if [ "${1:-}" = "--task" ]; then
  # One rank's part of a step (run by srun; SLURM_PROCID is the rank).
  step=$2 pattern=$3 dataset=$4 work=$5 k=${6:-1} n=${7:-0}
  task=${SLURM_PROCID:?SLURM_PROCID is not set: run through srun}
  if [ "$k" = 1 ]; then
    r=$task
    stream=${pattern//\{rank\}/$r}
    case $step in
      local)
        [ -f "$stream" ] || { echo "gtrace: rank $r: $stream: no such stream" >&2; exit 1; }
        "$G" export -o "$work/local/rank-$r.sqlite" "$stream"
        "$PY" -m gtrace.parquet summary -o "$work/sums/rank-$r.sqlite" "$work/local/rank-$r.sqlite" ;;
      convert)
        "$G" export --type parquet --rank "$r" --alignment "$work/align.sqlite" -o "$dataset" "$work/local/rank-$r.sqlite"
        rm -f "$work/local/rank-$r.sqlite" ;;
      *) echo "gtrace: slurm-parquet: unknown step $step" >&2; exit 2 ;;
    esac
    exit 0
  fi
  # K ranks in this task: each exported alone (its own session, as above), then one Python process.
  dbs=()
  for r in $(seq $((task * k)) $(( (task + 1) * k - 1 ))); do
    [ "$r" -lt "$n" ] || break
    dbs+=("$work/local/rank-$r.sqlite")
    [ "$step" = local ] || continue
    stream=${pattern//\{rank\}/$r}
    [ -f "$stream" ] || { echo "gtrace: rank $r: $stream: no such stream" >&2; exit 1; }
    "$G" export -o "$work/local/rank-$r.sqlite" "$stream"
  done
  [ ${#dbs[@]} -gt 0 ] || exit 0
  case $step in
    local) "$PY" -m gtrace.parquet summary -d "$work/sums" "${dbs[@]}" ;;
    convert)
      "$G" export --type parquet --rank each --alignment "$work/align.sqlite" -o "$dataset" "${dbs[@]}"
      rm -f "${dbs[@]}" ;;
    *) echo "gtrace: slurm-parquet: unknown step $step" >&2; exit 2 ;;
  esac
  exit 0
fi

[ $# -ge 2 ] || { sed -n '2,12p' "$0"; exit 2; }
pattern=$1 dataset=$2 work=${3:-$2.work}
n=${NTASKS:-${SLURM_NTASKS:?not inside a Slurm allocation (SLURM_NTASKS unset; set NTASKS to say how many ranks)}}
SRUN=${SRUN:-srun}
k=${RANKS_PER_TASK:-1}
[[ "$k" =~ ^[1-9][0-9]*$ ]] || { echo "gtrace: slurm-parquet: RANKS_PER_TASK=$k: not a positive number" >&2; exit 2; }
tasks=$(( (n + k - 1) / k ))
self=$(cd "$(dirname "$0")" && pwd)/$(basename "$0")
[ ! -e "$dataset" ] || { echo "gtrace: slurm-parquet: $dataset exists: not replaced" >&2; exit 1; }
mkdir -p "$work/local" "$work/sums"
echo "gtrace: slurm-parquet: 1/3 $n ranks: own database and summary ($tasks tasks)"
$SRUN --ntasks="$tasks" --kill-on-bad-exit=1 bash "$self" --task local "$pattern" "$dataset" "$work" "$k" "$n" ||
  { echo "gtrace: slurm-parquet: step 1 (per-rank export) failed" >&2; exit 1; }
echo "gtrace: slurm-parquet: 2/3 clock alignment from the $n summaries"
"$G" export -o "$work/align.sqlite" "$work"/sums/rank-*.sqlite ||
  { echo "gtrace: slurm-parquet: step 2 (alignment) failed" >&2; exit 1; }
echo "gtrace: slurm-parquet: 3/3 $n ranks: own partitions ($tasks tasks)"
$SRUN --ntasks="$tasks" --kill-on-bad-exit=1 bash "$self" --task convert "$pattern" "$dataset" "$work" "$k" "$n" ||
  { echo "gtrace: slurm-parquet: step 3 (conversion) failed" >&2; exit 1; }
"$PY" -m gtrace.parquet check "$dataset" --world-size "$n"
