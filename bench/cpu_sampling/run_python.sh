#!/usr/bin/env bash
# Added cost of --python-sampling per CPU sample, written to bench/results/<date>-python-sampling.md.
# bench/cpu_sampling/py_workload.py (a fixed amount of Python work on the main thread, DEPTH Python
# frames deep) runs, alternating, ROUNDS times in each mode:
#   none      no library
#   sampled   libgtrace.so, GTRACE_SAMPLE=process-tree at 1000 Hz: the floor (native stacks only)
#   python    the same with GTRACE_PYTHON_SAMPLING=true (a SIGPROF per sample, Python frames read)
# for DEPTH 5 and 25. The table gives medians of the main thread's CPU time (the handler runs on it)
# and python's cost per sample: (python - sampled) / the samples of the python run (counted in its
# exported stream, with how many carried Python frames). CPU time is the figure to read on a shared
# machine.
#   bash bench/cpu_sampling/run_python.sh [ROUNDS] [UNITS]      (BUILD_DIR=build, PYTHON=python3)
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${BUILD_DIR:-build}
ROUNDS=${1:-5}
UNITS=${2:-200000}
PY=$(${PYTHON:-python3} -c 'import sys; print(sys.executable)')
cmake --build "$BUILD" -j2 --target gtrace gtrace_cli >/dev/null 2>&1 || { echo "build failed: cmake --build $BUILD"; exit 1; }
# The parts (bench/cpu_sampling/pysample_bench.cc; only where CPython's development files exist).
parts=""
if cmake --build "$BUILD" -j2 --target pysample_bench >/dev/null 2>&1; then
  parts=$("$BUILD/bin/pysample_bench" 2>&1 || true)
fi
lib=$(realpath "$BUILD/lib/libgtrace.so")
cli=$BUILD/bin/gtrace
build_type=$(sed -n 's/^CMAKE_BUILD_TYPE:STRING=//p' "$BUILD/CMakeCache.txt")
work=$(mktemp -d /tmp/gtrace-pysampling-bench-XXXXXX)
trap 'rm -rf "$work"' EXIT
app=bench/cpu_sampling/py_workload.py
run() {  # mode depth
  local out
  rm -f "$work"/last-"$1"-"$2"*.gtrace
  case $1 in
    none) out=$(env -u LD_PRELOAD "$PY" "$app" "$UNITS" "$2") ;;
    sampled) out=$(LD_PRELOAD=$lib GTRACE_TRACE=none GTRACE_SAMPLE=process-tree \
                   GTRACE_OUTPUT="$work/last-$1-$2" "$PY" "$app" "$UNITS" "$2") ;;
    python) out=$(LD_PRELOAD=$lib GTRACE_TRACE=none GTRACE_SAMPLE=process-tree GTRACE_PYTHON_SAMPLING=true \
                  GTRACE_OUTPUT="$work/last-$1-$2" "$PY" "$app" "$UNITS" "$2") ;;
  esac
  for k in wall_ns work_cpu_ns process_cpu_ns; do
    echo "$out" | sed -n "s/.*$k=\([0-9]*\).*/\1/p" >> "$work/$1-$2-$k.txt"
  done
}
modes="none sampled python"
depths="5 25"
for r in $(seq "$ROUNDS"); do
  for d in $depths; do
    for m in $modes; do run "$m" "$d"; done
  done
done
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
ms() { awk -v v="$1" 'BEGIN {printf "%.1f", v / 1e6}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.3f", a / b}'; }
rows=""
for d in $depths; do
  "$cli" export -o "$work/py-$d.sqlite" "$work/last-python-$d.gtrace" >/dev/null 2>&1
  n=$(sqlite3 "$work/py-$d.sqlite" "SELECT count(*) FROM COMPOSITE_EVENTS")
  npy=$(sqlite3 "$work/py-$d.sqlite" "SELECT count(DISTINCT id) FROM SAMPLING_CALLCHAINS WHERE originalIP IS NULL")
  frames=$(sqlite3 "$work/py-$d.sqlite" "SELECT round(1.0 * count(*) / count(DISTINCT id), 1) FROM SAMPLING_CALLCHAINS WHERE originalIP IS NULL")
  c0=$(median < "$work/none-$d-work_cpu_ns.txt"); c1=$(median < "$work/sampled-$d-work_cpu_ns.txt")
  c2=$(median < "$work/python-$d-work_cpu_ns.txt")
  p1=$(median < "$work/sampled-$d-process_cpu_ns.txt"); p2=$(median < "$work/python-$d-process_cpu_ns.txt")
  per=$(awk -v a="$c2" -v b="$c1" -v n="$n" 'BEGIN {printf "%.1f", (a - b) / n / 1000}')
  rows+="| $d | $(ms "$c0") | $(ms "$c1") | $(ms "$c2") | $(ratio "$c2" "$c1") | $(ratio "$p2" "$p1") | $n ($npy with Python frames, $frames each) | $per |"$'\n'
done
all() { tr '\n' ' ' < "$work/$1-work_cpu_ns.txt"; }
mkdir -p bench/results
out=bench/results/$(date -u +%Y-%m-%d)-python-sampling.md
cpu=$(lscpu | sed -n 's/^Model name: *//p' | head -1)
cat > "$out" <<MD
# Python frames in CPU samples (--python-sampling): added cost per sample — $(date -u +%Y-%m-%dT%H:%MZ)

- machine: ${cpu:-unknown CPU}, $(nproc) cores; $(uname -sr); load average $(cut -d' ' -f1-3 /proc/loadavg)
- Python: $("$PY" -c 'import sys; print(sys.version.split()[0])') ($PY)
- commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet 2>/dev/null || echo " (with uncommitted changes)")
- build: ${build_type} (\`BUILD_DIR=$BUILD bash bench/cpu_sampling/run_python.sh $ROUNDS $UNITS\`)

bench/cpu_sampling/py_workload.py runs $UNITS units of Python arithmetic on its main thread, DEPTH
Python frames deep. In each of $ROUNDS rounds the three modes run one after another for each depth
(alternating); medians of the main thread's CPU time over the rounds. The floor of the added cost is
"sampled" (the same sampling at 1000 Hz, native stacks only); "python" adds --python-sampling.
Cost per sample = (python - sampled) / the samples of the last python run.

| Python frames | none, ms | sampled, ms | python, ms | python / sampled (thread) | python / sampled (process) | samples | added per sample, us |
|---|---|---|---|---|---|---|---|
${rows}
The parts, in one process embedding the local CPython (\`$BUILD/bin/pysample_bench\`, thread CPU time,
medians): signal_ns = a SIGPROF round trip to an empty handler (every sample pays it); warm_ns = the
fault-free reader at that depth with its code-object cache warm (the steady state); cold_ns = with an
empty cache; direct_ns = the CUDA backtraces' direct reader (no process_vm_readv); reads =
process_vm_readv calls per warm read. Per sample in the steady state: signal_ns + warm_ns.

\`\`\`
${parts:-pysample_bench not built (no CPython development files)}
\`\`\`

Main thread CPU per run (ns):
$(for d in $depths; do for m in $modes; do echo "- $m, depth $d: $(all "$m-$d")"; done; done)
MD
echo "wrote $out"
cat "$out"
