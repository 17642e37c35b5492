#!/usr/bin/env bash
# Many ranks, CPU only: the rank simulator writes RANKS synthetic rank streams (tests/common/
# rank_simulator.h: NVTX steps, CUDA kernels and launches, NCCL plugin events, hosts with clock
# offsets and drift, a straggler, imbalance); then gtrace export (merged, --per-rank, per-rank
# exports merged afterwards) and gtrace analyze are timed, each REPEATS times: wall time and peak
# RSS from /usr/bin/time, the median written to bench/results/<date>-multi-rank.md.
#   bash bench/multi_rank/run.sh                  (1000 ranks; BUILD_DIR=build by default)
#   RANKS=100 REPEATS=1 bash bench/multi_rank/run.sh
#   WORK=DIR KEEP=1 ...: scratch directory (about 5 GB for 1000 ranks), kept afterwards
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${BUILD_DIR:-build}
RANKS=${RANKS:-1000}; PER_HOST=${PER_HOST:-8}; STEPS=${STEPS:-50}; KERNELS=${KERNELS:-100}; BUCKETS=${BUCKETS:-8}
REPEATS=${REPEATS:-3}
[ -x "$BUILD/bin/gtrace" ] && [ -x "$BUILD/bin/sim_ranks" ] || cmake --build "$BUILD" -j"$(nproc)" --target gtrace_cli sim_ranks
G="$BUILD/bin/gtrace"
work=${WORK:-$(mktemp -d /tmp/gtrace-multirank-XXXXXX)}
mkdir -p "$work"
trap '[ -z "${KEEP:-}" ] && rm -rf "$work"' EXIT
trap 'echo "== failed (line $LINENO): see $work/*.err"; tail -5 "$work"/*.err 2>/dev/null' ERR
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
# timed NAME CMD...: appends "seconds KiB" of one run to $work/NAME.t
timed() { local n=$1; shift; /usr/bin/time -f "%e %M" -o "$work/$n.one" "$@" >"$work/$n.out" 2>"$work/$n.err"; cat "$work/$n.one" >> "$work/$n.t"; }
secs() { cut -d' ' -f1 "$work/$1.t" | median; }
mib() { cut -d' ' -f2 "$work/$1.t" | median | awk '{printf "%.0f", $1 / 1024}'; }

echo "== simulate $RANKS ranks ($PER_HOST per host, $STEPS steps, $KERNELS kernels + $BUCKETS+1 all-reduces per step)"
"$BUILD/bin/sim_ranks" "$work/streams" --ranks "$RANKS" --per-host "$PER_HOST" --steps "$STEPS" --kernels "$KERNELS" \
  --buckets "$BUCKETS" --cuda-api --straggler 37 --straggler-delay-us 2000 --imbalance 0.1 --offset-us 3000 \
  --drift-ppm 5 | tee "$work/truth.txt"
stream_mb=$(du -sm "$work/streams" | cut -f1)
records=$(sed -n 's/.* records=\([0-9]*\).*/\1/p' "$work/truth.txt")

