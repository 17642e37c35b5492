// Interposed libc functions of OS runtime tracing, part 2: file descriptors, stdio, sockets, poll
// and friends, memory mappings. Same rules as osrt_hooks_sync.cc (see osrt_tracer.h); fallbacks
// (nested resolution only) are the system call where one exists, else ENOSYS.
#undef _FORTIFY_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "inject/osrt/osrt_interpose.h"

namespace {

// open/openat take a mode only when they may create a file.
bool NeedsMode(int flags) {
  return (flags & O_CREAT) != 0 || (flags & O_TMPFILE) == O_TMPFILE;
}

template <typename Fn>
GT_OSRT_NO_ASAN int OpenAt(gt::osrt::FunctionId id, int dirfd, const char* path, int flags, mode_t mode) {
  Fn real = reinterpret_cast<Fn>(gt::osrt::RealFunction(id));
  if (__builtin_expect(real == nullptr, 0))
    return static_cast<int>(::syscall(SYS_openat, dirfd, path, flags, mode));
  return gt::osrt::Traced(id, [&] { return real(dirfd, path, flags, mode); });
}

template <typename Fn>
GT_OSRT_NO_ASAN int Open(gt::osrt::FunctionId id, const char* path, int flags, mode_t mode) {
  Fn real = reinterpret_cast<Fn>(gt::osrt::RealFunction(id));
  if (__builtin_expect(real == nullptr, 0))
    return static_cast<int>(::syscall(SYS_openat, AT_FDCWD, path, flags, mode));
  return gt::osrt::Traced(id, [&] { return real(path, flags, mode); });
}

}  // namespace

// ---- file descriptors (cancellation points unless noted) ----
GT_OSRT_DEFINE(ssize_t, read, (int fd, void* b, size_t n), (fd, b, n), , GT_OSRT_SYSCALL(ssize_t, SYS_read, fd, b, n))
GT_OSRT_DEFINE(ssize_t, write, (int fd, const void* b, size_t n), (fd, b, n), ,
               GT_OSRT_SYSCALL(ssize_t, SYS_write, fd, b, n))
GT_OSRT_DEFINE(ssize_t, pread, (int fd, void* b, size_t n, off_t o), (fd, b, n, o), ,
               GT_OSRT_SYSCALL(ssize_t, SYS_pread64, fd, b, n, o))
GT_OSRT_DEFINE(ssize_t, pread64, (int fd, void* b, size_t n, off64_t o), (fd, b, n, o), ,
               GT_OSRT_SYSCALL(ssize_t, SYS_pread64, fd, b, n, o))
GT_OSRT_DEFINE(ssize_t, pwrite, (int fd, const void* b, size_t n, off_t o), (fd, b, n, o), ,
               GT_OSRT_SYSCALL(ssize_t, SYS_pwrite64, fd, b, n, o))
GT_OSRT_DEFINE(ssize_t, pwrite64, (int fd, const void* b, size_t n, off64_t o), (fd, b, n, o), ,
               GT_OSRT_SYSCALL(ssize_t, SYS_pwrite64, fd, b, n, o))
GT_OSRT_DEFINE(ssize_t, readv, (int fd, const struct iovec* v, int n), (fd, v, n), ,
               GT_OSRT_SYSCALL(ssize_t, SYS_readv, fd, v, n))
GT_OSRT_DEFINE(ssize_t, writev, (int fd, const struct iovec* v, int n), (fd, v, n), ,
               GT_OSRT_SYSCALL(ssize_t, SYS_writev, fd, v, n))
GT_OSRT_DEFINE(ssize_t, preadv, (int fd, const struct iovec* v, int n, off_t o), (fd, v, n, o), ,
               GT_OSRT_SYSCALL(ssize_t, SYS_preadv, fd, v, n, o, 0))
GT_OSRT_DEFINE(ssize_t, pwritev, (int fd, const struct iovec* v, int n, off_t o), (fd, v, n, o), ,
               GT_OSRT_SYSCALL(ssize_t, SYS_pwritev, fd, v, n, o, 0))
