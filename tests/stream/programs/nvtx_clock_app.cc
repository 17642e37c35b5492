// nvtx_clock_app: NVTX push/pop ranges whose bounds the program also brackets with
// clock_gettime(CLOCK_MONOTONIC), for tests/stream/clock_agreement_test.cc.
//   nvtx_clock_app ITERATIONS SLEEP_MS
// Per iteration prints "m0 m1 m2 m3": CLOCK_MONOTONIC before and after nvtxRangePushA, before and
// after nvtxRangePop (a 20 us busy range in between), then sleeps SLEEP_MS.
#include <nvtx3/nvToolsExt.h>
#include <time.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>

static uint64_t Mono() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

int main(int argc, char** argv) {
  int n = argc > 1 ? std::atoi(argv[1]) : 50;
  int sleep_ms = argc > 2 ? std::atoi(argv[2]) : 50;
  nvtxRangePushA("warm-up");  // session start outside the measured ranges
  nvtxRangePop();
  for (int i = 0; i < n; ++i) {
    uint64_t m0 = Mono();
    nvtxRangePushA("probe");
    uint64_t m1 = Mono();
    while (Mono() - m1 < 20000) {
    }
    uint64_t m2 = Mono();
    nvtxRangePop();
    uint64_t m3 = Mono();
    std::printf("%llu %llu %llu %llu\n", static_cast<unsigned long long>(m0), static_cast<unsigned long long>(m1),
                static_cast<unsigned long long>(m2), static_cast<unsigned long long>(m3));
    usleep(static_cast<useconds_t>(sleep_ms) * 1000);
  }
  return 0;
}
