// two_instances: NVTX calls from the executable's instance and from a shared library's instance.
#include <nvtx3/nvToolsExt.h>

#include <cstdio>

extern "C" void LibraryWork();

int main() {
  nvtxRangePushA("from-main");
  LibraryWork();
  nvtxRangePop();
  std::printf("two instances done\n");
  return 0;
}
