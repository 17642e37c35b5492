#!/usr/bin/env bash
# viewers.hta: Holistic Trace Analysis (PyPI HolisticTraceAnalysis) loads a directory of our
# per-rank Kineto JSON files and runs its temporal, kernel and communication breakdowns; the
# numbers must equal what the fixture's rows imply (hta_check.py).
#
#   bash tests/viewers/hta_test.sh BUILD_DIR
#
# HTA is installed once into BUILD_DIR/viewers-hta-venv. Exit 77 (ctest: skipped) when it cannot be
# installed (no network, no venv module) -- with the reason on stdout.
set -u
BUILD=$(cd "$1" && pwd)
HERE=$(cd "$(dirname "$0")" && pwd)
VENV=$BUILD/viewers-hta-venv
LOG=$BUILD/viewers-hta-install.log

if ! "$VENV/bin/python" -c 'import hta' >/dev/null 2>&1; then
  rm -rf "$VENV"
  if ! python3 -m venv "$VENV" >"$LOG" 2>&1; then
    echo "SKIP: python3 -m venv failed (python3-venv missing?); see $LOG"
    exit 77
  fi
  echo "installing HolisticTraceAnalysis into $VENV (once)"
  if ! timeout 1500 "$VENV/bin/pip" install -q HolisticTraceAnalysis >>"$LOG" 2>&1; then
    echo "SKIP: pip install HolisticTraceAnalysis failed (no PyPI access?); see $LOG"
    tail -5 "$LOG"
    rm -rf "$VENV"
    exit 77
  fi
fi
"$VENV/bin/pip" show HolisticTraceAnalysis 2>/dev/null | grep -E '^(Name|Version):'

WORK=$(mktemp -d /tmp/gtrace-hta-XXXXXX)
trap 'rm -rf "$WORK"' EXIT
"$BUILD/bin/viewer_fixture" "$WORK/run.sqlite" --ranks 4 --no-extra-process || exit 1
"$BUILD/bin/gtrace" export --type kineto-json -o "$WORK/traces" "$WORK/run.sqlite" || exit 1
"$VENV/bin/python" "$HERE/hta_check.py" "$WORK/traces" 4
