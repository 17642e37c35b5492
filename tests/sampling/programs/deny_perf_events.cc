// deny_perf_events PROGRAM [ARGS...]: runs PROGRAM with perf_event_open refused by a seccomp filter
// (EACCES), as Docker's default seccomp profile does — a test double of a locked-down container for
// tests/sampling/. Every other system call is allowed. The filter survives exec (no_new_privs).
// DENY_PERF_PRELOAD, when set, becomes the program's LD_PRELOAD (so that gtrace is loaded into the
// program only, not into this launcher).
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: deny_perf_events PROGRAM [ARGS...]\n");
    return 2;
  }
  sock_filter filter[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_perf_event_open, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EACCES & SECCOMP_RET_DATA)),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  sock_fprog prog = {static_cast<unsigned short>(sizeof(filter) / sizeof(filter[0])), filter};
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0) {
    std::perror("deny_perf_events: seccomp");
    return 3;
  }
  if (const char* preload = getenv("DENY_PERF_PRELOAD"))
    setenv("LD_PRELOAD", preload, 1);
  execv(argv[1], argv + 1);
  std::perror("deny_perf_events: execv");
  return 4;
}
