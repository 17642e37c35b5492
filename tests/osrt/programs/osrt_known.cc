// A program with known blocking calls, for tests/osrt/osrt_integration_test.cc:
//   1. main's pthread_mutex_lock waits >= 5 ms: a holder thread takes the mutex, waits until main
//      sleeps in its pthread_mutex_lock, then keeps the mutex during usleep(5000);
//   2. main's read of a pipe waits ~20 ms: a writer thread sleeps 20 ms (clock_nanosleep), then
//      writes one byte;
//   3. main's nanosleep of 10 ms;
// (the helpers sleep rather than busy-wait: on a loaded machine with few cores a busy-waiting
// holder can be descheduled before main even sees the mutex taken; the helpers' sleeps are two
// more known long calls, under other names and on other threads)
// plus fast calls that must stay under a millisecond-scale threshold: kFastLocks uncontended
// pthread_mutex_lock/unlock pairs, kFastWrites writes to /dev/null and kFastReads reads of a pipe
// that has data. The helpers' libc calls: holder pthread_mutex_lock (uncontended) + usleep, writer
// clock_nanosleep + write.
// Prints "done" through stdio (glibc's internal write is not interposed).
#include <fcntl.h>
#include <sys/syscall.h>
#include <pthread.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include <sched.h>
#include <string.h>

#include <atomic>
#include <cstdint>

namespace {

constexpr int kFastLocks = 2000;
constexpr int kFastWrites = 200;
constexpr int kFastReads = 200;

pthread_mutex_t g_mutex = PTHREAD_MUTEX_INITIALIZER;
pid_t g_main_tid;
std::atomic<bool> g_held{false};
int g_pipe[2];

uint64_t NowNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

void BusyWaitNs(uint64_t ns) {
  uint64_t end = NowNs() + ns;
  while (NowNs() < end) {
  }
}

// True when the main thread sleeps in the kernel (state S in /proc/self/task/TID/stat). Raw system
// calls: these reads are not interposed, so they are not calls of the program under test.
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
  const char* paren = strrchr(buf, ')');  // "tid (comm) S ..."
  return paren != nullptr && paren[1] == ' ' && paren[2] == 'S';
}

void* Holder(void*) {
  pthread_mutex_lock(&g_mutex);
  g_held.store(true);
  // Main spins (sched_yield) until it sees the mutex taken, then blocks in pthread_mutex_lock: wait
  // until it sleeps there, so the 5 ms below are all inside its lock call even on a loaded machine.
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

int main() {
  // 1. A mutex held 5 ms by another thread.
  g_main_tid = static_cast<pid_t>(syscall(SYS_gettid));
  pthread_t holder;
  pthread_create(&holder, nullptr, Holder, nullptr);
  while (!g_held.load())
    sched_yield();
  pthread_mutex_lock(&g_mutex);
  pthread_mutex_unlock(&g_mutex);
  pthread_join(holder, nullptr);  // the holder has unlocked already: short

  // 2. A 20 ms read from a pipe.
  if (pipe(g_pipe) != 0)
    return 2;
  pthread_t writer;
  pthread_create(&writer, nullptr, Writer, nullptr);
  char c;
  if (read(g_pipe[0], &c, 1) != 1)
    return 3;
  BusyWaitNs(1000000);            // the writer is done before the join
  pthread_join(writer, nullptr);

  // 3. A 10 ms nanosleep.
  timespec ten_ms = {0, 10000000};
  nanosleep(&ten_ms, nullptr);

  // Fast calls.
  for (int i = 0; i < kFastLocks; ++i) {
    pthread_mutex_lock(&g_mutex);
    pthread_mutex_unlock(&g_mutex);
  }
  int null_fd = open("/dev/null", O_WRONLY);
  for (int i = 0; i < kFastWrites; ++i)
    (void)!write(null_fd, "y", 1);
  for (int i = 0; i < kFastReads; ++i) {
    (void)!write(g_pipe[1], "z", 1);
    (void)!read(g_pipe[0], &c, 1);
  }
  printf("done\n");
  return 0;
}
