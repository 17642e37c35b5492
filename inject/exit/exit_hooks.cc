// The libc calls that end or replace a process without exit() (issue 14): _exit, _Exit, the exec*
// family, abort — and posix_spawn/posix_spawnp, which end nothing but start a process. Exported by
// libgtrace.so (gtrace.map) so that, preloaded, these definitions come before libc's in the
// lookup order; each finishes this process's stream (gt::MarkEnd: everything recorded so far plus
// an end-of-stream chunk saying how the process ended, waiting at most GTRACE_EXIT_WAIT_MS) and
// then calls libc's function with the same arguments, so the result, errno and the way the process
// ends are those of libc.
//
// Who calls: any application thread, also from a signal handler (_exit, the exec family and abort
// are async-signal-safe in POSIX; MarkEnd is too), from a forked child (whose parent may have held
// our locks: MarkEnd takes none), from a vfork'ed child (Python's subprocess: the parent's memory,
// but getpid() differs from the session's, so MarkEnd does nothing there), from many threads at
// once (each waits for the same mark). Calls inside libc (exit() -> _exit, system() -> posix_spawn
// -> execve, assert -> abort) do not come through here; exit() is handled by the ELF destructor,
// and abort's SIGABRT by the crash-signal handler in collector/session.cc.
//
// libc's functions are found with dlsym(RTLD_NEXT) in a constructor that runs before the others in
// this library, and on first use when an earlier constructor (another library's) already calls
// one of them. A call from a signal handler before that would meet dlsym: for _exit and abort the
// fallback is the system call itself, so they never depend on it.
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>

#include "collector/session.h"

namespace {

using ExitFn = void (*)(int);
using AbortFn = void (*)();
using ExecveFn = int (*)(const char*, char* const[], char* const[]);
using ExecvFn = int (*)(const char*, char* const[]);
using FexecveFn = int (*)(int, char* const[], char* const[]);
using ExecveatFn = int (*)(int, const char*, char* const[], char* const[], int);
using SpawnFn = int (*)(pid_t*,
                        const char*,
                        const posix_spawn_file_actions_t*,
                        const posix_spawnattr_t*,
                        char* const[],
                        char* const[]);

// One slot per libc function (zero-initialised storage: no static constructor).
std::atomic<void*> g_real_exit{nullptr}, g_real_Exit{nullptr}, g_real_abort{nullptr}, g_real_execve{nullptr},
    g_real_execv{nullptr}, g_real_execvp{nullptr}, g_real_execvpe{nullptr}, g_real_fexecve{nullptr},
    g_real_execveat{nullptr}, g_real_spawn{nullptr}, g_real_spawnp{nullptr};

template <typename Fn>
Fn Real(std::atomic<void*>& slot, const char* name) {
  void* f = slot.load(std::memory_order_acquire);
  if (f == nullptr) {
    f = dlsym(RTLD_NEXT, name);
    slot.store(f, std::memory_order_release);
  }
  return reinterpret_cast<Fn>(f);
}

// Priority 101: before the library's other constructors (entry.cc's runs at the default).
__attribute__((constructor(101))) void ResolveLibcEntryPoints() {
  Real<ExitFn>(g_real_exit, "_exit");
  Real<ExitFn>(g_real_Exit, "_Exit");
  Real<AbortFn>(g_real_abort, "abort");
  Real<ExecveFn>(g_real_execve, "execve");
  Real<ExecvFn>(g_real_execv, "execv");
  Real<ExecvFn>(g_real_execvp, "execvp");
  Real<ExecveFn>(g_real_execvpe, "execvpe");
  Real<FexecveFn>(g_real_fexecve, "fexecve");
  Real<ExecveatFn>(g_real_execveat, "execveat");
  Real<SpawnFn>(g_real_spawn, "posix_spawn");
  Real<SpawnFn>(g_real_spawnp, "posix_spawnp");
}

// Resolved already (constructor) or the raw system call: never dlsym inside a signal handler.
[[noreturn]] void EndWith(std::atomic<void*>& slot, int status) {
  gt::MarkEnd(gt::EndKind::kUnderscoreExit, 0);
  auto f = reinterpret_cast<ExitFn>(slot.load(std::memory_order_acquire));
  if (f != nullptr)
    f(status);
  while (true)
    ::syscall(SYS_exit_group, status);
}

// Exec: the stream ends with "exec" before libc's call; if the call returns (it failed), the
// process goes on recording into the same stream, and errno is libc's.
template <typename Call>
int AroundExec(Call call) {
  gt::MarkEnd(gt::EndKind::kExec, 0);
  int rc = call();
  int saved_errno = errno;
  gt::ResumeAfterEnd();
  errno = saved_errno;
  return rc;
}

// execl/execlp/execle: the variadic arguments as an argv array on the stack (no allocation: exec
// may be called in a child of a multithreaded fork, or from a signal handler).
int CountArgs(const char* first, va_list ap) {
  int n = 1;
  if (first == nullptr)
    return 0;
  while (va_arg(ap, const char*) != nullptr)
    ++n;
  return n;
}

// Fills argv[0..n) from `arg` and the next n-1 variadic arguments, then the terminating null. A
// pointer to the caller's va_list, so that execle can read on to envp after the arguments.
void FillArgv(const char* arg, va_list* ap, int n, char** argv) {
  for (int i = 0; i < n; ++i)
    argv[i] = const_cast<char*>(i == 0 ? arg : va_arg(*ap, const char*));
  argv[n] = nullptr;
}

void RequestWrite() {
  int saved_errno = errno;
  gt::RequestFlush(false);
  errno = saved_errno;
}

}  // namespace

