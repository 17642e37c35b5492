#!/usr/bin/env bash
# 40-callstacks: --cudabacktrace on a real GPU. A PyTorch script (samples/cuda/slow_copy.py) makes one
# deliberately slow device-to-host copy (`.cpu()` of a 1 GiB tensor, inside the NVTX range
# "slow_cpu_copy"); under `gtrace profile --cudabacktrace=memory:1000000,sync:1000000` the export must
# show, for the slow call(s) inside that range, an eventClass-67 row whose CUDA_CALLCHAINS stack holds
# PyTorch's C++ caller (a resolved frame of libtorch/libc10 whose name mentions copy), below the CUDA
# runtime's frames; cuda_api_callers must list it. With --python-backtrace=cuda the same stack must also
# hold the Python line of the `.cpu()` (torch releases the GIL there). Also: backtraces off by default cost no stack rows,
# and a fork + exec of a CUDA child gives two streams with the parent link.
# expected-minutes: 1 (measured: 30 s on an NVIDIA H200, 2026-11-26; gpu-check.sh --list)
set -u
. "$GT_SRC/scripts/gpu-check.d/common.bash"
gt_require_gpu 40-callstacks
name=40-callstacks

py=$(command -v python3 || true)
if [ -z "$py" ] || ! "$py" -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
  res SKIP all "no PyTorch with CUDA here"
  exit 0
fi
if ! ldconfig -p | grep -q 'libunwind.so.8' && [ ! -f "$GT_BUILD/lib/libunwind.so.8" ]; then
  res SKIP all "no libunwind.so.8 on this machine (apt-get install libunwind8)"
  exit 0
fi
work="$GT_WORK/40-callstacks"
rm -rf "$work" && mkdir -p "$work"
gtrace="$GT_BUILD/bin/gtrace"
script="$GT_SRC/samples/cuda/slow_copy.py"
export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0}
echo "torch $("$py" -c 'import torch; print(torch.__version__, torch.version.cuda)')"

# 1. The slow copy, backtraced.
if ! gt_timeout 600 "$gtrace" profile -t cuda,nvtx --cudabacktrace=memory:1000000,sync:1000000 -o "$work/stacks-%p" \
     --export=sqlite "$py" "$script" >"$work/run.out" 2>"$work/run.err"; then
  res FAIL run "slow_copy.py under gtrace failed: $(tail -3 "$work/run.err" | tr '\n' ' ')"
  exit 1
fi
db=$(ls "$work"/stacks-*.sqlite 2>/dev/null | head -1)
if [ -z "$db" ]; then res FAIL export "no database: $(tail -3 "$work/run.err" | tr '\n' ' ')"; exit 1; fi
if grep '^gtrace:' "$work/run.err" | grep -v -e 'wrote ' -e 'warning: call stacks' | grep -q .; then
  res FAIL quiet "gtrace complained: $(grep '^gtrace:' "$work/run.err" | grep -v 'wrote ' | head -3 | tr '\n' ' ')"
fi

"$py" - "$db" <<'PY' | tee "$work/check.txt"
import sqlite3, sys
db = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True)
q = lambda sql, *a: db.execute(sql, a).fetchall()
rng = q("SELECT start, end FROM NVTX_EVENTS WHERE text = 'slow_cpu_copy'")
if not rng:
    print("FAIL range: no NVTX range slow_cpu_copy"); sys.exit(1)
lo, hi = rng[0]
rows = q("""SELECT r.callchainId, s.value, r.end - r.start FROM CUPTI_ACTIVITY_KIND_RUNTIME r
            JOIN StringIds s ON s.id = r.nameId
            WHERE r.eventClass = 67 AND r.start >= ? AND r.end <= ? ORDER BY r.end - r.start DESC""", lo, hi)
print(f"{'PASS' if rows else 'FAIL'} backtraced: {len(rows)} slow calls in the range: "
      + ", ".join(f"{n} {d/1e6:.1f} ms" for _, n, d in rows[:4]))
ok = False
for chain, api, dur in rows:
    frames = q("""SELECT s.value, m.value, coalesce(c.unresolved, 0) FROM CUDA_CALLCHAINS c
                  JOIN StringIds s ON s.id = c.symbol JOIN StringIds m ON m.id = c.module
                  WHERE c.id = ? ORDER BY c.stackDepth""", chain)
    torch = [f for f in frames if ('libtorch' in f[1] or 'libc10' in f[1]) and not f[2]]
    copy = [f for f in torch if 'copy' in f[0].lower()]
    print(f"  {api} {dur/1e6:.1f} ms: {len(frames)} frames, {len(torch)} resolved libtorch/libc10 frames, "
          f"{len(copy)} naming copy; innermost: {frames[0][0][:80] if frames else '-'} ({frames[0][1] if frames else '-'})")
    for s, m, u in frames[:24]:
        print(f"      {s[:140]}  [{m.split('/')[-1]}]{' unresolved' if u else ''}")
    # gtrace's and CUPTI's own frames are dropped from the top: the innermost is the CUDA driver/runtime's.
    if copy and not any('libgtrace' in f[1] or 'libcupti' in f[1] for f in frames):
        ok = True
        break
