// Interposed libc functions of OS runtime tracing, part 1: locks, condition variables, semaphores,
// joins, sleeps and processes. Exported by libgtrace.so (gtrace.map), so, preloaded, these come
// before libc's; each calls libc's function with the same arguments (osrt_interpose.h) and returns
// its result with its errno. Called by any application thread; see osrt_tracer.h for the rules.
//
// Fallbacks (used only when libc's function cannot be resolved because this thread is inside
// dlsym already — an allocator that locks a pthread mutex while dlsym allocates): the lock functions
// spin on the trylock variant (not interposed), sleeps and waits use the system call, the rest fail
// with ENOSYS. None of them can be reached after our constructor resolved everything.
#undef _FORTIFY_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "inject/osrt/osrt_interpose.h"

namespace {

int SpinLock(pthread_mutex_t* m) {
  int rc;
  while ((rc = pthread_mutex_trylock(m)) == EBUSY)
    sched_yield();
  return rc;
}

}  // namespace

// ---- pthread mutexes, rwlocks, spinlocks (not cancellation points: glibc declares them __THROW) ----
GT_OSRT_DEFINE(int, pthread_mutex_lock, (pthread_mutex_t * m), (m), noexcept, return SpinLock(m))
GT_OSRT_DEFINE(int, pthread_mutex_timedlock, (pthread_mutex_t* __restrict m, const struct timespec* __restrict t),
               (m, t), noexcept, return SpinLock(m))
GT_OSRT_DEFINE(int, pthread_mutex_clocklock,
               (pthread_mutex_t* __restrict m, clockid_t c, const struct timespec* __restrict t), (m, c, t), noexcept,
               return SpinLock(m))
GT_OSRT_DEFINE(int, pthread_rwlock_rdlock, (pthread_rwlock_t * l), (l), noexcept, return EAGAIN)
GT_OSRT_DEFINE(int, pthread_rwlock_wrlock, (pthread_rwlock_t * l), (l), noexcept, return EAGAIN)
GT_OSRT_DEFINE(int, pthread_rwlock_timedrdlock,
               (pthread_rwlock_t* __restrict l, const struct timespec* __restrict t), (l, t), noexcept,
               return EAGAIN)
GT_OSRT_DEFINE(int, pthread_rwlock_timedwrlock,
               (pthread_rwlock_t* __restrict l, const struct timespec* __restrict t), (l, t), noexcept,
               return EAGAIN)
GT_OSRT_DEFINE(int, pthread_rwlock_clockrdlock,
               (pthread_rwlock_t* __restrict l, clockid_t c, const struct timespec* __restrict t), (l, c, t),
               noexcept, return EAGAIN)
GT_OSRT_DEFINE(int, pthread_rwlock_clockwrlock,
               (pthread_rwlock_t* __restrict l, clockid_t c, const struct timespec* __restrict t), (l, c, t),
               noexcept, return EAGAIN)
GT_OSRT_DEFINE(int, pthread_spin_lock, (pthread_spinlock_t * l), (l), noexcept, return EAGAIN)
GT_OSRT_DEFINE(int, pthread_barrier_wait, (pthread_barrier_t * b), (b), noexcept, return EINVAL)

// ---- condition variables, joins, semaphores (cancellation points: not noexcept) ----
GT_OSRT_DEFINE(int, pthread_cond_wait, (pthread_cond_t* __restrict c, pthread_mutex_t* __restrict m), (c, m), ,
               return EINVAL)
GT_OSRT_DEFINE(int, pthread_cond_timedwait,
               (pthread_cond_t* __restrict c, pthread_mutex_t* __restrict m, const struct timespec* __restrict t),
               (c, m, t), , return EINVAL)
GT_OSRT_DEFINE(int, pthread_cond_clockwait,
               (pthread_cond_t* __restrict c, pthread_mutex_t* __restrict m, clockid_t k,
                const struct timespec* __restrict t),
               (c, m, k, t), , return EINVAL)
GT_OSRT_DEFINE(int, pthread_join, (pthread_t t, void** r), (t, r), , return EINVAL)
GT_OSRT_DEFINE(int, sem_wait, (sem_t * s), (s), , GT_OSRT_NOSYS(-1))
GT_OSRT_DEFINE(int, sem_timedwait, (sem_t* __restrict s, const struct timespec* __restrict t), (s, t), ,
               GT_OSRT_NOSYS(-1))
