#include "collector/high_fd.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

namespace gt {

int MoveFdHigh(int fd) {
  if (fd < 0) return fd;
  rlimit rl{};
  rlim_t limit = 1024;
  if (::getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < limit) {
    limit = rl.rlim_cur;
  }
  // Below the limit every process has (1024 soft on most systems): select()-sized programs and
  // `for fd in 3..1023` loops still see it, which StreamWriter's identity check covers.
  long floor = static_cast<long>(limit) - 64;
  if (floor <= fd) return fd;
  int high = ::fcntl(fd, F_DUPFD_CLOEXEC, static_cast<int>(floor));
  if (high < 0) return fd;
  ::close(fd);
  return high;
}

}  // namespace gt
