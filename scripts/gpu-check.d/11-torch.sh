#!/usr/bin/env bash
# 11-torch: PyTorch under LD_PRELOAD=libgtrace.so. The same training steps (samples/cuda/torch_steps.py)
# run twice, in separate processes (CUPTI has one subscriber): once under gtrace with a
# cudaProfilerStart/Stop window around the measured steps, once inside torch.profiler. The kernel
# count and the multiset of kernel names (demangled, as both tools print them) must be equal. Also:
# torch.profiler inside a gtrace process must not break the application. Then torch's own NVTX ranges
# (samples/cuda/torch_nvtx.py: torch.cuda.nvtx and emit_nvtx() around a matrix product's forward and
# backward) with exact names, and nvtx_gpu_proj_sum projecting them onto the torch kernels
# (torch_nvtx_check.py).
# expected-minutes: 1 (measured: 42 s on an NVIDIA H200, 2026-11-26; gpu-check.sh --list)
set -u
. "$GT_SRC/scripts/gpu-check.d/common.bash"
gt_require_gpu 11-torch
name=11-torch

py=$(command -v python3 || true)
if [ -z "$py" ] || ! "$py" -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
  res SKIP all "no PyTorch with CUDA here"
  exit 0
fi
work="$GT_WORK/11-torch"
rm -rf "$work" && mkdir -p "$work"
script="$GT_SRC/samples/cuda/torch_steps.py"
gtrace="$GT_BUILD/bin/gtrace"
lib="$GT_BUILD/lib/libgtrace.so"
export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0}
echo "torch $("$py" -c 'import torch; print(torch.__version__, torch.version.cuda)')"

# 1. torch.profiler (no gtrace).
if ! gt_timeout 600 "$py" "$script" --mode torch --out "$work/torch.json" >"$work/torch.out" 2>&1; then
  res FAIL torch-profiler "torch_steps --mode torch failed: $(tail -3 "$work/torch.out" | tr '\n' ' ')"
  exit 1
fi

# 2. gtrace, LD_PRELOAD only, window = the measured steps.
if ! GTRACE_OUTPUT="$work/g-%p" GTRACE_CAPTURE_RANGE=cudaProfilerApi LD_PRELOAD="$lib" \
     gt_timeout 600 "$py" "$script" --mode gtrace >"$work/gtrace.out" 2>"$work/gtrace.err"; then
  res FAIL gtrace-run "torch_steps under gtrace failed: $(tail -3 "$work/gtrace.err" | tr '\n' ' ')"
  exit 1
fi
if grep '^gtrace:' "$work/gtrace.err" | grep -q .; then
  res FAIL gtrace-run "gtrace complained: $(grep '^gtrace:' "$work/gtrace.err" | head -3 | tr '\n' ' ')"
fi
streams=$(ls "$work"/g-*.gtrace 2>/dev/null)
if [ -z "$streams" ] || ! "$gtrace" export -o "$work/gtrace.sqlite" $streams >"$work/export.out" 2>&1; then
  res FAIL gtrace-export "no stream or export failed: $(tail -3 "$work/export.out" | tr '\n' ' ')"
  exit 1
fi

"$py" - "$work/gtrace.sqlite" "$work/torch.json" <<'PY' | tee "$work/compare.txt"
import collections, json, sqlite3, sys
db = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True)
ours = [r[0] for r in db.execute(
    "SELECT s.value FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON s.id = k.demangledName ORDER BY k.start")]
theirs = json.load(open(sys.argv[2]))["kernels"]
import re
def key(name):
    # The kernel's own name: gtrace writes nsys's demangled spelling ("(unsigned int)32", "(int, T2,
    # T3)", "[lambda ...]", as the reference nsys exports do), torch.profiler libstdc++'s ("32u",
    # the full argument types, "{lambda ...}"): on an H200 (2026-11-26) 10 of 19 names differed in
    # spelling only. Compared: the unqualified function name, kernel by kernel in start order.
    name = name.replace("(anonymous namespace)", "anon")
    depth, cut = 0, len(name)
    for i, ch in enumerate(name):
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth -= 1
        elif ch == "(" and depth == 0 and i > 0:
            cut = i
            break
    head = name[:cut]
    head = re.sub(r"<.*>", "", head)
    return head.split()[-1].split("::")[-1] if head.split() else head