GT_OSRT_DEFINE(int, fsync, (int fd), (fd), , GT_OSRT_SYSCALL(int, SYS_fsync, fd))
GT_OSRT_DEFINE(int, fdatasync, (int fd), (fd), , GT_OSRT_SYSCALL(int, SYS_fdatasync, fd))
GT_OSRT_DEFINE(int, creat, (const char* p, mode_t m), (p, m), ,
               GT_OSRT_SYSCALL(int, SYS_openat, AT_FDCWD, p, O_CREAT | O_WRONLY | O_TRUNC, m))
GT_OSRT_DEFINE(int, close, (int fd), (fd), , GT_OSRT_SYSCALL(int, SYS_close, fd))
GT_OSRT_DEFINE(int, pipe, (int* p), (p), noexcept, GT_OSRT_SYSCALL(int, SYS_pipe2, p, 0))
GT_OSRT_DEFINE(int, pipe2, (int* p, int f), (p, f), noexcept, GT_OSRT_SYSCALL(int, SYS_pipe2, p, f))
GT_OSRT_DEFINE(int, dup2, (int a, int b), (a, b), noexcept, GT_OSRT_SYSCALL(int, SYS_dup2, a, b))

// Variadic: the optional argument is read as its widest type and passed on unchanged.
extern "C" __attribute__((visibility("default"))) GT_OSRT_NO_ASAN int open(const char* path, int flags, ...) {
  mode_t mode = 0;
  if (NeedsMode(flags)) {
    va_list ap;
    va_start(ap, flags);
    mode = va_arg(ap, mode_t);
    va_end(ap);
  }
  return Open<int (*)(const char*, int, ...)>(gt::osrt::kFn_open, path, flags, mode);
}
extern "C" __attribute__((visibility("default"))) GT_OSRT_NO_ASAN int open64(const char* path, int flags, ...) {
  mode_t mode = 0;
  if (NeedsMode(flags)) {
    va_list ap;
    va_start(ap, flags);
    mode = va_arg(ap, mode_t);
    va_end(ap);
  }
  return Open<int (*)(const char*, int, ...)>(gt::osrt::kFn_open64, path, flags, mode);
}
extern "C" __attribute__((visibility("default"))) GT_OSRT_NO_ASAN int openat(int dirfd, const char* path, int flags, ...) {
  mode_t mode = 0;
  if (NeedsMode(flags)) {
    va_list ap;
    va_start(ap, flags);
    mode = va_arg(ap, mode_t);
    va_end(ap);
  }
  return OpenAt<int (*)(int, const char*, int, ...)>(gt::osrt::kFn_openat, dirfd, path, flags, mode);
}
extern "C" __attribute__((visibility("default"))) GT_OSRT_NO_ASAN int openat64(int dirfd, const char* path, int flags, ...) {
  mode_t mode = 0;
  if (NeedsMode(flags)) {
    va_list ap;
    va_start(ap, flags);
    mode = va_arg(ap, mode_t);
    va_end(ap);
  }
  return OpenAt<int (*)(int, const char*, int, ...)>(gt::osrt::kFn_openat64, dirfd, path, flags, mode);
}
// fcntl(fd, cmd, arg): arg is an int or a pointer; glibc reads it as a pointer-sized value too.
extern "C" __attribute__((visibility("default"))) GT_OSRT_NO_ASAN int fcntl(int fd, int cmd, ...) {
  va_list ap;
  va_start(ap, cmd);
  void* arg = va_arg(ap, void*);
  va_end(ap);
  using Fn = int (*)(int, int, ...);
  Fn real = reinterpret_cast<Fn>(gt::osrt::RealFunction(gt::osrt::kFn_fcntl));
  if (__builtin_expect(real == nullptr, 0))
    return static_cast<int>(::syscall(SYS_fcntl, fd, cmd, arg));
  return gt::osrt::Traced(gt::osrt::kFn_fcntl, [&] { return real(fd, cmd, arg); });
}
extern "C" __attribute__((visibility("default"))) GT_OSRT_NO_ASAN int ioctl(int fd, unsigned long request, ...) noexcept {
  va_list ap;
  va_start(ap, request);
  void* arg = va_arg(ap, void*);
  va_end(ap);
  using Fn = int (*)(int, unsigned long, ...);
  Fn real = reinterpret_cast<Fn>(gt::osrt::RealFunction(gt::osrt::kFn_ioctl));
  if (__builtin_expect(real == nullptr, 0))
    return static_cast<int>(::syscall(SYS_ioctl, fd, request, arg));
  return gt::osrt::Traced(gt::osrt::kFn_ioctl, [&] { return real(fd, request, arg); });
}

