#!/usr/bin/env bash
# libgtrace.so exports only the entry points CUDA, NVTX and NCCL look up and the libc calls it
# interposes so that nothing is lost when a process ends without exit() (inject/gtrace.map,
# inject/exit/), and depends on nothing but the C runtime: no libstdc++, libgcc_s or libprotobuf.
set -euo pipefail
lib=$1/lib/libgtrace.so
# gtrace_api_*: the capture-window API the Python package (python/gtrace) calls through ctypes; it
# cannot be reached through an injection table, so it must be a dynamic symbol.
allowed="InitializeInjection InitializeInjectionNvtx2 InitializeInjectionNvtxExtension ncclProfiler_v4 ncclProfiler_v5 ncclProfiler_v6"
allowed="$allowed gtrace_api_version gtrace_api_start gtrace_api_stop gtrace_api_is_active gtrace_api_mark gtrace_api_step"
# Issue 14: exactly these libc entry points, every one of them (a missing one loses data silently).
interposed="_exit _Exit abort execve execv execvp execvpe execl execlp execle fexecve execveat posix_spawn posix_spawnp"
allowed="$allowed $interposed"
exported=$(nm -D --defined-only "$lib" | awk '{print $3}' | sed 's/@.*//' | sort -u)
bad=0
for s in $exported; do
  case " $allowed " in *" $s "*) ;; *) echo "unexpected exported symbol: $s"; bad=1 ;; esac
done
for s in InitializeInjectionNvtx2 InitializeInjectionNvtxExtension gtrace_api_version gtrace_api_step $interposed; do
  grep -qx "$s" <<<"$exported" || { echo "missing entry point: $s"; bad=1; }
done
needed=$(readelf -d "$lib" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
for n in $needed; do
  case "$n" in libc.so.*|libm.so.*|libdl.so.*|libpthread.so.*|ld-linux*|librt.so.*) ;;
    *) echo "unexpected dependency: $n"; bad=1 ;;
  esac
done
[ "$bad" = 0 ] && echo "symbols: ok ($(echo $exported | wc -w) exported; needs: $(echo $needed))"
exit "$bad"
