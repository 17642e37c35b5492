#!/usr/bin/env bash
# 50-multiproc: several processes on the one GPU, profiled, exported and merged as a multi-rank
# job (run by scripts/gpu-check.sh; needs python3 with torch built with CUDA and NCCL).
#
# N processes (RANK=0..N-1, each its own NCCL world of size 1: NCCL allows no two ranks of one
# communicator on one GPU, and does not call the profiler plugin for 1-rank communicators, see
# docs/nccl.md) run samples/ranks/multiproc_train.py under `gtrace profile -t cuda,nvtx,nccl`; rank 1
# sleeps 5 ms per step on the host (a planted straggler: its GPU idles). Then:
#   1. merged export of all streams: one host, so the clock alignment leaves it alone: every
#      correction exactly 0, method "reference";
#   2. per-rank databases exported separately (the in-job recipe) and merged afterwards: kernel
#      times equal the merged export's to the nanosecond (same host: re-based through the shared
#      CLOCK_MONOTONIC, no alignment);
#   3. --align-domain=rank: each process its own clock domain: every correction within 10 us of 0
#      (with no shared collective, as here, every domain keeps its clock pairs: exactly 0);
#   4. gtrace analyze --step-range train_step: N ranks, 30 iterations each, rank 1's the longest.
# Appends "PASS|FAIL|SKIP 50-multiproc: ..." lines to $GT_RESULTS.
# expected-minutes: 1 (measured: 8 s on an NVIDIA H200, 2026-11-26; gpu-check.sh --list)
set -u
. "$GT_SRC/scripts/gpu-check.d/common.bash"
gt_require_gpu 50-multiproc
NAME=50-multiproc
PY=${PYTHON:-python3}
N=${GT_MULTIPROC_RANKS:-4}
W="$GT_WORK/multiproc"
G="$GT_BUILD/bin/gtrace"
rm -rf "$W" && mkdir -p "$W/streams"
say() { echo "$1 $NAME: $2" | tee -a "$GT_RESULTS"; }
q() { $PY -c "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); r=c.execute(sys.argv[2]).fetchall(); print('\n'.join('|'.join(str(v) for v in row) for row in r))" "$@"; }

if ! $PY -c 'import torch, torch.distributed as d; assert torch.cuda.is_available() and d.is_nccl_available()' \
    >/dev/null 2>&1; then
  say SKIP "python3 has no torch with CUDA and NCCL"
  exit 0
fi

pids=()
for r in $(seq 0 $((N - 1))); do
  slow=0; [ "$r" = 1 ] && slow=5
  RANK=$r LOCAL_RANK=$r WORLD_SIZE=$N gt_timeout 240 "$G" profile -t cuda,nvtx,nccl -o "$W/streams/rank-$r" -- \
    $PY "$GT_SRC/samples/ranks/multiproc_train.py" --steps 30 --pg-file "$W/pg-$r" --slow-ms "$slow" \
    >"$W/run-$r.log" 2>&1 &
  pids+=($!)
done
failed=0
for p in "${pids[@]}"; do wait "$p" || failed=1; done
if [ "$failed" != 0 ]; then
  say FAIL "a training process failed: $(tail -2 "$W"/run-*.log | tr '\n' ' ' | cut -c1-300)"
  exit 0
