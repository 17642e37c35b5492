#!/usr/bin/env bash
# gpukit.chroot: the GPU kit (scripts/gpu-kit.sh) made from this build tree, copied into a clean
# Debian root (debootstrap minbase + python3: no compiler, cmake, protobuf, SQLite shell, CUDA,
# torch, pip), and every part of its gpu-check.sh run there under chroot, one part per call as on
# the GPU machine: each part must end as exactly one "SKIP <part>: no GPU ..." line, not as a FAIL
# from a missing library, tool or python module. Also: the kit is under 64 MiB, carries every
# gpu-check.d file of the source tree (parts added later travel too), its binaries resolve every
# library inside the kit, and $OUT holds what the device tool can bring back (<= 8 files). Then,
# with a stand-in nvidia-smi (a test double), every part must get past "no GPU" to the missing
# driver (00-quick, 10-cuda run cuda_streams) or the missing torch (the others), never stopping on a
# missing piece of the kit.
#
#   bash tests/gpukit/kit_chroot_test.sh BUILD_DIR
#
# The root is made once and kept in BUILD_DIR/gpukit-root (about 250 MB, a few minutes). Exit 77
# (ctest: skipped) with the reason when this cannot run here: not root, no debootstrap or mirror,
# or a build without the CUDA samples (nvcc was not found when it was configured).
set -u
SRC=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=$(cd "$1" && pwd)
ROOT=$BUILD/gpukit-root
skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*"; exit 1; }