print(f"{'PASS' if ok else 'FAIL'} caller: the slow copy's stack shows PyTorch's C++ copy code")
depth0 = q("SELECT count(*) FROM CUDA_CALLCHAINS WHERE stackDepth = 0")[0][0]
ids = q("SELECT count(DISTINCT id) FROM CUDA_CALLCHAINS")[0][0]
print(f"{'PASS' if depth0 == ids else 'FAIL'} depths: {ids} chains, {depth0} depth-0 frames")
sys.exit(0 if rows and ok and depth0 == ids else 1)
PY
if [ "${PIPESTATUS[0]}" -eq 0 ]; then
  res PASS slow-copy-caller "$(grep -E '^PASS' "$work/check.txt" | head -2 | sed 's/^PASS //' | tr '\n' ';')"
else
  res FAIL slow-copy-caller "$(grep -E '^FAIL' "$work/check.txt" | head -3 | tr '\n' ';')"
fi
if "$gtrace" stats --report cuda_api_callers --format csv "$db" >"$work/callers.csv" 2>&1 &&
   [ "$(wc -l < "$work/callers.csv")" -ge 2 ]; then
  res PASS report "cuda_api_callers: $(($(wc -l < "$work/callers.csv") - 1)) rows; top: $(sed -n 2p "$work/callers.csv" | cut -c1-160)"
else
  res FAIL report "cuda_api_callers: $(head -3 "$work/callers.csv" | tr '\n' ' ')"
fi

# 1b. --python-backtrace=cuda: the slow copy's stack holds its Python line (main at slow_copy.py:N).
if gt_timeout 600 "$gtrace" profile -t cuda,nvtx --cudabacktrace=memory:1000000,sync:1000000 --python-backtrace=cuda \
     -o "$work/pystacks-%p" --export=sqlite "$py" "$script" >"$work/py.out" 2>"$work/py.err"; then
  pydb=$(ls "$work"/pystacks-*.sqlite 2>/dev/null | head -1)
  line=$("$py" - "$pydb" "$script" <<'PY'
import sqlite3, sys
db = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True)
script = sys.argv[2]
want_line = next(i for i, l in enumerate(open(script), 1) if "LINE: slow-copy" in l)
want = f"main at {script}:{want_line}"
rng = db.execute("SELECT start, end FROM NVTX_EVENTS WHERE text = 'slow_cpu_copy'").fetchone()
if not rng:
    print("FAIL no NVTX range slow_cpu_copy")
    sys.exit(0)
lo, hi = rng
chains = [c for (c,) in db.execute("""SELECT callchainId FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE eventClass = 67
                                      AND start >= ? AND end <= ?""", (lo, hi))]
found = []
for c in chains:
    py = [s for (s,) in db.execute("""SELECT s.value FROM CUDA_CALLCHAINS c JOIN StringIds s ON s.id = c.symbol
                                      WHERE c.id = ? AND c.originalIP IS NULL ORDER BY c.stackDepth""", (c,))]
    found.append(py[:3])
    if want in py:
        print(f"PASS {len(chains)} slow calls in the range; Python frames {py[:3]} ('{want}' at Python depth "
              f"{py.index(want)})")
        sys.exit(0)
print(f"FAIL no stack in the range has the Python frame '{want}': {found[:3]}")
PY
)
  res "${line%% *}" python-line "${line#* }"
else
  res FAIL python-line "run failed: $(tail -3 "$work/py.err" | tr '\n' ' ')"
fi

# 2. Default (no --cudabacktrace): no stack rows, no libunwind in the process.
if gt_timeout 600 "$gtrace" profile -t cuda,nvtx -o "$work/plain-%p" --export=sqlite "$py" "$script" \
     >"$work/plain.out" 2>"$work/plain.err"; then
  pdb=$(ls "$work"/plain-*.sqlite | head -1)
  n=$("$py" -c "import sqlite3,sys; d=sqlite3.connect(sys.argv[1]); print(d.execute(\"SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE eventClass = 67\").fetchone()[0])" "$pdb")
  maps=$(grep -c libunwind "$work/plain.out" || true)
  if [ "$n" = 0 ] && [ "$maps" = 0 ]; then res PASS default-off "no backtrace rows, libunwind not mapped"
  else res FAIL default-off "$n backtrace rows; libunwind mapped: $maps"; fi
else
  res FAIL default-off "plain run failed: $(tail -3 "$work/plain.err" | tr '\n' ' ')"
fi

# 3. A CUDA child started by fork + exec (torchrun-like): two streams, parent link in GTRACE_PROCESS_TREE.
if gt_timeout 600 "$gtrace" profile -t cuda -o "$work/tree-%p" --export=sqlite "$py" "$script" --spawn-child \
     >"$work/tree.out" 2>"$work/tree.err"; then
  tdb=$(ls "$work"/tree-*.sqlite | head -1)
  line=$("$py" - "$tdb" <<'PY'
import sqlite3, sys
d = sqlite3.connect(sys.argv[1])
procs = d.execute("SELECT count(*) FROM PROCESSES").fetchone()[0]
linked = d.execute("""SELECT count(*) FROM GTRACE_PROCESS_TREE c JOIN GTRACE_PROCESS_TREE p
                      ON c.tracedAncestorGlobalPid = p.globalPid WHERE c.traced = 1 AND p.traced = 1""").fetchone()[0]
gpus = d.execute("SELECT count(DISTINCT globalPid) FROM CUPTI_ACTIVITY_KIND_KERNEL").fetchone()[0]
print(f"{'PASS' if procs == 2 and linked == 1 and gpus == 2 else 'FAIL'} {procs} processes, {linked} parent links, "
      f"{gpus} processes with kernels")
PY
)
  res "${line%% *}" process-tree "${line#* }"
else
  res FAIL process-tree "run failed: $(tail -3 "$work/tree.err" | tr '\n' ' ')"
fi
exit 0