for r in $(seq "$REPEATS"); do
  echo "== round $r/$REPEATS"
  rm -rf "$work/merged.sqlite" "$work/ranks" "$work/remerged.sqlite"
  timed export_merged "$G" export -o "$work/merged.sqlite" "$work/streams"
  grep -h "wrote .*merged.sqlite" "$work/export_merged.err" | tail -1 >> "$work/phases.txt"
  timed export_per_rank "$G" export --per-rank -o "$work/ranks" "$work/streams"
  timed analyze_merged "$G" analyze "$work/merged.sqlite" --step-range train_step --html "$work/report.html"
  timed analyze_per_rank "$G" analyze --step-range train_step "$work"/ranks/*.sqlite
  if [ "$r" = 1 ]; then
    # One conversion thread: what the parallel conversion buys on this machine.
    rm -f "$work/serial.sqlite"
    timed export_serial "$G" export -j 1 -o "$work/serial.sqlite" "$work/streams"
    rm -f "$work/serial.sqlite"
    # The in-job recipe: every rank converts its own stream (here: in parallel on this machine).
    mkdir -p "$work/injob"
    s=$(date +%s.%N)
    ls "$work"/streams/*.gtrace | xargs -P "$(nproc)" -I{} sh -c \
      "\"$G\" export -o \"$work/injob/\$(basename {} .gtrace).sqlite\" {} 2>/dev/null"
    injob=$(awk -v s="$s" -v e="$(date +%s.%N)" 'BEGIN {printf "%.1f", e - s}')
  fi
  timed merge_dbs "$G" export -o "$work/remerged.sqlite" "$work"/injob/*.sqlite
done
db_mb=$(du -sm "$work/merged.sqlite" | cut -f1)
kernels=$(sqlite3 "$work/merged.sqlite" "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL" 2>/dev/null || echo "?")
"$G" analyze "$work/merged.sqlite" --step-range train_step -r summary,stragglers --top 3 > "$work/analysis.txt"
cat "$work/analysis.txt"
found=$(awk '/Ranks by Time/ {f=1} f && /^ +[0-9]/ {print $1; exit}' "$work/analysis.txt")
pop=$(sed -n 's/^pop: //p' "$work/truth.txt")
measured=$("$G" analyze "$work/merged.sqlite" --step-range train_step -r summary --format csv |
  awk -F, '/efficiency|Load balance/ {printf "%s ", $2}')
worst_res=$(sqlite3 "$work/merged.sqlite" "SELECT max(residualRmsNs) FROM GTRACE_RANKS" 2>/dev/null || echo "?")

mkdir -p bench/results
out=bench/results/$(date -u +%Y-%m-%d)-multi-rank.md
cpu=$(lscpu | sed -n 's/^Model name: *//p' | head -1)
cat > "$out" <<MD
# gtrace many-rank benchmark — $(date -u +%Y-%m-%dT%H:%MZ)

- machine: ${cpu:-unknown CPU}, $(nproc) cores (shared with other work while this ran; load average at the end:
  $(cut -d' ' -f1-3 /proc/loadavg)), $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo); $(uname -sr)
- commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet 2>/dev/null || echo " (with uncommitted changes)")
- build: $(sed -n 's/^CMAKE_BUILD_TYPE:STRING=//p' "$BUILD/CMakeCache.txt") (\`bench/multi_rank/run.sh\`, RANKS=$RANKS REPEATS=$REPEATS)

## Input (bench/multi_rank/sim_ranks)
$RANKS rank streams on $(( (RANKS + PER_HOST - 1) / PER_HOST )) hosts ($PER_HOST ranks each; host clocks off by up to 3 ms and
drifting up to 5 ppm), $STEPS steps of $KERNELS compute kernels (each with its cudaLaunchKernel) and $((BUCKETS + 1)) NCCL
all-reduces (CollApi + Coll + 2 kernel channels each) plus the NVTX step range: $records records, $stream_mb MB of
streams; merged database $db_mb MB, $kernels kernel rows.

## Times (median of $REPEATS; wall seconds and peak resident memory of the process)

| step | seconds | peak RSS (MiB) |
|---|---|---|
| \`gtrace export -o merged.sqlite streams/\` (alignment pass, parallel conversion, merge) | $(secs export_merged) | $(mib export_merged) |
| the same with \`-j 1\` (one conversion thread; once) | $(secs export_serial) | $(mib export_serial) |
| \`gtrace export --per-rank -o ranks/ streams/\` | $(secs export_per_rank) | $(mib export_per_rank) |
| in-job recipe: $RANKS separate \`gtrace export\` processes, $(nproc) at a time (once) | ${injob:-?} | - |
| \`gtrace export -o merged.sqlite injob/*.sqlite\` (re-base, align from the databases, merge) | $(secs merge_dbs) | $(mib merge_dbs) |
| \`gtrace analyze merged.sqlite --step-range train_step --html\` | $(secs analyze_merged) | $(mib analyze_merged) |
| \`gtrace analyze ranks/*.sqlite --step-range train_step\` ($RANKS databases) | $(secs analyze_per_rank) | $(mib analyze_per_rank) |

Phases of the merged export, per round (gtrace's own report):
\`\`\`
$(cat "$work/phases.txt")
\`\`\`

## Answers
- planted POP factors (simulator): $pop
- measured (parallel, load balance, communication, orchestration, %): $measured
- planted straggler: rank 37; ranked first by the time it made others wait: rank ${found:-?}
- largest per-rank alignment residual (RMS of collective ends after alignment): ${worst_res} ns
MD
echo "== wrote $out"
cat "$out"
