#!/usr/bin/env bash
# 15-capture: records real CUPTI input once per GPU kind for the CPU replay tests (docs/capture.md).
# Runs samples/cuda/capture_scenario under libgtrace.so with raw capture on (GTRACE_RAW_CAPTURE_DIR)
# twice: the whole run, and with --capture-range=cudaProfilerApi ("window"). For each it writes
# <kind>/<mode>/{capture-<pid>.gtcap, manifest.json, nvidia-smi-q.txt}, checks the capture is complete
# and small, and checks the directly exported rows against the scenario's expected counts (the same
# counts the replay tests assert). The <kind> directory is copied to $OUT/capture/ when $OUT is set;
# commit it as tests/data/gpu/<kind>/ and every CPU CI run replays it.
# Needs only bash and python3's standard library on the GPU machine. Appends PASS/FAIL/SKIP lines to
# $GT_RESULTS. Environment: $GT_BUILD, $GT_SRC, $GT_WORK, $GT_RESULTS, $OUT (scripts/gpu-check.d/README.md).
# expected-minutes: 1 (measured: 5 s on an NVIDIA H200, 2026-11-26; gpu-check.sh --list)
set -u
. "$GT_SRC/scripts/gpu-check.d/common.bash"
gt_require_gpu 15-capture
name=15-capture
start_s=$SECONDS

app="$GT_BUILD/bin/capture_scenario"
gtrace="$GT_BUILD/bin/gtrace"
lib="$GT_BUILD/lib/libgtrace.so"
if [ ! -x "$app" ]; then
  res FAIL build "$app missing: was the build configured with nvcc on PATH?"
  exit 1
fi
py=$(command -v python3 || true)
if [ -z "$py" ]; then res FAIL setup "python3 is needed for the manifest and checks"; exit 1; fi
export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0}

gpu_name=$(nvidia-smi --query-gpu=name --format=csv,noheader -i 0 | head -1)
driver=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader -i 0 | head -1)
cuda_version=$(nvidia-smi | grep -o 'CUDA Version: [0-9.]*' | head -1 | awk '{print $3}')
kind=$(printf '%s-cuda%s' "$gpu_name" "${cuda_version:-unknown}" | tr 'A-Z ' 'a-z-' | tr -cd 'a-z0-9.-')
nccl_version=$(gt_timeout 60 "$py" -c 'import torch; v = torch.cuda.nccl.version(); print(".".join(map(str, v)) if isinstance(v, tuple) else v)' 2>/dev/null || true)
echo "GPU 0: $gpu_name, driver $driver, CUDA $cuda_version, NCCL ${nccl_version:-unknown} -> $kind"
work="$GT_WORK/15-capture"
root="$work/$kind"
rm -rf "$root" "$work/streams"
mkdir -p "$root" "$work/streams"

# manifest.py CAPTURE_DIR EXPECTED_JSON -> manifest.json; prints a summary line; exit 1 when the
# capture is missing, unfinished, lossy or too big.
cat > "$work/manifest.py" <<'PY'
import glob, json, os, struct, sys
d, expected_path, gpu_name, driver, cuda_version, nccl, kind = sys.argv[1:8]
caps = glob.glob(os.path.join(d, "capture-*.gtcap"))
if len(caps) != 1:
    print(f"expected one capture-*.gtcap in {d}, found {len(caps)}"); sys.exit(1)
cap = caps[0]
data = open(cap, "rb").read()
if data[:8] != b"GTCAPv\0\0":
    print(f"{cap}: bad magic"); sys.exit(1)
version, header = struct.unpack_from("<II", data, 8)
pos, info, counts, end = header, {}, {}, None
names = {1: "info", 2: "buffers", 3: "record_index", 4: "strings", 5: "callbacks", 6: "device_attributes", 7: "end",
         8: "dropped_records"}
while pos + 16 <= len(data):
    ftype, n, seq = struct.unpack_from("<IIQ", data, pos)
    payload = data[pos + 16:pos + 16 + n]
    if len(payload) < n:
        break
    counts[names.get(ftype, str(ftype))] = counts.get(names.get(ftype, str(ftype)), 0) + 1
    if ftype == 1:
        for line in payload.decode("utf-8", "replace").splitlines():
            k, _, v = line.partition("=")
            info[k] = v
    elif ftype == 7:
        end = dict(zip(["buffers", "buffer_bytes", "callbacks", "callbacks_dropped", "buffers_dropped"],
                       struct.unpack_from("<5Q", payload)))
    pos += 16 + n
exp = json.load(open(expected_path))
manifest = {
    "format": "gtrace raw capture manifest", "capture_format_version": version, "kind": kind,
    "gpu_name": gpu_name, "driver_version_nvidia_smi": driver, "cuda_version_nvidia_smi": cuda_version,
    "nccl_version": nccl or None, "cupti_api_version": info.get("cupti_api_version"),
    "driver_version_cuDriverGetVersion": info.get("driver_version"), "cupti_path": info.get("cupti_path"),
    "scenario": exp["scenario"], "source": exp["source"], "mode": exp["mode"],
    "capture_file": os.path.basename(cap), "capture_bytes": len(data), "frames": counts, "end": end,
    "expected": exp["expected"], "at_most": exp["at_most"],
}
json.dump(manifest, open(os.path.join(d, "manifest.json"), "w"), indent=2, sort_keys=True)
problems = []
if end is None: problems.append("no end frame (process did not finish its capture)")
elif end["callbacks_dropped"] or end["buffers_dropped"]: problems.append(f"lost data: {end}")
if len(data) > 5 * 1024 * 1024: problems.append(f"{len(data)} bytes is over 5 MiB")
summary = f"{len(data)} bytes, {counts.get('buffers', 0)} buffers, {counts.get('callbacks', 0)} callbacks, CUPTI {info.get('cupti_api_version')}"
print(("; ".join(problems) + " -- " if problems else "") + summary)
sys.exit(1 if problems else 0)
PY

