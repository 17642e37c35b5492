#!/usr/bin/env bash
# CPU benchmarks of gtrace, written to bench/results/<date>-cpu.md (machine, date, commit, medians
# and ratios measured side by side in one run). GPU benchmarks live in bench/*/ and run by hand on
# a GPU machine (see their READMEs).
#   bash scripts/bench.sh [--quick]
set -euo pipefail
cd "$(dirname "$0")/.."
QUICK=0; [ "${1:-}" = "--quick" ] && QUICK=1
BUILD=${BUILD_DIR:-build-bench}
cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DGT_BUILD_TESTS=ON >/dev/null
cmake --build "$BUILD" -j"$(nproc)" --target gtrace gtrace_cli nvtx_overhead make_stream stream_sizes \
  nvtx_threads hammer fake_nccl_host gt_fake_cupti >/dev/null 2>&1
work=$(mktemp -d /tmp/gtrace-bench-XXXXXX)
trap 'rm -rf "$work"' EXIT
rounds=7; events=10000000; [ "$QUICK" = 1 ] && { rounds=3; events=1000000; }
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
field() { sed -n "s/.*$1=\([0-9.]*\).*/\1/p"; }

echo "== NVTX push/pop: $rounds rounds, alternating without and with gtrace"
: > "$work/base"; : > "$work/gt"
for r in $(seq "$rounds"); do
  env -u LD_PRELOAD -u NVTX_INJECTION64_PATH "$BUILD/bin/nvtx_overhead" | field median_ns_per_pair >> "$work/base"
  # A 16 MiB ring holds a whole repetition (200k records): this measures recording, not dropping.
  env GTRACE_OUTPUT="$work/nvtx-$r" GTRACE_THREAD_BUFFER_KB=16384 LD_PRELOAD="$BUILD/lib/libgtrace.so" \
    "$BUILD/bin/nvtx_overhead" | field median_ns_per_pair >> "$work/gt"
done
dropped=0
for f in "$work"/nvtx-*.gtrace; do
  d=$("$BUILD/bin/gtrace" info --json "$f" | sed -n 's/.*"dropped_records":\([0-9]*\).*/\1/p'); dropped=$((dropped + d))
done
base=$(median < "$work/base"); gt=$(median < "$work/gt")
added=$(awk -v a="$gt" -v b="$base" 'BEGIN {printf "%.1f", a - b}')
ratio=$(awk -v a="$gt" -v b="$base" 'BEGIN {printf "%.2f", a / b}')
echo "   without gtrace: $base ns/pair   with gtrace: $gt ns/pair   added: $added ns/pair   dropped: $dropped"

echo "== export: synthetic stream of $events NVTX events"
"$BUILD/bin/make_stream" "$work/big.gtrace" --events "$events" >/dev/null
bytes=$(stat -c %s "$work/big.gtrace")
: > "$work/exp"
for r in 1 2 3; do
  rm -f "$work/big.sqlite"
  s=$(date +%s.%N); "$BUILD/bin/gtrace" export -o "$work/big.sqlite" "$work/big.gtrace" 2>/dev/null; e=$(date +%s.%N)
  awk -v s="$s" -v e="$e" 'BEGIN {print e - s}' >> "$work/exp"
done
secs=$(median < "$work/exp")
rows=$(sqlite3 "$work/big.sqlite" "SELECT count(*) FROM NVTX_EVENTS")
eps=$(awk -v n="$events" -v t="$secs" 'BEGIN {printf "%.0f", n / t}')
bpe=$(awk -v b="$bytes" -v n="$events" 'BEGIN {printf "%.2f", b / n}')
echo "   $secs s (median of 3) = $eps events/s; $rows NVTX_EVENTS rows; stream $bytes bytes = $bpe bytes/event"

echo "== export on one core and on all cores: $events events in 4 streams (4 processes)"
for k in 0 1 2 3; do
  "$BUILD/bin/make_stream" "$work/part-$k.gtrace" --events $((events / 4)) --pid $((5000 + k)) >/dev/null
done
: > "$work/exp1"; : > "$work/expn"
for r in 1 2 3; do  # alternating, side by side
  for j in 1 n; do
    rm -f "$work/parts.sqlite"
    jobs=$([ "$j" = 1 ] && echo 1 || nproc)
    s=$(date +%s.%N); "$BUILD/bin/gtrace" export -j "$jobs" -o "$work/parts.sqlite" "$work"/part-*.gtrace 2>/dev/null
    e=$(date +%s.%N); awk -v s="$s" -v e="$e" 'BEGIN {print e - s}' >> "$work/exp$j"
  done
done
secs1=$(median < "$work/exp1"); secsn=$(median < "$work/expn")
eps1=$(awk -v n="$events" -v t="$secs1" 'BEGIN {printf "%.0f", n / t}')
epsn=$(awk -v n="$events" -v t="$secsn" 'BEGIN {printf "%.0f", n / t}')
speedup=$(awk -v a="$secs1" -v b="$secsn" 'BEGIN {printf "%.2f", a / b}')
echo "   -j 1: $secs1 s ($eps1 events/s)   -j $(nproc): $secsn s ($epsn events/s)   speed-up ${speedup}x"

