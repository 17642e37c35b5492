#!/usr/bin/env bash
# 20-nccl: NCCL collectives through gtrace's NCCL profiler plugin, on a GPU machine (run by
# scripts/gpu-check.sh; needs python3 with torch built with CUDA and NCCL).
#
# 1. torch.distributed, NCCL backend, world size min(#GPUs, 2), under
#    `gtrace profile -t cuda,nvtx,nccl`: samples/nccl/nccl_collectives.py runs 20 iterations of
#    all_reduce / all_gather / reduce_scatter / broadcast of known sizes; the export is checked by
#    samples/nccl/check_nccl_export.py: communicators, exact counts, sizes and datatypes per rank,
#    kernel-channel GPU times inside the NCCL kernels CUPTI recorded (when the build has CUDA
#    tracing), NCCL's NVTX ranges, and the GPU-clock calibration (reported as INFO).
#    With one GPU the world size is 1: NCCL runs 1-rank collectives as copies that never reach a
#    profiler plugin (docs/nccl.md), so the check expects no collective operations there and uses
#    a send/receive to self, when torch allows it, to exercise the plugin's GPU path.
# 2. With one GPU: 2 ranks on that GPU as two "hosts". NCCL refuses two ranks of one communicator on
#    one GPU of one host ("Duplicate GPU detected": same host hash and bus id). NCCL_HOSTID replaces
#    the host hash, so each rank gets its own (nccl-hostid.bash, run by torchrun --no-python), and
#    the ranks talk through the socket transport on loopback (no P2P, no SHM: those need one host):
#    the plugin then sees a real 2-rank communicator and is checked like 1. When NCCL refuses even
#    so, the same run without gtrace tells who refused: NCCL fails there too -> SKIP with NCCL's
#    message; it works without gtrace -> FAIL (gtrace broke it).
# Appends "PASS|FAIL|SKIP 20-nccl: ..." lines to $GT_RESULTS.
# expected-minutes: 4 (on one H100/H200; gpu-check.sh --list)
set -u
. "$GT_SRC/scripts/gpu-check.d/common.bash"
gt_require_gpu 20-nccl
NAME=20-nccl
PY=${PYTHON:-python3}
W="$GT_WORK/nccl"
rm -rf "$W" && mkdir -p "$W"
say() { echo "$1 $NAME: $2" | tee -a "$GT_RESULTS"; }

if ! $PY -c 'import torch, torch.distributed as d; assert torch.cuda.is_available() and d.is_nccl_available()' \
    >/dev/null 2>&1; then
  say SKIP "python3 has no torch with CUDA and NCCL"
  exit 0
fi
NGPU=$($PY -c 'import torch; print(torch.cuda.device_count())')
NCCL=$($PY -c 'import torch; print(".".join(map(str, torch.cuda.nccl.version())))')
echo "== $NGPU GPU(s), torch's NCCL $NCCL"

# run_case TAG NPROC: profile the sample with NPROC ranks into $W/TAG; 0 when the run succeeded.
run_case() {
  local d="$W/$1"
  mkdir -p "$d"
  NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,ENV gt_timeout 180 "$GT_BUILD/bin/gtrace" profile -t cuda,nvtx,nccl -o "$d/r-%p" -- \
    $PY -m torch.distributed.run --standalone --nproc_per_node="$2" \
    "$GT_SRC/samples/nccl/nccl_collectives.py" --iters 20 --expect "$d/expect-%d.json" >"$d/run.log" 2>&1
}

