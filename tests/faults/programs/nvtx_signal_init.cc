// nvtx_signal_init: a signal handler that calls NVTX interrupts the process's first NVTX call while
// gtrace starts its session (issue 28, item 2). A watcher thread waits for the stream file to appear
// (the session start creates it) and signals the main thread at once; the handler records a mark.
// gtrace used to start the session inside InitializeInjectionNvtx2, that is inside NVTX's
// nvtxInitOnce, where the handler's NVTX call spins for ever.
//   nvtx_signal_init STREAM_PATH
#include <nvtx3/nvToolsExt.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <thread>

namespace {
std::atomic<bool> g_handled{false};
void Handler(int) {
  nvtxMarkA("from-handler");
  g_handled.store(true);
}
}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: nvtx_signal_init STREAM_PATH\n");
    return 2;
  }
  const char* stream = argv[1];
  struct sigaction sa {};
  sa.sa_handler = Handler;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGUSR1, &sa, nullptr);
  pthread_t main_thread = pthread_self();
  std::thread watcher([&] {
    while (access(stream, F_OK) != 0) sched_yield();
    pthread_kill(main_thread, SIGUSR1);
  });
  nvtxRangePushA("first");
  nvtxRangePop();
  watcher.join();
  while (!g_handled.load()) usleep(100);
  for (int i = 0; i < 100; ++i) {
    nvtxRangePushA("after");
    nvtxRangePop();
  }
  std::printf("handled\n");
  return 0;
}
