#!/usr/bin/env bash
# NVTX bursts at default settings (issue 20), written to bench/results/<date>-nvtx-burst.md.
#   bash bench/nvtx_burst/run.sh [ROUNDS] [SIZES] [THREADS]     e.g.  3 "2000000 20000000" "1 8"
# For each burst (pairs per thread x threads), ROUNDS times, alternating:
#   bare     nvtx_burst without gtrace (NVTX calls are no-ops): the floor
#   gtrace   LD_PRELOAD=libgtrace.so, default settings
# and reports median ns per pair (the slowest thread's loop / pairs), the added ns per pair, records
# kept / pushed (from `gtrace info`), and the drain thread's throughput as a lower bound: records
# written / the traced process's whole wall time (the stream is complete only when the drain thread
# has written everything, and the process cannot end before that).
# Then the cost of a kept vs a dropped record with bench/nvtx_overhead: kept (2,000 pairs per rep,
# the ring empties between reps) vs dropped (GTRACE_BUFFER_MB=1 GTRACE_THREAD_BUFFER_KB=16, 200,000
# pairs per rep: nearly all dropped; GTRACE_FULL_RING=drop), alternating with the bare run.
# The drain thread's CPU per record kept: nvtx_burst reads the drain thread's run time
# (/proc/self/task/<tid>/schedstat) from before the burst until the drain has gone idle after it;
# divided by the records the stream kept (its file writes included).
# BEFORE_LIB=/path/to/an/earlier/libgtrace.so (optional) adds it as a third configuration in every
# round (same bench binaries, same settings), to compare a change with what it replaces in one run.
# The application's CPU per pair: the CPU time of all burst loops together / pairs pushed (a thread
# that waits for the drain thread under GTRACE_FULL_RING=wait uses no CPU while it sleeps).
# SKIP_OVERHEAD=1 leaves out the kept-vs-dropped part (a shorter run on a shared machine).
# BUILD_DIR (default build) must hold nvtx_burst, nvtx_overhead, libgtrace.so and gtrace.
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${BUILD_DIR:-build}
ROUNDS=${1:-3}
SIZES=${2:-"2000000 20000000"}
THREADS=${3:-"1 8"}
cmake --build "$BUILD" -j2 --target nvtx_burst nvtx_overhead gtrace gtrace_cli >/dev/null 2>&1 || { echo "build failed: cmake --build $BUILD"; exit 1; }
burst=$BUILD/bin/nvtx_burst
overhead=$BUILD/bin/nvtx_overhead
lib=$(realpath "$BUILD/lib/libgtrace.so")
cli=$BUILD/bin/gtrace
libs=gt
if [[ -n "${BEFORE_LIB:-}" ]]; then libs="gt before"; fi
work=$(mktemp -d /tmp/gtrace-burst-bench-XXXXXX)
trap 'rm -rf "$work"' EXIT
now_ns() { date +%s%N; }
median() { sort -g | awk '{a[NR]=$1} END {if (NR==0) print "nan"; else if (NR%2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }
clean_env() { env -u LD_PRELOAD $(env | sed -n 's/^\(GTRACE_[A-Z0-9_]*\)=.*/-u \1/p') "$@"; }

rows=""
for pairs in $SIZES; do
  for t in $THREADS; do
    : > "$work/bare.txt"
    for which in gt before; do : > "$work/$which-ns.txt"; : > "$work/$which-kept.txt"; : > "$work/$which-drain.txt"; : > "$work/$which-dcpu.txt"; : > "$work/$which-cpu.txt"; : > "$work/$which-gtline.txt"; done
    for r in $(seq "$ROUNDS"); do
      clean_env "$burst" --pairs "$pairs" --threads "$t" | sed -n 's/.* ns_per_pair=\([0-9.]*\).*/\1/p' >> "$work/bare.txt"
      for which in $libs; do
        l=$lib; [[ $which == before ]] && l=$BEFORE_LIB
        rm -f "$work"/s*.gtrace
        t0=$(now_ns)
        out=$(clean_env LD_PRELOAD="$l" GTRACE_OUTPUT="$work/s" "$burst" --pairs "$pairs" --threads "$t" 2>"$work/err")
        t1=$(now_ns)
        echo "$out" | sed -n 's/.* ns_per_pair=\([0-9.]*\).*/\1/p' >> "$work/$which-ns.txt"
        echo "$out" | sed -n 's/.*cpu_ns_per_pair=\([0-9.]*\).*/\1/p' >> "$work/$which-cpu.txt"
        kept=$("$cli" info "$work/s.gtrace" | awk '$1=="nvtx" {print $2}')
        pushed=$((2 * pairs * t))
        echo "$kept $pushed" | awk '{printf "%.6f\n", $1 / $2}' >> "$work/$which-kept.txt"
        echo "$kept $t0 $t1" | awk '{printf "%.0f\n", $1 / (($3 - $2) / 1e9)}' >> "$work/$which-drain.txt"
        dcpu=$(echo "$out" | sed -n 's/.*drain_cpu_ns=\([0-9]*\).*/\1/p')
        [[ -n $dcpu && $kept -gt 0 ]] && echo "$dcpu $kept" | awk '{printf "%.1f\n", $1 / $2}' >> "$work/$which-dcpu.txt"
        # This configuration's own first `gtrace:` line (e.g. the dropped-records count), or none;
        # shown with its row below: its last round's.
        grep '^gtrace:' "$work/err" | head -1 > "$work/$which-gtline.txt" || true
      done
    done
    b=$(median < "$work/bare.txt")
    for which in $libs; do
      g=$(median < "$work/$which-ns.txt"); k=$(median < "$work/$which-kept.txt"); d=$(median < "$work/$which-drain.txt")
      dc=$(median < "$work/$which-dcpu.txt"); kmin=$(sort -g "$work/$which-kept.txt" | head -1); ac=$(median < "$work/$which-cpu.txt")
      name=gtrace; [[ $which == before ]] && name=before
      rows+=$(printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s (min %s) | %s | %s |' "$name" "$pairs" "$t" "$b" "$g" \
              "$(awk -v g="$g" -v b="$b" 'BEGIN{printf "%.1f", g-b}')" "$(awk -v g="$g" -v b="$b" 'BEGIN{printf "%.0fx", g/b}')" \
              "$ac" "$k" "$kmin" "$d" "$dc")$'\n'
      echo "$name pairs=$pairs threads=$t bare=$b gtrace=$g app_cpu_ns_per_pair=$ac kept=$k (min $kmin) drain_rec_s>=$d drain_ns_per_record=$dc $(cat "$work/$which-gtline.txt")"
    done
  done
done

# Kept vs dropped record cost (nvtx_overhead: one thread, median of reps).
ob=- ok=- od=- odmin=-
if [[ -z "${SKIP_OVERHEAD:-}" ]]; then
: > "$work/o-bare.txt"; : > "$work/o-kept.txt"; : > "$work/o-drop.txt"; : > "$work/o-drop-min.txt"
for r in $(seq "$ROUNDS"); do
  clean_env "$overhead" --pairs-per-rep 200000 --reps 9 --pause-ms 20 | sed -n 's/.*median_ns_per_pair=\([0-9.]*\).*/\1/p' >> "$work/o-bare.txt"
  clean_env LD_PRELOAD="$lib" GTRACE_OUTPUT="$work/o-%p" "$overhead" --pairs-per-rep 2000 --reps 21 --pause-ms 20 \
    | sed -n 's/.*median_ns_per_pair=\([0-9.]*\).*/\1/p' >> "$work/o-kept.txt"
  clean_env LD_PRELOAD="$lib" GTRACE_OUTPUT="$work/o-%p" GTRACE_FULL_RING=drop GTRACE_BUFFER_MB=1 GTRACE_THREAD_BUFFER_KB=16 \
    "$overhead" --pairs-per-rep 200000 --reps 9 --pause-ms 20 2>/dev/null > "$work/o-drop-line"
  sed -n 's/.*median_ns_per_pair=\([0-9.]*\).*/\1/p' "$work/o-drop-line" >> "$work/o-drop.txt"
  sed -n 's/.*min_ns_per_pair=\([0-9.]*\).*/\1/p' "$work/o-drop-line" >> "$work/o-drop-min.txt"
  rm -f "$work"/o-*.gtrace
done
ob=$(median < "$work/o-bare.txt"); ok=$(median < "$work/o-kept.txt"); od=$(median < "$work/o-drop.txt"); odmin=$(sort -g "$work/o-drop-min.txt" | head -1)
echo "overhead: bare=$ob kept=$ok dropped=$od (fastest rep $odmin) (ns per pair)"
fi

out=${OUT:-bench/results/$(date -u +%F)-nvtx-burst.md}
{
  echo "# NVTX bursts at default settings (issue 20)"
  echo
  echo "Machine: $(nproc) CPUs, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), load average at the end: $(cut -d' ' -f1-3 /proc/loadavg); date $(date -u +%FT%TZ); commit $(git rev-parse --short HEAD)$(git diff --quiet || echo ' (+ uncommitted changes)'); build: $BUILD ($(sed -n 's/^CMAKE_BUILD_TYPE:STRING=//p' "$BUILD/CMakeCache.txt"))."
  echo "Command: \`${BEFORE_LIB:+BEFORE_LIB=$BEFORE_LIB }bash bench/nvtx_burst/run.sh $ROUNDS \"$SIZES\" \"$THREADS\"\`; medians of $ROUNDS rounds, bare and gtrace alternating."
  echo
  echo "| library | pairs per thread | threads | bare ns/pair | gtrace ns/pair (wall) | added ns/pair | ratio | app CPU ns/pair | kept / pushed (median) | drain records/s, lower bound | drain thread CPU ns per record kept |"
  echo "|---|---|---|---|---|---|---|---|---|---|---|"
  printf '%s' "$rows"
  echo
  echo "Kept vs dropped record, one thread (bench/nvtx_overhead, ns per push/pop pair, median of reps, medians of $ROUNDS rounds):"
  echo
  echo "| bare | kept (2,000 pairs per rep) | mostly dropped (GTRACE_BUFFER_MB=1, GTRACE_THREAD_BUFFER_KB=16, 200,000 pairs per rep) | fastest such rep (nearly all dropped) |"
  echo "|---|---|---|---|"
  echo "| $ob | $ok (+$(awk -v a="$ok" -v b="$ob" 'BEGIN{printf "%.1f", a-b}')) | $od (+$(awk -v a="$od" -v b="$ob" 'BEGIN{printf "%.1f", a-b}')) | $odmin |"
} > "$out"
echo "wrote $out"
