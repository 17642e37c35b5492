#!/usr/bin/env bash
# The NVTX hot path against its floors, in one run, alternating: for each round, each configuration
# (mode x threads) runs under the rdtsc floor library, the CLOCK_MONOTONIC floor library, gtrace on
# the TSC clock and gtrace on CLOCK_MONOTONIC, one after the other. Prints a markdown table of the
# medians over rounds (each run's figure is itself the median over repetitions x threads of thread
# CPU ns per pair) and the ratios to the rdtsc floor.
#   bench/nvtx_overhead/run_floor.sh [BUILD_DIR] [ROUNDS]
# BEFORE_LIB=/path/to/libgtrace.so (optional) adds a fifth library, measured in the same rounds on
# the TSC clock: an earlier build, to compare a change with what it replaces in one run.
set -euo pipefail
BUILD=${1:-build}
ROUNDS=${2:-3}
BIN="$BUILD/bin/nvtx_overhead"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
configs=("pushpop 1" "mark 1" "startend 1" "pushpop 2" "pushpop 4" "pushpop 8" "pushpop 16")
# CONFIGS="pushpop:1 startend:1" (optional) measures only those (mode:threads), e.g. for an A/B.
if [[ -n "${CONFIGS:-}" ]]; then configs=(); for c in $CONFIGS; do configs+=("${c%%:*} ${c##*:}"); done; fi
libs=(floor_rdtsc floor_monotonic gtrace_tsc gtrace_monotonic)
if [[ -n "${BEFORE_LIB:-}" ]]; then libs+=(before_tsc); fi
# The pause between repetitions grows with the thread count (60 ms per 2 threads), so the drain
# thread, which shares the machine's cores with the producers, empties every ring between them: a
# 16 MiB ring holds one repetition (200k records), so nothing is dropped and each repetition writes
# over pages the first one faulted in. A run that drops anyway prints its `gtrace: dropped` line,
# counted in the table's last column (a dropped record is cheaper than a kept one: such a row
# does not measure the record path).
run() {  # lib mode threads
  local lib=$1 mode=$2 threads=$3
  local pause=$((threads > 2 ? 30 * threads : 60))
  local args=(--mode "$mode" --threads "$threads" --pairs-per-rep 100000 --reps 7 --pause-ms "$pause")
  case $lib in
    floor_rdtsc) env -u LD_PRELOAD NVTX_INJECTION64_PATH="$BUILD/lib/libgt_floor_rdtsc.so" "$BIN" "${args[@]}" ;;
    floor_monotonic) env -u LD_PRELOAD NVTX_INJECTION64_PATH="$BUILD/lib/libgt_floor_monotonic.so" "$BIN" "${args[@]}" ;;
    gtrace_*)
      env -u NVTX_INJECTION64_PATH GTRACE_CLOCK="${lib#gtrace_}" GTRACE_OUTPUT="$work/g-%p" GTRACE_THREAD_BUFFER_KB=16384 \
        GTRACE_BUFFER_MB=1024 GTRACE_TRACE=nvtx LD_PRELOAD="$BUILD/lib/libgtrace.so" "$BIN" "${args[@]}"
      rm -f "$work"/g-*.gtrace ;;
    before_tsc)
      env -u NVTX_INJECTION64_PATH GTRACE_CLOCK=tsc GTRACE_OUTPUT="$work/g-%p" GTRACE_THREAD_BUFFER_KB=16384 \
        GTRACE_BUFFER_MB=1024 GTRACE_TRACE=nvtx LD_PRELOAD="$BEFORE_LIB" "$BIN" "${args[@]}"
      rm -f "$work"/g-*.gtrace ;;
  esac 2>>"$work/stderr.$lib.$mode.$threads" | sed -n 's/.*median_ns_per_pair=\([0-9.]*\).*/\1/p'
}
for ((r = 1; r <= ROUNDS; r++)); do
  for c in "${configs[@]}"; do
    set -- $c
    for lib in "${libs[@]}"; do
      echo "$lib $1 $2 $(run "$lib" "$1" "$2")" >> "$work/raw"
    done
  done
done
for f in "$work"/stderr.*; do
  [[ -e $f ]] || continue
  n=$(grep -c "gtrace: dropped" "$f" || true)
  echo "${f##*/stderr.} $n" >> "$work/drops"
done
touch "$work/drops"
python3 - "$work/raw" "$ROUNDS" "$work/drops" <<'PY'
import sys, statistics
drops = {}
for line in open(sys.argv[3]):
    key, n = line.split()
    lib, mode, threads = key.split(".")
    if int(n): drops.setdefault((mode, int(threads)), []).append(f"{lib}:{n}")
rows = {}
for line in open(sys.argv[1]):
    lib, mode, threads, ns = line.split()
    rows.setdefault((mode, int(threads)), {}).setdefault(lib, []).append(float(ns))
before = any("before_tsc" in libs for libs in rows.values())
extra_h = " before tsc | before tsc / rdtsc floor |" if before else ""
print(f"| mode | threads | rdtsc floor | monotonic floor | gtrace tsc | gtrace monotonic | gtrace tsc / rdtsc floor | gtrace monotonic / rdtsc floor |{extra_h} runs that dropped |")
print("|---|---|---|---|---|---|---|---|" + ("---|---|" if before else "") + "---|")
for (mode, threads), libs in rows.items():
    m = {k: statistics.median(v) for k, v in libs.items()}
    f = m["floor_rdtsc"]
    extra = f" {m['before_tsc']:.1f} | {m['before_tsc']/f:.2f} |" if before else ""
    print(f"| {mode} | {threads} | {f:.1f} | {m['floor_monotonic']:.1f} | {m['gtrace_tsc']:.1f} | "
          f"{m['gtrace_monotonic']:.1f} | {m['gtrace_tsc']/f:.2f} | {m['gtrace_monotonic']/f:.2f} |{extra} {' '.join(drops.get((mode, threads), [])) or 'none'} |")
print(f"\n(ns per pair, thread CPU time; median of {sys.argv[2]} alternating rounds, each the median of 7 repetitions x threads of 100k pairs)")
print("raw:", *[f"{k}:{v}" for k, v in sorted(rows.items())], sep="\n  ")
PY
