#!/usr/bin/env bash
# The whole test suite, from a fresh clone: install build dependencies (idempotent), build,
# check layering, run every CPU test, then the same suite under ASan+UBSan, the concurrency tests
# under TSan, and 30 s of each fuzzer. GPU checks are separate (scripts/gpu-check.sh).
#   bash scripts/test.sh            (BUILD_DIR=build by default; JOBS=<n> to override parallelism)
#   GT_QUICK=1 bash scripts/test.sh (skip the sanitizer builds and the fuzzers)
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
JOBS=${JOBS:-$(nproc)}
bash scripts/setup.sh
bash scripts/check_layering.sh
cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$BUILD_DIR" -j"$JOBS"
(cd "$BUILD_DIR" && ctest --output-on-failure -j"$JOBS" --label-exclude gpu)
if [ "${GT_QUICK:-0}" != 1 ]; then
  bash scripts/sanitize.sh
  bash scripts/fuzz.sh 30
fi
echo "== all tests passed"
