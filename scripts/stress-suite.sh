#!/usr/bin/env bash
# The flakiness check (docs/testing.md): the whole non-sanitizer suite ROUNDS times in a row (default
# 5) under a CPU load of twice the cores (stress-ng --cpu 2*nproc), counting failures per test. A test
# that fails here fails by chance somewhere: fix it (wait on the event, not on time), never rerun it.
#   bash scripts/stress-suite.sh [ROUNDS] [ctest args...]   (BUILD_DIR=build, built beforehand)
# Not in CI: it takes ROUNDS times the suite's time, slowed by the load.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
rounds=${1:-5}
shift || true
command -v stress-ng >/dev/null || { echo "stress-suite: stress-ng not found (apt-get install stress-ng)"; exit 1; }
[ -d "$BUILD_DIR" ] || { echo "stress-suite: no $BUILD_DIR (build it first: bash scripts/test.sh or cmake)"; exit 1; }
load=$((2 * $(nproc)))
stress-ng --cpu "$load" --timeout 0 --quiet &
stress_pid=$!
trap 'kill $stress_pid 2>/dev/null; wait $stress_pid 2>/dev/null || true' EXIT
log=$BUILD_DIR/stress-suite.log
: >"$log"
failures=0
for r in $(seq 1 "$rounds"); do
  start=$SECONDS
  out=$(cd "$BUILD_DIR" && ctest -j"$(nproc)" --label-exclude gpu --output-on-failure "$@" 2>&1) || true
  echo "$out" >>"$log"
  passed=$(sed -n 's/^[0-9]*% tests passed, \([0-9]*\) tests failed out of \([0-9]*\)$/\2 \1/p' <<<"$out")
  total=${passed% *}; failed=${passed#* }
  failures=$((failures + ${failed:-1}))
  echo "round $r: ${total:-?} tests, ${failed:-?} failed, $((SECONDS - start)) s (load: stress-ng --cpu $load)"
  grep -E '^\s+[0-9]+ - .* \((Failed|Timeout|SEGFAULT|Exception|Subprocess aborted)\)' <<<"$out" || true
done
echo "stress-suite: $rounds rounds, $failures failures (log: $log)"
[ "$failures" = 0 ]
