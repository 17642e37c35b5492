// Calls every kind of interposed libc function in ways that succeed, fail (each with its errno), are
// interrupted by a signal (EINTR) or are cancelled (pthread_cancel of a thread blocked in read,
// nanosleep, pthread_cond_wait), and prints one deterministic line per call: result and errno. The
// test (osrt_integration_test.cc) runs it without gtrace and under LD_PRELOAD with -t osrt and a
// threshold of 0 (every call goes through the recording path) and compares the two outputs byte for
// byte. errno is preset to a sentinel (77) before each call, so "errno unchanged by a successful
// call" is compared too.
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <string>

namespace {

std::string g_dir;

void Line(const char* what, long long rc, int err) {
  printf("%-34s rc=%lld errno=%d\n", what, rc, err);
}
#define CHECK(what, expr)        \
  do {                           \
    errno = 77;                  \
    long long rc_ = (long long)(expr); \
    Line(what, rc_, errno);      \
  } while (0)
// Functions that return an error number instead of setting errno.
#define CHECK_RC(what, expr)     \
  do {                           \
    errno = 77;                  \
    int rc_ = (expr);            \
    Line(what, rc_, errno);      \
  } while (0)

timespec InMs(int ms) {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  ts.tv_nsec += static_cast<long>(ms) * 1000000L;
  ts.tv_sec += ts.tv_nsec / 1000000000L;
  ts.tv_nsec %= 1000000000L;
  return ts;
}

void OnAlarm(int) {}

// Arms SIGALRM (no SA_RESTART) to fire once after `ms`.
void AlarmIn(int ms) {
  struct sigaction sa {};
  sa.sa_handler = OnAlarm;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0;
  sigaction(SIGALRM, &sa, nullptr);
  itimerval it{};
  it.it_value.tv_sec = ms / 1000;
  it.it_value.tv_usec = (ms % 1000) * 1000;
  setitimer(ITIMER_REAL, &it, nullptr);
}

void Locks() {
  pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
  CHECK_RC("pthread_mutex_lock", pthread_mutex_lock(&m));
  timespec t = InMs(5);
  CHECK_RC("pthread_mutex_timedlock held", pthread_mutex_timedlock(&m, &t));  // normal mutex, owner: ETIMEDOUT
  pthread_mutex_unlock(&m);
  pthread_mutexattr_t a;
  pthread_mutexattr_init(&a);
  pthread_mutexattr_settype(&a, PTHREAD_MUTEX_ERRORCHECK);
  pthread_mutex_t e;
  pthread_mutex_init(&e, &a);
  CHECK_RC("errorcheck lock", pthread_mutex_lock(&e));
  CHECK_RC("errorcheck relock", pthread_mutex_lock(&e));  // EDEADLK
  t = InMs(5);
  CHECK_RC("pthread_mutex_clocklock", pthread_mutex_clocklock(&e, CLOCK_REALTIME, &t));  // EDEADLK
  pthread_mutex_unlock(&e);

  pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
  CHECK_RC("pthread_rwlock_rdlock", pthread_rwlock_rdlock(&rw));
  t = InMs(5);
  CHECK_RC("pthread_rwlock_timedwrlock", pthread_rwlock_timedwrlock(&rw, &t));  // read-held: ETIMEDOUT or EDEADLK
  pthread_rwlock_unlock(&rw);
  CHECK_RC("pthread_rwlock_wrlock", pthread_rwlock_wrlock(&rw));
  t = InMs(5);
  CHECK_RC("pthread_rwlock_timedrdlock", pthread_rwlock_timedrdlock(&rw, &t));
  pthread_rwlock_unlock(&rw);

  pthread_spinlock_t sp;
  pthread_spin_init(&sp, 0);
  CHECK_RC("pthread_spin_lock", pthread_spin_lock(&sp));
  pthread_spin_unlock(&sp);

  pthread_cond_t c = PTHREAD_COND_INITIALIZER;
  pthread_mutex_lock(&m);
  t = InMs(5);
  CHECK_RC("pthread_cond_timedwait", pthread_cond_timedwait(&c, &m, &t));  // ETIMEDOUT
  t = InMs(5);
  CHECK_RC("pthread_cond_clockwait", pthread_cond_clockwait(&c, &m, CLOCK_REALTIME, &t));
  pthread_mutex_unlock(&m);

  sem_t s;
  sem_init(&s, 0, 1);
  CHECK("sem_wait posted", sem_wait(&s));
  t = InMs(5);
  CHECK("sem_timedwait empty", sem_timedwait(&s, &t));  // -1 ETIMEDOUT
  timespec bad = {0, 2000000000L};
  CHECK("sem_timedwait bad time", sem_timedwait(&s, &bad));  // -1 EINVAL
  t = InMs(5);
  CHECK("sem_clockwait empty", sem_clockwait(&s, CLOCK_REALTIME, &t));
  pthread_barrier_t b;
  pthread_barrier_init(&b, nullptr, 1);
  CHECK_RC("pthread_barrier_wait", pthread_barrier_wait(&b) == PTHREAD_BARRIER_SERIAL_THREAD);
}

void Sleeps() {
  CHECK("sleep 0", sleep(0));
  CHECK("usleep 100", usleep(100));
  timespec ts = {0, 100000};
  CHECK("nanosleep", nanosleep(&ts, nullptr));
  timespec bad = {0, -1};
  CHECK("nanosleep EINVAL", nanosleep(&bad, nullptr));
  CHECK_RC("clock_nanosleep", clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, nullptr));
  CHECK_RC("clock_nanosleep EINVAL", clock_nanosleep(CLOCK_MONOTONIC, 0, &bad, nullptr));  // returns EINVAL
  // EINTR: a signal interrupts the sleep.
  AlarmIn(20);
  timespec second = {1, 0}, rem = {0, 0};
  CHECK("nanosleep EINTR", nanosleep(&second, &rem));
  printf("nanosleep EINTR rem>0: %d\n", rem.tv_sec > 0 || rem.tv_nsec > 0);
  AlarmIn(20);
  CHECK_RC("clock_nanosleep EINTR", clock_nanosleep(CLOCK_MONOTONIC, 0, &second, &rem));
  AlarmIn(20);
  unsigned left = sleep(2);
  printf("sleep EINTR left>0: %d\n", left > 0);
}