a, b = collections.Counter(map(key, ours)), collections.Counter(map(key, theirs))
ok = len(ours) == len(theirs) and a == b
print(f"{'PASS' if len(ours) == len(theirs) else 'FAIL'} count: gtrace {len(ours)}, torch.profiler {len(theirs)}")
same_order = [key(n) for n in ours] == [key(n) for n in theirs]
print(f"{'PASS' if a == b else 'FAIL'} names: {len(a)} distinct kernel names, "
      f"{'the same' if same_order else 'NOT the same'} kernel by kernel in start order")
ok = ok and same_order
for name in sorted(set(a) | set(b)):
    if a[name] != b[name]:
        print(f"  differs: gtrace {a[name]} torch {b[name]}  {name[:160]}")
orphans = db.execute(
    "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL k WHERE NOT EXISTS (SELECT 1 FROM CUPTI_ACTIVITY_KIND_RUNTIME r "
    "WHERE r.correlationId = k.correlationId AND k.globalPid = (r.globalTid & 0xFFFFFFFFFF000000))").fetchone()[0]
print(f"{'PASS' if orphans == 0 else 'FAIL'} correlation: {orphans} kernels without their launch call")
sys.exit(0 if ok and orphans == 0 and len(ours) > 0 else 1)
PY
if [ "${PIPESTATUS[0]}" -eq 0 ]; then
  res PASS kernels-match-torch-profiler "$(head -2 "$work/compare.txt" | sed 's/^PASS //' | tr '\n' ';')"
else
  res FAIL kernels-match-torch-profiler "$(grep -E '^FAIL|differs' "$work/compare.txt" | head -5 | tr '\n' ';')"
fi

# 3. torch.profiler inside a gtrace process: whoever subscribes second gives way; the app must not care.
if GTRACE_OUTPUT="$work/b-%p" LD_PRELOAD="$lib" gt_timeout 600 "$py" "$script" --mode both --out "$work/both.json" \
     >"$work/both.out" 2>"$work/both.err" && grep -q '^ok$' "$work/both.out"; then
  res PASS coexistence "application unaffected; gtrace said: $(grep '^gtrace:' "$work/both.err" | head -1)"
else
  res FAIL coexistence "torch.profiler inside gtrace broke the app: $(tail -3 "$work/both.err" | tr '\n' ' ')"
fi
# 4. torch's NVTX ranges (torch.cuda.nvtx, emit_nvtx) with their exact names, projected onto the GPU.
if GTRACE_OUTPUT="$work/n-%p" GTRACE_TRACE=cuda,nvtx LD_PRELOAD="$lib" \
     gt_timeout 300 "$py" "$GT_SRC/samples/cuda/torch_nvtx.py" >"$work/nvtx.out" 2>"$work/nvtx.err" &&
   grep -q '^ok$' "$work/nvtx.out"; then
  streams=$(ls "$work"/n-*.gtrace 2>/dev/null)
  if [ -n "$streams" ] && "$gtrace" export -o "$work/nvtx.sqlite" $streams >"$work/nvtx-export.out" 2>&1 &&
     "$gtrace" stats --report nvtx_gpu_proj_sum --format json "$work/nvtx.sqlite" >"$work/nvtx-proj.json" 2>"$work/nvtx-proj.err"; then
    "$py" "$GT_SRC/scripts/gpu-check.d/torch_nvtx_check.py" "$work/nvtx.sqlite" "$work/nvtx-proj.json" |
      tee "$work/nvtx-check.txt" | relay
  else
    res FAIL torch-nvtx "export or nvtx_gpu_proj_sum failed: $(tail -3 "$work/nvtx-export.out" "$work/nvtx-proj.err" | tr '\n' ' ')"
  fi
else
  res FAIL torch-nvtx "torch_nvtx.py under gtrace failed: $(tail -3 "$work/nvtx.err" | tr '\n' ' ')"
fi
exit 0
