// callstack_app: a "CUDA application" on the fake CUPTI (tests/fakes/fake_cuda.h, a test double) with
// known call chains, for the --cudabacktrace and process-tree tests. Built with -O0 -g so every
// function below keeps its own frame and DWARF line; the `// LINE:` markers name the call sites the
// tests expect in CUDA_CALLCHAINS (they read this file to find their line numbers).
//
//   callstack_app chain        main -> chain::a -> chain::b -> cudaMemcpy (20 ms), twice from the same
//                              site; an instant cudaMemcpy from main; chain::launch -> cudaLaunchKernel
//                              (20 ms); chain::nested -> cudaMemcpy whose driver call cuMemcpyHtoD_v2
//                              (20 ms) runs inside it; a thread named "cuda-worker" (OS name only, no
//                              NVTX) -> chain::b; a thread with OS name "os-name" that NVTX names
//                              "nvtx-name" and makes one cudaMalloc (20 ms).
//   tree <level> <exec|bash>   level 0 and 1 make one cudaMalloc (1 ms) and start level+1 (0 -> 1
//                              through `bash -c` when asked, else fork + exec; 1 -> 2 fork + exec)
//                              and wait for it; level 2 makes its call and exits.
//   loader                     one cudaMalloc, then a DataLoader-style child forked without exec
//                              records an NVTX range and exits; the parent waits.
//   spin <n>                   n cudaMemcpy calls of 5 us from chain::b (overhead measurements).
#include <nvtx3/nvToolsExt.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

#include <cupti.h>

#include "tests/fakes/fake_cuda.h"

namespace {

constexpr uint64_t kMs = 1000000;
constexpr uint64_t kUs = 1000;
uint64_t g_slow_ns = 20 * kMs;  // far above the tests' 10 ms threshold, even on a loaded machine

}  // namespace

namespace chain {

__attribute__((noinline)) void b() {
  uint32_t c = fake_ApiEnter(0, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020, nullptr);  // LINE: b->api
  fake_ApiExit(c, g_slow_ns, 0);
}

__attribute__((noinline)) void a() {
  b();  // LINE: a->b
  asm volatile("" ::: "memory");
}

__attribute__((noinline)) void launch() {
  uint32_t c = fake_ApiEnter(0, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, nullptr);  // LINE: launch->api
  fake_ApiExit(c, g_slow_ns, 0);
}

__attribute__((noinline)) void nested() {
  uint32_t outer = fake_ApiEnter(0, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020, nullptr);  // LINE: nested->runtime
  uint32_t inner = fake_ApiEnter(1, CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoD_v2, nullptr);    // LINE: nested->driver
  fake_ApiExit(inner, g_slow_ns, 0);
  fake_ApiExit(outer, 10 * kUs, 0);
}

__attribute__((noinline)) void alloc(uint64_t ns) {
  uint32_t c = fake_ApiEnter(0, CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020, nullptr);  // LINE: alloc->api
  fake_ApiExit(c, ns, 2);  // returns cudaErrorMemoryAllocation: the 67 row keeps it
}

}  // namespace chain

namespace {

uint32_t Tid() {
  return static_cast<uint32_t>(syscall(SYS_gettid));
}

void StartCuda() {
  fake_cuInit();
  fake_ContextCreate(0);
}

// The rest of the chain scenario (main calls chain::a itself, so the known chain is main -> a -> b).
int ChainRest() {
  uint32_t c = fake_ApiEnter(0, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020, nullptr);
  fake_ApiExit(c, 0, 0);  // far below the tests' 10 ms threshold: no stack
  chain::launch();
  chain::nested();
  std::thread worker([] {
    pthread_setname_np(pthread_self(), "cuda-worker");
    chain::b();
  });
  worker.join();
  std::thread named([] {
    pthread_setname_np(pthread_self(), "os-name");
    nvtxNameOsThreadA(Tid(), "nvtx-name");
    chain::alloc(g_slow_ns);
  });
  named.join();
  std::printf("main tid %u\n", Tid());
  return 0;
}

int RunAndWait(const char* path, char* const argv[]) {
  pid_t pid = fork();
  if (pid < 0)
    return 1;
  if (pid == 0) {
    execv(path, argv);
    _exit(127);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

int Tree(const char* self, int level, const std::string& via) {
  StartCuda();
  chain::alloc(1 * kMs);
  std::printf("level %d pid %d ppid %d\n", level, getpid(), getppid());
  std::fflush(stdout);
  if (level >= 2)
    return 0;
  std::string next = std::to_string(level + 1);
  if (level == 0 && via == "bash") {
    // bash runs the command in a child of its own (a second command follows), as launchers do.
    std::string cmd = "'" + std::string(self) + "' tree 1 exec; exit $?";
    char* const argv[] = {const_cast<char*>("bash"), const_cast<char*>("-c"), cmd.data(), nullptr};
    return RunAndWait("/bin/bash", argv);
  }
  char* const argv[] = {const_cast<char*>(self), const_cast<char*>("tree"), next.data(), const_cast<char*>("exec"),
                        nullptr};
  return RunAndWait(self, argv);
}

int Loader() {
  StartCuda();
  chain::alloc(1 * kMs);
  pid_t pid = fork();
  if (pid == 0) {
    nvtxRangePushA("load-batch");
    usleep(1000);
    nvtxRangePop();
    std::exit(0);  // exit, not _exit: the stream is closed (see docs/callstacks.md on os._exit)
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

int Spin(int n) {
  StartCuda();
  g_slow_ns = 5 * kUs;
  for (int i = 0; i < n; ++i)
    chain::b();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::string scenario = argc > 1 ? argv[1] : "chain";
  if (scenario == "chain") {
    StartCuda();
    for (int i = 0; i < 2; ++i) {
      chain::a();  // LINE: main->a
    }
    return ChainRest();
  }
  if (scenario == "tree")
    return Tree(argv[0], argc > 2 ? std::atoi(argv[2]) : 0, argc > 3 ? argv[3] : "exec");
  if (scenario == "loader")
    return Loader();
  if (scenario == "spin")
    return Spin(argc > 2 ? std::atoi(argv[2]) : 1000);
  std::fprintf(stderr, "unknown scenario %s\n", scenario.c_str());
  return 2;
}