void Files() {
  std::string path = g_dir + "/f";
  CHECK("open ENOENT", open((g_dir + "/missing/x").c_str(), O_RDONLY));
  int fd = open(path.c_str(), O_CREAT | O_RDWR | O_TRUNC, 0640);
  Line("open O_CREAT", fd >= 0, errno);
  struct stat st;
  fstat(fd, &st);
  printf("mode %o\n", st.st_mode & 0777);  // the variadic mode reached libc (umask 022 set by main)
  CHECK("write", write(fd, "hello", 5));
  CHECK("pwrite", pwrite(fd, "XY", 2, 1));
  char buf[16] = {};
  CHECK("pread", pread(fd, buf, 5, 0));
  printf("content %s\n", buf);
  iovec v[2] = {{buf, 2}, {buf + 2, 3}};
  lseek(fd, 0, SEEK_SET);
  CHECK("readv", readv(fd, v, 2));
  CHECK("writev", writev(fd, v, 2));
  CHECK("preadv", preadv(fd, v, 2, 0));
  CHECK("pwritev", pwritev(fd, v, 2, 0));
  CHECK("fsync", fsync(fd));
  CHECK("fdatasync", fdatasync(fd));
  CHECK("fcntl F_GETFL", fcntl(fd, F_GETFL) & O_ACCMODE);
  CHECK("fcntl F_SETFD", fcntl(fd, F_SETFD, FD_CLOEXEC));
  CHECK("fcntl F_GETFD", fcntl(fd, F_GETFD));
  CHECK("fcntl EBADF", fcntl(-1, F_GETFL));
  CHECK("ioctl ENOTTY", ioctl(fd, TIOCGWINSZ, buf));
  CHECK("ioctl EBADF", ioctl(-1, FIONREAD, buf));
  int dirfd = open(g_dir.c_str(), O_RDONLY | O_DIRECTORY);
  int fd2 = openat(dirfd, "g", O_CREAT | O_WRONLY, 0600);
  Line("openat O_CREAT", fd2 >= 0, errno);
  fstat(fd2, &st);
  printf("mode %o\n", st.st_mode & 0777);
  CHECK("openat ENOENT", openat(dirfd, "nope/x", O_RDONLY));
  int fd3 = creat((g_dir + "/h").c_str(), 0604);
  fstat(fd3, &st);
  printf("creat mode %o\n", st.st_mode & 0777);
  CHECK("dup2", dup2(fd, 100));
  CHECK("close", close(100));
  CHECK("close EBADF", close(100));
  CHECK("read EBADF", read(100, buf, 1));
  CHECK("write EBADF", write(100, buf, 1));
  close(fd);
  close(fd2);
  close(fd3);
  close(dirfd);

  FILE* f = fopen(path.c_str(), "r");
  Line("fopen", f != nullptr, errno);
  CHECK("fread", fread(buf, 1, 5, f));
  CHECK("fgets", fgets(buf, sizeof(buf), f) == nullptr);
  CHECK("fclose", fclose(f));
  errno = 77;
  FILE* missing = fopen((g_dir + "/missing/y").c_str(), "r");
  Line("fopen ENOENT", missing != nullptr, errno);
  f = fopen((g_dir + "/w").c_str(), "w");
  CHECK("fwrite", fwrite("abc", 1, 3, f));
  CHECK("fflush", fflush(f));
  f = freopen(path.c_str(), "r", f);
  Line("freopen", f != nullptr, errno);
  CHECK("fclose", fclose(f));
  int p[2];
  CHECK("pipe", pipe(p));
  f = fdopen(p[0], "r");
  Line("fdopen", f != nullptr, errno);
  fclose(f);
  close(p[1]);
  CHECK("pipe2", pipe2(p, O_CLOEXEC));
  // EPIPE: the read end is closed (SIGPIPE ignored by main).
  close(p[0]);
  CHECK("write EPIPE", write(p[1], "x", 1));
  close(p[1]);
  // EINTR: a signal interrupts a read of an empty pipe.
  pipe(p);
  AlarmIn(20);
  CHECK("read EINTR", read(p[0], buf, 1));
  close(p[0]);
  close(p[1]);

  void* m = mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  Line("mmap", m != MAP_FAILED, errno);
  CHECK("mprotect", mprotect(m, 4096, PROT_READ));
  CHECK("msync", msync(m, 4096, MS_SYNC));
  CHECK("munmap", munmap(m, 4096));
  CHECK("mmap EINVAL", mmap(nullptr, 0, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) == MAP_FAILED);
  CHECK("munmap EINVAL", munmap(reinterpret_cast<void*>(1), 4096));
}

