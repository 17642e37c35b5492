#!/usr/bin/env bash
# bundle.sh: a relocatable tarball of gtrace for cluster nodes that have none of our build
# dependencies (only libc and, for GPU work, a CUDA driver):
#
#   bash scripts/bundle.sh [BUILD_DIR] [OUT_DIR]      (defaults: build-bundle, dist)
#
# BUILD_DIR is used as it is when it already holds bin/gtrace and lib/libgtrace.so; otherwise a
# Release build without tests is made there. The directory is staged by scripts/bundle-stage.sh
# (shared with scripts/gpu-kit.sh). The tarball gtrace-<version>-linux-<arch>.tar.gz holds
#   gtrace-<version>/bin/gtrace          the CLI; RPATH $ORIGIN/../lib (set at link time)
#   gtrace-<version>/lib/libgtrace.so    the injected library (needs only libc; C++ runtime static)
#   gtrace-<version>/lib/lib*.so.*       every library the CLI needs beyond glibc: libprotobuf,
#                                        libsqlite3, libz, libstdc++, libgcc_s (the node's may be
#                                        missing or older than the build machine's)
#   gtrace-<version>/lib/libunwind.so.8  dlopen'ed by libgtrace.so for --cudabacktrace only (it looks
#                                        beside itself first), when the build machine has it
#   gtrace-<version>/README.bundle       layout and the glibc version the binaries need
# No launcher script: the RPATH finds the bundled libraries wherever the directory is unpacked or
# moved, and LD_LIBRARY_PATH stays untouched for the profiled application. glibc cannot be bundled:
# build on the oldest distribution you target (README.bundle says which glibc is needed).
set -euo pipefail
SRC=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${1:-$SRC/build-bundle}
OUT=${2:-$SRC/dist}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)

if [ ! -x "$BUILD/bin/gtrace" ] || [ ! -f "$BUILD/lib/libgtrace.so" ]; then
  echo "bundle: building gtrace in $BUILD"
  cmake -S "$SRC" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DGT_BUILD_TESTS=OFF -DGT_BUILD_BENCH=OFF >/dev/null
  cmake --build "$BUILD" -j"$(nproc)" --target gtrace gtrace_cli >/dev/null
fi
BUILD=$(cd "$BUILD" && pwd)
version=$("$BUILD/bin/gtrace" --version | awk '{print $2}')
name=gtrace-$version-linux-$(uname -m)
top=gtrace-$version
work=$(mktemp -d /tmp/gtrace-bundle-XXXXXX)
trap 'rm -rf "$work"' EXIT
stage=$work/$top

bash "$SRC/scripts/bundle-stage.sh" "$BUILD" "$stage" >/dev/null
glibc=$(sed -n 's/^Needs glibc >= \([^ ]*\) and.*/\1/p' "$stage/README.bundle")
tar -C "$work" -czf "$OUT/$name.tar.gz" "$top"
echo "bundle: $OUT/$name.tar.gz ($(du -h "$OUT/$name.tar.gz" | cut -f1); needs glibc >= ${glibc:-unknown})"
ls "$stage/lib" | sed 's/^/bundle:   lib\//'
