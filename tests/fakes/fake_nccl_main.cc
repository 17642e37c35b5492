// fake_nccl_host: a program that behaves like an NCCL application (a test double; see
// fake_nccl_host.h), for running under LD_PRELOAD=libgtrace.so in tests/nccl.
//
//   fake_nccl_host [--nccl 22709|22809|22907] [--scenario NAME] [--skew-ns N] [--nvtx] [--no-finalize]
//                  [--print-calls]
//
// Scenarios (fixed sizes and GPU times, so tests can assert exact rows):
//   basic    communicator "world" (hash 0x1111, 1 node, 4 ranks, rank 1):
//              AllReduce 262144 x ncclFloat32 (1 MiB), GPU 100 us, 2 channels
//              AllReduce 262144 x ncclFloat32,          GPU 120 us
//              AllGather  65536 x ncclFloat32 (sendcount), GPU 80 us
//              ReduceScatter 65536 x ncclFloat32 (recvcount), ncclMax, GPU 60 us
//              Broadcast 1024 x ncclFloat64 root 2, GPU 10 us, 1 channel, TREE/LL
//              group { Send 4096 x ncclFloat32 to 2, Recv 4096 x ncclFloat32 from 0 }, GPU 30 us each
//   threads  communicators "dp" (0xa0, 2 ranks, rank 0), "tp" (0xb0, 8 ranks, rank 3) and "pp" (0xc0,
//            4 ranks, rank 2), each driven by its own application thread (NCCL communicators are not
//            thread-safe) with its own proxy thread: 5 AllReduces of 1024 << k floats on comm k
//   exhaust  one group of 8 AllReduces of 4096 floats (run with GTRACE_NCCL_POOL_EVENTS=4)
//   proxy    an AllReduce with 3 proxy steps per channel, a PXN proxy op of another process, a
//            proxy-ctrl cycle (run with GTRACE_NCCL_TRACE=default,proxy-step,proxy-ctrl)
//   ce       (v6) a copy-engine AllGather of 1024 floats, then an AllReduce
//   flood    4 communicators, each driven by its own thread: 600 AllReduces of 1024 floats each (more
//            plugin calls than the raw capture's log holds)
// Prints "abi=N mask=0x.. null_handles=N" at the end, and "plugin_calls=N" (every init, start,
// state, stop and finalize made) with --print-calls.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "tests/fakes/fake_nccl_host.h"

using fake_nccl::Comm;
using fake_nccl::Host;
using fake_nccl::Op;