[ "$(id -u)" = 0 ] || skip "debootstrap and chroot need root"
command -v chroot >/dev/null || skip "no chroot"
[ -x "$BUILD/bin/cuda_streams" ] || skip "$BUILD has no bin/cuda_streams (configure with nvcc on PATH to build the CUDA samples a kit needs)"
if [ ! -f "$ROOT/.gtrace-gpukit-root" ]; then
  command -v debootstrap >/dev/null || skip "debootstrap is not installed (apt-get install debootstrap)"
  suite=$(. /etc/os-release 2>/dev/null && echo "${VERSION_CODENAME:-bookworm}")
  mirror=$(grep -hoE '^URIs: *http[^ ]*debian/?$|^deb +http[^ ]*debian/? ' /etc/apt/sources.list.d/*.sources \
             /etc/apt/sources.list 2>/dev/null | grep -oE 'http[^ ]*' | head -1)
  mirror=${mirror:-http://deb.debian.org/debian}
  echo "making a clean $suite root with python3 in $ROOT (debootstrap --variant=minbase, once)"
  rm -rf "$ROOT.tmp"
  if ! debootstrap --variant=minbase --include=python3 "$suite" "$ROOT.tmp" "$mirror" >"$BUILD/gpukit-root.log" 2>&1; then
    tail -5 "$BUILD/gpukit-root.log"
    rm -rf "$ROOT.tmp"
    skip "debootstrap $suite from $mirror failed (no network?); see $BUILD/gpukit-root.log"
  fi
  touch "$ROOT.tmp/.gtrace-gpukit-root"
  mv "$ROOT.tmp" "$ROOT"
fi

# The root stands for the GPU image minus the GPU: python3 (standard library) and nothing we build with.
chroot "$ROOT" dpkg-query -W -f='${Status}' python3 2>/dev/null | grep -q 'install ok installed' ||
  fail "python3 is missing from $ROOT (remove the directory to make it again)"
for p in g++ gcc cmake make protobuf-compiler libprotobuf-dev libprotobuf32 libsqlite3-dev sqlite3 libunwind8 \
         cuda-toolkit python3-pip python3-venv; do
  if chroot "$ROOT" dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    fail "$p is installed in the clean root $ROOT"
  fi
done

WORK=$(mktemp -d /tmp/gtrace-gpukit-test-XXXXXX)
cleanup() {
  umount "$ROOT/proc" 2>/dev/null
  rm -rf "$ROOT/opt/gpu-kit" "$ROOT/work" "$WORK"
}
trap cleanup EXIT

# 1. The kit, from this build tree.
bash "$SRC/scripts/gpu-kit.sh" "$WORK/gpu-kit" --build "$BUILD" | tee "$WORK/kit.txt"
[ "${PIPESTATUS[0]}" = 0 ] || fail "gpu-kit.sh failed"
bytes=$(du -sb "$WORK/gpu-kit" | cut -f1)
[ "$bytes" -lt $((64 * 1024 * 1024)) ] || fail "the kit is $bytes bytes (limit 64 MiB)"
grep -q "^gpu-kit: .*$bytes bytes" "$WORK/kit.txt" || fail "gpu-kit.sh did not print the kit's size"
for f in gpu-check.sh bin/gtrace bin/cuda_streams bin/capture_scenario lib/libgtrace.so lib/libcudart.so.13 KIT.txt \
         samples/cuda/torch_steps.py samples/cuda/torch_nvtx.py samples/nccl/nccl_collectives.py \
         tests/viewers/kineto_check.py; do
  [ -e "$WORK/gpu-kit/$f" ] || fail "the kit lacks $f"
done
for f in "$SRC"/scripts/gpu-check.d/*; do
  cmp -s "$f" "$WORK/gpu-kit/scripts/gpu-check.d/$(basename "$f")" || fail "the kit lacks scripts/gpu-check.d/$(basename "$f")"
done
if find "$WORK/gpu-kit" -name '*.o' -o -name '*.a' -o -name CMakeLists.txt -o -name '*.proto' -path '*schema*' | grep -q .; then
  fail "build inputs in the kit: $(find "$WORK/gpu-kit" -name '*.o' -o -name '*.a' -o -name CMakeLists.txt | head -3)"
fi
# gpu-kit.sh replaces a kit it made, and refuses a directory that is not one.
mkdir -p "$WORK/not-a-kit" && echo keep >"$WORK/not-a-kit/file"
bash "$SRC/scripts/gpu-kit.sh" "$WORK/not-a-kit" --build "$BUILD" >/dev/null 2>&1 && fail "gpu-kit.sh overwrote a directory that is not a kit"
[ "$(cat "$WORK/not-a-kit/file")" = keep ] || fail "gpu-kit.sh touched a directory that is not a kit"

# 2. Into the root, where the device tool would put it, and run there.
rm -rf "$ROOT/opt/gpu-kit" "$ROOT/work"
mkdir -p "$ROOT/opt" "$ROOT/work"
cp -a "$WORK/gpu-kit" "$ROOT/opt/gpu-kit"
mount -t proc proc "$ROOT/proc" || skip "cannot mount /proc in the chroot"
in_root() { chroot "$ROOT" /usr/bin/env -i PATH=/usr/local/bin:/usr/bin:/bin HOME=/work TMPDIR=/work "$@"; }

for b in bin/gtrace bin/capture_scenario bin/cuda_streams; do
  in_root /usr/bin/ldd "/opt/gpu-kit/$b" >"$WORK/ldd.txt" 2>&1
  grep -q 'not found' "$WORK/ldd.txt" && { cat "$WORK/ldd.txt"; fail "$b: unresolved libraries in the root"; }
done
grep 'libcudart' "$WORK/ldd.txt" | grep -q '=> /opt/gpu-kit/' || { cat "$WORK/ldd.txt"; fail "cuda_streams does not use the kit's libcudart"; }
in_root python3 -c 'import sqlite3, json, statistics' || fail "the root's python3 lacks its standard library"

in_root bash /opt/gpu-kit/gpu-check.sh --list | tee "$WORK/list.txt" || fail "gpu-check.sh --list failed in the root"
parts=$(awk '/^[0-9][0-9]-/ {print $1}' "$WORK/list.txt")
want=$(cd "$SRC/scripts/gpu-check.d" && ls *.sh | sed 's/\.sh$//')
[ "$(echo $parts)" = "$(echo $want)" ] || fail "--list shows '$(echo $parts)', gpu-check.d has '$(echo $want)'"
echo "$parts" | grep -qx 00-quick || fail "no 00-quick part"
awk '$1 == "00-quick" && $2 + 0 > 0 && $2 + 0 < 5 && $3 + 0 > 0 && $3 + 0 < 300 {ok = 1} END {exit !ok}' "$WORK/list.txt" ||
  fail "00-quick must be expected to take, and be stopped, under 5 minutes"
awk '/^[0-9][0-9]-/ && ($2 == "?" || $2 + 0 >= 8) {bad = bad " " $1} END {if (bad) {print bad; exit 1}}' "$WORK/list.txt" ||
  fail "parts without an expected time under 8 minutes (above)"

bad=""
for p in $parts; do
  num=${p%%-*}
  # By number (as the docs' device commands do), OUT as the device tool sets it.
  in_root /usr/bin/env OUT=/work/out-$p bash /opt/gpu-kit/gpu-check.sh --part "$((10#$num))" >"$WORK/$p.txt" 2>&1
  rc=$?
  lines=$(grep -E '^(PASS|FAIL|SKIP) ' "$ROOT/work/out-$p/summary.txt" 2>/dev/null | sort -u)
  n=$(echo "$lines" | grep -c .)
  echo "== $p (exit $rc): $lines"
  if [ "$rc" != 0 ] || [ "$n" != 1 ] || ! echo "$lines" | grep -qE "^SKIP $p(/[a-z-]+)?: .*(no GPU|no NVIDIA driver)"; then
    cat "$WORK/$p.txt"
    bad="$bad $p"
    continue
  fi
  files=$(ls "$ROOT/work/out-$p" | wc -l)
  [ "$files" -le 8 ] || bad="$bad $p(OUT:$files-files)"
  for f in summary.txt "$p.log" "$p-files.tar.gz"; do [ -s "$ROOT/work/out-$p/$f" ] || bad="$bad $p(no-$f)"; done
done
[ -z "$bad" ] || fail "parts that did not end as one 'SKIP ...: no GPU' line, or whose \$OUT is wrong:$bad"

# 3. Past "no GPU": a stand-in nvidia-smi (a test double that lists one H100; there is still no
# driver, CUDA library or torch in the root) lets every part go on to its next step. The parts that
# need torch must end as SKIP for the missing torch; 00-quick and 10-cuda must get as far as running
# cuda_streams, which fails for want of a driver. In no part may a tool, file, library or python
# module of the kit be missing, nor a python checker crash.
mkdir -p "$ROOT/work/fakebin"
cat >"$ROOT/work/fakebin/nvidia-smi" <<'SH'
#!/bin/sh
# Stand-in nvidia-smi (gpukit.chroot): one GPU, fixed answers.
case "$*" in
  *-L*) echo "GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-00000000-1111-2222-3333-444444444444)"; exit 0 ;;
esac
q=$(echo "$*" | sed -n 's/.*--query-gpu=\([^ ]*\).*/\1/p')
[ -n "$q" ] || { echo "stand-in nvidia-smi: $*"; exit 0; }
echo "$q" | tr ',' '\n' | while read -r f; do
  case "$f" in
    name) echo "NVIDIA H100 80GB HBM3" ;; uuid) echo "GPU-00000000-1111-2222-3333-444444444444" ;;
    driver_version) echo "580.00" ;; memory.total) echo "81559 MiB" ;; *) echo "0" ;;
  esac
