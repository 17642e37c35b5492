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
# 3. Raw capture (docs/capture.md): the layout that worked above once more, 3 iterations, traced with
#    -t nvtx,nccl (no CUDA tracing, so no CUPTI capture) and GTRACE_RAW_CAPTURE_DIR: each rank's
#    nccl-<pid>.gtcap (NCCL's plugin calls as NCCL made them) goes with a manifest.json to
#    $OUT/capture/<gpu>-cuda<version>/nccl/; commit that directory as tests/data/gpu/<kind>/nccl/
#    and replay.RealNcclCapture replays it in every CPU CI run.
# Appends "PASS|FAIL|SKIP 20-nccl: ..." lines to $GT_RESULTS.
# expected-minutes: 1 (measured: 37 s on an NVIDIA H200, 2026-11-26; gpu-check.sh --list)
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
  NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,ENV gt_timeout 180 "$GT_BUILD/bin/gtrace" profile -t "${TRACE:-cuda,nvtx,nccl}" -o "$d/r-%p" -- \
    $PY -m torch.distributed.run --standalone --nproc_per_node="$2" \
    "$GT_SRC/samples/nccl/nccl_collectives.py" --iters "${ITERS:-20}" --expect "$d/expect-%d.json" >"$d/run.log" 2>&1
}

