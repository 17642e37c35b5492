// nvtx_only_app: NVTX ranges and no CUDA at all. Prints whether any CUPTI library (or the library
// named by GTRACE_CUPTI_PATH) is mapped at the end: a process that never initializes CUDA must
// never load CUPTI, even with gtrace preloaded and CUDA tracing configured.
#include <nvtx3/nvToolsExt.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

int main() {
  nvtxRangePushA("no-cuda");
  nvtxMarkA("mark");
  nvtxRangePop();
  const char* cupti = std::getenv("GTRACE_CUPTI_PATH");
  std::string base = cupti != nullptr && std::strrchr(cupti, '/') ? std::strrchr(cupti, '/') + 1 : "libcupti";
  std::ifstream maps("/proc/self/maps");
  std::string line;
  bool loaded = false;
  while (std::getline(maps, line)) {
    if (line.find(base) != std::string::npos || line.find("libcupti") != std::string::npos) loaded = true;
  }
  std::printf("cupti mapped: %d\n", loaded ? 1 : 0);
  return 0;
}
