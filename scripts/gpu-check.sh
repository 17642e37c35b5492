#!/usr/bin/env bash
# gpu-check.sh: the GPU half of gtrace's proof. Run on a machine with an NVIDIA GPU (the device
# machine lent to some sessions, or any CUDA box): builds what it needs if no build is carried,
# runs every check in scripts/gpu-check.d/ in name order, and prints a summary of PASS/FAIL lines.
#
#   bash scripts/gpu-check.sh [BUILD_DIR]        (default: build)
#
# Each check script gets: $GT_BUILD (build dir), $GT_SRC (repo root), $GT_WORK (a scratch dir) and
# $GT_RESULTS (a file to append "PASS|FAIL|SKIP <name>: <detail>" lines to). A check that exits
# non-zero without writing a line is reported as FAIL. Full logs go to $GT_WORK/<check>.log
# (and to $OUT when set, so the device tool brings them back).
set -u
GT_SRC=$(cd "$(dirname "$0")/.." && pwd)
GT_BUILD=$(cd "$GT_SRC" && mkdir -p "${1:-build}" && cd "${1:-build}" && pwd)
export GT_SRC GT_BUILD
export GT_WORK=$(mktemp -d /tmp/gtrace-gpu-check-XXXXXX)
export GT_RESULTS=$GT_WORK/results.txt
: > "$GT_RESULTS"

echo "== gpu-check: $(date -u +%FT%TZ) on $(hostname)"
if command -v nvidia-smi >/dev/null 2>&1; then
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | sed 's/^/== GPU: /'
else
  echo "== no nvidia-smi: this machine has no NVIDIA driver; every check will SKIP or FAIL"
fi

if [ ! -x "$GT_BUILD/bin/gtrace" ] || [ ! -f "$GT_BUILD/lib/libgtrace.so" ]; then
  echo "== building in $GT_BUILD"
  (cmake -S "$GT_SRC" -B "$GT_BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGT_BUILD_TESTS=OFF >/dev/null &&
   cmake --build "$GT_BUILD" -j"$(nproc)" >"$GT_WORK/build.log" 2>&1) || {
    echo "FAIL build: see $GT_WORK/build.log"; tail -30 "$GT_WORK/build.log"; exit 1; }
fi

for check in "$GT_SRC"/scripts/gpu-check.d/*.sh; do
  [ -e "$check" ] || continue
  name=$(basename "$check" .sh)
  echo "== $name"
  before=$(wc -l < "$GT_RESULTS")
  timeout 900 bash "$check" >"$GT_WORK/$name.log" 2>&1
  rc=$?
  after=$(wc -l < "$GT_RESULTS")
  if [ "$rc" -ne 0 ] && [ "$after" -eq "$before" ]; then
    echo "FAIL $name: exited $rc (log: $GT_WORK/$name.log)" >> "$GT_RESULTS"
    tail -20 "$GT_WORK/$name.log"
  fi
  [ -n "${OUT:-}" ] && cp "$GT_WORK/$name.log" "$OUT/" 2>/dev/null
done

echo
echo "== summary"
cat "$GT_RESULTS"
pass=$(grep -c '^PASS' "$GT_RESULTS"); fail=$(grep -c '^FAIL' "$GT_RESULTS"); skip=$(grep -c '^SKIP' "$GT_RESULTS")
echo "== $pass passed, $fail failed, $skip skipped"
[ -n "${OUT:-}" ] && cp "$GT_RESULTS" "$OUT/gpu-check-summary.txt" 2>/dev/null
[ "$fail" -eq 0 ]
