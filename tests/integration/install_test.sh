#!/usr/bin/env bash
# `cmake --install` puts libgtrace.so and gtrace under <prefix>/lib and <prefix>/bin, and the
# installed CLI finds the installed library.
set -euo pipefail
build=$1
prefix=$(mktemp -d /tmp/gtrace-install-XXXXXX)
trap 'rm -rf "$prefix"' EXIT
cmake --install "$build" --prefix "$prefix" >/dev/null
test -f "$prefix/lib/libgtrace.so" || { echo "no $prefix/lib/libgtrace.so"; find "$prefix"; exit 1; }
test -x "$prefix/bin/gtrace" || { echo "no $prefix/bin/gtrace"; exit 1; }
cd "$prefix"
"$prefix/bin/gtrace" profile -o installed --export sqlite -- "$build/bin/nvtx_threads" --threads 1 --iterations 2
n=$(sqlite3 "$prefix/installed.sqlite" "SELECT count(*) FROM NVTX_EVENTS WHERE text = 'iteration'")
[ "$n" = 2 ] || { echo "expected 2 iteration ranges, got $n"; exit 1; }
echo "install: ok"