fi
n=$(ls "$W"/streams/*.gtrace 2>/dev/null | wc -l)
[ "$n" = "$N" ] || { say FAIL "expected $N streams, found $n"; exit 0; }

# 1. Merged export: one host, left alone.
if ! "$G" export -o "$W/merged.sqlite" "$W/streams" >"$W/export.log" 2>&1; then
  say FAIL "merged export: $(tail -1 "$W/export.log")"; exit 0
fi
cat "$W/export.log"
rows=$(q "$W/merged.sqlite" "SELECT count(*), count(DISTINCT hostIndex), sum(alignOffsetNs != 0 OR alignDriftPpb != 0), group_concat(DISTINCT alignMethod), group_concat(rank) FROM (SELECT * FROM GTRACE_RANKS ORDER BY rank)")
if [ "$rows" = "$N|1|0|reference|$(seq -s, 0 $((N - 1)))" ]; then
  say PASS "merged export of $N processes on one GPU: one host, ranks 0..$((N - 1)), alignment correction 0 (left alone)"
else
  say FAIL "merged export GTRACE_RANKS: got '$rows'"
fi
kpids=$(q "$W/merged.sqlite" "SELECT count(DISTINCT globalPid) FROM CUPTI_ACTIVITY_KIND_KERNEL")
[ "$kpids" = "$N" ] && say PASS "kernels of all $N processes in the merged database" || say FAIL "kernels from $kpids of $N processes"

# 2. In-job recipe: each stream on its own, merged afterwards; same host = same times.
mkdir -p "$W/injob"
for f in "$W"/streams/*.gtrace; do "$G" export -o "$W/injob/$(basename "$f" .gtrace).sqlite" "$f" >/dev/null 2>&1; done
if "$G" export -o "$W/remerged.sqlite" "$W"/injob/*.sqlite >"$W/merge.log" 2>&1; then
  cat "$W/merge.log"
  a=$(q "$W/merged.sqlite" "SELECT r.rank, k.start, k.end FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN GTRACE_RANKS r USING (globalPid) ORDER BY 1, 2" | md5sum)
  b=$(q "$W/remerged.sqlite" "SELECT r.rank, k.start, k.end FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN GTRACE_RANKS r USING (globalPid) ORDER BY 1, 2" | md5sum)
  corr=$(q "$W/remerged.sqlite" "SELECT max(abs(alignOffsetNs)) + max(abs(alignDriftPpb)) FROM GTRACE_RANKS")
  if [ "$a" = "$b" ] && [ "$corr" = 0 ]; then
    say PASS "per-rank databases merged afterwards: kernel times equal the merged export's (same host: correction 0)"
  else
    say FAIL "per-rank merge differs from the merged export (correction sum $corr)"
  fi
else
  say FAIL "merging per-rank databases: $(tail -1 "$W/merge.log")"
fi

# 3. Per-process clock domains (no shared collective on one GPU: nothing to estimate from).
if "$G" export --align-domain=rank -o "$W/perrank-domains.sqlite" "$W/streams" >"$W/domains.log" 2>&1; then
  echo "== $NAME: --align-domain=rank: $(q "$W/perrank-domains.sqlite" "SELECT group_concat(method || ':' || offsetNs) FROM GTRACE_CLOCK_ALIGNMENT")"
  nz=$(q "$W/perrank-domains.sqlite" "SELECT count(*) FROM GTRACE_CLOCK_ALIGNMENT WHERE abs(offsetNs) > 10000 OR abs(driftPpb) > 1000")
  [ "$nz" = 0 ] && say PASS "--align-domain=rank on one host: every correction within 10 us (and 1 ppm) of 0" ||
    say FAIL "--align-domain=rank: $nz corrections beyond 10 us or 1 ppm on a shared clock"
else
  say FAIL "--align-domain=rank export: $(tail -1 "$W/domains.log")"
fi

# 4. Analysis. The processes share no collective, so their steps are not synchronised: the check
# is that every rank is there and that rank 1's steps (5 ms host sleep each) are the longest.
if "$G" analyze "$W/merged.sqlite" --step-range train_step --format csv -r summary,step_ranks,ranks \
    --html "$W/report.html" >"$W/analyze.csv" 2>"$W/analyze.err"; then
  cat "$W/analyze.csv"
  [ -n "${OUT:-}" ] && cp "$W/report.html" "$OUT/multiproc-report.html" 2>/dev/null
  ranks=$(awk -F, '$1 == "Ranks" {print $2}' "$W/analyze.csv")
  # step_ranks: Rank,Host,Steps,Avg Step (ns),Avg Work (ns),Avg Wait (ns),Times Slowest
  longest=$(awk -F, '/^# Iterations per Rank/ {t=1; next} /^$/ {t=0} t && $1 ~ /^[0-9]+$/ {if ($4 + 0 > m) {m=$4 + 0; r=$1}} END {print r}' "$W/analyze.csv")
  steps=$(awk -F, '/^# Iterations per Rank/ {t=1; next} /^$/ {t=0} t && $1 ~ /^[0-9]+$/ {print $3}' "$W/analyze.csv" | sort -u | tr '\n' ' ')
  if [ "$ranks" = "$N" ] && [ "$longest" = 1 ] && [ "$steps" = "30 " ]; then
    say PASS "gtrace analyze: $N ranks with GPU activity, 30 train_step iterations each, rank 1 (5 ms host delay) has the longest steps"
  else
    say FAIL "gtrace analyze: ranks '$ranks' (want $N), steps per rank '$steps' (want 30), longest steps on rank '$longest' (want 1)"
  fi
else
  say FAIL "gtrace analyze: $(tail -1 "$W/analyze.err")"
fi