// ---- stdio ----
GT_OSRT_DEFINE(FILE*, fopen, (const char* __restrict p, const char* __restrict m), (p, m), , GT_OSRT_NOSYS(nullptr))
GT_OSRT_DEFINE(FILE*, fopen64, (const char* __restrict p, const char* __restrict m), (p, m), , GT_OSRT_NOSYS(nullptr))
GT_OSRT_DEFINE(FILE*, fdopen, (int fd, const char* m), (fd, m), noexcept, GT_OSRT_NOSYS(nullptr))
GT_OSRT_DEFINE(FILE*, freopen, (const char* __restrict p, const char* __restrict m, FILE* __restrict f), (p, m, f), ,
               GT_OSRT_NOSYS(nullptr))
GT_OSRT_DEFINE(int, fclose, (FILE * f), (f), , GT_OSRT_NOSYS(EOF))
GT_OSRT_DEFINE(size_t, fread, (void* __restrict b, size_t s, size_t n, FILE* __restrict f), (b, s, n, f), ,
               GT_OSRT_NOSYS(0))
GT_OSRT_DEFINE(size_t, fwrite, (const void* __restrict b, size_t s, size_t n, FILE* __restrict f), (b, s, n, f), ,
               GT_OSRT_NOSYS(0))
GT_OSRT_DEFINE(int, fflush, (FILE * f), (f), , GT_OSRT_NOSYS(EOF))
GT_OSRT_DEFINE(char*, fgets, (char* __restrict s, int n, FILE* __restrict f), (s, n, f), , GT_OSRT_NOSYS(nullptr))

// ---- sockets ----
GT_OSRT_DEFINE(int, socket, (int d, int t, int p), (d, t, p), noexcept, GT_OSRT_SYSCALL(int, SYS_socket, d, t, p))
GT_OSRT_DEFINE(int, bind, (int fd, const struct sockaddr* a, socklen_t l), (fd, a, l), noexcept,
               GT_OSRT_SYSCALL(int, SYS_bind, fd, a, l))
GT_OSRT_DEFINE(int, listen, (int fd, int n), (fd, n), noexcept, GT_OSRT_SYSCALL(int, SYS_listen, fd, n))
GT_OSRT_DEFINE(int, accept, (int fd, struct sockaddr* __restrict a, socklen_t* __restrict l), (fd, a, l), ,
               GT_OSRT_SYSCALL(int, SYS_accept, fd, a, l))
GT_OSRT_DEFINE(int, accept4, (int fd, struct sockaddr* __restrict a, socklen_t* __restrict l, int f), (fd, a, l, f), ,
               GT_OSRT_SYSCALL(int, SYS_accept4, fd, a, l, f))
GT_OSRT_DEFINE(int, connect, (int fd, const struct sockaddr* a, socklen_t l), (fd, a, l), ,
               GT_OSRT_SYSCALL(int, SYS_connect, fd, a, l))
GT_OSRT_DEFINE(ssize_t, recv, (int fd, void* b, size_t n, int f), (fd, b, n, f), ,
               GT_OSRT_SYSCALL(ssize_t, SYS_recvfrom, fd, b, n, f, nullptr, nullptr))
GT_OSRT_DEFINE(ssize_t, recvfrom,
               (int fd, void* __restrict b, size_t n, int f, struct sockaddr* __restrict a, socklen_t* __restrict l),
               (fd, b, n, f, a, l), , GT_OSRT_SYSCALL(ssize_t, SYS_recvfrom, fd, b, n, f, a, l))
GT_OSRT_DEFINE(ssize_t, recvmsg, (int fd, struct msghdr* m, int f), (fd, m, f), ,
               GT_OSRT_SYSCALL(ssize_t, SYS_recvmsg, fd, m, f))
GT_OSRT_DEFINE(int, recvmmsg, (int fd, struct mmsghdr* m, unsigned int n, int f, struct timespec* t), (fd, m, n, f, t),
               , GT_OSRT_SYSCALL(int, SYS_recvmmsg, fd, m, n, f, t))
