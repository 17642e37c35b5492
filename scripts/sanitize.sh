#!/usr/bin/env bash
# Sanitizer runs of the test suite (called by scripts/test.sh, so CI runs them):
#   ASan+UBSan: the whole CPU suite, including programs run under LD_PRELOAD=libgtrace.so;
#   TSan: the in-process tests of the rings, the drain thread and the NVTX hooks, and the parallel
#   many-rank export (tests/analyze).
#   bash scripts/sanitize.sh [address|thread]   (default: both)
set -euo pipefail
cd "$(dirname "$0")/.."
JOBS=${JOBS:-$(nproc)}
want=${1:-both}
. scripts/ccache-env.sh
if [ "$want" = both ] || [ "$want" = address ]; then
  echo "== ASan+UBSan build (build-asan)"
  cmake -S . -B build-asan -DGT_SANITIZE=address -DGT_BUILD_BENCH=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    "${GT_CMAKE_LAUNCHERS[@]}" >/dev/null
  cmake --build build-asan -j"$JOBS" >/dev/null
  # Labels pypi (third-party readers and tools from PyPI) and packaging (install, symbols, wheel,
  # bundle and kit chroots): they test what is installed and shipped, which ASan adds nothing to;
  # they run once, in the plain build, not again here.
  # libgtrace.so is preloaded into programs: ASan's runtime cannot be first there, which is fine
  # for our purpose. The library keeps its session alive until exit on purpose: no leak reports.
  (cd build-asan && ASAN_OPTIONS=verify_asan_link_order=0:detect_leaks=0:abort_on_error=1 \
     UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
     ctest --output-on-failure -j"$JOBS" --label-exclude 'gpu|pypi|packaging')
fi
if [ "$want" = both ] || [ "$want" = thread ]; then
  echo "== TSan build (build-tsan)"
  cmake -S . -B build-tsan -DGT_SANITIZE=thread -DGT_BUILD_BENCH=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    "${GT_CMAKE_LAUNCHERS[@]}" >/dev/null
  targets="collector_test nvtx_stress_test stream_reader_test export_test analyze_test gtrace_cli"
  cmake --build build-tsan -j"$JOBS" --target $targets >/dev/null
  (cd build-tsan && TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
     ctest --output-on-failure -j"$JOBS" -R '^(collector|nvtx|stream|export|analyze)\.')
fi
echo "== sanitizers: ok"
