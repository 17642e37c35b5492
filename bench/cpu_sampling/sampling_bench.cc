// The work whose slowdown CPU sampling is measured on (bench/cpu_sampling/run.sh): THREADS threads
// (the main one included) each run a fixed number of work units (a pseudo-random walk over a 256 KiB
// table: integer arithmetic and cache hits, ~1 us per unit, a stack of 4 frames). Prints the wall
// time of the work phase, the CPU time its threads used (user + system: the kernel's sampling
// interrupts and stack walks are charged to the sampled thread) and the whole process's CPU time
// (getrusage, which includes gtrace's drain thread reading the samples).
//   sampling_bench [UNITS_PER_THREAD] [THREADS]
#include <pthread.h>
#include <sys/resource.h>
#include <time.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

constexpr int kTable = 1 << 16;  // 64 Ki x 4 bytes
uint32_t g_table[kTable];
volatile uint64_t g_sink;

long Ns(clockid_t id) {
  timespec ts;
  clock_gettime(id, &ts);
  return ts.tv_sec * 1000000000L + ts.tv_nsec;
}

__attribute__((noinline)) uint64_t Leaf(uint64_t x) {
  for (int i = 0; i < 256; ++i)
    x = x * 6364136223846793005ull + g_table[(x >> 33) & (kTable - 1)];
  return x;
}
__attribute__((noinline)) uint64_t Middle(uint64_t x) {
  return Leaf(x) ^ Leaf(x + 1);
}
__attribute__((noinline)) uint64_t Unit(uint64_t x) {
  return Middle(x) + 1;
}

struct Job {
  long units;
  long cpu_ns = 0;
};

void* Work(void* arg) {
  auto* job = static_cast<Job*>(arg);
  long c0 = Ns(CLOCK_THREAD_CPUTIME_ID);
  uint64_t x = 1;
  for (long i = 0; i < job->units; ++i)
    x = Unit(x);
  g_sink = x;
  job->cpu_ns = Ns(CLOCK_THREAD_CPUTIME_ID) - c0;
  return nullptr;
}

}  // namespace

int main(int argc, char** argv) {
  long units = argc > 1 ? atol(argv[1]) : 300000;
  int threads = argc > 2 ? atoi(argv[2]) : 2;
  for (int i = 0; i < kTable; ++i)
    g_table[i] = static_cast<uint32_t>(i * 2654435761u);
  std::vector<Job> jobs(threads, Job{units});
  std::vector<pthread_t> ids(threads);
  long w0 = Ns(CLOCK_MONOTONIC);
  for (int t = 1; t < threads; ++t)
    pthread_create(&ids[t], nullptr, Work, &jobs[t]);
  Work(&jobs[0]);
  for (int t = 1; t < threads; ++t)
    pthread_join(ids[t], nullptr);
  long wall = Ns(CLOCK_MONOTONIC) - w0;
  long cpu = 0;
  for (const Job& j : jobs)
    cpu += j.cpu_ns;
  rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  long process =
      (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000L + (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000L;
  std::printf("wall_ns=%ld work_cpu_ns=%ld process_cpu_ns=%ld\n", wall, cpu, process);
  return 0;
}