GT_OSRT_DEFINE(ssize_t, send, (int fd, const void* b, size_t n, int f), (fd, b, n, f), ,
               GT_OSRT_SYSCALL(ssize_t, SYS_sendto, fd, b, n, f, nullptr, 0))
GT_OSRT_DEFINE(ssize_t, sendto, (int fd, const void* b, size_t n, int f, const struct sockaddr* a, socklen_t l),
               (fd, b, n, f, a, l), , GT_OSRT_SYSCALL(ssize_t, SYS_sendto, fd, b, n, f, a, l))
GT_OSRT_DEFINE(ssize_t, sendmsg, (int fd, const struct msghdr* m, int f), (fd, m, f), ,
               GT_OSRT_SYSCALL(ssize_t, SYS_sendmsg, fd, m, f))
GT_OSRT_DEFINE(int, sendmmsg, (int fd, struct mmsghdr* m, unsigned int n, int f), (fd, m, n, f), ,
               GT_OSRT_SYSCALL(int, SYS_sendmmsg, fd, m, n, f))
GT_OSRT_DEFINE(int, shutdown, (int fd, int h), (fd, h), noexcept, GT_OSRT_SYSCALL(int, SYS_shutdown, fd, h))

// ---- waiting for descriptors (cancellation points) ----
GT_OSRT_DEFINE(int, poll, (struct pollfd * p, nfds_t n, int t), (p, n, t), , {
  struct timespec ts = {t / 1000, (t % 1000) * 1000000L};
  GT_OSRT_SYSCALL(int, SYS_ppoll, p, n, t < 0 ? nullptr : &ts, nullptr, 0);
})
GT_OSRT_DEFINE(int, ppoll, (struct pollfd * p, nfds_t n, const struct timespec* t, const sigset_t* s), (p, n, t, s), ,
               GT_OSRT_SYSCALL(int, SYS_ppoll, p, n, t, s, _NSIG / 8))
GT_OSRT_DEFINE(int, select, (int n, fd_set* __restrict r, fd_set* __restrict w, fd_set* __restrict e,
                             struct timeval* __restrict t),
               (n, r, w, e, t), , GT_OSRT_SYSCALL(int, SYS_select, n, r, w, e, t))
GT_OSRT_DEFINE(int, pselect, (int n, fd_set* __restrict r, fd_set* __restrict w, fd_set* __restrict e,
                              const struct timespec* __restrict t, const sigset_t* __restrict s),
               (n, r, w, e, t, s), , GT_OSRT_NOSYS(-1))
GT_OSRT_DEFINE(int, epoll_wait, (int fd, struct epoll_event* e, int n, int t), (fd, e, n, t), ,
               GT_OSRT_SYSCALL(int, SYS_epoll_pwait, fd, e, n, t, nullptr, 0))
GT_OSRT_DEFINE(int, epoll_pwait, (int fd, struct epoll_event* e, int n, int t, const sigset_t* s), (fd, e, n, t, s), ,
               GT_OSRT_SYSCALL(int, SYS_epoll_pwait, fd, e, n, t, s, _NSIG / 8))

// ---- memory mappings ----
GT_OSRT_DEFINE(void*, mmap, (void* a, size_t n, int p, int f, int fd, off_t o), (a, n, p, f, fd, o), noexcept,
               return reinterpret_cast<void*>(::syscall(SYS_mmap, a, n, p, f, fd, o)))
GT_OSRT_DEFINE(void*, mmap64, (void* a, size_t n, int p, int f, int fd, off64_t o), (a, n, p, f, fd, o), noexcept,
               return reinterpret_cast<void*>(::syscall(SYS_mmap, a, n, p, f, fd, o)))
GT_OSRT_DEFINE(int, munmap, (void* a, size_t n), (a, n), noexcept, GT_OSRT_SYSCALL(int, SYS_munmap, a, n))
GT_OSRT_DEFINE(int, mprotect, (void* a, size_t n, int p), (a, n, p), noexcept,
               GT_OSRT_SYSCALL(int, SYS_mprotect, a, n, p))
GT_OSRT_DEFINE(int, msync, (void* a, size_t n, int f), (a, n, f), , GT_OSRT_SYSCALL(int, SYS_msync, a, n, f))
