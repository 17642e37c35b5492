// A shared library with its own NVTX instance (NVTX3 is header-only: every DSO that includes it
// has private globals and calls the injection initializer separately).
#include <nvtx3/nvToolsExt.h>

extern "C" void LibraryWork() {
  nvtxRangePushA("from-library");
  nvtxRangePop();
}
