// fd_takeover: an application that does to its descriptor table what daemons, launchers and test
// harnesses do, between two blocks of NVTX ranges (issue 28, items 1 and 7).
//   fd_takeover low LOG       dup2 LOG over fds 3..19 and write one line through each
//   fd_takeover all LOG       dup2 LOG over every fd from 3 to the soft limit, one line through fd 3
//   fd_takeover closefrom -   close every fd from 3 to the soft limit
//   fd_takeover delete DIR    remove every *.gtrace file in DIR (a cleanup job)
// Each block is 500 ranges ("before", then "after") with a pause between for a flush.
#include <dirent.h>
#include <fcntl.h>
#include <nvtx3/nvToolsExt.h>
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>

namespace {

void Block(const char* name) {
  for (int i = 0; i < 500; ++i) {
    nvtxRangePushA(name);
    nvtxRangePop();
  }
}

int SoftLimit() {
  rlimit rl{};
  if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur > 4096) return 4096;
  return static_cast<int>(rl.rlim_cur);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: fd_takeover low|all|closefrom|delete ARG\n");
    return 2;
  }
  std::string mode = argv[1];
  const char* arg = argv[2];
  Block("before");
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // GTRACE_FLUSH_MS=50: written by now
  if (mode == "low" || mode == "all") {
    int log = open(arg, O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (log < 0) return 3;
    int last = mode == "low" ? 19 : SoftLimit() - 1;
    for (int fd = 3; fd <= last; ++fd) {
      if (fd != log) dup2(log, fd);
    }
    if (log > last) close(log);
    int lines = mode == "low" ? 17 : 1;
    for (int fd = 3; fd < 3 + lines; ++fd) {
      if (write(fd, "app\n", 4) != 4) return 4;
    }
  } else if (mode == "closefrom") {
    for (int fd = 3, last = SoftLimit(); fd < last; ++fd) close(fd);
  } else if (mode == "delete") {
    DIR* d = opendir(arg);
    if (d == nullptr) return 3;
    while (dirent* e = readdir(d)) {
      size_t n = std::strlen(e->d_name);
      if (n > 7 && std::strcmp(e->d_name + n - 7, ".gtrace") == 0) unlink((std::string(arg) + "/" + e->d_name).c_str());
    }
    closedir(d);
  } else {
    return 2;
  }
  Block("after");
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  std::printf("done\n");
  return 0;
}