void Sockets() {
  int sv[2];
  CHECK("socketpair", socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
  char buf[8] = {};
  CHECK("send", send(sv[0], "ab", 2, 0));
  CHECK("recv", recv(sv[1], buf, sizeof(buf), 0));
  CHECK("sendto", sendto(sv[0], "cd", 2, 0, nullptr, 0));
  CHECK("recvfrom", recvfrom(sv[1], buf, sizeof(buf), 0, nullptr, nullptr));
  iovec v = {buf, 2};
  msghdr mh{};
  mh.msg_iov = &v;
  mh.msg_iovlen = 1;
  CHECK("sendmsg", sendmsg(sv[0], &mh, 0));
  CHECK("recvmsg", recvmsg(sv[1], &mh, 0));
  CHECK("recv EAGAIN", recv(sv[1], buf, sizeof(buf), MSG_DONTWAIT));
  CHECK("recv ENOTSOCK", recv(0 + 1000, buf, 1, 0));
  int pfd[2];
  pipe(pfd);
  CHECK("send ENOTSOCK", send(pfd[0], buf, 1, 0));
  close(pfd[0]);
  close(pfd[1]);
  CHECK("shutdown", shutdown(sv[0], SHUT_WR));
  close(sv[0]);
  close(sv[1]);

  int s = socket(AF_UNIX, SOCK_STREAM, 0);
  Line("socket", s >= 0, errno);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  snprintf(addr.sun_path, sizeof(addr.sun_path), "%s/sock", g_dir.c_str());
  CHECK("accept EINVAL", accept(s, nullptr, nullptr));
  CHECK("connect ENOENT", connect(s, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)));
  CHECK("bind", bind(s, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)));
  CHECK("listen", listen(s, 1));
  int c = socket(AF_UNIX, SOCK_STREAM, 0);
  CHECK("connect", connect(c, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)));
  int a = accept4(s, nullptr, nullptr, SOCK_CLOEXEC);
  Line("accept4", a >= 0, errno);
  mmsghdr mm{};
  mm.msg_hdr = mh;
  CHECK("sendmmsg", sendmmsg(c, &mm, 1, 0));
  CHECK("recvmmsg", recvmmsg(a, &mm, 1, 0, nullptr));
  close(a);
  close(c);
  close(s);
}