extern "C" {

__attribute__((visibility("default"), noreturn)) void _exit(int status) {
  EndWith(g_real_exit, status);
}

__attribute__((visibility("default"), noreturn)) void _Exit(int status) noexcept {
  EndWith(g_real_Exit, status);
}

// abort(): the stream ends with "abort"; libc's abort then raises SIGABRT (the crash handler sees
// the mark is written and adds nothing). A SIGABRT handler that longjmps back into the program:
// recording goes on after the hold (500 ms) and the stream is closed again at the real end.
__attribute__((visibility("default"), noreturn)) void abort() noexcept {
  gt::MarkEnd(gt::EndKind::kAbort, 0);
  auto f = reinterpret_cast<AbortFn>(g_real_abort.load(std::memory_order_acquire));
  if (f != nullptr)
    f();
  // Not resolved (cannot happen after our constructor): what abort does, without libc's.
  ::raise(SIGABRT);
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  ::sigaction(SIGABRT, &dfl, nullptr);
  sigset_t only;
  sigemptyset(&only);
  sigaddset(&only, SIGABRT);
  ::sigprocmask(SIG_UNBLOCK, &only, nullptr);
  ::raise(SIGABRT);
  while (true)
    ::syscall(SYS_exit_group, 127);
}

__attribute__((visibility("default"))) int execve(const char* path, char* const argv[], char* const envp[]) noexcept {
  return AroundExec([&] {
    auto f = Real<ExecveFn>(g_real_execve, "execve");
    return f != nullptr ? f(path, argv, envp) : static_cast<int>(::syscall(SYS_execve, path, argv, envp));
  });
}

__attribute__((visibility("default"))) int execv(const char* path, char* const argv[]) noexcept {
  return AroundExec([&] {
    auto f = Real<ExecvFn>(g_real_execv, "execv");
    return f != nullptr ? f(path, argv) : static_cast<int>(::syscall(SYS_execve, path, argv, environ));
  });
}

__attribute__((visibility("default"))) int execvp(const char* file, char* const argv[]) noexcept {
  return AroundExec([&] {
    auto f = Real<ExecvFn>(g_real_execvp, "execvp");
    if (f != nullptr)
      return f(file, argv);
    errno = ENOSYS;
    return -1;
  });
}

__attribute__((visibility("default"))) int execvpe(const char* file, char* const argv[], char* const envp[]) noexcept {
  return AroundExec([&] {
    auto f = Real<ExecveFn>(g_real_execvpe, "execvpe");
    if (f != nullptr)
      return f(file, argv, envp);
    errno = ENOSYS;
    return -1;
  });
}

__attribute__((visibility("default"))) int fexecve(int fd, char* const argv[], char* const envp[]) noexcept {
  return AroundExec([&] {
    auto f = Real<FexecveFn>(g_real_fexecve, "fexecve");
    return f != nullptr ? f(fd, argv, envp)
                        : static_cast<int>(::syscall(SYS_execveat, fd, "", argv, envp, AT_EMPTY_PATH));
  });
}

__attribute__((visibility("default"))) int execveat(int dirfd,
                                                    const char* path,
                                                    char* const argv[],
                                                    char* const envp[],
                                                    int flags) noexcept {
  return AroundExec([&] {
    auto f = Real<ExecveatFn>(g_real_execveat, "execveat");
    return f != nullptr ? f(dirfd, path, argv, envp, flags)
                        : static_cast<int>(::syscall(SYS_execveat, dirfd, path, argv, envp, flags));
  });
}

__attribute__((visibility("default"))) int execl(const char* path, const char* arg, ...) noexcept {
  va_list ap;
  va_start(ap, arg);
  int n = CountArgs(arg, ap);
  va_end(ap);
  char* argv[n + 1];
  va_start(ap, arg);
  FillArgv(arg, &ap, n, argv);
  va_end(ap);
  return execv(path, argv);
}

__attribute__((visibility("default"))) int execlp(const char* file, const char* arg, ...) noexcept {
  va_list ap;
  va_start(ap, arg);
  int n = CountArgs(arg, ap);
  va_end(ap);
  char* argv[n + 1];
  va_start(ap, arg);
  FillArgv(arg, &ap, n, argv);
  va_end(ap);
  return execvp(file, argv);
}

__attribute__((visibility("default"))) int execle(const char* path, const char* arg, ...) noexcept {
  va_list ap;
  va_start(ap, arg);
  int n = CountArgs(arg, ap);
  va_end(ap);
  char* argv[n + 1];
  va_start(ap, arg);
  FillArgv(arg, &ap, n, argv);
  if (n > 0)
    (void)va_arg(ap, const char*);  // the null after the arguments (arg itself when n == 0)
  char* const* envp = va_arg(ap, char* const*);
  va_end(ap);
  return execve(path, argv, envp);
}

// posix_spawn ends nothing: the child is a new image (it loads LD_PRELOAD and opens its own stream
// if it is traced), the parent goes on. Libc's posix_spawn runs the child on the parent's memory
// until its exec (CLONE_VFORK): nothing of ours runs there. The parent asks the drain thread to
// write what it has (no wait), so what led up to the spawn is on disk if the parent is then killed.
__attribute__((visibility("default"))) int posix_spawn(pid_t* pid,
                                                       const char* path,
                                                       const posix_spawn_file_actions_t* actions,
                                                       const posix_spawnattr_t* attr,
                                                       char* const argv[],
                                                       char* const envp[]) {  // no noexcept: glibc declares it without __THROW (clang rejects the mismatch); nothing here throws
  RequestWrite();
  auto f = Real<SpawnFn>(g_real_spawn, "posix_spawn");
  return f != nullptr ? f(pid, path, actions, attr, argv, envp) : ENOSYS;
}

__attribute__((visibility("default"))) int posix_spawnp(pid_t* pid,
                                                        const char* file,
                                                        const posix_spawn_file_actions_t* actions,
                                                        const posix_spawnattr_t* attr,
                                                        char* const argv[],
                                                        char* const envp[]) {  // no noexcept: glibc declares it without __THROW (clang rejects the mismatch); nothing here throws
  RequestWrite();
  auto f = Real<SpawnFn>(g_real_spawnp, "posix_spawnp");
  return f != nullptr ? f(pid, file, actions, attr, argv, envp) : ENOSYS;
}

}  // extern "C"
