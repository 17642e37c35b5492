#!/usr/bin/env bash
# bundle.chroot: the tarball scripts/bundle.sh makes runs in a clean Debian root made with
# debootstrap (minbase: no compiler, no protobuf, no SQLite, no Python), under chroot:
# `gtrace profile` on the NVTX sample, `gtrace export --type sqlite`, and the three viewer exports,
# from the unpacked directory and after moving it (relocatable). Outputs are checked on the host.
#
#   bash tests/bundle/bundle_test.sh BUILD_DIR
#
# The root is made once and kept in BUILD_DIR/bundle-root (about 200 MB, a minute). Exit 77
# (ctest: skipped) with the reason when debootstrap or chroot cannot run here (not root, no
# debootstrap, no mirror).
set -u
SRC=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=$(cd "$1" && pwd)
ROOT=$BUILD/bundle-root
skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*"; exit 1; }

[ "$(id -u)" = 0 ] || skip "debootstrap and chroot need root"
command -v chroot >/dev/null || skip "no chroot"
if [ ! -f "$ROOT/.gtrace-clean-root" ]; then
  command -v debootstrap >/dev/null || skip "debootstrap is not installed (apt-get install debootstrap)"
  suite=$(. /etc/os-release 2>/dev/null && echo "${VERSION_CODENAME:-bookworm}")
  mirror=$(grep -hoE '^URIs: *http[^ ]*debian/?$|^deb +http[^ ]*debian/? ' /etc/apt/sources.list.d/*.sources \
             /etc/apt/sources.list 2>/dev/null | grep -oE 'http[^ ]*' | head -1)
  mirror=${mirror:-http://deb.debian.org/debian}
  echo "making a clean $suite root in $ROOT (debootstrap --variant=minbase, once)"
  rm -rf "$ROOT.tmp"
  if ! debootstrap --variant=minbase "$suite" "$ROOT.tmp" "$mirror" >"$BUILD/bundle-root.log" 2>&1; then
    tail -5 "$BUILD/bundle-root.log"
    rm -rf "$ROOT.tmp"
    skip "debootstrap $suite from $mirror failed (no network?); see $BUILD/bundle-root.log"
  fi
  touch "$ROOT.tmp/.gtrace-clean-root"
  mv "$ROOT.tmp" "$ROOT"
fi

# The root has none of gtrace's build or runtime dependencies beyond what every Debian has.
for p in g++ gcc cmake make protobuf-compiler libprotobuf-dev libprotobuf32 libprotobuf-lite32 libsqlite3-0 \
         libsqlite3-dev sqlite3 python3 cuda-toolkit; do
  if chroot "$ROOT" dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    fail "$p is installed in the clean root $ROOT"
  fi
done

WORK=$(mktemp -d /tmp/gtrace-bundle-test-XXXXXX)
cleanup() {
  umount "$ROOT/proc" 2>/dev/null
  rm -rf "$ROOT/opt/gtrace-bundle" "$ROOT/work" "$WORK"
}
trap cleanup EXIT
bash "$SRC/scripts/bundle.sh" "$BUILD" "$WORK" || fail "bundle.sh failed"
tarball=$(ls "$WORK"/gtrace-*.tar.gz)
rm -rf "$ROOT/opt/gtrace-bundle" "$ROOT/work"
mkdir -p "$ROOT/opt/gtrace-bundle" "$ROOT/work"
tar -C "$ROOT/opt/gtrace-bundle" -xzf "$tarball" || fail "cannot unpack $tarball"
top=$(ls "$ROOT/opt/gtrace-bundle")
cp "$BUILD/bin/nvtx_threads" "$ROOT/work/"  # a C++ program: needs only the root's libc/libstdc++
mount -t proc proc "$ROOT/proc" || skip "cannot mount /proc in the chroot"

in_root() { chroot "$ROOT" /usr/bin/env -i PATH=/usr/bin:/bin HOME=/work "$@"; }
G=/opt/gtrace-bundle/$top/bin/gtrace

echo "== inside the clean root"
in_root /usr/bin/ldd "$G" | tee "$WORK/ldd.txt"
for lib in libprotobuf.so libsqlite3.so.0 libstdc++.so.6; do
  grep "$lib" "$WORK/ldd.txt" | grep -q "/opt/gtrace-bundle/$top/" || fail "$lib is not the bundled one"
done
grep -q 'not found' "$WORK/ldd.txt" && fail "unresolved libraries in the root"
in_root "$G" --version || fail "gtrace --version"
in_root /bin/sh -c "cd /work && $G profile -t nvtx -o /work/run -- /work/nvtx_threads --threads 2 --iterations 3 --work-us 100" ||
  fail "gtrace profile in the root"
in_root "$G" export --type sqlite /work/run.gtrace || fail "export --type sqlite"
in_root "$G" stats --report nvtx_sum /work/run.sqlite >"$WORK/stats.txt" || fail "stats"
grep -q iteration "$WORK/stats.txt" || fail "no 'iteration' in the NVTX summary"
in_root "$G" export --type perfetto /work/run.gtrace || fail "export --type perfetto"
in_root "$G" export --type kineto-json /work/run.sqlite || fail "export --type kineto-json"
# Relocatable: move the unpacked directory and run from there.
mv "$ROOT/opt/gtrace-bundle/$top" "$ROOT/work/moved"
in_root /work/moved/bin/gtrace export --type paraver -o /work/run.prv /work/run.sqlite || fail "paraver from a moved bundle"

echo "== checks on the host"
n=$(sqlite3 "$ROOT/work/run.sqlite" "SELECT count(*) FROM NVTX_EVENTS WHERE text = 'iteration'")
[ "$n" = 6 ] || fail "expected 6 'iteration' ranges (2 threads x 3), got $n"
ranges=$(sqlite3 "$ROOT/work/run.sqlite" "SELECT count(*) FROM NVTX_EVENTS WHERE eventType IN (59, 60) AND end IS NOT NULL")
begins=$(protoc --proto_path="$SRC/tests/viewers/protos" --decode=perfetto.protos.Trace perfetto_subset.proto \
           <"$ROOT/work/run.pftrace" | grep -c 'type: TYPE_SLICE_BEGIN')
[ "$begins" = "$ranges" ] || fail "perfetto: $begins slices, $ranges NVTX ranges in the database"
python3 "$SRC/tests/viewers/kineto_check.py" "$ROOT/work/run.kineto" >"$WORK/kineto.txt" || {
  cat "$WORK/kineto.txt"; fail "kineto-json check"; }
for ext in prv pcf row; do [ -s "$ROOT/work/run.$ext" ] || fail "no run.$ext"; done
head -1 "$ROOT/work/run.prv" | grep -q '^#Paraver (' || fail "run.prv has no Paraver header"
echo "bundle: ok ($top: profile, export sqlite/perfetto/kineto-json/paraver, stats in a clean $(. "$ROOT/etc/os-release" && echo "$PRETTY_NAME") root)"
