#!/usr/bin/env bash
# gpu-kit.sh: the one directory a GPU machine needs to run gtrace's GPU checks (scripts/gpu-check.sh)
# without building or installing anything there. Made on the build machine:
#
#   bash scripts/gpu-kit.sh [OUT_DIR] [--build BUILD_DIR] [--tar FILE]     (OUT_DIR default: gpu-kit)
#
# Without --build, a Release build (no tests, no benchmarks; CUDA samples for sm_90 + its PTX) is
# made in build-kit/ (nvcc must be on PATH: the CUDA samples are not optional in a kit; extra cmake
# flags in $GT_KIT_CMAKE_ARGS). With
# --build, that build tree is used as it is (it must hold bin/gtrace, lib/libgtrace.so,
# bin/cuda_streams and bin/capture_scenario). The kit, default gpu-kit/ in the repository root (git-ignored, so the device
# tool carries it with `carry: ["gpu-kit"]`):
#   gpu-check.sh                 runs scripts/gpu-check.sh with the kit as build and source
#   bin/gtrace, lib/*            the relocatable bundle (scripts/bundle-stage.sh, as scripts/bundle.sh)
#   bin/cuda_streams             the CUDA sample (RPATH $ORIGIN/../lib)
#   bin/capture_scenario         the fixed raw-capture scenario of 15-capture (docs/capture.md)
#   lib/libcudart.so.13          the CUDA runtime cuda_streams was linked with (the GPU machine's may
#                                not be on the loader path)
#   scripts/gpu-check.sh, scripts/gpu-check.d/   every check part, helpers and python checkers
#   samples/**.py                the python workloads (torch, NCCL, metrics, ranks)
#   tests/viewers/kineto_check.py, tests/viewers/protos/   used by the viewers part
#   KIT.txt                      what went in: commit, build, file sizes, total
# The checks need only bash, coreutils, tar and python3's standard library besides what the GPU
# image has (driver, CUDA toolkit, PyTorch, NCCL, ncu). The device tool carries the working tree
# and the kit together, 64 MiB at most: the script fails when the kit, or the kit plus the tracked
# tree, is larger.
set -euo pipefail
SRC=$(cd "$(dirname "$0")/.." && pwd)
OUT_DIR="" BUILD="" TARBALL=""
while [ $# -gt 0 ]; do
  case "$1" in
    --build) BUILD=$2; shift 2 ;;
    --tar) TARBALL=$2; shift 2 ;;
    -h | --help) sed -n '2,24p' "$0"; exit 0 ;;
    -*) echo "gpu-kit: unknown option $1" >&2; exit 2 ;;
    *) [ -z "$OUT_DIR" ] || { echo "gpu-kit: one OUT_DIR only" >&2; exit 2; }; OUT_DIR=$1; shift ;;
  esac
done
OUT_DIR=${OUT_DIR:-$SRC/gpu-kit}
LIMIT_BYTES=$((64 * 1024 * 1024))

if [ -z "$BUILD" ]; then
  BUILD=$SRC/build-kit
  command -v nvcc >/dev/null || [ -x /usr/local/cuda/bin/nvcc ] ||
    { echo "gpu-kit: nvcc not found: a kit needs the CUDA samples (install the CUDA toolkit)" >&2; exit 1; }
  command -v nvcc >/dev/null || export PATH=$PATH:/usr/local/cuda/bin
  echo "gpu-kit: building in $BUILD"
  # shellcheck disable=SC2086  # GT_KIT_CMAKE_ARGS: extra -D flags, e.g. the ccache launchers
  cmake -S "$SRC" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DGT_BUILD_TESTS=OFF -DGT_BUILD_BENCH=OFF \
    -DCMAKE_CUDA_ARCHITECTURES=90 ${GT_KIT_CMAKE_ARGS:-} >/dev/null
  cmake --build "$BUILD" -j"$(nproc)" --target gtrace gtrace_cli cuda_streams capture_scenario >"$BUILD/kit-build.log" 2>&1 ||
    { tail -30 "$BUILD/kit-build.log"; echo "gpu-kit: the build failed (log: $BUILD/kit-build.log)" >&2; exit 1; }
