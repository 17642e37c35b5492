// plain_program: never calls NVTX, CUDA or NCCL. Prints its argv, its thread count and the
// NVTX/CUDA injection variables it sees, then exits with status 7. Under LD_PRELOAD=libgtrace.so
// its output (but for the injection variable) and status must be unchanged.
#include <dirent.h>

#include <cstdio>
#include <cstdlib>

int main(int argc, char** argv) {
  int threads = 0;
  if (DIR* d = opendir("/proc/self/task")) {
    while (dirent* e = readdir(d)) threads += e->d_name[0] != '.';
    closedir(d);
  }
  std::printf("args=%d threads=%d\n", argc, threads);
  for (int i = 1; i < argc; ++i) std::printf("arg %s\n", argv[i]);
  const char* v = std::getenv("NVTX_INJECTION64_PATH");
  std::fprintf(stderr, "nvtx_injection=%s\n", v != nullptr ? "set" : "unset");
  return 7;
}