void Polls() {
  int p[2];
  pipe(p);
  pollfd pf = {p[0], POLLIN, 0};
  CHECK("poll timeout", poll(&pf, 1, 5));
  write(p[1], "x", 1);
  CHECK("poll ready", poll(&pf, 1, 5));
  timespec ts = {0, 1000000};
  CHECK("ppoll", ppoll(&pf, 1, &ts, nullptr));
  fd_set r;
  FD_ZERO(&r);
  FD_SET(p[0], &r);
  timeval tv = {0, 1000};
  CHECK("select", select(p[0] + 1, &r, nullptr, nullptr, &tv));
  CHECK("pselect", pselect(p[0] + 1, &r, nullptr, nullptr, &ts, nullptr));
  CHECK("select EBADF", select(1000, &r, nullptr, nullptr, &tv) < 0 ? -1 : 0);
  int ep = epoll_create1(0);
  epoll_event ev{};
  ev.events = EPOLLIN;
  epoll_ctl(ep, EPOLL_CTL_ADD, p[0], &ev);
  epoll_event out[2];
  CHECK("epoll_wait", epoll_wait(ep, out, 2, 5));
  CHECK("epoll_pwait", epoll_pwait(ep, out, 2, 5, nullptr));
  CHECK("epoll_wait EBADF", epoll_wait(-1, out, 2, 5));
  // EINTR: a signal interrupts a poll.
  char c;
  read(p[0], &c, 1);
  AlarmIn(20);
  CHECK("poll EINTR", poll(&pf, 1, 1000));
  close(ep);
  close(p[0]);
  close(p[1]);
}

void Processes() {
  int status = 0;
  CHECK("wait ECHILD", wait(&status));
  CHECK("waitpid ECHILD", waitpid(-1, &status, 0));
  pid_t pid = fork();
  if (pid == 0)
    _exit(7);
  Line("fork", pid > 0, errno);
  CHECK("waitpid", waitpid(pid, &status, 0) == pid);
  printf("exit status %d\n", WEXITSTATUS(status));
  pid = fork();
  if (pid == 0)
    _exit(8);
  siginfo_t si{};
  CHECK("waitid", waitid(P_PID, pid, &si, WEXITED));
  printf("waitid status %d\n", si.si_status);
  pid = fork();
  if (pid == 0)
    _exit(9);
  CHECK("wait4", wait4(pid, &status, 0, nullptr) == pid);
  pid = fork();
  if (pid == 0)
    _exit(10);
  CHECK("wait3", wait3(&status, 0, nullptr) == pid);
  printf("exit status %d\n", WEXITSTATUS(status));
  CHECK("system", system("exit 3") >> 8);
}

// ---- cancellation ----
int g_cancel_pipe[2];
pthread_mutex_t g_cm = PTHREAD_MUTEX_INITIALIZER;
pthread_cond_t g_cc = PTHREAD_COND_INITIALIZER;
volatile int g_cleanup_ran = 0;

void Cleanup(void*) {
  g_cleanup_ran = 1;
}
void UnlockCleanup(void*) {
  g_cleanup_ran = 1;
  pthread_mutex_unlock(&g_cm);  // the mutex is re-acquired before a cancelled cond wait unwinds
}

void* BlockedRead(void*) {
  pthread_cleanup_push(Cleanup, nullptr);
  char c;
  read(g_cancel_pipe[0], &c, 1);
  pthread_cleanup_pop(0);
  return reinterpret_cast<void*>(1);
}
void* BlockedSleep(void*) {
  pthread_cleanup_push(Cleanup, nullptr);
  timespec ts = {10, 0};
  nanosleep(&ts, nullptr);
  pthread_cleanup_pop(0);
  return reinterpret_cast<void*>(1);
}
void* BlockedCondWait(void*) {
  pthread_mutex_lock(&g_cm);
  pthread_cleanup_push(UnlockCleanup, nullptr);
  while (true)
    pthread_cond_wait(&g_cc, &g_cm);
  pthread_cleanup_pop(1);
  return reinterpret_cast<void*>(1);
}

void CancelOne(const char* what, void* (*fn)(void*)) {
  g_cleanup_ran = 0;
  pthread_t t;
  pthread_create(&t, nullptr, fn, nullptr);
  usleep(20000);  // let it block
  pthread_cancel(t);
  void* result = nullptr;
  int rc = pthread_join(t, &result);
  printf("cancel %-20s join=%d canceled=%d cleanup=%d\n", what, rc, result == PTHREAD_CANCELED, g_cleanup_ran);
}

void Cancellation() {
  pipe(g_cancel_pipe);
  CancelOne("read", BlockedRead);
  CancelOne("nanosleep", BlockedSleep);
  CancelOne("pthread_cond_wait", BlockedCondWait);
  // The mutex is free again after the cancelled wait's cleanup.
  CHECK_RC("mutex after cancel", pthread_mutex_trylock(&g_cm));
  pthread_mutex_unlock(&g_cm);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2)
    return 2;
  g_dir = argv[1];
  umask(022);
  signal(SIGPIPE, SIG_IGN);
  setvbuf(stdout, nullptr, _IONBF, 0);  // each line written at once (and the same way in both runs)
  Locks();
  Sleeps();
  Files();
  Sockets();
  Polls();
  Processes();
  Cancellation();
  printf("end\n");
  return 0;
}
