#!/usr/bin/env bash
# Fuzzes the stream reader/exporter and the NVTX record decoder with libFuzzer (clang, ASan+UBSan).
#   bash scripts/fuzz.sh [SECONDS]          each target for SECONDS (default 30): what CI runs
#   bash scripts/fuzz.sh --runs N           each target for N inputs (the long run: N=10000000)
# Seeds: real streams written by the NVTX sample under gtrace. Crashing inputs are left in
# build-fuzz/artifacts/; copy them to tests/fuzz/regressions/ and fix the bug.
set -euo pipefail
cd "$(dirname "$0")/.."
limit=(-max_total_time="${1:-30}")
if [ "${1:-}" = "--runs" ]; then limit=(-runs="$2"); fi
if ! command -v clang++ >/dev/null; then echo "fuzz: clang++ not found (apt-get install clang)"; exit 1; fi
B=build-fuzz
. scripts/ccache-env.sh
cmake -S . -B $B "${GT_CMAKE_LAUNCHERS[@]}" -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DGT_BUILD_FUZZERS=ON -DGT_USE_GOLD=OFF \
  -DGT_SANITIZE=address -DGT_BUILD_BENCH=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
# The seeds come from the plain build when it is there (scripts/test.sh built it): the clang tree then
# compiles only the two targets and what they link, not the library and the NVTX sample again.
S=${SEED_BUILD:-build}
targets=(fuzz_stream fuzz_nvtx_record)
if [ ! -x "$S/bin/nvtx_threads" ] || [ ! -f "$S/lib/libgtrace.so" ]; then S=$B; targets+=(nvtx_threads gtrace); fi
cmake --build $B -j"$(nproc)" --target "${targets[@]}" >/dev/null
mkdir -p $B/corpus/stream $B/corpus/nvtx_record $B/seeds $B/artifacts
if [ -z "$(ls -A $B/seeds)" ]; then
  for n in 1 2; do
    ASAN_OPTIONS=verify_asan_link_order=0:detect_leaks=0 GTRACE_OUTPUT="$PWD/$B/seeds/seed-$n" \
      LD_PRELOAD="$PWD/$S/lib/libgtrace.so" $S/bin/nvtx_threads --threads $n --iterations 2 --work-us 10 >/dev/null
  done
fi
if [ -z "$(ls -A $B/seeds)" ]; then echo "fuzz: no seed streams written in $B/seeds"; exit 1; fi
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
status=0
# Both targets at once: libFuzzer runs one input at a time on one core, so on CI's two cores each
# still gets its whole time and a core of its own, and the stage takes one target's time, not two.
pids=()
for t in fuzz_stream fuzz_nvtx_record; do
  corpus=$B/corpus/${t#fuzz_}
  extra=(); [ "$t" = fuzz_stream ] && extra=($B/seeds)
  echo "== $t ${limit[*]}"
  $B/bin/$t "${limit[@]}" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix=$B/artifacts/$t- "$corpus" "${extra[@]}" 2>$B/$t.log &
  pids+=($!)
done
for i in 0 1; do wait "${pids[$i]}" || status=1; done
for t in fuzz_stream fuzz_nvtx_record; do
  echo "== $t"
  grep -E '^(stat::number_of_executed_units|stat::peak_rss_mb|Done|==[0-9]+==ERROR|SUMMARY)' $B/$t.log || tail -5 $B/$t.log
done
[ "$status" = 0 ] && echo "== fuzz: ok (no crash)" || echo "== fuzz: FAILED, inputs in $B/artifacts/"
exit $status
