#!/usr/bin/env bash
# libgtrace.so exports only the entry points CUDA, NVTX and NCCL look up and the libc calls it
# interposes so that nothing is lost when a process ends without exit() (inject/gtrace.map,
# inject/exit/) or times for OS runtime tracing (inject/osrt/), and depends on nothing but the C runtime: no libstdc++, libgcc_s or libprotobuf.
set -euo pipefail
lib=$1/lib/libgtrace.so
# gtrace_api_*: the capture-window API the Python package (python/gtrace) calls through ctypes; it
# cannot be reached through an injection table, so it must be a dynamic symbol.
allowed="InitializeInjection InitializeInjectionNvtx2 InitializeInjectionNvtxExtension ncclProfiler_v4 ncclProfiler_v5 ncclProfiler_v6"
allowed="$allowed gtrace_api_version gtrace_api_start gtrace_api_stop gtrace_api_is_active gtrace_api_mark gtrace_api_step"
# Issue 14: exactly these libc entry points, every one of them (a missing one loses data silently).
interposed="_exit _Exit abort execve execv execvp execvpe execl execlp execle fexecve execveat posix_spawn posix_spawnp"
allowed="$allowed $interposed"
# Issue 29: the process-wide CUPTI activity calls a second CUPTI client (kineto) makes.
cupti="cuptiActivityRegisterCallbacks cuptiActivityRegisterTimestampCallback cuptiActivityDisable cuptiActivityFlushAll"
allowed="$allowed $cupti"
# Issue 18: the libc calls OS runtime tracing interposes (inject/osrt/osrt_functions.h), exactly these.
osrt="pthread_mutex_lock pthread_mutex_timedlock pthread_mutex_clocklock pthread_rwlock_rdlock"
osrt="$osrt pthread_rwlock_wrlock pthread_rwlock_timedrdlock pthread_rwlock_timedwrlock"
osrt="$osrt pthread_rwlock_clockrdlock pthread_rwlock_clockwrlock pthread_spin_lock pthread_cond_wait"
osrt="$osrt pthread_cond_timedwait pthread_cond_clockwait pthread_barrier_wait pthread_join sem_wait"
osrt="$osrt sem_timedwait sem_clockwait sleep usleep nanosleep clock_nanosleep fork wait waitpid waitid wait3"
osrt="$osrt wait4 system read write pread pread64 pwrite pwrite64 readv writev preadv pwritev fsync fdatasync"
osrt="$osrt open open64 openat openat64 creat close pipe pipe2 dup2 ioctl fcntl fopen fopen64 fdopen freopen"
osrt="$osrt fclose fread fwrite fflush fgets socket bind listen accept accept4 connect recv recvfrom recvmsg"
osrt="$osrt recvmmsg send sendto sendmsg sendmmsg shutdown poll ppoll select pselect epoll_wait epoll_pwait mmap"
osrt="$osrt mmap64 munmap mprotect msync"
allowed="$allowed $osrt"
exported=$(nm -D --defined-only "$lib" | awk '{print $3}' | sed 's/@.*//' | sort -u)
bad=0
for s in $exported; do
  case " $allowed " in *" $s "*) ;; *) echo "unexpected exported symbol: $s"; bad=1 ;; esac
done
for s in InitializeInjectionNvtx2 InitializeInjectionNvtxExtension gtrace_api_version gtrace_api_step $interposed $cupti $osrt; do
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
