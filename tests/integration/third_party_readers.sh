#!/usr/bin/env bash
# Third-party readers of nsys SQLite exports, installed from PyPI into a throw-away venv, on gtrace
# exports (issue 15):
#  - BSC's nsys2prv (PyPI nsys2prv 0.5.8), which also shells out to `nsys export` and `nsys stats`:
#    run unmodified with `gtrace nsys-compat`'s nsys first in PATH, on a CUDA run through the fake
#    CUPTI (test double; NVTX ranges + 5 kernels) and on a merged 4-rank/2-host simulator export;
#    it must write its Paraver trace (.prv/.pcf/.row) with our kernels in it; on a GPU-metrics run
#    through the fake CUPTI as a GH100 (its gpu_metrics path: event type 9400 + metricId, named by
#    TARGET_INFO_GPU_METRICS.metricName, so nsys's names and GH100 ids must come out as they are); and
#    on the NVTX sample (the demo's nvtx_threads), where nsys2prv 0.5.8 stops at the CUDA device
#    table it reads unconditionally (TARGET_INFO_CUDA_CONTEXT_INFO) — asserted exactly, after our
#    compat `nsys export` has written the database it asked for.
#  - nsys-tui (PyPI nsys-tui 0.1.5), which keys GPUs on deviceId: on the merged export it must see
#    four GPUs, each named, with its SM count and its own rank's kernels.
# Exit 77 (ctest SKIP) when PyPI cannot be reached or python3 has no venv module.
set -uo pipefail
build=$1
work=$(mktemp -d /tmp/gtrace-readers-XXXXXX)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

python3 -m venv "$work/venv" >/dev/null 2>&1 || { echo "SKIP: python3 -m venv unavailable"; exit 77; }
pip=("$work/venv/bin/pip" --disable-pip-version-check -q)
if ! timeout 120 "${pip[@]}" download --no-deps -d "$work/probe" nsys2prv==0.5.8 >/dev/null 2>&1; then
  echo "SKIP: PyPI unreachable (pip download nsys2prv failed)"
  exit 77
fi
timeout 600 "${pip[@]}" install nsys2prv==0.5.8 nsys-tui==0.1.5 >"$work/pip.log" 2>&1 ||
  { cat "$work/pip.log"; fail "pip install nsys2prv nsys-tui"; }

gtrace=$build/bin/gtrace
"$gtrace" nsys-compat "$work/bin" >/dev/null || fail "gtrace nsys-compat"

# 1. A CUDA run through the fake CUPTI. nsys2prv exports it itself (`nsys export`), then runs
#    `nsys stats -r cuda_api_trace --timeunit nsec -f csv -o ...` through the compat script.
mkdir -p "$work/cuda" && cd "$work/cuda" || exit 1
GTRACE_OUTPUT=$work/cuda/run GTRACE_CUPTI_PATH=$build/lib/libgt_fake_cupti.so LD_PRELOAD=$build/lib/libgtrace.so \
  "$build/bin/fake_cuda_app" nvtx >/dev/null || fail "fake_cuda_app"
[ -f run.gtrace ] || fail "no stream written"
PATH=$work/bin:$PATH timeout 300 "$work/venv/bin/nsys2prv" -t cuda_api_trace,nvtx_pushpop_trace run.gtrace trace \
  >nsys2prv.log 2>&1 || { cat nsys2prv.log; fail "nsys2prv on the CUDA run"; }
grep -q "correctly translated" nsys2prv.log || { cat nsys2prv.log; fail "nsys2prv did not report success"; }
for f in trace.prv trace.pcf trace.row run.sqlite run_cuda_api_trace.csv; do [ -s "$f" ] || fail "no $f"; done
for k in warmup k1 k2 k3 k4; do grep -qx "[0-9]* $k" trace.pcf || fail "kernel $k not in trace.pcf"; done
head -1 run_cuda_api_trace.csv | grep -qx "Start (ns),Duration (ns),Name,Result,CorrID,Pid,Tid,T-Pri,Thread Name" ||
  fail "cuda_api_trace header: $(head -1 run_cuda_api_trace.csv)"
# 5 kernels, each a Paraver record of the kernel event type 63000006 (nsys2prv's numbering).
n=$(grep -c ":63000006:[1-9]" trace.prv)
[ "$n" = 5 ] || fail "expected 5 kernel records in trace.prv, got $n"

# 2. A merged export of 4 ranks on 2 hosts (simulator, one GPU per local rank).
mkdir -p "$work/sim" && cd "$work/sim" || exit 1
"$build/bin/sim_ranks" streams --ranks 4 --per-host 2 --steps 4 --cuda-api >/dev/null || fail "sim_ranks"
"$gtrace" export -o sim.sqlite streams >/dev/null 2>&1 || fail "gtrace export of the simulator's streams"
"$work/venv/bin/nsys-tui" info sim.sqlite >tui.txt 2>&1 || { cat tui.txt; fail "nsys-tui info"; }
grep -q "GPUs: \[0, 1, 2, 3\]" tui.txt || { cat tui.txt; fail "nsys-tui does not see four GPUs"; }
n=$(grep -c "GPU [0-3]: NVIDIA H100 80GB HBM3 | PCI= | SMs=132 | Mem=86GB | Kernels=116 | Streams=\[7, 13\]" tui.txt)
[ "$n" = 4 ] || { cat tui.txt; fail "nsys-tui: expected 4 named GPUs with 116 kernels each, got $n"; }
PATH=$work/bin:$PATH timeout 300 "$work/venv/bin/nsys2prv" -t cuda_api_trace,nvtx_pushpop_trace sim.gtrace simtrace \
  >nsys2prv.log 2>&1 || { cat nsys2prv.log; fail "nsys2prv on the merged export"; }
