// stuck_drain: T threads push and pop N NVTX ranges each while gtrace's drain thread is stopped
// (issue 20: a full ring under GTRACE_FULL_RING=wait must never hang its producer when the drain
// thread cannot run). A helper process stops exactly that one thread with ptrace (PTRACE_SEIZE +
// PTRACE_INTERRUPT: the other threads run on) and lets it go after the burst.
//
//   stuck_drain [--pairs N] [--threads T]
//
// Prints "burst_wall_ns=W drain_stopped=1" and exits 0; exits 77 when ptrace is not allowed here
// (the test skips), 3 without a gtrace drain thread, 4 when the thread could not be stopped.
#include <dirent.h>
#include <nvtx3/nvToolsExt.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

long FindDrainThread() {
  DIR* d = opendir("/proc/self/task");
  if (d == nullptr) return 0;
  long found = 0;
  while (dirent* e = readdir(d)) {
    if (e->d_name[0] == '.') continue;
    std::string path = std::string("/proc/self/task/") + e->d_name + "/comm";
    if (FILE* f = std::fopen(path.c_str(), "r")) {
      char name[64] = {};
      if (std::fgets(name, sizeof(name), f) != nullptr && std::strncmp(name, "gtrace-drain", 12) == 0) {
        found = std::atol(e->d_name);
      }
      std::fclose(f);
    }
  }
  closedir(d);
  return found;
}

// The scheduler state letter of thread `tid` ('t': stopped by a tracer), or '?'.
char ThreadState(long tid) {
  std::string path = "/proc/self/task/" + std::to_string(tid) + "/stat";
  FILE* f = std::fopen(path.c_str(), "r");
  if (f == nullptr) return '?';
  char buf[512] = {};
  size_t n = std::fread(buf, 1, sizeof(buf) - 1, f);
  std::fclose(f);
  const char* close = std::strrchr(buf, ')');
  return (n > 0 && close != nullptr && close[1] == ' ') ? close[2] : '?';
}

// Helper process: stops `tid`, reports 'S' (or 'E') on `report`, and holds it until `hold` closes.
[[noreturn]] void Helper(long tid, int go, int report, int hold) {
  char c;
  if (::read(go, &c, 1) != 1) ::_exit(1);
  if (::ptrace(PTRACE_SEIZE, tid, nullptr, nullptr) != 0 || ::ptrace(PTRACE_INTERRUPT, tid, nullptr, nullptr) != 0) {
    c = 'E';
    (void)::write(report, &c, 1);
    ::_exit(0);
  }
  int status = 0;
  ::waitpid(static_cast<pid_t>(tid), &status, __WALL);
  c = 'S';
  (void)::write(report, &c, 1);
  while (::read(hold, &c, 1) > 0) {
  }
  ::ptrace(PTRACE_DETACH, tid, nullptr, nullptr);
  ::_exit(0);
}

}  // namespace

int main(int argc, char** argv) {
  long pairs = 200000, threads = 8;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string f = argv[i];
    if (f == "--pairs") pairs = std::atol(argv[i + 1]);
    else if (f == "--threads") threads = std::atol(argv[i + 1]);
  }
  nvtxDomainCreateA("stuck_drain");  // under gtrace: starts the session and its drain thread
  long drain = FindDrainThread();
  if (drain == 0) {
    std::fprintf(stderr, "stuck_drain: no gtrace drain thread\n");
    return 3;
  }
  int go[2], report[2], hold[2];
  if (::pipe(go) != 0 || ::pipe(report) != 0 || ::pipe(hold) != 0) return 5;
  pid_t helper = ::fork();
  if (helper == 0) {
    ::close(go[1]);
    ::close(report[0]);
    ::close(hold[1]);
    Helper(drain, go[0], report[1], hold[0]);
  }
  ::close(go[0]);
  ::close(report[1]);
  ::close(hold[0]);
  ::prctl(PR_SET_PTRACER, helper, 0, 0, 0);  // Yama ptrace_scope=1 lets only ancestors trace otherwise
  char c = 'g';
  (void)::write(go[1], &c, 1);
  if (::read(report[0], &c, 1) != 1 || c != 'S') {
    std::fprintf(stderr, "stuck_drain: ptrace is not allowed here; cannot stop the drain thread\n");
    ::close(hold[1]);
    ::waitpid(helper, nullptr, 0);
    return 77;
  }
  if (ThreadState(drain) != 't') {
    std::fprintf(stderr, "stuck_drain: the drain thread is in state %c, not stopped\n", ThreadState(drain));
    return 4;
  }
  auto t0 = std::chrono::steady_clock::now();
  std::vector<std::thread> pool;
  for (long t = 0; t < threads; ++t) {
    pool.emplace_back([pairs] {
      for (long i = 0; i < pairs; ++i) {
        nvtxRangePushA("stuck");
        nvtxRangePop();
      }
    });
  }
  for (auto& th : pool) th.join();
  auto t1 = std::chrono::steady_clock::now();
  bool still_stopped = ThreadState(drain) == 't';
  ::close(hold[1]);  // the helper detaches: the drain thread runs again and writes the stream
  ::waitpid(helper, nullptr, 0);
  std::printf("burst_wall_ns=%lld drain_stopped=%d\n",
              static_cast<long long>(std::chrono::duration_cast<std::chrono::nanoseconds>(t1 - t0).count()),
              still_stopped ? 1 : 0);
  return 0;
}
