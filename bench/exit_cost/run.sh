#!/usr/bin/env bash
# Cost of _exit with and without gtrace (issue 14), written to bench/results/<date>-exit-cpu.md.
# bench/exit_cost/exit_bench (Release build) forks children that end with _exit; for each amount
# pending at _exit (nothing / 1 MiB of ring / no session at all) it runs, alternating, ROUNDS times:
#   plain   no gtrace (the floor)
#   raw     under gtrace, but the child ends by the exit_group system call, which gtrace does not
#           see: the teardown of a traced process without the end mark
#   gtrace  under gtrace, _exit: teardown + end mark (drain, end-of-stream chunk, write, wait)
# Each run is ITER children; the table gives the median over rounds of each run's median.
#   bash bench/exit_cost/run.sh [ROUNDS] [ITER]
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${BUILD_DIR:-build-bench}
ROUNDS=${1:-5}
ITER=${2:-40}
cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DGT_BUILD_TESTS=OFF >/dev/null
cmake --build "$BUILD" -j2 --target exit_bench exit_wait_bench gtrace gtrace_cli >/dev/null 2>&1 || { echo "build failed: cmake --build $BUILD"; exit 1; }
bin=$BUILD/bin/exit_bench
lib=$(realpath "$BUILD/lib/libgtrace.so")
work=$(mktemp -d /tmp/gtrace-exit-bench-XXXXXX)
trap 'rm -rf "$work"' EXIT
run() {  # pending mode
  local out
  case $2 in
    plain) out=$(env -u LD_PRELOAD "$bin" "$1" "$ITER") ;;
    raw|gtrace)
      rm -rf "$work/s"; mkdir -p "$work/s"
      out=$(LD_PRELOAD=$lib GTRACE_OUTPUT="$work/s/b-%p" GTRACE_FLUSH_MS=10 GTRACE_THREAD_BUFFER_KB=4096 \
            "$bin" "$1" "$ITER" $([ "$2" = raw ] && echo raw)) ;;
  esac
  echo "$out" | sed -n 's/.*median_us=\([0-9.]*\).*/\1/p' >> "$work/$1-$2.txt"
}
for r in $(seq "$ROUNDS"); do
  for p in none 1mib nosession; do
    for m in plain raw gtrace; do run "$p" "$m"; done
  done
done
# The bound: MarkEnd with a stalled drain thread (default GTRACE_EXIT_WAIT_MS), 15 repeats.
wait_line=$("$BUILD/bin/exit_wait_bench" 15)
# A check that the 1 MiB really reached the streams: one child's stream, complete, 16384 records.
rm -rf "$work/s"; mkdir -p "$work/s"
LD_PRELOAD=$lib GTRACE_OUTPUT="$work/s/b-%p" GTRACE_THREAD_BUFFER_KB=4096 "$bin" 1mib 1 >/dev/null
check=$("$BUILD/bin/gtrace" info "$work"/s/*.gtrace | sed -n 's/^ *\(nvtx\|closed\|dropped\) *//p' | tr '\n' ';')
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
rows=""
for p in none 1mib nosession; do
  plain=$(median < "$work/$p-plain.txt"); raw=$(median < "$work/$p-raw.txt"); g=$(median < "$work/$p-gtrace.txt")
  mark=$(awk -v g="$g" -v r="$raw" 'BEGIN {printf "%.1f", g - r}')
  ratio=$(awk -v g="$g" -v p="$plain" 'BEGIN {printf "%.2f", g / p}')
  rows+="| $p | $plain | $raw | $g | $mark | $ratio |"$'\n'
done
mkdir -p bench/results
out=bench/results/$(date -u +%Y-%m-%d)-exit-cpu.md
cpu=$(lscpu | sed -n 's/^Model name: *//p' | head -1)
cat > "$out" <<MD
# _exit with and without gtrace — $(date -u +%Y-%m-%dT%H:%MZ)

- machine: ${cpu:-unknown CPU}, $(nproc) cores; $(uname -sr); load average $(cut -d' ' -f1-3 /proc/loadavg)
- commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet 2>/dev/null || echo " (with uncommitted changes)")
- build: Release (\`bench/exit_cost/run.sh $ROUNDS $ITER\`); GTRACE_FLUSH_MS=10, GTRACE_THREAD_BUFFER_KB=4096

bench/exit_cost/exit_bench forks children that end with _exit(0) and measures, in the parent, the time
from the child's last instruction before _exit to waitpid's return (µs). Median over $ROUNDS alternating
rounds of each round's median over $ITER children. "none": the child's session is up and everything is
written (it waited 6 flush intervals); "1mib": 16384 ring records recorded just before _exit;
"nosession": the child never used NVTX (gtrace loaded, no session). "raw" ends the traced child by the
exit_group system call, which gtrace does not see: the difference gtrace − raw is the end mark itself.

| pending at _exit | plain _exit (floor), µs | traced, raw exit_group, µs | traced, _exit (end mark), µs | end mark (gtrace − raw), µs | gtrace / floor |
|---|---|---|---|---|---|
$rows
Check (one 1 MiB child under gtrace, \`gtrace info\`): $check

The bound (\`bench/exit_cost/exit_wait_bench 15\`, in-process: an emitter stalls the drain thread, as
a slow disk or a lock held by the ending thread would, and gt::MarkEnd — what _exit, exec and abort
call — is timed; "free" is the same call with the drain thread free and nothing pending):
\`$wait_line\`
MD
echo "== wrote $out"
cat "$out"