fi
BUILD=$(cd "$BUILD" && pwd)
for f in bin/gtrace lib/libgtrace.so bin/cuda_streams bin/capture_scenario; do
  [ -e "$BUILD/$f" ] || { echo "gpu-kit: $BUILD/$f missing (bin/cuda_streams needs nvcc at configure time)" >&2; exit 1; }
done

# A directory we made before (KIT.txt) or an empty one may be replaced; anything else is not ours.
if [ -e "$OUT_DIR" ]; then
  if [ -f "$OUT_DIR/KIT.txt" ] || [ -z "$(ls -A "$OUT_DIR")" ]; then
    rm -rf "$OUT_DIR"
  else
    echo "gpu-kit: $OUT_DIR exists and is not a kit (no KIT.txt): not overwriting it" >&2
    exit 1
  fi
fi
mkdir -p "$OUT_DIR"
KIT=$(cd "$OUT_DIR" && pwd)
echo "incomplete: gpu-kit.sh did not finish" >"$KIT/KIT.txt"  # ours from the start: a rerun may replace it

# 1. The relocatable bundle, exactly as scripts/bundle.sh stages it.
bash "$SRC/scripts/bundle-stage.sh" "$BUILD" "$KIT" >/dev/null

# 2. The CUDA sample and the runtime it was linked against.
# (capture_scenario: the fixed scenario of 15-capture, docs/capture.md; linked like cuda_streams.)
for sample in cuda_streams capture_scenario; do
  cp "$BUILD/bin/$sample" "$KIT/bin/"
  strip --strip-debug "$KIT/bin/$sample" 2>/dev/null || true
  if ! readelf -d "$KIT/bin/$sample" | grep -E 'R(UN)?PATH.*\$ORIGIN/../lib' >/dev/null; then
    echo "gpu-kit: bin/$sample has no RUNPATH \$ORIGIN/../lib (rebuild with this tree's samples/cuda/CMakeLists.txt)" >&2
    exit 1
  fi
done
cudart=$(ldd "$BUILD/bin/cuda_streams" | awk '$1 ~ /^libcudart\.so/ {print $1, $3}')
if [ -z "$cudart" ] || [ ! -f "${cudart#* }" ]; then
  echo "gpu-kit: cannot find the libcudart cuda_streams needs (ldd: ${cudart:-none})" >&2
  exit 1
fi
cp -L "${cudart#* }" "$KIT/lib/${cudart%% *}"
chmod 644 "$KIT/lib/${cudart%% *}"

# 3. The checks and what they run. Every gpu-check.d file travels (parts we do not know by name too).
mkdir -p "$KIT/scripts" "$KIT/tests/viewers"
cp "$SRC/scripts/gpu-check.sh" "$KIT/scripts/"
cp -r "$SRC/scripts/gpu-check.d" "$KIT/scripts/"
(cd "$SRC" && find samples -name '*.py' -print0 | xargs -0 -I{} cp --parents {} "$KIT/")
cp "$SRC/tests/viewers/kineto_check.py" "$KIT/tests/viewers/"
# The GPU benchmarks (90-bench): their scripts, and the launch-overhead program when this build has it
# (it needs nvcc and libcupti at configure time; it links libcupti, found on the GPU machine).
mkdir -p "$KIT/bench/launch_overhead" "$KIT/bench/torch_e2e"
cp "$SRC/bench/launch_overhead/run.sh" "$SRC/bench/launch_overhead/torch_launch.py" "$KIT/bench/launch_overhead/"
cp "$SRC/bench/torch_e2e/run.sh" "$SRC/bench/torch_e2e/torch_e2e.py" "$KIT/bench/torch_e2e/"
if [ -x "$BUILD/bin/launch_overhead" ]; then
  # The program has no RUNPATH into the kit: a wrapper finds its libcudart in the kit and libcupti
  # where the GPU machine's CUDA keeps it.
  cp "$BUILD/bin/launch_overhead" "$KIT/bin/launch_overhead.bin"
  strip --strip-debug "$KIT/bin/launch_overhead.bin" 2>/dev/null || true
  cat >"$KIT/bin/launch_overhead" <<'SH'
