// Cost of an uncontended pthread_mutex_lock/unlock pair, the call OS runtime tracing sees most often
// (issue 18). Run by bench/osrt_overhead/run.sh with no library, with libgtrace.so loaded but osrt
// off, with -t osrt (the default 1000 ns threshold: nothing is recorded, the cost is the interposer's
// check and two clock reads), and with -t osrt and threshold 0 (every lock is a record, or a counted
// drop when the ring is full). Prints the median over SAMPLES of the mean ns per pair over PAIRS
// pairs, and also the same for a 1-byte write to /dev/null (a system call: the relative cost there)
// and for two clock_gettime(CLOCK_MONOTONIC) reads (what the interposer adds around a short call).
//   osrt_bench PAIRS SAMPLES
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <vector>

namespace {

uint64_t NowNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

template <typename Fn>
double MedianNsPerCall(int calls, int samples, Fn fn) {
  std::vector<double> per_call;
  for (int i = 0; i < calls / 10; ++i)
    fn();  // warm-up (first call resolves symbols, takes the thread's ring)
  for (int s = 0; s < samples; ++s) {
    uint64_t t0 = NowNs();
    for (int i = 0; i < calls; ++i)
      fn();
    per_call.push_back(static_cast<double>(NowNs() - t0) / calls);
  }
  std::sort(per_call.begin(), per_call.end());
  return per_call[per_call.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  int pairs = argc > 1 ? atoi(argv[1]) : 1000000;
  int samples = argc > 2 ? atoi(argv[2]) : 15;
  pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
  double lock_ns = MedianNsPerCall(pairs, samples, [&] {
    pthread_mutex_lock(&m);
    pthread_mutex_unlock(&m);
  });
  int fd = open("/dev/null", O_WRONLY);
  double write_ns = MedianNsPerCall(pairs / 10, samples, [&] { (void)!write(fd, "x", 1); });
  close(fd);
  // The floor of what -t osrt adds to a short call: its two clock reads (CLOCK_MONOTONIC, vDSO).
  volatile uint64_t sink = 0;
  double clocks_ns = MedianNsPerCall(pairs, samples, [&] { sink = sink + NowNs() + NowNs(); });
  printf("lock_pair_median_ns=%.2f write_median_ns=%.1f two_clock_reads_median_ns=%.2f\n", lock_ns, write_ns,
         clocks_ns);
  return 0;
}
