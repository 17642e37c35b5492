#!/usr/bin/env bash
# The whole test suite, from a fresh clone: install build dependencies (idempotent), build,
# check layering, run every CPU test, then the same suite under ASan+UBSan, the concurrency tests
# under TSan, and 30 s of each fuzzer. GPU checks are separate (scripts/gpu-check.sh).
#   bash scripts/test.sh            (BUILD_DIR=build by default; JOBS=<n> to override parallelism)
#   GT_QUICK=1 bash scripts/test.sh (skip the sanitizer builds and the fuzzers)
# Budget (docs/testing.md): a cold run in a fresh clone within 25 minutes on 2 cores. Every run ends
# with each stage's wall time, pass or fail, so every CI log shows where the time went.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
JOBS=${JOBS:-$(nproc)}

stages=()
run_start=$SECONDS
stage() {  # stage NAME COMMAND...: runs COMMAND, records NAME's wall seconds
  local name=$1 t0=$SECONDS rc=0
  shift
  echo "== stage $name"
  "$@" || rc=$?
  stages+=("$(printf '%-12s %5d s%s' "$name" $((SECONDS - t0)) "$([ $rc = 0 ] || echo "  FAILED ($rc)")")")
  return $rc
}
print_stages() {
  echo "== stage times (wall)"
  local s
  for s in "${stages[@]}"; do echo "   $s"; done
  printf '   %-12s %5d s\n' total $((SECONDS - run_start))
}
trap print_stages EXIT

bash scripts/setup.sh
# setup.sh installs ccache; a cache outside the clone makes a second run (and every later clone) warm.
. scripts/ccache-env.sh
stage layering bash scripts/check_layering.sh
configure() { cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=RelWithDebInfo "${GT_CMAKE_LAUNCHERS[@]}" >/dev/null; }
stage configure configure
stage build cmake --build "$BUILD_DIR" -j"$JOBS"
stage test bash -c "cd '$BUILD_DIR' && ctest --output-on-failure -j'$JOBS' --label-exclude gpu"
if [ "${GT_QUICK:-0}" != 1 ]; then
  stage asan bash scripts/sanitize.sh address
  stage tsan bash scripts/sanitize.sh thread
  stage fuzz bash scripts/fuzz.sh 30
fi
echo "== all tests passed"
