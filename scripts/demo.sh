#!/usr/bin/env bash
# The main job on a bundled sample, from a fresh clone: set up, build, profile the multi-threaded
# NVTX sample under gtrace, export its stream to an nsys-schema SQLite database, print the NVTX
# summary report. Output goes to demo-output/.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
bash scripts/setup.sh
cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$BUILD_DIR" -j"$(nproc)" --target gtrace gtrace_cli nvtx_threads
mkdir -p demo-output
echo "== gtrace profile: the NVTX sample (4 threads), stream + SQLite export"
"$BUILD_DIR/bin/gtrace" profile --force-overwrite=true -o demo-output/nvtx_demo --export sqlite -- \
  "$BUILD_DIR/bin/nvtx_threads" --threads 4 --iterations 10
echo
echo "== gtrace info demo-output/nvtx_demo.gtrace"
"$BUILD_DIR/bin/gtrace" info demo-output/nvtx_demo.gtrace
echo
echo "== gtrace stats --report nvtx_sum demo-output/nvtx_demo.sqlite"
"$BUILD_DIR/bin/gtrace" stats --report nvtx_sum demo-output/nvtx_demo.sqlite
echo
echo "== the same database answers nsys-style SQL, e.g. thread names:"
sqlite3 demo-output/nvtx_demo.sqlite \
  "SELECT s.value AS thread, count(*) AS ranges FROM NVTX_EVENTS e JOIN ThreadNames t ON t.globalTid = e.globalTid
   JOIN StringIds s ON s.id = t.nameId WHERE e.eventType = 59 GROUP BY 1 ORDER BY 1;"
