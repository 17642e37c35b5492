#!/usr/bin/env bash
# Slowdown of CPU sampling (--sample=process-tree, issue 18), written to
# bench/results/<date>-cpu-sampling.md. bench/cpu_sampling/sampling_bench (2 threads, a fixed amount of
# work each) runs, alternating, ROUNDS times in each mode:
#   none      no library (the floor)
#   sampled   libgtrace.so preloaded, GTRACE_SAMPLE=process-tree at the default 1000 Hz
#   sampled8k the same at 8000 Hz (nsys's maximum)
#   dwarf     1000 Hz with GTRACE_BACKTRACE=dwarf (libunwind on the sampled thread, from SIGPROF)
#   dwarf8k   the same at 8000 Hz
# MODES="none sampled dwarf" picks modes ("none" is always run: the floor); OUT=file writes there.
# The table's last column is the CPU each sample adds against the floor (work threads' CPU - floor,
# over the samples of that run), so fp and dwarf compare per sample.
# Each run prints the wall time of the work, the CPU time of the work threads (user + system: the
# kernel charges its sampling interrupt and stack walk to the sampled thread) and the process's CPU
# time (adds gtrace's drain thread, which reads the rings). The table gives medians over the rounds
# and each mode's ratio to the floor of the same rounds. CPU time is the figure to read on a shared
# machine; wall time is reported but depends on the load.
#   bash bench/cpu_sampling/run.sh [ROUNDS] [UNITS_PER_THREAD]      (BUILD_DIR=build by default)
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${BUILD_DIR:-build}
ROUNDS=${1:-7}
UNITS=${2:-100000}
cmake --build "$BUILD" -j2 --target sampling_bench gtrace gtrace_cli >/dev/null 2>&1 || { echo "build failed: cmake --build $BUILD"; exit 1; }
bin=$BUILD/bin/sampling_bench
lib=$(realpath "$BUILD/lib/libgtrace.so")
build_type=$(sed -n 's/^CMAKE_BUILD_TYPE:STRING=//p' "$BUILD/CMakeCache.txt")
work=$(mktemp -d /tmp/gtrace-sampling-bench-XXXXXX)
trap 'rm -rf "$work"' EXIT
run() {  # mode
  local out
  case $1 in
    none) out=$(env -u LD_PRELOAD "$bin" "$UNITS" 2) ;;
    sampled) out=$(LD_PRELOAD=$lib GTRACE_TRACE=none GTRACE_SAMPLE=process-tree GTRACE_OUTPUT="$work/s-%p" \
                   "$bin" "$UNITS" 2) ;;
    sampled8k) out=$(LD_PRELOAD=$lib GTRACE_TRACE=none GTRACE_SAMPLE=process-tree GTRACE_SAMPLING_FREQUENCY=8000 \
                     GTRACE_OUTPUT="$work/e-%p" "$bin" "$UNITS" 2) ;;
    dwarf) out=$(LD_PRELOAD=$lib GTRACE_TRACE=none GTRACE_SAMPLE=process-tree GTRACE_BACKTRACE=dwarf \
                 GTRACE_OUTPUT="$work/d-%p" "$bin" "$UNITS" 2) ;;
    dwarf8k) out=$(LD_PRELOAD=$lib GTRACE_TRACE=none GTRACE_SAMPLE=process-tree GTRACE_BACKTRACE=dwarf \
                   GTRACE_SAMPLING_FREQUENCY=8000 GTRACE_OUTPUT="$work/f-%p" "$bin" "$UNITS" 2) ;;
  esac
  # Samples of this run (all threads), for the per-sample column.
  local stream
  stream=$(ls -t "$work"/${2:-x}-*.gtrace 2>/dev/null | head -1 || true)
  if [ -n "$stream" ]; then
    "$cli" info "$stream" 2>/dev/null | sed -n 's/^ *cpu_samples *\([0-9]*\).*/\1/p' >> "$work/$1-samples.txt"
  fi
  for k in wall_ns work_cpu_ns process_cpu_ns; do
    echo "$out" | sed -n "s/.*$k=\([0-9]*\).*/\1/p" >> "$work/$1-$k.txt"
  done
}
modes="none ${MODES:-sampled sampled8k}"
modes=$(echo "$modes" | tr ' ' '\n' | awk '!seen[$0]++' | tr '\n' ' ')
prefix() { case $1 in sampled) echo s ;; sampled8k) echo e ;; dwarf) echo d ;; dwarf8k) echo f ;; *) echo x ;; esac; }
cli=$BUILD/bin/gtrace
for r in $(seq "$ROUNDS"); do
  for m in $modes; do run "$m" "$(prefix "$m")"; done
done
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
ms() { awk -v v="$1" 'BEGIN {printf "%.1f", v / 1e6}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.3f", a / b}'; }
rows=""
for m in $modes; do
  w=$(median < "$work/$m-wall_ns.txt"); c=$(median < "$work/$m-work_cpu_ns.txt"); p=$(median < "$work/$m-process_cpu_ns.txt")
  w0=$(median < "$work/none-wall_ns.txt"); c0=$(median < "$work/none-work_cpu_ns.txt"); p0=$(median < "$work/none-process_cpu_ns.txt")
  per=""
  if [ -s "$work/$m-samples.txt" ]; then
    n=$(median < "$work/$m-samples.txt")
    per=$(awk -v c="$c" -v c0="$c0" -v n="$n" 'BEGIN {printf "%.1f us (%d samples)", (c - c0) / n / 1000, n}')
  fi
  rows+="| $m | $(ms "$c") | $(ratio "$c" "$c0") | $(ms "$p") | $(ratio "$p" "$p0") | $(ms "$w") | $(ratio "$w" "$w0") | $per |"$'\n'
done
all() { tr '\n' ' ' < "$work/$1-work_cpu_ns.txt"; }
mkdir -p bench/results
out=${OUT:-bench/results/$(date -u +%Y-%m-%d)-cpu-sampling.md}
cpu=$(lscpu | sed -n 's/^Model name: *//p' | head -1)
cat > "$out" <<MD
# CPU sampling slowdown (--sample=process-tree) — $(date -u +%Y-%m-%dT%H:%MZ)

- machine: ${cpu:-unknown CPU}, $(nproc) cores; $(uname -sr); load average $(cut -d' ' -f1-3 /proc/loadavg)
- commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet 2>/dev/null || echo " (with uncommitted changes)")
- build: ${build_type} (\`BUILD_DIR=$BUILD bash bench/cpu_sampling/run.sh $ROUNDS $UNITS\`)

bench/cpu_sampling/sampling_bench runs $UNITS work units on each of 2 threads (built with frame
pointers; a 4-frame stack). The modes ($modes) run one after another in each of $ROUNDS rounds
(alternating); medians over the rounds, each ratio against the floor ("none") of the same rounds.
"Added per sample": (work threads' CPU - floor) / samples of the run (median of each).

| mode | work threads' CPU, ms | / floor | process CPU, ms | / floor | wall, ms | / floor | added per sample |
|---|---|---|---|---|---|---|---|
${rows}
- sampled: default 1000 Hz (one sample per ms of each thread's user CPU time), stacks by frame
  pointers (the kernel's walk); sampled8k: 8000 Hz. dwarf / dwarf8k: the same with
  GTRACE_BACKTRACE=dwarf (a SIGPROF per sample; libunwind unwinds the thread from the signal's context).
- work threads' CPU per run (ns): $(for m in $modes; do echo -n "$m: $(all $m)/ "; done)
MD
echo "wrote $out"
cat "$out"
