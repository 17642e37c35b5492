// The libc functions libgtrace.so interposes for OS runtime tracing (-t osrt), one X-macro list so
// that the id enum, the name table (what the stream and OSRT_API carry) and the resolution of libc's
// definitions cannot drift apart. Adding a name here also needs its definition in osrt_hooks_*.cc,
// its line in inject/gtrace.map and in tests/integration/symbols_test.sh (the symbol-hygiene test
// fails otherwise). The list follows nsys's OS runtime trace (docs/osrt.md says what is left out).
#pragma once

#include <cstdint>

// X(name): every function is exported under exactly this name.
#define GT_OSRT_FUNCTIONS(X)                                                                                   \
  /* locks, condition variables, semaphores, joins */                                                        \
  X(pthread_mutex_lock) X(pthread_mutex_timedlock) X(pthread_mutex_clocklock) X(pthread_rwlock_rdlock)         \
  X(pthread_rwlock_wrlock) X(pthread_rwlock_timedrdlock) X(pthread_rwlock_timedwrlock)                        \
  X(pthread_rwlock_clockrdlock) X(pthread_rwlock_clockwrlock) X(pthread_spin_lock) X(pthread_cond_wait)       \
  X(pthread_cond_timedwait) X(pthread_cond_clockwait) X(pthread_barrier_wait) X(pthread_join) X(sem_wait)     \
  X(sem_timedwait) X(sem_clockwait)                                                                            \
  /* sleeps */                                                                                                 \
  X(sleep) X(usleep) X(nanosleep) X(clock_nanosleep)                                                           \
  /* processes */                                                                                              \
  X(fork) X(wait) X(waitpid) X(waitid) X(wait3) X(wait4) X(system)                                             \
  /* file descriptors */                                                                                       \
  X(read) X(write) X(pread) X(pread64) X(pwrite) X(pwrite64) X(readv) X(writev) X(preadv) X(pwritev)           \
  X(fsync) X(fdatasync) X(open) X(open64) X(openat) X(openat64) X(creat) X(close) X(pipe) X(pipe2) X(dup2)     \
  X(ioctl) X(fcntl)                                                                                            \
  /* stdio */                                                                                                  \
  X(fopen) X(fopen64) X(fdopen) X(freopen) X(fclose) X(fread) X(fwrite) X(fflush) X(fgets)                     \
  /* sockets */                                                                                                \
  X(socket) X(bind) X(listen) X(accept) X(accept4) X(connect) X(recv) X(recvfrom) X(recvmsg) X(recvmmsg)       \
  X(send) X(sendto) X(sendmsg) X(sendmmsg) X(shutdown)                                                         \
  /* waiting for descriptors */                                                                                \
  X(poll) X(ppoll) X(select) X(pselect) X(epoll_wait) X(epoll_pwait)                                           \
  /* memory mappings */                                                                                        \
  X(mmap) X(mmap64) X(munmap) X(mprotect) X(msync)

namespace gt::osrt {

enum FunctionId : uint16_t {
#define GT_OSRT_ENUM(name) kFn_##name,
  GT_OSRT_FUNCTIONS(GT_OSRT_ENUM)
#undef GT_OSRT_ENUM
      kFunctionCount
};

// The exported name of function `id` (nullptr when out of range).
const char* FunctionName(uint32_t id);

}  // namespace gt::osrt
