// Shared set-up of the traced-program tests: design in traced_export.h.
#include "tests/common/traced_export.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstring>

namespace gt::test {

std::string PerfEventRefusal() {
  perf_event_attr attr;
  std::memset(&attr, 0, sizeof(attr));
  attr.size = sizeof(attr);
  attr.type = PERF_TYPE_SOFTWARE;
  attr.config = PERF_COUNT_SW_CPU_CLOCK;
  attr.sample_period = 1000000;
  attr.exclude_kernel = 1;
  attr.exclude_hv = 1;
  attr.disabled = 1;
  int fd = static_cast<int>(syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0));
  if (fd >= 0) {
    close(fd);
    return "";
  }
  return std::string("perf_event_open refused on this machine (") + std::strerror(errno) +
         "): check /proc/sys/kernel/perf_event_paranoid (<= 2) and seccomp";
}

RunResult CliExport(const std::vector<std::string>& streams, const std::string& db) {
  std::vector<std::string> cmd = {CliPath(), "export", "-o", db};
  cmd.insert(cmd.end(), streams.begin(), streams.end());
  return RunProgram(cmd);
}

}  // namespace gt::test
