#!/usr/bin/env bash
# parquet.{dataset,analyze,errors,injob}: see parquet_check.py for what each asserts.
#
#   bash tests/parquet/parquet_test.sh BUILD_DIR PART
#
# The Python packages are installed once into BUILD_DIR/parquet-venv (under a lock: ctest -j runs the
# parts at once). Exit 77 (ctest: skipped) when they cannot be installed (no PyPI, no venv module) or
# the simulator was not built (GT_BUILD_BENCH=OFF) -- with the reason on stdout.
set -u
BUILD=$(cd "$1" && pwd)
PART=$2
HERE=$(cd "$(dirname "$0")" && pwd)
VENV=$BUILD/parquet-venv
LOG=$BUILD/parquet-venv-install.log
PKGS="pyarrow duckdb dask[dataframe] distributed pandas"

[ -x "$BUILD/bin/sim_ranks" ] || { echo "SKIP: $BUILD/bin/sim_ranks not built (GT_BUILD_BENCH=OFF?)"; exit 77; }
exec 9>"$BUILD/parquet-venv.lock"
flock 9
if ! "$VENV/bin/python" -c 'import pyarrow, duckdb, dask.dataframe, distributed' >/dev/null 2>&1; then
  rm -rf "$VENV"
  if ! python3 -m venv "$VENV" >"$LOG" 2>&1; then
    echo "SKIP: python3 -m venv failed (python3-venv missing?); see $LOG"
    exit 77
  fi
  echo "installing $PKGS into $VENV (once)"
  if ! timeout 1000 "$VENV/bin/pip" install -q $PKGS >>"$LOG" 2>&1; then
    echo "SKIP: pip install $PKGS failed (no PyPI access?); see $LOG"
    tail -5 "$LOG"
    rm -rf "$VENV"
    exit 77
  fi
fi
flock -u 9
"$VENV/bin/python" -c 'import pyarrow, duckdb, dask, pandas; print("pyarrow", pyarrow.__version__, "duckdb", duckdb.__version__, "dask", dask.__version__, "pandas", pandas.__version__)'

WORK=$(mktemp -d /tmp/gtrace-parquet-XXXXXX)
trap 'rm -rf "$WORK"' EXIT
export GTRACE_PYTHON=$VENV/bin/python
export PYTHONPATH=$HERE/../../python${PYTHONPATH:+:$PYTHONPATH}
cd "$WORK" && "$VENV/bin/python" "$HERE/parquet_check.py" "$BUILD" "$PART"