grep -q "correctly translated" nsys2prv.log || { cat nsys2prv.log; fail "nsys2prv did not report success"; }
# 4 ranks x 4 steps: 24 compute kernels (type 63000006) and 5 NCCL kernels (63000007) per step.
n=$(grep -c ":63000006:[1-9]" simtrace.prv)
[ "$n" = 384 ] || fail "expected 384 compute kernel records in simtrace.prv, got $n"
n=$(grep -c ":63000007:[1-9]" simtrace.prv)
[ "$n" = 80 ] || fail "expected 80 NCCL kernel records in simtrace.prv, got $n"

# 3. GPU metrics through the fake CUPTI (a test double) as a GH100: nsys2prv -t gpu_metrics.
mkdir -p "$work/metrics" && cd "$work/metrics" || exit 1
GTRACE_OUTPUT=$work/metrics/met GTRACE_CUPTI_PATH=$build/lib/libgt_fake_cupti.so GTRACE_GPU_METRICS_DEVICES=all \
  FAKE_CUPTI_CHIP=GH100 FAKE_CUDA_UUID_TAG=a1b2c3 \
  LD_PRELOAD=$build/lib/libgtrace.so "$build/bin/fake_metrics_app" timeline >/dev/null 2>&1 || fail "fake_metrics_app"
[ -f met.gtrace ] || fail "no metrics stream written"
PATH=$work/bin:$PATH timeout 300 "$work/venv/bin/nsys2prv" -t cuda_api_trace,gpu_metrics met.gtrace mtrace \
  >nsys2prv.log 2>&1 || { cat nsys2prv.log; fail "nsys2prv on the GPU-metrics run"; }
grep -q "correctly translated" nsys2prv.log || { cat nsys2prv.log; fail "nsys2prv did not report success"; }
# Its metric event types: 9400 + nsys's GH100 metricId for nsys's metrics, 9400 + 1000.. for gtrace's.
expected_pcf='7 9400 GPC Clock Frequency [MHz]
7 9402 GR Active [Throughput %]
7 9403 SMs Active [Throughput %]
7 9404 SM Issue [Throughput %]
7 9405 Tensor Active [Throughput %]
7 9412 Compute Warps in Flight [Throughput %]
7 10400 gtrace Warp Occupancy of Active SMs [Throughput %]
7 10401 gtrace DRAM Read Bytes [bytes/s]
7 10402 gtrace DRAM Write Bytes [bytes/s]
7 10403 gtrace DRAM Throughput [Throughput %]
7 10404 gtrace PCIe RX Bytes [bytes/s]
7 10405 gtrace PCIe TX Bytes [bytes/s]
7 10406 gtrace NVLink RX Bytes [bytes/s]
7 10407 gtrace NVLink TX Bytes [bytes/s]'
got_pcf=$(grep "^7 9[0-9][0-9][0-9] \|^7 10[0-9][0-9][0-9] " mtrace.pcf)
[ "$got_pcf" = "$expected_pcf" ] || fail "nsys2prv metric names: $got_pcf"
# 20 samples, one Paraver record each; the fake's copy phase has SMs Active 20 %, its GEMM phase
# Tensor Active 80 % (10 samples each).
n=$(grep -c "^2:.*:9400:[0-9]*:9402:" mtrace.prv)
[ "$n" = 20 ] || fail "expected 20 GPU-metric records in mtrace.prv, got $n"
n=$(grep -c ":9403:20:" mtrace.prv)
[ "$n" = 10 ] || fail "expected 10 records with SMs Active 20, got $n"
n=$(grep -c ":9405:80:" mtrace.prv)
[ "$n" = 10 ] || fail "expected 10 records with Tensor Active 80, got $n"

# 4. The NVTX sample (no CUDA). nsys2prv runs our compat `nsys export`, then reads
#    TARGET_INFO_CUDA_CONTEXT_INFO unconditionally; an export of a run without CUDA has no such table
#    (nsys exports lazily: tables only with rows), so nsys2prv 0.5.8 stops there. The database it
#    asked for is complete: 4 threads x 10 iterations of the sample's push/pop ranges.
mkdir -p "$work/nvtx" && cd "$work/nvtx" || exit 1
"$gtrace" profile -o nvtx -- "$build/bin/nvtx_threads" --threads 4 --iterations 10 >/dev/null 2>&1 ||
  fail "gtrace profile of the NVTX sample"
PATH=$work/bin:$PATH timeout 300 "$work/venv/bin/nsys2prv" -t nvtx_pushpop_trace nvtx.gtrace ntrace >nsys2prv.log 2>&1
rc=$?
[ "$rc" = 1 ] || { cat nsys2prv.log; fail "nsys2prv on the NVTX sample: expected exit 1, got $rc"; }
grep -qx "ValueError: Table TARGET_INFO_CUDA_CONTEXT_INFO not found" nsys2prv.log ||
  { cat nsys2prv.log; fail "nsys2prv on the NVTX sample stopped elsewhere"; }
[ -s nvtx.sqlite ] || fail "the compat nsys export wrote no nvtx.sqlite"
n=$(python3 -c "import sqlite3; print(sqlite3.connect('nvtx.sqlite').execute(
  'SELECT count(*) FROM NVTX_EVENTS WHERE eventType = 59').fetchone()[0])")
[ "$n" = 92 ] || fail "expected 92 push/pop ranges in nvtx.sqlite, got $n"
echo "third-party readers: ok (nsys2prv through gtrace nsys-compat: CUDA, merged, GPU metrics, NVTX sample; nsys-tui)"
