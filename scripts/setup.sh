#!/usr/bin/env bash
# Installs what gtrace needs to build and test on a Debian 12 machine. Idempotent: a second run
# installs nothing. The CUDA toolkit (CUPTI, NVTX3, NCCL headers) must already be present.
set -euo pipefail

debs=(cmake g++ make pkg-config protobuf-compiler libprotobuf-dev libsqlite3-dev sqlite3
      libunwind-dev libdw-dev libgtest-dev googletest libbenchmark-dev python3 python3-pip clang
      python3-venv debootstrap ccache)  # clang: fuzzers; python3-venv, debootstrap: tests only (viewers.hta,
      # bundle.chroot); ccache: a compiler cache outside the clone for warm runs (scripts/ccache-env.sh)
missing=()
for p in "${debs[@]}"; do
  [ "$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null)" = 'install ok installed' ] || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -q
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q "${missing[@]}"
fi

# The Python NVTX sample uses the `nvtx` package from PyPI.
py=$(command -v python3)
if ! "$py" -c 'import nvtx' 2>/dev/null; then
  echo "setup: pip install nvtx"
  "$py" -m pip install -q nvtx 2>&1 | grep -v 'WARNING: Running pip as' || true
fi

if [ ! -e /usr/local/cuda/include/cupti.h ] && ! ls /usr/local/cuda*/include/cupti.h >/dev/null 2>&1; then
  echo "setup: warning: no CUDA toolkit with CUPTI under /usr/local/cuda*; CMake will look elsewhere" >&2
fi
echo "setup: ok"
