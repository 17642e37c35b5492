#!/usr/bin/env bash
# 12-second-client: torch.profiler inside a gtrace process (issue 29). 30 identical training-like steps,
# each inside NVTX "step<i>"; a torch.profiler block (kineto: a second CUPTI client, which registers
# its own buffer callbacks and TSC clock and disables kernels & co. when it stops) around steps 10-12.
# Asserts: torch.profiler saw kernels in its steps; gtrace has the same kernel count in every step
# outside the block (steps 13-29 included, the ones lost before the fix); one gtrace: line names the
# second client; every kernel lies inside the run's CUDA API span (no TSC ticks read as ns); no drops.
# Also 32 CUDA-launching threads in one flush interval: every launch has its kernel, nothing dropped.
# expected-minutes: 1 (not yet measured on a GPU)
set -u
. "$GT_SRC/scripts/gpu-check.d/common.bash"
gt_require_gpu 12-second-client
name=12-second-client

py=$(command -v python3 || true)
if [ -z "$py" ] || ! "$py" -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
  res SKIP all "no PyTorch with CUDA here"
  exit 0
fi
work="$GT_WORK/12-second-client"
rm -rf "$work" && mkdir -p "$work"
export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0}
cat >"$work/steps.py" <<'PY'
import sys, threading, torch
from torch.profiler import profile, ProfilerActivity
x = torch.randn(1024, 1024, device="cuda")
def step(i):
    torch.cuda.nvtx.range_push(f"step{i}")
    y = x
    for _ in range(8):
        y = torch.relu(y @ x)
    torch.cuda.synchronize()
    torch.cuda.nvtx.range_pop()
prof_kernels = 0
for i in range(30):
    if i == 10:
        prof = profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]); prof.__enter__()
    step(i)
    if i == 12:
        prof.__exit__(None, None, None)
        prof_kernels = sum(1 for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA)
# 32 threads launching at once (per-thread CUPTI buffers).
def worker():
    for _ in range(200):
        torch.relu(x)
    torch.cuda.synchronize()
ts = [threading.Thread(target=worker) for _ in range(32)]
[t.start() for t in ts]; [t.join() for t in ts]
print(f"profiler_kernels {prof_kernels}")
PY
if ! GTRACE_OUTPUT="$work/g-%p" GTRACE_TRACE=cuda,nvtx LD_PRELOAD="$GT_BUILD/lib/libgtrace.so" \
     gt_timeout 300 "$py" "$work/steps.py" >"$work/run.out" 2>"$work/run.err"; then
  res FAIL run "steps.py under gtrace failed: $(tail -3 "$work/run.err" | tr '\n' ' ')"
  exit 1
fi
cp "$work/run.out" "$work/run.err" "$OUT/" 2>/dev/null || true
if ! "$GT_BUILD/bin/gtrace" export -o "$work/g.sqlite" "$work"/g-*.gtrace >"$work/export.out" 2>&1; then
  res FAIL export "$(tail -3 "$work/export.out" | tr '\n' ' ')"
  exit 1
fi
"$py" - "$work/g.sqlite" "$work/run.out" "$work/run.err" <<'PY' | tee "$OUT/12-second-client.txt"
import re, sqlite3, sys
db = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True)
prof = int(re.search(r"profiler_kernels (\d+)", open(sys.argv[2]).read()).group(1))
lines = [l for l in open(sys.argv[3]) if l.startswith("gtrace:")]
per = dict(db.execute(
    "SELECT n.text, count(k.start) FROM NVTX_EVENTS n JOIN CUPTI_ACTIVITY_KIND_RUNTIME r ON r.start >= n.start "
    "AND r.end <= n.end AND r.globalTid = n.globalTid JOIN CUPTI_ACTIVITY_KIND_KERNEL k ON "
    "k.correlationId = r.correlationId WHERE n.text LIKE 'step%' GROUP BY n.text").fetchall())
outside = [per.get(f"step{i}", 0) for i in list(range(10)) + list(range(13, 30))]
bad_time = db.execute("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE start < (SELECT min(start) FROM "
                      "CUPTI_ACTIVITY_KIND_RUNTIME) OR start > (SELECT max(end) FROM CUPTI_ACTIVITY_KIND_RUNTIME) + 1000000000").fetchone()[0]
drops = db.execute("SELECT count(*) FROM sqlite_master WHERE name = 'DIAGNOSTIC_EVENT'").fetchone()[0] and \
    db.execute("SELECT count(*) FROM DIAGNOSTIC_EVENT WHERE text LIKE '%dropped%' OR text LIKE '%declined%'").fetchone()[0]
ok = prof > 0 and min(outside) > 0 and len(set(outside)) == 1 and bad_time == 0 and not drops and \
    sum("second CUPTI client" in l for l in lines) == 1
print(("PASS" if ok else "FAIL") + f" kernels: profiler {prof}, gtrace per step outside the block {sorted(set(outside))}, "
      f"kernels outside the API span {bad_time}, drop diagnostics {drops}, gtrace lines {len(lines)}")
PY
if grep -q '^PASS' "$OUT/12-second-client.txt"; then
  res PASS second-client "$(cat "$OUT/12-second-client.txt")"
else
  res FAIL second-client "$(cat "$OUT/12-second-client.txt")"
fi
