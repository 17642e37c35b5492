// fork_child: the parent records "parent-before", forks; the child records "child-range" and
// exits; the parent records "parent-after". Each process must get its own stream with only its
// own ranges.
#include <nvtx3/nvToolsExt.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>

int main() {
  nvtxRangePushA("parent-before");
  nvtxRangePop();
  pid_t pid = fork();
  if (pid == 0) {
    nvtxRangePushA("child-range");
    nvtxRangePop();
    std::printf("child %d\n", getpid());
    return 0;
  }
  int status = 0;
  waitpid(pid, &status, 0);
  nvtxRangePushA("parent-after");
  nvtxRangePop();
  std::printf("parent %d child %d status %d\n", getpid(), pid, WEXITSTATUS(status));
  return 0;
}
