// exit_bench PENDING ITERATIONS [raw]: the cost of _exit in a forked child, as its parent sees it (issue 14).
// Run once plain and once under LD_PRELOAD=libgtrace.so (bench/exit_cost/run.sh alternates them).
// Each iteration forks a child that records NVTX ranges and calls _exit(0); the child notes the
// CLOCK_MONOTONIC time just before _exit in shared memory, the parent the time waitpid returns. The
// difference is what _exit costs: the kernel's exit and reap (the floor, measured plain) plus, with
// gtrace, the end mark (drain, end-of-stream chunk, write, wait).
//   PENDING = none:  the child records one range, then waits 60 ms (GTRACE_FLUSH_MS=10 in run.sh):
//                    its session is up and everything is written; nothing is pending at _exit
//   PENDING = 1mib:  the child records 8192 push/pop pairs (16384 records x 64 bytes = 1 MiB of
//                    ring) and calls _exit at once
//   PENDING = nosession: the child records nothing (under gtrace: no session, no drain thread)
//   raw: the child ends by syscall(SYS_exit_group) instead of _exit, which gtrace does not see: the
//        teardown of a traced process (its drain thread, its ring memory) without the end mark
// Prints one line: pending=... median_us=... p90_us=... min_us=...
#include <nvtx3/nvToolsExt.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

uint64_t Now() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: exit_bench none|1mib ITERATIONS\n");
    return 2;
  }
  bool mib = std::strcmp(argv[1], "1mib") == 0;
  bool none = std::strcmp(argv[1], "none") == 0;
  bool raw = argc > 3 && std::strcmp(argv[3], "raw") == 0;
  int iterations = std::atoi(argv[2]);
  auto* before_exit_ns =
      static_cast<volatile uint64_t*>(mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0));
  std::vector<double> us;
  for (int i = 0; i < iterations; ++i) {
    pid_t pid = fork();
    if (pid == 0) {
      if (mib) {
        for (int k = 0; k < 8192; ++k) {
          nvtxRangePushA("pending");
          nvtxRangePop();
        }
      } else if (none) {
        nvtxRangePushA("one");
        nvtxRangePop();
        timespec wait{0, 60000000};
        nanosleep(&wait, nullptr);
      }
      *before_exit_ns = Now();
      if (raw)
        syscall(SYS_exit_group, 0);
      _exit(0);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    uint64_t reaped = Now();
    us.push_back(static_cast<double>(reaped - *before_exit_ns) / 1000.0);
  }
  std::sort(us.begin(), us.end());
  std::printf("pending=%s median_us=%.1f p90_us=%.1f min_us=%.1f\n", argv[1], us[us.size() / 2], us[us.size() * 9 / 10],
              us[0]);
  return 0;
}
