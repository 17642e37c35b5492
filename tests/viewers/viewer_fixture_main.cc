// viewer_fixture OUT.sqlite [--ranks N] [--no-extra-process] [--no-metrics] [--nccl-operations]:
// writes the viewer tests' fixture database (viewer_fixture.h) for scripts.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "tests/viewers/viewer_fixture.h"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr,
                 "usage: viewer_fixture OUT.sqlite [--ranks N] [--no-extra-process] [--no-metrics] "
                 "[--nccl-operations]\n");
    return 2;
  }
  gt::viewers::testing::FixtureOptions options;
  for (int i = 2; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--ranks" && i + 1 < argc) {
      options.ranks = std::atoi(argv[++i]);
    } else if (a == "--no-extra-process") {
      options.extra_process = false;
    } else if (a == "--no-metrics") {
      options.metrics = false;
    } else if (a == "--nccl-operations") {
      options.nccl_operations = true;
    } else {
      std::fprintf(stderr, "viewer_fixture: unknown argument %s\n", a.c_str());
      return 2;
    }
  }
  if (options.ranks < 1 || options.ranks > 64)
    return 2;
  gt::viewers::testing::WriteFixture(argv[1], options);
  return 0;
}