# two_hosts TAG [gtrace]: 2 ranks on GPU 0, each its own NCCL_HOSTID, socket transport on loopback;
# under gtrace when the second argument is "gtrace". 0 when the run succeeded.
two_hosts() {
  local d="$W/$1" pre=()
  mkdir -p "$d"
  # shellcheck disable=SC2054  # -t takes a comma list
  [ "${2:-}" = gtrace ] && pre=("$GT_BUILD/bin/gtrace" profile -t "${TRACE:-cuda,nvtx,nccl}" -o "$d/r-%p" --)
  CUDA_VISIBLE_DEVICES=0 NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_NET=Socket NCCL_SOCKET_IFNAME=lo \
    NCCL_IB_DISABLE=1 NCCL_NVLS_ENABLE=0 NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,ENV,NET \
    gt_timeout 180 "${pre[@]}" $PY -m torch.distributed.run --standalone --nproc_per_node=2 --no-python \
    bash "$GT_SRC/scripts/gpu-check.d/nccl-hostid.bash" $PY "$GT_SRC/samples/nccl/nccl_collectives.py" \
    --iters "${ITERS:-20}" --expect "$d/expect-%d.json" >"$d/run.log" 2>&1
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
LAYOUT=""  # what worked: "world" (WORLD ranks) or "two_hosts"; the capture uses it
if run_case "world$WORLD" "$WORLD"; then
  [ "$WORLD" -ge 2 ] && LAYOUT=world
  check_case "world$WORLD"
else
  say FAIL "world size $WORLD: the torch run failed: $(grep -m1 -E 'Error|error' "$W/world$WORLD/run.log")"
  tail -30 "$W/world$WORLD/run.log"
fi

if [ "$NGPU" -eq 1 ]; then
  if two_hosts twoHostsOneGpu gtrace; then
    grep -m2 -E 'NET/Socket|hostHash|Using network' "$W/twoHostsOneGpu/run.log" | sed 's/^/== /'
    LAYOUT=two_hosts
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

# 3. Raw capture of NCCL's plugin calls (only where the plugin saw a multi-rank communicator).
if [ -z "$LAYOUT" ]; then
  say SKIP "capture: no layout with 2 ranks worked above (the plugin sees no collective in 1-rank runs)"
  exit 0
fi
gpu_name=$(nvidia-smi --query-gpu=name --format=csv,noheader -i 0 | head -1)
cuda_version=$(nvidia-smi | grep -o 'CUDA Version: [0-9.]*' | head -1 | awk '{print $3}')
kind=$(printf '%s-cuda%s' "$gpu_name" "${cuda_version:-unknown}" | tr 'A-Z ' 'a-z-' | tr -cd 'a-z0-9.-')
cap="$W/capture/$kind/nccl"
mkdir -p "$cap"
ok=0
if [ "$LAYOUT" = world ]; then
  (export GTRACE_RAW_CAPTURE_DIR="$cap" GTRACE_RAW_CAPTURE_SCENARIO="nccl_collectives.py --iters 3, $WORLD ranks"
   TRACE=nvtx,nccl ITERS=3 run_case capture "$WORLD") && ok=1
else
  (export GTRACE_RAW_CAPTURE_DIR="$cap" GTRACE_RAW_CAPTURE_SCENARIO="nccl_collectives.py --iters 3, 2 ranks on one GPU (NCCL_HOSTID)"
   TRACE=nvtx,nccl ITERS=3 two_hosts capture gtrace) && ok=1
fi
if [ "$ok" != 1 ]; then
  say FAIL "capture: the run with GTRACE_RAW_CAPTURE_DIR failed: $(nccl_said "$W/capture/run.log")"
  exit 0
fi
# Checks each rank's capture (complete frames, NCCL calls, nothing dropped, small) and writes the manifest.
if "$PY" - "$cap" "$gpu_name" "$cuda_version" "$NCCL" "$kind" "$LAYOUT" >"$W/capture/check.txt" 2>&1 <<'PYEOF'
import glob, json, os, struct, sys
d, gpu, cuda, nccl, kind, layout = sys.argv[1:7]
names = {1: "info", 9: "init", 10: "start", 11: "state", 12: "stop", 13: "finalize", 14: "dropped"}
files, bad = [], []
for path in sorted(glob.glob(os.path.join(d, "nccl-*.gtcap"))):
    data = open(path, "rb").read()
    counts, pos, dropped = {}, 16, 0
    if data[:8] != b"GTCAPv\0\0":
        bad.append(path + ": bad magic")
        continue
    while pos + 16 <= len(data):
        ftype, n = struct.unpack_from("<II", data, pos)
        if pos + 16 + n > len(data):
            bad.append(path + ": cut frame")
            break
        if ftype == 14:
            dropped = struct.unpack_from("<Q", data, pos + 16)[0]
        counts[names.get(ftype, str(ftype))] = counts.get(names.get(ftype, str(ftype)), 0) + 1
        pos += 16 + n
    if dropped:
        bad.append("%s: %d calls dropped (log full)" % (path, dropped))
    if counts.get("init", 0) < 1 or counts.get("start", 0) < 1:
        bad.append(path + ": no init/start frames")
    if len(data) > 5 << 20:
        bad.append(path + ": over 5 MiB")
    files.append({"file": os.path.basename(path), "bytes": len(data), "frames": counts})
json.dump({"format": "gtrace raw capture manifest", "kind": kind, "gpu": gpu, "cuda": cuda, "nccl": nccl,
           "layout": layout, "scenario": "samples/nccl/nccl_collectives.py --iters 3", "captures": files},
          open(os.path.join(d, "manifest.json"), "w"), indent=1)
print("%d capture(s): %s" % (len(files), ", ".join("%s %d B %s" % (f["file"], f["bytes"], f["frames"]) for f in files)))
for b in bad:
    print("BAD " + b)
sys.exit(1 if bad or len(files) < 2 else 0)
PYEOF
then
  say PASS "capture: $(head -1 "$W/capture/check.txt" | cut -c1-200)"
else
  say FAIL "capture: $(grep -m1 BAD "$W/capture/check.txt" || head -1 "$W/capture/check.txt")"
fi
if [ -n "${OUT:-}" ]; then
  mkdir -p "$OUT/capture/$kind/nccl" && cp "$cap"/nccl-*.gtcap "$cap/manifest.json" "$OUT/capture/$kind/nccl/" 2>/dev/null
  cp "$W/capture/run.log" "$OUT/20-nccl-capture.log" 2>/dev/null
fi
exit 0