echo "== bytes per record on disk, by event kind"
env GTRACE_OUTPUT="$work/sz-nvtx" LD_PRELOAD="$BUILD/lib/libgtrace.so" "$BUILD/bin/nvtx_threads" --threads 4 --iterations 200 --work-us 10 >/dev/null
env GTRACE_OUTPUT="$work/sz-cuda" GTRACE_CUPTI_PATH="$BUILD/lib/libgt_fake_cupti.so" LD_PRELOAD="$BUILD/lib/libgtrace.so" \
  "$BUILD/bin/hammer" 2 1 >/dev/null 2>&1
env GTRACE_OUTPUT="$work/sz-nccl" LD_PRELOAD="$BUILD/lib/libgtrace.so" "$BUILD/bin/fake_nccl_host" --scenario threads >/dev/null 2>&1
sizes=$("$BUILD/bin/stream_sizes" "$work"/sz-*.gtrace)
echo "$sizes"

echo "== peak RSS against run length (NVTX, every record kept)"
rss() {  # rss <reps> <with gtrace 0|1> -> "KB dropped"
  local pre=(env -u LD_PRELOAD -u NVTX_INJECTION64_PATH)
  [ "$2" = 1 ] && pre=(env GTRACE_OUTPUT="$work/rss-$1" GTRACE_THREAD_BUFFER_KB=16384 LD_PRELOAD="$BUILD/lib/libgtrace.so")
  local kb
  kb=$( { /usr/bin/time -f "%M" "${pre[@]}" "$BUILD/bin/nvtx_overhead" --reps "$1" --pause-ms 150 >/dev/null; } 2>&1 | tail -1)
  local d=0
  [ "$2" = 1 ] && d=$("$BUILD/bin/gtrace" info --json "$work/rss-$1.gtrace" | sed -n 's/.*"dropped_records":\([0-9]*\).*/\1/p')
  echo "$kb $d"
}
short=10; long=100; [ "$QUICK" = 1 ] && long=30
read rss_base_s _ <<< "$(rss $short 0)"; read rss_base_l _ <<< "$(rss $long 0)"
read rss_gt_s drop_s <<< "$(rss $short 1)"; read rss_gt_l drop_l <<< "$(rss $long 1)"
echo "   records $((short * 200000)): $rss_base_s KB without, $rss_gt_s KB with gtrace; records $((long * 200000)): $rss_base_l KB without, $rss_gt_l KB with (dropped $drop_s / $drop_l)"

mkdir -p bench/results
out=bench/results/$(date -u +%Y-%m-%d)-cpu.md
cpu=$(lscpu | sed -n 's/^Model name: *//p' | head -1)
cat > "$out" <<MD
# gtrace CPU benchmarks — $(date -u +%Y-%m-%dT%H:%MZ)

- machine: ${cpu:-unknown CPU}, $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo); $(uname -sr)
- commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet 2>/dev/null || echo " (with uncommitted changes)")
- build: Release (\`scripts/bench.sh$( [ "$QUICK" = 1 ] && echo " --quick")\`)

## NVTX push/pop pair (bench/nvtx_overhead)
100,000 pairs per repetition, 21 repetitions per process (median), $rounds processes each way, alternating;
the table gives the median over processes. With gtrace the thread's ring holds a whole repetition
and the drain thread empties it between repetitions, so every pair is recorded (dropped records
over all runs: $dropped).

| | ns per push/pop pair |
|---|---|
| without gtrace (NVTX calls are no-ops) | $base |
| with gtrace (LD_PRELOAD, recording) | $gt |
| added by gtrace | $added |
| ratio | ${ratio}x |

## Export (bench/export_speed/make_stream + \`gtrace export\`)
Synthetic stream: $events NVTX events (push/pop, 2 levels, 8 threads, 100 names), $bytes bytes
($bpe bytes/event on disk). Export to SQLite on one core, median of 3 runs:

| events | seconds | events/s | NVTX_EVENTS rows |
|---|---|---|---|
| $events | $secs | $eps | $rows |

The same number of events in 4 streams (4 processes of one host, as 4 ranks), exported into one
database with one conversion thread (\`-j 1\`) and with one per core (\`-j $(nproc)\`, the default), then
merged (docs/multi-rank.md); alternating, median of 3 each:

| threads | seconds | events/s |
|---|---|---|
| 1 | $secs1 | $eps1 |
| $(nproc) | $secsn | $epsn |
| speed-up | ${speedup}x | |

## Bytes per record on disk (bench/stream_sizes)
Streams of the NVTX sample (4 threads), of \`hammer\` against the fake CUPTI (a test double: the
record *layout* is CUPTI 13.0's, the values synthetic) and of the fake NCCL host; each kind's
encoded events with their tags and lengths; strings, headers and framing separately.

$sizes

## Peak RSS against run length (bench/nvtx_overhead under /usr/bin/time)
A 16 MiB thread ring, 150 ms pauses: every record is kept (dropped: $drop_s and $drop_l).

| records | without gtrace (KB) | with gtrace (KB) |
|---|---|---|
| $((short * 200000)) | $rss_base_s | $rss_gt_s |
| $((long * 200000)) | $rss_base_l | $rss_gt_l |
MD
echo "== wrote $out"
