// exit_modes MODE N: records N NVTX push/pop ranges, then ends the way MODE says (issue 14). Every
// range is recorded well inside one flush interval, so without gtrace's end handling none would
// reach the stream. Range names say which image/part recorded them.
//   fork_exit        forks; the child records N "child" ranges and calls _exit(0); the parent N "parent"
//   exec             N "before-exec", then execv(self, "target", N): the new image records N "target"
//   target           (exec'd/spawned) N "target", normal exit 0
//   exec_fail        N "before", execv of a missing file (ENOENT, printed), N "after", exit 0
//   spawn            N "parent", posix_spawn(self, "target", N), waits, N "parent-after", exit 0
//   abort            N "before", abort(): ends by SIGABRT
//   abort_handler    a SIGABRT handler that calls _exit(42); N "before", abort()
//   segv             N "before", a store to a PROT_NONE page: ends by SIGSEGV (default action)
//   segv_longjmp     a SIGSEGV handler (installed first) that siglongjmps back; N "before", the
//                    fault, N "after", exit 0
//   signal_exit      a SIGUSR1 handler that calls _exit(9); N "before", raise(SIGUSR1)
//   threads_exit     4 threads record N "thread" ranges each, then all call _exit(5) at once
//   signal_exit_wait N "before", then sleeps 30 s (the test SIGKILLs it: a cut stream)
// Core dumps are switched off (RLIMIT_CORE 0) so crashing modes leave no files behind.
#include <errno.h>
#include <nvtx3/nvToolsExt.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <spawn.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <string>

extern char** environ;

namespace {

int g_n = 0;
sigjmp_buf g_jump;
std::atomic<int> g_ready{0};

void Ranges(const char* name, int n) {
  for (int i = 0; i < n; ++i) {
    nvtxRangePushA(name);
    nvtxRangePop();
  }
}

// A store to a page with no access: SIGSEGV (SEGV_ACCERR) without undefined behaviour.
void Fault() {
  void* page = mmap(nullptr, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  *static_cast<volatile int*>(page) = 1;
}

void ExitHandler(int sig) {
  _exit(sig == SIGUSR1 ? 9 : 42);
}
void JumpHandler(int) {
  siglongjmp(g_jump, 1);
}

void* ThreadMain(void*) {
  Ranges("thread", g_n);
  g_ready.fetch_add(1);
  while (g_ready.load() < 4) {
  }
  _exit(5);
}

std::string Self() {
  char buf[4096];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: exit_modes MODE N\n");
    return 2;
  }
  std::string mode = argv[1];
  g_n = std::atoi(argv[2]);
  rlimit no_core{0, 0};
  setrlimit(RLIMIT_CORE, &no_core);
  if (mode == "fork_exit") {
    Ranges("parent", g_n);
    pid_t pid = fork();
    if (pid == 0) {
      Ranges("child", g_n);
      _exit(0);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    std::printf("child status %d\n", WEXITSTATUS(status));
    return 0;
  }
  if (mode == "exec") {
    Ranges("before-exec", g_n);
    std::fflush(stdout);
    std::string self = Self();
    execl(self.c_str(), self.c_str(), "target", argv[2], static_cast<char*>(nullptr));
    std::printf("exec failed: %s\n", strerror(errno));
    return 1;
  }
  if (mode == "target") {
    Ranges("target", g_n);
    std::printf("target %d\n", getpid());
    return 0;
  }
  if (mode == "exec_fail") {
    Ranges("before", g_n);
    char* args[] = {const_cast<char*>("/nonexistent/program"), nullptr};
    errno = 0;
    int rc = execv(args[0], args);
    std::printf("execv returned %d errno %s\n", rc, errno == ENOENT ? "ENOENT" : strerror(errno));
    Ranges("after", g_n);
    return 0;
  }
  if (mode == "spawn") {
    Ranges("parent", g_n);
    std::string self = Self();
    char* args[] = {const_cast<char*>(self.c_str()), const_cast<char*>("target"), argv[2], nullptr};
    pid_t pid = 0;
    int rc = posix_spawn(&pid, self.c_str(), nullptr, nullptr, args, environ);
    int status = 0;
    if (rc == 0)
      waitpid(pid, &status, 0);
    Ranges("parent-after", g_n);
    std::printf("spawn rc %d child status %d\n", rc, WEXITSTATUS(status));
    return 0;
  }
  if (mode == "abort") {
    Ranges("before", g_n);
    abort();
  }
  if (mode == "abort_handler") {
    Ranges("before", g_n);
    signal(SIGABRT, ExitHandler);  // after the session started: it replaces gtrace's handler
    abort();
  }
  if (mode == "segv") {
    Ranges("before", g_n);
    Fault();
    return 0;
  }
  if (mode == "segv_longjmp") {
    struct sigaction act {};
    act.sa_handler = JumpHandler;
    sigemptyset(&act.sa_mask);
    sigaction(SIGSEGV, &act, nullptr);  // before the first range: gtrace's handler chains to it
    Ranges("before", g_n);
    if (sigsetjmp(g_jump, 1) == 0) {
      Fault();
    }
    Ranges("after", g_n);
    std::printf("recovered\n");
    return 0;
  }
  if (mode == "signal_exit") {
    Ranges("before", g_n);
    signal(SIGUSR1, ExitHandler);
    raise(SIGUSR1);
    return 1;
  }
  if (mode == "signal_exit_wait") {
    Ranges("before", g_n);
    std::printf("ready\n");
    std::fflush(stdout);
    sleep(30);
    return 0;
  }
  if (mode == "threads_exit") {
    pthread_t t[4];
    for (pthread_t& th : t)
      pthread_create(&th, nullptr, ThreadMain, nullptr);
    for (pthread_t& th : t)
      pthread_join(th, nullptr);
    return 1;
  }
  std::fprintf(stderr, "exit_modes: unknown mode %s\n", mode.c_str());
  return 2;
}
