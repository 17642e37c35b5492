#!/usr/bin/env bash
# Cost of OS runtime tracing on an uncontended pthread_mutex_lock/unlock pair (issue 18), written to
# bench/results/<date>-osrt.md. bench/osrt_overhead/osrt_bench runs, alternating, ROUNDS times:
#   none        no library (the floor)
#   loaded      libgtrace.so preloaded, osrt off (GTRACE_TRACE=nvtx: the interposers' relaxed check)
#   osrt        -t osrt, default threshold 1000 ns: nothing recorded (check + two clock reads), on the
#               default stream clock (GTRACE_CLOCK=auto: the TSC where usable, rdtsc)
#   osrt-mono   the same with GTRACE_CLOCK=monotonic (two clock_gettime reads)
#   record      -t osrt, threshold 0: every lock recorded (64-byte ring record, or a counted drop)
#   osrt-base   only with BASELINE_LIB=path: mode osrt with another build of libgtrace.so (before/after)
# Each run prints the median over SAMPLES of the mean ns per pair over PAIRS pairs; the table gives
# the median over rounds, and each mode's ratio to the floor measured in the same rounds.
#   bash bench/osrt_overhead/run.sh [ROUNDS] [PAIRS] [SAMPLES]      (BUILD_DIR=build-bench by default)
# OUT=file writes the results there instead of bench/results/<date>-osrt.md.
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${BUILD_DIR:-build-bench}
ROUNDS=${1:-7}
PAIRS=${2:-1000000}
SAMPLES=${3:-9}
if [ ! -x "$BUILD/bin/osrt_bench" ] || [ "${REBUILD:-1}" = 1 ]; then
  [ -f "$BUILD/CMakeCache.txt" ] || cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DGT_BUILD_TESTS=OFF -DGT_BUILD_BENCH=ON >/dev/null
  cmake --build "$BUILD" -j2 --target osrt_bench gtrace >/dev/null 2>&1 || { echo "build failed: cmake --build $BUILD"; exit 1; }
fi
bin=$BUILD/bin/osrt_bench
lib=$(realpath "$BUILD/lib/libgtrace.so")
build_type=$(sed -n 's/^CMAKE_BUILD_TYPE:STRING=//p' "$BUILD/CMakeCache.txt")
work=$(mktemp -d /tmp/gtrace-osrt-bench-XXXXXX)
trap 'rm -rf "$work"' EXIT
run() {  # mode
  local out
  case $1 in
    none) out=$(env -u LD_PRELOAD "$bin" "$PAIRS" "$SAMPLES") ;;
    loaded) out=$(LD_PRELOAD=$lib GTRACE_TRACE=nvtx GTRACE_OUTPUT="$work/l-%p" "$bin" "$PAIRS" "$SAMPLES") ;;
    osrt) out=$(LD_PRELOAD=$lib GTRACE_TRACE=osrt GTRACE_OUTPUT="$work/o-%p" "$bin" "$PAIRS" "$SAMPLES") ;;
    osrt-mono) out=$(LD_PRELOAD=$lib GTRACE_TRACE=osrt GTRACE_CLOCK=monotonic GTRACE_OUTPUT="$work/m-%p" \
                     "$bin" "$PAIRS" "$SAMPLES") ;;
    osrt-base) out=$(LD_PRELOAD=$BASELINE_LIB GTRACE_TRACE=osrt GTRACE_OUTPUT="$work/b-%p" "$bin" "$PAIRS" "$SAMPLES") ;;
    record) out=$(LD_PRELOAD=$lib GTRACE_TRACE=osrt GTRACE_OSRT_THRESHOLD=0 GTRACE_OUTPUT="$work/r-%p" \
                  "$bin" "$PAIRS" "$SAMPLES") ;;
  esac
  echo "$out" | sed -n 's/.*lock_pair_median_ns=\([0-9.]*\).*/\1/p' >> "$work/$1-lock.txt"
  echo "$out" | sed -n 's/.*write_median_ns=\([0-9.]*\).*/\1/p' >> "$work/$1-write.txt"
  echo "$out" | sed -n 's/.*two_clock_reads_median_ns=\([0-9.]*\).*/\1/p' >> "$work/clocks.txt"
  echo "$out" | sed -n 's/.*two_rdtsc_median_ns=\([0-9.]*\).*/\1/p' >> "$work/ticks.txt"
}
modes="none loaded osrt osrt-mono record"
[ -n "${BASELINE_LIB:-}" ] && modes+=" osrt-base"

