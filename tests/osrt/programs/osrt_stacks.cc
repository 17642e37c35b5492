// Planted blocking calls with known callers, for the OS runtime backtrace tests
// (tests/osrt/osrt_stack_test.cc). Built -O0 -g -fno-omit-frame-pointer, every function noinline, so
// each call's stack is main -> RunPlanted -> <Stage> -> libc, and the test reads the expected lines
// from the `// LINE:` markers:
//   1. LockStage: pthread_mutex_lock waits >= 5 ms for a holder thread that keeps the mutex during
//      usleep(5000) once main sleeps in the lock;
//   2. ReadStage: read of a pipe that a writer thread fills after a 20 ms clock_nanosleep;
//   3. NapStage: nanosleep of 10 ms;
// then kFastCalls fast lock/unlock pairs (under any millisecond backtrace threshold: no stack).
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <atomic>

namespace {

constexpr int kFastCalls = 500;

pthread_mutex_t g_mutex = PTHREAD_MUTEX_INITIALIZER;
pid_t g_main_tid;
std::atomic<bool> g_held{false};
int g_pipe[2];

// True when the main thread sleeps in the kernel (raw system calls: not interposed).
bool MainIsBlocked() {
  char path[64], buf[256];
  snprintf(path, sizeof(path), "/proc/self/task/%d/stat", static_cast<int>(g_main_tid));
  int fd = static_cast<int>(syscall(SYS_openat, AT_FDCWD, path, O_RDONLY));
  if (fd < 0)
    return false;
  long n = syscall(SYS_read, fd, buf, sizeof(buf) - 1);
  syscall(SYS_close, fd);
  if (n <= 0)
    return false;
  buf[n] = '\0';
  const char* paren = strrchr(buf, ')');
  return paren != nullptr && paren[1] == ' ' && paren[2] == 'S';
}

void* Holder(void*) {
  pthread_mutex_lock(&g_mutex);
  g_held.store(true);
  while (!MainIsBlocked())
    sched_yield();
  usleep(5000);
  pthread_mutex_unlock(&g_mutex);
  return nullptr;
}

void* Writer(void*) {
  timespec twenty_ms = {0, 20000000};
  clock_nanosleep(CLOCK_MONOTONIC, 0, &twenty_ms, nullptr);
  char c = 'x';
  (void)!write(g_pipe[1], &c, 1);
  return nullptr;
}

}  // namespace

// Outside the anonymous namespace: plain symbol names in the test's expectations.
__attribute__((noinline)) void LockStage() {
  pthread_mutex_lock(&g_mutex);  // LINE: lock
  pthread_mutex_unlock(&g_mutex);
}

__attribute__((noinline)) int ReadStage() {
  char c = 0;
  long n = read(g_pipe[0], &c, 1);  // LINE: read
  return n == 1 ? 0 : 3;
}

__attribute__((noinline)) void NapStage() {
  timespec ten_ms = {0, 10000000};
  nanosleep(&ten_ms, nullptr);  // LINE: nap
}

__attribute__((noinline)) int RunPlanted() {
  pthread_t holder;
  pthread_create(&holder, nullptr, Holder, nullptr);
  while (!g_held.load())
    sched_yield();
  LockStage();  // LINE: run-lock
  pthread_join(holder, nullptr);

  if (pipe(g_pipe) != 0)
    return 2;
  pthread_t writer;
  pthread_create(&writer, nullptr, Writer, nullptr);
  int rc = ReadStage();  // LINE: run-read
  pthread_join(writer, nullptr);
  if (rc != 0)
    return rc;

  NapStage();  // LINE: run-nap
  for (int i = 0; i < kFastCalls; ++i) {
    pthread_mutex_lock(&g_mutex);
    pthread_mutex_unlock(&g_mutex);
  }
  return 0;
}

int main() {
  g_main_tid = static_cast<pid_t>(syscall(SYS_gettid));
  int rc = RunPlanted();  // LINE: main
  printf("done\n");
  return rc;
}