# rows.py DB EXPECTED_JSON -> PASS/FAIL lines for the direct export (what the replay tests assert).
cat > "$work/rows.py" <<'PY'
import json, sqlite3, sys
db = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True)
exp = json.load(open(sys.argv[2]))
sql = {
    "kernels": "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL",
    "kernel_streams": "SELECT count(DISTINCT streamId) FROM CUPTI_ACTIVITY_KIND_KERNEL",
    "memcpy_htod": "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_MEMCPY WHERE copyKind = 1",
    "memcpy_dtoh": "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_MEMCPY WHERE copyKind = 2",
    "memcpy_dtod": "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_MEMCPY WHERE copyKind = 8",
    "memcpy_htoh": "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_MEMCPY WHERE copyKind = 9",
    "memset": "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_MEMSET",
    "cuda_event": "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_CUDA_EVENT",
    "sync_event": "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_SYNCHRONIZATION WHERE syncType = 1",
    "sync_wait_event": "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_SYNCHRONIZATION WHERE syncType = 2",
    "sync_stream": "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_SYNCHRONIZATION WHERE syncType = 3",
    "sync_context": "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_SYNCHRONIZATION WHERE syncType = 4",
    "graph_launches": "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_GRAPH_TRACE",
    "launch_calls": "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME r JOIN StringIds s ON s.id = r.nameId WHERE s.value LIKE 'cudaLaunchKernel%'",
    "graph_launch_calls": "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME r JOIN StringIds s ON s.id = r.nameId WHERE s.value LIKE 'cudaGraphLaunch%'",
    "gpus": "SELECT count(*) FROM TARGET_INFO_GPU",
}
tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
def count(key):
    # A table the export left out counts as 0 rows: like nsys, gtrace writes no empty activity tables.
    if sql[key].split(" FROM ")[1].split()[0] not in tables:
        return 0
    try:
        return db.execute(sql[key]).fetchone()[0]
    except sqlite3.Error as e:
        return f"error: {e}"
bad = []
for k, want in exp["expected"].items():
    got = count(k)
    if got != want: bad.append(f"{k} {got} != {want}")
for k, most in exp["at_most"].items():
    got = count(k)
    if not isinstance(got, int) or got > most: bad.append(f"{k} {got} > {most}")
    print(f"INFO {k}: {got} (at most {most})")
print("; ".join(bad) if bad else "all expected counts match")
sys.exit(1 if bad else 0)
PY

nvidia-smi -q > "$root/nvidia-smi-q.txt" 2>&1
for mode in whole window; do
  d="$root/$mode"
  mkdir -p "$d"
  "$app" --expect "$mode" > "$work/expected-$mode.json"
  extra=()
  [ "$mode" = window ] && extra=(GTRACE_CAPTURE_RANGE=cudaProfilerApi)
  t0=$SECONDS
  if gt_timeout 180 env "${extra[@]}" GTRACE_RAW_CAPTURE_DIR="$d" GTRACE_RAW_CAPTURE_SCENARIO="capture_scenario:$mode" \
      GTRACE_OUTPUT="$work/streams/$mode-%p" LD_PRELOAD="$lib" "$app" \
      >"$work/$mode.out" 2>"$work/$mode.err" && grep -q '^ok$' "$work/$mode.out"; then
    :
  else
    res FAIL "$mode/run" "capture_scenario failed ($(tail -3 "$work/$mode.err" | tr '\n' ' '))"
    continue
  fi
  cp "$root/nvidia-smi-q.txt" "$d/"
  if summary=$("$py" "$work/manifest.py" "$d" "$work/expected-$mode.json" "$gpu_name" "$driver" "$cuda_version" \
      "$nccl_version" "$kind" 2>&1); then
    res PASS "$mode/capture" "$summary ($((SECONDS - t0)) s)"
  else
    res FAIL "$mode/capture" "$summary"
  fi
  db="$work/streams/$mode.sqlite"
  if gt_timeout 120 "$gtrace" export -o "$db" "$work"/streams/"$mode"-*.gtrace >"$work/$mode.export.log" 2>&1; then
    if rows=$("$py" "$work/rows.py" "$db" "$work/expected-$mode.json" 2>&1); then
      res PASS "$mode/rows" "$(echo "$rows" | tail -1)"
    else
      res FAIL "$mode/rows" "$(echo "$rows" | tr '\n' ' ')"
    fi
  else
    res FAIL "$mode/export" "$(tail -3 "$work/$mode.export.log" | tr '\n' ' ')"
  fi
done
if [ -n "${OUT:-}" ]; then
  mkdir -p "$OUT/capture"
  cp -r "$root" "$OUT/capture/"
  cp "$work"/*.err "$work"/*.out "$OUT/capture/$kind/" 2>/dev/null || true
  echo "capture copied to $OUT/capture/$kind: commit it as tests/data/gpu/$kind/ (docs/capture.md)"
fi
echo "$name: GPU-machine time $((SECONDS - start_s)) s"