for r in $(seq "$ROUNDS"); do
  for m in $modes; do run "$m"; done
done
# What the record mode wrote and dropped (one stream of the last round).
cli=${GTRACE_CLI:-$BUILD/bin/gtrace}
[ -x "$cli" ] || cli=build/bin/gtrace
check=$("$cli" info "$(ls "$work"/r-*.gtrace | tail -1)" 2>/dev/null | sed -n 's/^ *\(osrt_calls\|dropped\|closed\) *//p' | tr '\n' ';' || true)
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
rows=""
lock_floor=$(median < "$work/none-lock.txt"); write_floor=$(median < "$work/none-write.txt")
for m in $modes; do
  l=$(median < "$work/$m-lock.txt"); w=$(median < "$work/$m-write.txt")
  rows+="| $m | $l | $(awk -v a="$l" -v b="$lock_floor" 'BEGIN {printf "%.2f", a / b}') | $(awk -v a="$l" -v b="$lock_floor" 'BEGIN {printf "%+.1f", a - b}') | $w | $(awk -v a="$w" -v b="$write_floor" 'BEGIN {printf "%.2f", a / b}') |"$'\n'
done
all() { tr '\n' ' ' < "$work/$1-lock.txt"; }
mkdir -p bench/results
out=${OUT:-bench/results/$(date -u +%Y-%m-%d)-osrt.md}
clock_of() { "$cli" info "$(ls "$work"/$1-*.gtrace | tail -1)" 2>/dev/null | sed -n 's/^ *clock *//p' | head -1; }
cpu=$(lscpu | sed -n 's/^Model name: *//p' | head -1)
cat > "$out" <<MD
# OS runtime tracing overhead (uncontended mutex pair) — $(date -u +%Y-%m-%dT%H:%MZ)

- machine: ${cpu:-unknown CPU}, $(nproc) cores; $(uname -sr); load average $(cut -d' ' -f1-3 /proc/loadavg)
- commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet 2>/dev/null || echo " (with uncommitted changes)")
- build: ${build_type} (\`BUILD_DIR=$BUILD bash bench/osrt_overhead/run.sh $ROUNDS $PAIRS $SAMPLES\`)

bench/osrt_overhead/osrt_bench times PAIRS uncontended pthread_mutex_lock + pthread_mutex_unlock
pairs in a loop (mean ns of the thread's CPU time per pair: preemption on this shared machine does
not count), SAMPLES times, and prints the median; then the same for PAIRS/10 one-byte writes to
/dev/null. It starts an idle thread first in every mode: glibc's mutexes are cheaper in a
single-threaded process, and a process with a gtrace session always has the drain thread. The four modes run one after another in each of ROUNDS
rounds (alternating); the table gives the median over rounds, the ratio to the floor ("none",
measured in the same rounds) and the difference. Only pthread_mutex_lock is interposed (unlock is
not a blocking call nsys traces), so the difference is the interposer's cost per lock.

| mode | lock+unlock pair, ns | / floor | − floor, ns | write to /dev/null, ns | / floor |
|---|---|---|---|---|---|
${rows}
- none: no library; loaded: libgtrace.so preloaded, GTRACE_TRACE=nvtx (osrt off: one relaxed load);
  osrt: \`-t osrt\`, threshold 1000 ns (no call is long enough: nothing recorded; two clock reads),
  default stream clock (stream clock: $(clock_of o)); osrt-mono: the same with GTRACE_CLOCK=monotonic
  (stream clock: $(clock_of m))$([ -n "${BASELINE_LIB:-}" ] && echo "; osrt-base: mode osrt with \`$BASELINE_LIB\`");
  record: \`-t osrt\`, threshold 0 (every lock is a 64-byte ring record; when the thread's ring is
  full the record is dropped and counted).
- record mode, one stream (\`gtrace info\`: osrt_calls; dropped; closed): ${check}
- two clock_gettime(CLOCK_MONOTONIC) reads in this program, median over all runs: $(median < "$work/clocks.txt") ns
  (clocksource $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource 2>/dev/null || echo unknown));
  two rdtsc: $(median < "$work/ticks.txt") ns: the part of the osrt-mono / osrt − floor difference that is the
  two clock reads around the call.
- per-round lock medians (ns): $(for m in $modes; do echo -n "$m $(all $m)/ "; done)
MD
echo "wrote $out"
cat "$out"
