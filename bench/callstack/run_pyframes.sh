#!/usr/bin/env bash
# Cost of --python-backtrace=cuda per kept CUDA API stack on this CPU, written to
# bench/results/<date>-pyframes.md: bench/callstack/pyframes_bench (Release build, embedding the local
# CPython; needs its development files) run 5 times; each cell is the median over runs of each run's
# median. Native-only and with-Python calls alternate inside every run. No GPU needed.
#   bash bench/callstack/run_pyframes.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${BUILD_DIR:-build-bench}
cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DGT_BUILD_TESTS=OFF >/dev/null
cmake --build "$BUILD" -j"$(nproc)" --target pyframes_bench >/dev/null
work=$(mktemp -d /tmp/gtrace-pyframes-bench-XXXXXX)
trap 'rm -rf "$work"' EXIT
runs=5
for r in $(seq "$runs"); do "$BUILD/bin/pyframes_bench" > "$work/run-$r.txt"; done
header=$(head -1 "$work/run-1.txt")
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
value() { sed -n "s/^depth=$1 .*$2=\([0-9.]*\).*/\1/p" "$work"/run-*.txt | median; }
rows=""
for depth in $(sed -n 's/^depth=\([0-9]*\) .*/\1/p' "$work/run-1.txt"); do
  frames=$(sed -n "s/^depth=$depth python_frames=\([0-9]*\).*/\1/p" "$work/run-1.txt")
  native=$(value "$depth" native_ns); python=$(value "$depth" python_ns); read=$(value "$depth" read_ns)
  extra=$(awk -v p="$python" -v n="$native" 'BEGIN {printf "%.0f", p - n}')
  per=$(awk -v p="$python" -v n="$native" -v f="$frames" 'BEGIN {printf "%.0f", (p - n) / f}')
  ratio=$(awk -v p="$python" -v n="$native" 'BEGIN {printf "%.1f", p / n}')
  rows+="| $depth | $frames | $native | $python | $ratio | $extra | $per | $read |"$'\n'
done
mkdir -p bench/results
out=bench/results/$(date -u +%Y-%m-%d)-pyframes.md
cpu=$(lscpu | sed -n 's/^Model name: *//p' | head -1)
cat > "$out" <<MD
# gtrace --python-backtrace=cuda CPU cost — $(date -u +%Y-%m-%dT%H:%MZ)

- machine: ${cpu:-unknown CPU}, $(nproc) cores; $(uname -sr); load average $(cut -d' ' -f1-3 /proc/loadavg)
- commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet 2>/dev/null || echo " (with uncommitted changes)")
- build: ${BENCH_BUILD_NOTE:-Release} (\`bench/callstack/run_pyframes.sh\`); $header

bench/callstack/pyframes_bench embeds CPython and, at the bottom of a Python recursion of the given
depth, calls gtrace's CUPTI subscriber callback directly (enter + exit of one cudaMemcpy whose stack
is kept: threshold 0). "native" keeps the native stack only (the floor, \`--cudabacktrace\` alone);
"with Python" also reads the thread's Python frames into the same record (\`--python-backtrace=cuda\`);
the two alternate repetition by repetition in one process. "read" is ReadPythonFrames alone. Each cell
is ns per API call: the median over $runs processes of the median over 21 repetitions of 2000 calls.
"Python frames" counts the recursion plus the embedded script's module frame and caller.

| Python depth | Python frames | native stack kept (floor) | with Python frames | ratio | Python frames' cost | per Python frame | read alone |
|---|---|---|---|---|---|---|---|
$rows
Only kept calls pay for Python frames (they are read in the exit callback once the call is known to
have lasted at least its class's threshold; 80 us by default). Most of the per-frame cost is the
line-table decode (a linear walk of the code object's location table, as CPython's own
PyCode_Addr2Line does); file and function names are copied, not interned, on the application thread.
MD
echo "== wrote $out"
cat "$out"