done | paste -sd, | sed 's/,/, /g'
SH
chmod +x "$ROOT/work/fakebin/nvidia-smi"
bad=""
for p in $parts; do
  chroot "$ROOT" /usr/bin/env -i PATH=/work/fakebin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    HOME=/work TMPDIR=/work OUT=/work/gpu-$p bash /opt/gpu-kit/gpu-check.sh --part "$p" >"$WORK/gpu-$p.txt" 2>&1
  lines=$(grep -E '^(PASS|FAIL|SKIP) ' "$ROOT/work/gpu-$p/summary.txt" 2>/dev/null | sort -u)
  echo "== $p with a stand-in GPU:"
  echo "$lines" | sed 's/^/     /' | cut -c1-200
  if grep -nE 'command not found|No such file or directory|ModuleNotFoundError|ImportError|error while loading shared libraries|Traceback|unbound variable|syntax error|timed out' \
       "$ROOT/work/gpu-$p/$p.log" "$WORK/gpu-$p.txt" | grep -v 'No module named .torch.' | head -5 | grep .; then
    bad="$bad $p(missing-piece)"
  fi
  case "$p" in
    00-quick)
      echo "$lines" | grep -q '^FAIL 00-quick/full: the application exited [1-9]' || bad="$bad $p(full)"
      echo "$lines" | grep -q '^FAIL 00-quick/inject: the application exited [1-9]' || bad="$bad $p(inject)"
      echo "$lines" | grep -q '^SKIP 00-quick/torch: no PyTorch' || bad="$bad $p(torch)" ;;
    10-cuda)
      [ "$lines" = "$(echo "$lines" | grep '^FAIL 10-cuda/baseline: cuda_streams fails without gtrace')" ] || bad="$bad $p" ;;
    15-capture)
      # Both captures get as far as running capture_scenario, which fails for want of a driver.
      [ "$lines" = "$(echo "$lines" | grep -E '^FAIL 15-capture/(whole|window)/run: capture_scenario failed')" ] &&
        [ "$(echo "$lines" | wc -l)" = 2 ] || bad="$bad $p" ;;
    *)
      # Only SKIP lines, each for the missing torch (a part we do not know must at least not FAIL).
      if echo "$lines" | grep -v '^SKIP ' | grep -q . || ! echo "$lines" | grep -q .; then bad="$bad $p"; fi
      case "$p" in 1[1-9]-* | [2-6][0-9]-*)
        echo "$lines" | grep -qviE 'torch' && bad="$bad $p(not-torch)" ;; esac ;;
  esac
done
[ -z "$bad" ] || fail "with a stand-in GPU, parts that stopped on something other than the missing GPU/driver/torch:$bad"
echo "gpukit: ok ($(echo $parts | wc -w) parts reach 'no GPU', and with a stand-in nvidia-smi the driver or torch, in a clean $(. "$ROOT/etc/os-release" && echo "$PRETTY_NAME") root with python3; kit $(awk -v b="$bytes" 'BEGIN {printf "%.1f MiB", b / 1048576}'))"