#!/usr/bin/env bash
kit=$(cd "$(dirname "$0")/.." && pwd)
cuda=${CUDA_HOME:-/usr/local/cuda}
export LD_LIBRARY_PATH="$kit/lib:$cuda/lib64:$cuda/extras/CUPTI/lib64:$cuda/targets/x86_64-linux/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
exec "$kit/bin/launch_overhead.bin" "$@"
SH
  chmod +x "$KIT/bin/launch_overhead"
fi
cp -r "$SRC/tests/viewers/protos" "$KIT/tests/viewers/"
find "$KIT" -name __pycache__ -prune -exec rm -rf {} +
cat >"$KIT/gpu-check.sh" <<'SH'
#!/usr/bin/env bash
# The kit's entry point: scripts/gpu-check.sh with this directory as build and source.
#   bash gpu-kit/gpu-check.sh --list | --part N [--part M ...]     (see scripts/gpu-check.sh)
kit=$(cd "$(dirname "$0")" && pwd)
chmod +x "$kit"/bin/* 2>/dev/null  # in case a copy on the way dropped the modes
exec bash "$kit/scripts/gpu-check.sh" --build "$kit" "$@"
SH
chmod +x "$KIT/gpu-check.sh" "$KIT/scripts/gpu-check.sh" "$KIT"/scripts/gpu-check.d/*.sh

# 4. The manifest and the size limits.
commit=$(git -C "$SRC" rev-parse --short HEAD 2>/dev/null || echo unknown)
dirty=$(git -C "$SRC" status --porcelain --untracked-files=no 2>/dev/null | grep -q . && echo " (with uncommitted changes)" || true)
kit_bytes=$(du -sb "$KIT" | cut -f1)
tree_bytes=$( (cd "$SRC" && git ls-files -z 2>/dev/null | xargs -0 -r du -cb 2>/dev/null | tail -1 | cut -f1) || echo 0)
tree_bytes=${tree_bytes:-0}
{
  echo "gtrace GPU kit, $(date -u +%FT%TZ), commit $commit$dirty, build $BUILD"
  archs=$(sed -n 's/^CMAKE_CUDA_ARCHITECTURES:[A-Z]*=//p' "$BUILD/CMakeCache.txt" 2>/dev/null)
  [ -n "$archs" ] || archs="80 90 (the project default)"
  echo "$("$KIT/bin/gtrace" --version); CUDA sample: $(readelf -d "$KIT/bin/cuda_streams" | grep -o 'libcudart[^]]*')," \
       "CUDA architectures $archs, each as SASS + PTX"
  echo "size without this file: $kit_bytes bytes (limit, with the tracked tree of $tree_bytes bytes: $LIMIT_BYTES)"
  echo
  (cd "$KIT" && find . -type f ! -name KIT.txt -printf '%10s  %P\n' | sort -k2)
} >"$KIT/KIT.txt"
kit_bytes=$(du -sb "$KIT" | cut -f1)

mib() { awk -v b="$1" 'BEGIN {printf "%.1f MiB", b / 1048576}'; }
echo "gpu-kit: $KIT: $(mib "$kit_bytes") ($kit_bytes bytes; with the tracked tree $(mib $((kit_bytes + tree_bytes))); limit 64 MiB)"
if [ "$((kit_bytes + tree_bytes))" -gt "$LIMIT_BYTES" ]; then
  echo "gpu-kit: too large: the kit ($kit_bytes bytes) and the tracked tree ($tree_bytes bytes) exceed 64 MiB" >&2
  exit 1
fi
if [ -n "$TARBALL" ]; then
  tar -C "$(dirname "$KIT")" -czf "$TARBALL" "$(basename "$KIT")"
  echo "gpu-kit: $TARBALL ($(mib "$(stat -c %s "$TARBALL")"))"
fi