GT_OSRT_DEFINE(int, sem_clockwait, (sem_t* __restrict s, clockid_t c, const struct timespec* __restrict t),
               (s, c, t), , GT_OSRT_NOSYS(-1))

// ---- sleeps (cancellation points) ----
GT_OSRT_DEFINE(unsigned int, sleep, (unsigned int s), (s), , {
  struct timespec ts = {static_cast<time_t>(s), 0};
  return ::syscall(SYS_nanosleep, &ts, &ts) == 0 ? 0u : static_cast<unsigned int>(ts.tv_sec);
})
GT_OSRT_DEFINE(int, usleep, (useconds_t us), (us), , {
  struct timespec ts = {static_cast<time_t>(us / 1000000), static_cast<long>(us % 1000000) * 1000};
  GT_OSRT_SYSCALL(int, SYS_nanosleep, &ts, nullptr);
})
GT_OSRT_DEFINE(int, nanosleep, (const struct timespec* r, struct timespec* rem), (r, rem), ,
               GT_OSRT_SYSCALL(int, SYS_nanosleep, r, rem))
GT_OSRT_DEFINE(int, clock_nanosleep, (clockid_t c, int f, const struct timespec* r, struct timespec* rem),
               (c, f, r, rem), , {
                 // clock_nanosleep returns the error number instead of setting errno.
                 int saved_errno = errno;
                 int rc = static_cast<int>(::syscall(SYS_clock_nanosleep, c, f, r, rem));
                 int err = rc == 0 ? 0 : errno;
                 errno = saved_errno;
                 return err;
               })

// ---- processes ----
// fork: recorded in the parent only (the child has a copy of the parent's ring state, abandoned).
extern "C" __attribute__((visibility("default"))) GT_OSRT_NO_ASAN pid_t fork() noexcept {
  using Fn = pid_t (*)();
  Fn real = reinterpret_cast<Fn>(gt::osrt::RealFunction(gt::osrt::kFn_fork));
  if (__builtin_expect(real == nullptr, 0)) {
    GT_OSRT_NOSYS(-1);
  }
  if (!gt::IsEnabled(gt::kSourceOsrt) || gt::t_gt_thread.internal || gt::osrt::t_in_osrt)
    return real();
  const bool ticks = gt::StreamClockIsTicks();
  uint64_t start_ns = ticks ? gt::ReadTicks() : gt::NowNs();
  pid_t pid = real();
  if (pid == 0)
    return pid;
  uint64_t end_ns = ticks ? gt::ReadTicks() : gt::NowNs();
  if (end_ns - start_ns >= gt::osrt::g_threshold_ns.load(std::memory_order_relaxed)) {
    int saved_errno = errno;
    gt::osrt::WriteCall(gt::osrt::kFn_fork, start_ns, end_ns, pid);
    errno = saved_errno;
  }
  return pid;
}
GT_OSRT_DEFINE(pid_t, wait, (int* s), (s), , GT_OSRT_SYSCALL(pid_t, SYS_wait4, -1, s, 0, nullptr))
GT_OSRT_DEFINE(pid_t, waitpid, (pid_t p, int* s, int o), (p, s, o), , GT_OSRT_SYSCALL(pid_t, SYS_wait4, p, s, o, nullptr))
GT_OSRT_DEFINE(int, waitid, (idtype_t t, id_t i, siginfo_t* s, int o), (t, i, s, o), ,
               GT_OSRT_SYSCALL(int, SYS_waitid, t, i, s, o, nullptr))
GT_OSRT_DEFINE(pid_t, wait3, (int* s, int o, struct rusage* u), (s, o, u), noexcept,
               GT_OSRT_SYSCALL(pid_t, SYS_wait4, -1, s, o, u))
GT_OSRT_DEFINE(pid_t, wait4, (pid_t p, int* s, int o, struct rusage* u), (p, s, o, u), noexcept,
               GT_OSRT_SYSCALL(pid_t, SYS_wait4, p, s, o, u))
GT_OSRT_DEFINE(int, system, (const char* c), (c), , GT_OSRT_NOSYS(-1))