# two_hosts TAG [gtrace]: 2 ranks on GPU 0, each its own NCCL_HOSTID, socket transport on loopback;
# under gtrace when the second argument is "gtrace". 0 when the run succeeded.
two_hosts() {
  local d="$W/$1" pre=()
  mkdir -p "$d"
  # shellcheck disable=SC2054  # -t takes a comma list
  [ "${2:-}" = gtrace ] && pre=("$GT_BUILD/bin/gtrace" profile -t cuda,nvtx,nccl -o "$d/r-%p" --)
  CUDA_VISIBLE_DEVICES=0 NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_NET=Socket NCCL_SOCKET_IFNAME=lo \
    NCCL_IB_DISABLE=1 NCCL_NVLS_ENABLE=0 NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,ENV,NET \
    gt_timeout 180 "${pre[@]}" $PY -m torch.distributed.run --standalone --nproc_per_node=2 --no-python \
    bash "$GT_SRC/scripts/gpu-check.d/nccl-hostid.bash" $PY "$GT_SRC/samples/nccl/nccl_collectives.py" \
    --iters 20 --expect "$d/expect-%d.json" >"$d/run.log" 2>&1
}
# nccl_said LOG: NCCL's own complaint in a log (its WARN line, else torch's "Last error" line).
nccl_said() {
  local l
  l=$(grep -m1 'NCCL WARN' "$1") || l=$(grep -m1 -A1 'Last error' "$1" | tail -1)
  [ -n "$l" ] || l=$(grep -m1 -E 'Error|error' "$1")
  echo "${l#*NCCL WARN }" | cut -c1-240
}

# check_case TAG: export and check; one result line per check.
check_case() {
  local d="$W/$1"
  if grep -q "profiler plugin" "$d/run.log"; then
    grep -m1 "profiler plugin" "$d/run.log" | sed 's/^/== /'
  fi
  local streams=("$d"/r-*.gtrace)
  if [ ! -e "${streams[0]}" ]; then
    say FAIL "$1: no stream written (log: $d/run.log)"
    return
  fi
  if ! "$GT_BUILD/bin/gtrace" export -o "$d/run.sqlite" "${streams[@]}" >"$d/export.log" 2>&1; then
    say FAIL "$1: gtrace export failed: $(tail -1 "$d/export.log")"
    return
  fi
  "$GT_BUILD/bin/gtrace" stats --report nccl_sum "$d/run.sqlite" 2>&1 | tee "$d/nccl_sum.txt"
  $PY "$GT_SRC/samples/nccl/check_nccl_export.py" "$d/run.sqlite" "$d"/expect-*.json --tolerance-ns=2000 |
    while read -r kind text; do
      if [ "$kind" = INFO ]; then echo "== $1: $text"; else say "$kind" "$1: $text"; fi
    done
  [ -n "${OUT:-}" ] && cp "$d/run.log" "$OUT/20-nccl-$1.log" 2>/dev/null && cp "$d/nccl_sum.txt" "$OUT/20-nccl-$1-nccl_sum.txt" 2>/dev/null
}

WORLD=$((NGPU >= 2 ? 2 : 1))
if run_case "world$WORLD" "$WORLD"; then
  check_case "world$WORLD"
else
  say FAIL "world size $WORLD: the torch run failed: $(grep -m1 -E 'Error|error' "$W/world$WORLD/run.log")"
  tail -30 "$W/world$WORLD/run.log"
fi

if [ "$NGPU" -eq 1 ]; then
  if two_hosts twoHostsOneGpu gtrace; then
    grep -m2 -E 'NET/Socket|hostHash|Using network' "$W/twoHostsOneGpu/run.log" | sed 's/^/== /'
    check_case twoHostsOneGpu
  elif two_hosts twoHostsOneGpu-nogtrace; then
    say FAIL "2 ranks on one GPU (NCCL_HOSTID per rank, sockets on lo): works without gtrace, fails under it: \
$(nccl_said "$W/twoHostsOneGpu/run.log")"
    tail -30 "$W/twoHostsOneGpu/run.log"
  else
    say SKIP "2 ranks on one GPU (NCCL_HOSTID per rank, sockets on lo): NCCL refuses, also without gtrace: \
$(nccl_said "$W/twoHostsOneGpu-nogtrace/run.log")"
    tail -30 "$W/twoHostsOneGpu-nogtrace/run.log"
  fi
fi
exit 0
