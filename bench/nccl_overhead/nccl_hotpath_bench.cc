// nccl_hotpath_bench: the CPU cost of the NCCL plugin's hot-path entry points (house style: every
// hot-path entry point has a measured cost). Loads libgtrace.so as NCCL does (dlopen + dlsym of
// ncclProfiler_v5), starts a real session writing to a temporary stream, and times the call
// sequences NCCL makes, in batches with pauses so the drain thread keeps the ring from filling.
//
//   nccl_hotpath_bench [path/to/libgtrace.so] [results-file]
//
// Prints (and appends to results-file, when given) the median ns per sequence over the batches.
#include <dlfcn.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "inject/nccl/nccl_abi.h"

namespace abi = gt::nccl::abi;

namespace {

uint64_t Now() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return uint64_t(ts.tv_sec) * 1000000000ull + ts.tv_nsec;
}

double MedianNsPerOp(int batches, int per_batch, const std::function<void()>& op) {
  std::vector<double> ns;
  for (int b = 0; b < batches; ++b) {
    uint64_t t0 = Now();
    for (int i = 0; i < per_batch; ++i) op();
    ns.push_back(double(Now() - t0) / per_batch);
    timespec pause{0, 20000000};  // let the drain thread (10 ms cycle) empty the ring
    nanosleep(&pause, nullptr);
  }
  std::sort(ns.begin(), ns.end());
  return ns[ns.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  std::string lib = argc > 1 ? argv[1] : "";
  if (lib.empty()) {
    char self[4096] = {};
    ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
    std::string dir = n > 0 ? std::string(self, n) : std::string("./");
    lib = dir.substr(0, dir.rfind('/')) + "/../lib/libgtrace.so";
  }
  char tmpl[] = "/tmp/gtrace-nccl-bench-XXXXXX";
  const char* dir = mkdtemp(tmpl);
  setenv("GTRACE_OUTPUT", (std::string(dir ? dir : "/tmp") + "/bench-%p").c_str(), 1);
  setenv("GTRACE_TRACE", "nccl", 1);
  void* h = dlopen(lib.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (h == nullptr) {
    fprintf(stderr, "nccl_hotpath_bench: %s\n", dlerror());
    return 1;
  }
  auto* p = static_cast<abi::ProfilerV5*>(dlsym(h, "ncclProfiler_v5"));
  if (p == nullptr) return 1;
  void* ctx = nullptr;
  int mask = 0;
  p->init(&ctx, 0x1234, &mask, "bench", 1, 8, 0, nullptr);
  if (mask == 0 || ctx == nullptr) {
    fprintf(stderr, "nccl_hotpath_bench: the plugin did not start (mask 0)\n");
    return 1;
  }
  const int kBatches = 41, kPerBatch = 1000;
  // A live Coll (parent of the kernel channels), as NCCL's proxy thread sees it.
  abi::EventDescrV5 coll{};
  coll.type = abi::kColl;
  coll.rank = 0;
  coll.coll.func = "AllReduce";
  coll.coll.datatype = "ncclFloat32";
  coll.coll.algo = "RING";
  coll.coll.proto = "LL";
  coll.coll.count = 1024;
  coll.coll.n_channels = 2;
  void* parent = nullptr;
  p->start_event(ctx, &parent, &coll);

  abi::EventDescrV5 ch{};
  ch.type = abi::kKernelCh;
  ch.parent_obj = parent;
  ch.kernel_ch.ptimer = 1795000000000000000ull;
  double kernel = MedianNsPerOp(kBatches, kPerBatch, [&] {
    void* e = nullptr;
    p->start_event(ctx, &e, &ch);
    abi::EventStateArgsV4 a{};
    a.kernel_ch.ptimer = ch.kernel_ch.ptimer + 5000;
    p->record_event_state(e, abi::kKernelChStop, &a);
    p->stop_event(e);
  });
  double coll_ns = MedianNsPerOp(kBatches, kPerBatch, [&] {
    void* e = nullptr;
    p->start_event(ctx, &e, &coll);
    p->stop_event(e);
  });
  abi::EventDescrV5 api{};
  api.type = abi::kCollApi;
  api.coll_api.func = "AllReduce";
  api.coll_api.datatype = "ncclFloat32";
  api.coll_api.count = 1024;
  double api_ns = MedianNsPerOp(kBatches, kPerBatch, [&] {
    void* e = nullptr;
    p->start_event(ctx, &e, &api);
    p->stop_event(e);
  });
  abi::EventDescrV5 step{};  // not in the default mask: NCCL would only call it for a descendant
  step.type = abi::kProxyStep;
  double untracked = MedianNsPerOp(kBatches, kPerBatch, [&] {
    void* e = nullptr;
    p->start_event(ctx, &e, &step);
    p->stop_event(e);
  });
  p->stop_event(parent);
  p->finalize(ctx);
  char line[512];
  snprintf(line, sizeof(line),
           "nccl_hotpath_bench: median ns per sequence (%d batches x %d):\n"
           "  KernelCh start + KernelChStop state + stop  %.1f\n"
           "  Coll start + stop                           %.1f\n"
           "  CollApi start + stop                        %.1f\n"
           "  untracked type start + stop (NULL handle)   %.1f\n",
           kBatches, kPerBatch, kernel, coll_ns, api_ns, untracked);
  fputs(line, stdout);
  if (argc > 2) {
    FILE* f = fopen(argv[2], "a");
    if (f != nullptr) {
      fputs(line, f);
      fclose(f);
    }
  }
  return 0;
}
