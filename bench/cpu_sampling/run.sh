#!/usr/bin/env bash
# Slowdown of CPU sampling (--sample=process-tree, issue 18), written to
# bench/results/<date>-cpu-sampling.md. bench/cpu_sampling/sampling_bench (2 threads, a fixed amount of
# work each) runs, alternating, ROUNDS times in each mode:
#   none      no library (the floor)
#   sampled   libgtrace.so preloaded, GTRACE_SAMPLE=process-tree at the default 1000 Hz
#   sampled8k the same at 8000 Hz (nsys's maximum)
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
  esac
  for k in wall_ns work_cpu_ns process_cpu_ns; do
    echo "$out" | sed -n "s/.*$k=\([0-9]*\).*/\1/p" >> "$work/$1-$k.txt"
  done
}
modes="none sampled sampled8k"
for r in $(seq "$ROUNDS"); do
  for m in $modes; do run "$m"; done
done
cli=$BUILD/bin/gtrace
samples=$("$cli" info "$(ls "$work"/s-*.gtrace | tail -1)" 2>/dev/null | sed -n 's/^ *cpu_samples *//p' || true)
samples8k=$("$cli" info "$(ls "$work"/e-*.gtrace | tail -1)" 2>/dev/null | sed -n 's/^ *cpu_samples *//p' || true)
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
ms() { awk -v v="$1" 'BEGIN {printf "%.1f", v / 1e6}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.3f", a / b}'; }
rows=""
for m in $modes; do
  w=$(median < "$work/$m-wall_ns.txt"); c=$(median < "$work/$m-work_cpu_ns.txt"); p=$(median < "$work/$m-process_cpu_ns.txt")
  w0=$(median < "$work/none-wall_ns.txt"); c0=$(median < "$work/none-work_cpu_ns.txt"); p0=$(median < "$work/none-process_cpu_ns.txt")
  rows+="| $m | $(ms "$c") | $(ratio "$c" "$c0") | $(ms "$p") | $(ratio "$p" "$p0") | $(ms "$w") | $(ratio "$w" "$w0") |"$'\n'
done
all() { tr '\n' ' ' < "$work/$1-work_cpu_ns.txt"; }
mkdir -p bench/results
out=bench/results/$(date -u +%Y-%m-%d)-cpu-sampling.md
cpu=$(lscpu | sed -n 's/^Model name: *//p' | head -1)
cat > "$out" <<MD
# CPU sampling slowdown (--sample=process-tree) — $(date -u +%Y-%m-%dT%H:%MZ)

- machine: ${cpu:-unknown CPU}, $(nproc) cores; $(uname -sr); load average $(cut -d' ' -f1-3 /proc/loadavg)
- commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet 2>/dev/null || echo " (with uncommitted changes)")
- build: ${build_type} (\`BUILD_DIR=$BUILD bash bench/cpu_sampling/run.sh $ROUNDS $UNITS\`)

bench/cpu_sampling/sampling_bench runs $UNITS work units on each of 2 threads (built with frame
pointers; a 4-frame stack). The three modes run one after another in each of $ROUNDS rounds
(alternating); medians over the rounds, each ratio against the floor ("none") of the same rounds.

| mode | work threads' CPU, ms | / floor | process CPU, ms | / floor | wall, ms | / floor |
|---|---|---|---|---|---|---|
${rows}
- sampled: default 1000 Hz (one sample per ms of each thread's user CPU time); one stream of the last
  round held ${samples:-?} samples. sampled8k: 8000 Hz, ${samples8k:-?} samples.
- work threads' CPU per run (ns), none: $(all none)
- sampled: $(all sampled)
- sampled8k: $(all sampled8k)
MD
echo "wrote $out"
cat "$out"