namespace {

Op MakeOp(const char* func, size_t count, const char* datatype, size_t type_size, uint64_t gpu_ns) {
  Op op;
  op.func = func;
  op.count = count;
  op.datatype = datatype;
  op.type_size = type_size;
  op.gpu_ns = gpu_ns;
  return op;
}

void Basic(Host& host, bool finalize) {
  Comm* c = host.InitComm("world", 0x1111, 1, 4, 1);
  host.Call(c, MakeOp("AllReduce", 262144, "ncclFloat32", 4, 100000));
  host.Call(c, MakeOp("AllReduce", 262144, "ncclFloat32", 4, 120000));
  host.Call(c, MakeOp("AllGather", 65536, "ncclFloat32", 4, 80000));
  Op rs = MakeOp("ReduceScatter", 65536, "ncclFloat32", 4, 60000);
  rs.red_op = 2;  // ncclMax
  host.Call(c, rs);
  Op bcast = MakeOp("Broadcast", 1024, "ncclFloat64", 8, 10000);
  bcast.root = 2;
  bcast.n_channels = 1;
  bcast.algo = "TREE";
  bcast.proto = "LL";
  host.Call(c, bcast);
  Op send = MakeOp("Send", 4096, "ncclFloat32", 4, 30000);
  send.peer = 2;
  send.n_channels = 1;
  Op recv = MakeOp("Recv", 4096, "ncclFloat32", 4, 30000);
  recv.peer = 0;
  recv.n_channels = 1;
  host.Group(c, {send, recv});
  host.Drain(c);
  if (finalize) host.FinalizeComm(c);
}

void Threads(Host& host, bool finalize) {
  Comm* comms[3] = {host.InitComm("dp", 0xa0, 1, 2, 0), host.InitComm("tp", 0xb0, 1, 8, 3),
                    host.InitComm("pp", 0xc0, 1, 4, 2)};
  std::vector<std::thread> threads;
  for (int k = 0; k < 3; ++k) {
    threads.emplace_back([&host, &comms, k] {
      for (int i = 0; i < 5; ++i) host.Call(comms[k], MakeOp("AllReduce", size_t{1024} << k, "ncclFloat32", 4, 20000));
    });
  }
  for (auto& th : threads) th.join();
  for (Comm* c : comms) {
    host.Drain(c);
    if (finalize) host.FinalizeComm(c);
  }
}

void Flood(Host& host, bool finalize) {
  std::vector<Comm*> comms;
  for (int k = 0; k < 4; ++k) comms.push_back(host.InitComm("flood", 0xf0 + k, 1, 2, 0));
  std::vector<std::thread> threads;
  for (Comm* c : comms) {
    threads.emplace_back([&host, c] {
      for (int i = 0; i < 600; ++i) host.Call(c, MakeOp("AllReduce", 1024, "ncclFloat32", 4, 1000));
    });
  }
  for (auto& th : threads) th.join();
  for (Comm* c : comms) {
    host.Drain(c);
    if (finalize) host.FinalizeComm(c);
  }
}

void Exhaust(Host& host, bool finalize) {
  Comm* c = host.InitComm("world", 0x2222, 1, 2, 0);
  std::vector<Op> ops(8, MakeOp("AllReduce", 4096, "ncclFloat32", 4, 20000));
  host.Group(c, ops);
  host.Drain(c);
  if (finalize) host.FinalizeComm(c);
}

void Proxy(Host& host, bool finalize) {
  Comm* c = host.InitComm("world", 0x3333, 2, 4, 0);
  Op op = MakeOp("AllReduce", 262144, "ncclFloat32", 4, 100000);
  op.proxy_steps = 3;
  host.Call(c, op);
  host.Drain(c);
  host.ForeignProxyOp(c);
  host.ProxyCtrl(c);
  if (finalize) host.FinalizeComm(c);
}

void Ce(Host& host, bool finalize) {
  Comm* c = host.InitComm("world", 0x4444, 1, 4, 2);
  host.CeCollective(c, MakeOp("AllGather", 1024, "ncclFloat32", 4, 0));
  host.Call(c, MakeOp("AllReduce", 1024, "ncclFloat32", 4, 20000));
  host.Drain(c);
  if (finalize) host.FinalizeComm(c);
}

}  // namespace

int main(int argc, char** argv) {
  int nccl = 22809;
  std::string scenario = "basic";
  long long skew = 0;
  bool nvtx = false;
  bool finalize = true;
  bool print_calls = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> const char* { return i + 1 < argc ? argv[++i] : ""; };
    if (a == "--nccl") {
      nccl = atoi(next());
    } else if (a == "--scenario") {
      scenario = next();
    } else if (a == "--skew-ns") {
      skew = atoll(next());
    } else if (a == "--nvtx") {
      nvtx = true;
    } else if (a == "--no-finalize") {
      finalize = false;
    } else if (a == "--print-calls") {
      print_calls = true;
    } else {
      fprintf(stderr, "fake_nccl_host: unknown argument %s\n", a.c_str());
      return 2;
    }
  }
  Host host;
  std::string error;
  if (!host.Load(nccl, &error)) {
    printf("abi=0 mask=0x0 null_handles=0 (%s)\n", error.c_str());
    return 0;  // NCCL runs on without a profiler
  }
  host.set_gpu_skew_ns(skew);
  host.set_nvtx(nvtx);
  if (scenario == "basic") {
    Basic(host, finalize);
  } else if (scenario == "threads") {
    Threads(host, finalize);
  } else if (scenario == "exhaust") {
    Exhaust(host, finalize);
  } else if (scenario == "proxy") {
    Proxy(host, finalize);
  } else if (scenario == "ce") {
    Ce(host, finalize);
  } else if (scenario == "flood") {
    Flood(host, finalize);
  } else {
    fprintf(stderr, "fake_nccl_host: unknown scenario %s\n", scenario.c_str());
    return 2;
  }
  printf("abi=%d mask=0x%x null_handles=%d\n", host.abi(), host.mask(), host.null_handles());
  if (print_calls) printf("plugin_calls=%llu\n", static_cast<unsigned long long>(host.plugin_calls()));
  return 0;
}
