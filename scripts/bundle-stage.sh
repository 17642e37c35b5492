#!/usr/bin/env bash
# bundle-stage.sh: the relocatable gtrace directory, staged from a build; shared by scripts/bundle.sh
# (which tars it) and scripts/gpu-kit.sh (which adds the GPU samples and checks around it).
#
#   bash scripts/bundle-stage.sh BUILD_DIR STAGE_DIR
#
# BUILD_DIR must hold bin/gtrace and lib/libgtrace.so (a build of this tree). STAGE_DIR receives
#   bin/gtrace          the CLI; RPATH $ORIGIN/../lib (set at link time)
#   lib/libgtrace.so    the injected library (needs only libc; C++ runtime static)
#   lib/lib*.so.*       every library the CLI needs beyond glibc: libprotobuf, libsqlite3, libz,
#                       libstdc++, libgcc_s (the node's may be missing or older than the build machine's)
#   lib/libunwind.so.8  dlopen'ed by libgtrace.so for --cudabacktrace only (it looks beside itself
#                       first), when the build machine has it
#   README.bundle       layout and the glibc version the binaries need
# and the script proves, on this machine, that every non-system library resolves inside STAGE_DIR.
# Exit status non-zero with a `bundle:` line on any problem.
set -euo pipefail
if [ $# -ne 2 ]; then echo "usage: bundle-stage.sh BUILD_DIR STAGE_DIR" >&2; exit 2; fi
BUILD=$(cd "$1" && pwd)
mkdir -p "$2"
stage=$(cd "$2" && pwd)
if [ ! -x "$BUILD/bin/gtrace" ] || [ ! -f "$BUILD/lib/libgtrace.so" ]; then
  echo "bundle: $BUILD has no bin/gtrace and lib/libgtrace.so (build the gtrace and gtrace_cli targets)" >&2
  exit 1
fi
version=$("$BUILD/bin/gtrace" --version | awk '{print $2}')
top=$(basename "$stage")

cmake --install "$BUILD" --prefix "$stage" --strip >/dev/null
# The install uses the build's libdir (lib on Debian for a /usr/local-style prefix); the bundle's is lib.
if [ ! -f "$stage/lib/libgtrace.so" ]; then
  echo "bundle: $stage/lib/libgtrace.so missing (libdir is not 'lib'?)" >&2
  exit 1
fi
# (grep without -q, and awk without an early exit: under pipefail an early reader exit SIGPIPEs the writer.)
if ! readelf -d "$stage/bin/gtrace" | grep 'RPATH.*\$ORIGIN/../lib' >/dev/null; then
  echo "bundle: $stage/bin/gtrace has no RPATH \$ORIGIN/../lib (rebuild with this tree's tools/cli/CMakeLists.txt)" >&2
  exit 1
fi

# glibc and the kernel's vDSO are the system; everything else the CLI loads travels with it.
is_system() {
  case "$1" in
    linux-vdso.so.* | ld-linux*.so.* | libc.so.* | libm.so.* | libdl.so.* | libpthread.so.* | librt.so.* | \
      libresolv.so.* | libutil.so.* | libanl.so.*) return 0 ;;
  esac
  return 1
}
ldd "$stage/bin/gtrace" | awk '/=>/ {print $1, $3}' | while read -r soname path; do
  is_system "$soname" && continue
  [ -f "$path" ] || { echo "bundle: $soname not found on this machine" >&2; exit 1; }
  cp -L "$path" "$stage/lib/$soname"
  chmod 644 "$stage/lib/$soname"
done

# Proof on this machine: every non-system library now resolves inside the bundle.
bad=$(ldd "$stage/bin/gtrace" | awk '/=>/ {print $1, $3}' | while read -r soname path; do
  is_system "$soname" && continue
  case "$(realpath "$path")" in "$stage"/lib/*) ;; *) echo "$soname -> $path" ;; esac
done)
if [ -n "$bad" ]; then
  echo "bundle: libraries resolved outside the bundle:" >&2
  echo "$bad" >&2
  exit 1
fi
bad=$(ldd "$stage/lib/libgtrace.so" | awk '/=>/ {print $1}' | while read -r soname; do
  is_system "$soname" || echo "$soname"
done)
if [ -n "$bad" ]; then
  echo "bundle: libgtrace.so needs more than glibc: $bad" >&2
  exit 1
fi

# libgtrace.so never links libunwind: it dlopens libunwind.so.8 from its own directory first, and
# only for --cudabacktrace. Ship the build machine's (its liblzma dependency is a system library).
unwind=$(ldconfig -p 2>/dev/null | awk '$1 == "libunwind.so.8" && !seen {print $NF; seen = 1}')
if [ -n "$unwind" ] && [ -f "$unwind" ]; then
  cp -L "$unwind" "$stage/lib/libunwind.so.8"
  chmod 644 "$stage/lib/libunwind.so.8"
else
  echo "bundle: note: no libunwind.so.8 here; --cudabacktrace will need the node's libunwind8" >&2
fi

glibc=$(for f in "$stage"/bin/gtrace "$stage"/lib/*.so*; do objdump -T "$f" 2>/dev/null; done |
  grep -o 'GLIBC_[0-9][0-9.]*' | sed 's/GLIBC_//' | sort -t. -k1,1n -k2,2n -k3,3n | tail -1)
cat >"$stage/README.bundle" <<TXT
gtrace $version for Linux $(uname -m), built on $(. /etc/os-release && echo "$PRETTY_NAME").

  bin/gtrace          the CLI: profile, export, stats, info (gtrace --help)
  lib/libgtrace.so    the library gtrace profile injects (LD_PRELOAD=.../lib/libgtrace.so also works)
  lib/*.so.*          libraries the CLI needs, found through its RPATH (\$ORIGIN/../lib); libunwind.so.8
                      is loaded by libgtrace.so for --cudabacktrace only

Unpack anywhere (the directory can be moved); no installation step, no environment variables.
Needs glibc >= ${glibc:-unknown} and, to trace CUDA, the node's NVIDIA driver (libcuda, CUPTI from the
CUDA toolkit or the driver package). Nothing else: no compiler, protobuf or SQLite on the node.

  $top/bin/gtrace profile -o run_%q{SLURM_PROCID} -- python train.py
  $top/bin/gtrace export --type perfetto run_*.gtrace -o run.pftrace
TXT

echo "bundle: staged $stage (needs glibc >= ${glibc:-unknown})"
