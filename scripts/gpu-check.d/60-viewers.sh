#!/usr/bin/env bash
# 60-viewers: a short PyTorch training run under `gtrace profile -t cuda,nvtx`, exported to SQLite
# and then to Perfetto, Kineto-style JSON and Paraver without error, with structural checks on
# each: kernels as GPU slices with flows from their launches (Perfetto, decoded with protoc),
# kernel events and ac2g flows passing kineto_check.py (Kineto JSON), kernel states and events
# (Paraver). Needs PyTorch with CUDA (SKIP otherwise). Env: see scripts/gpu-check.sh.
# expected-minutes: 1 (measured: 11 s on an NVIDIA H200, 2026-11-26; gpu-check.sh --list)
set -u
. "$GT_SRC/scripts/gpu-check.d/common.bash"
gt_require_gpu 60-viewers
name=60-viewers
result() { echo "$1 $name: $2" >>"$GT_RESULTS"; }
fail() { result FAIL "$1"; exit 1; }
G=$GT_BUILD/bin/gtrace
PY=${GT_PYTHON:-python3}
W=$GT_WORK/viewers
mkdir -p "$W"
cd "$W" || fail "cannot enter $W"

if ! "$PY" -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
  result SKIP "no PyTorch with a usable CUDA device for $PY"
  exit 0
fi
cat >train.py <<'PY'
import torch
torch.manual_seed(0)
dev = torch.device("cuda")
model = torch.nn.Sequential(torch.nn.Linear(512, 1024), torch.nn.ReLU(), torch.nn.Linear(1024, 10)).to(dev)
opt = torch.optim.SGD(model.parameters(), lr=0.01)
x = torch.randn(256, 512, device=dev)
y = torch.randint(0, 10, (256,), device=dev)
for step in range(5):
    torch.cuda.nvtx.range_push(f"step {step}")
    opt.zero_grad()
    loss = torch.nn.functional.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    torch.cuda.nvtx.range_pop()
torch.cuda.synchronize()
print("loss", float(loss))
PY
gt_timeout 240 "$G" profile -t cuda,nvtx -f -o "$W/run" -- "$PY" train.py || fail "gtrace profile of the PyTorch run failed"
"$G" export -f -o "$W/run.sqlite" "$W/run.gtrace" || fail "export --type sqlite failed"
count() { "$PY" -c "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute(sys.argv[2]).fetchone()[0])" "$W/run.sqlite" "$1" 2>/dev/null || echo 0; }
kernels=$(count "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL")
[ "${kernels:-0}" -gt 0 ] || fail "no kernels in run.sqlite (CUDA tracing did not record)"

# Perfetto, straight from the stream.
"$G" export --type perfetto -f -o "$W/run.pftrace" "$W/run.gtrace" || fail "export --type perfetto failed"
if command -v protoc >/dev/null; then
  protoc --proto_path="$GT_SRC/tests/viewers/protos" --decode=perfetto.protos.Trace perfetto_subset.proto \
    <"$W/run.pftrace" >"$W/run.pftrace.txt" || fail "run.pftrace does not decode as a Perfetto Trace"
  begins=$(grep -c 'type: TYPE_SLICE_BEGIN' "$W/run.pftrace.txt")
  flows=$(grep -c 'terminating_flow_ids:\|^ *flow_ids:' "$W/run.pftrace.txt")
  [ "$begins" -ge "$kernels" ] || fail "perfetto: $begins slices for $kernels kernels"
  [ "$flows" -gt 0 ] || fail "perfetto: no launch -> kernel flows"
  pf="perfetto $begins slices, $flows flow ends/starts"
else
  [ -s "$W/run.pftrace" ] || fail "empty run.pftrace"
  pf="perfetto $(stat -c %s "$W/run.pftrace") bytes (no protoc to decode)"
fi

# Kineto JSON (a directory, one file per rank) from the database.
rm -rf "$W/run.kineto"
"$G" export --type kineto-json -o "$W/run.kineto" "$W/run.sqlite" || fail "export --type kineto-json failed"
"$PY" "$GT_SRC/tests/viewers/kineto_check.py" "$W/run.kineto" >"$W/kineto.txt" || {
  grep ERROR "$W/kineto.txt" | head -5; fail "kineto-json structure (kineto_check.py)"; }
k_kernels=$(awk '$1 == "count" && $3 == "X/kernel" {n += $4} END {print n + 0}' "$W/kineto.txt")
k_flows=$(awk '$1 == "count" && $3 == "f/ac2g" {n += $4} END {print n + 0}' "$W/kineto.txt")
[ "$k_kernels" = "$kernels" ] || fail "kineto-json: $k_kernels kernel events, $kernels kernels in the database"
[ "$k_flows" -gt 0 ] || fail "kineto-json: no ac2g flows"
hta=""
if "$PY" -c 'import hta' 2>/dev/null; then
  "$PY" - "$W/run.kineto" >"$W/hta.txt" 2>&1 <<'PY' && hta=", HTA temporal breakdown ok" || hta=", HTA FAILED (see hta.txt)"
import sys, logging, warnings
warnings.filterwarnings("ignore"); logging.disable(logging.WARNING)
from hta.trace_analysis import TraceAnalysis
print(TraceAnalysis(trace_dir=sys.argv[1]).get_temporal_breakdown(visualize=False).to_string())
PY
fi

# Paraver.
"$G" export --type paraver -f -o "$W/run.prv" "$W/run.sqlite" || fail "export --type paraver failed"
head -1 "$W/run.prv" | grep -q '^#Paraver (' || fail "run.prv has no Paraver header"
running=$(grep -c '^1:.*:1$' "$W/run.prv")
kevents=$(grep -c ':6300000[67]:[1-9]' "$W/run.prv")  # CUDA and NCCL kernels
[ "$kevents" = "$kernels" ] || fail "paraver: $kevents kernel events for $kernels kernels"
[ "$running" -gt 0 ] || fail "paraver: no Running states"
for ext in pcf row; do [ -s "$W/run.$ext" ] || fail "no run.$ext"; done

[ -n "${OUT:-}" ] && cp "$W/kineto.txt" "$OUT/60-viewers-kineto.txt" 2>/dev/null
case "$hta" in *FAILED*) fail "$kernels kernels; $pf; HTA could not analyze our files$hta" ;; esac
result PASS "$kernels kernels; $pf; kineto-json $k_kernels kernels, $k_flows flows$hta; paraver $kevents kernel events, $running Running states"
