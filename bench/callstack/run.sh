#!/usr/bin/env bash
# Cost of --cudabacktrace per CUDA API call on this CPU, written to
# bench/results/<date>-callstack-cpu.md: bench/callstack/unwind_bench (Release build) run 5 times,
# the table gives the median over runs of each run's median. No GPU needed.
#   bash bench/callstack/run.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${BUILD_DIR:-build-bench}
cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DGT_BUILD_TESTS=OFF >/dev/null
cmake --build "$BUILD" -j"$(nproc)" --target unwind_bench >/dev/null
work=$(mktemp -d /tmp/gtrace-unwind-bench-XXXXXX)
trap 'rm -rf "$work"' EXIT
runs=5
for r in $(seq "$runs"); do "$BUILD/bin/unwind_bench" > "$work/run-$r.txt"; done
unwinder=$(sed -n 's/^unwinder=\([^ ]*\).*/\1/p' "$work/run-1.txt")
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
value() { sed -n "s/.*mode=$1 depth=$2 .*$3=\([0-9.]*\).*/\1/p" "$work"/run-*.txt | median; }
rows=""
for depth in $(sed -n 's/^mode=off depth=\([0-9]*\).*/\1/p' "$work/run-1.txt"); do
  frames=$(sed -n "s/^mode=kept depth=$depth frames=\([0-9]*\).*/\1/p" "$work/run-1.txt")
  off=$(value off "$depth" median_ns); raw=$(value raw "$depth" median_ns)
  disc=$(value discarded "$depth" median_ns); kept=$(value kept "$depth" median_ns)
  cold=$(value kept "$depth" cold_ns)
  per=$(awk -v k="$kept" -v f="$frames" 'BEGIN {printf "%.1f", k / f}')
  rows+="| $depth | $frames | $off | $raw | $disc | $kept | $per | $cold |"$'\n'
done
mkdir -p bench/results
out=bench/results/$(date -u +%Y-%m-%d)-callstack-cpu.md
cpu=$(lscpu | sed -n 's/^Model name: *//p' | head -1)
cat > "$out" <<MD
# gtrace --cudabacktrace CPU cost — $(date -u +%Y-%m-%dT%H:%MZ)

- machine: ${cpu:-unknown CPU}, $(nproc) cores; $(uname -sr); load average $(cut -d' ' -f1-3 /proc/loadavg)
- commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet 2>/dev/null || echo " (with uncommitted changes)")
- build: Release, no frame pointers (\`bench/callstack/run.sh\`); unwinder: $unwinder

bench/callstack/unwind_bench calls gtrace's CUPTI subscriber callback directly (enter + exit of one
cudaMemcpy, as CUPTI would), at the bottom of a recursion of the given depth. Each cell is ns per API
call: the median over $runs processes of the median over 21 repetitions of 2000 calls. "frames" is what
libunwind returns there (the recursion plus main, the C library's entry frames and the callback's own).

| depth | frames | off (class not selected) | raw unw_backtrace | captured, discarded (under threshold) | captured and kept (ring record) | kept, ns per frame | first call from a new site (cold, ns) |
|---|---|---|---|---|---|---|---|
$rows
"off" is the cost of an enabled callback for an API outside the selected classes (gtrace enables
callbacks only for selected APIs, so in practice unselected APIs cost nothing). The steady state assumes
libunwind's per-thread cache is warm; the cold column is the first call from a new call site.
MD
echo "== wrote $out"
cat "$out"
