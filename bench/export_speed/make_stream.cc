// make_stream: writes a synthetic gtrace stream of N NVTX events (push/pop pairs on T threads, 100
// distinct names, nesting depth 2) with the library's own encoder, for the export benchmark.
//
//   make_stream OUT.gtrace [--events N] [--threads T] [--pid P] [--host H] [--kind nvtx|graph|nccl|ranges]
// (--pid: distinct pids make distinct processes, for the all-cores export of several streams;
// --host: distinct hosts make distinct clock domains, so that gtrace export runs its alignment pass)
// --kind graph: N CUDA graph-trace rows instead, each launch's callback record first (one device and
// context, 4 streams, 64 graphs, 17 executable graphs; the records the CUDA export must hold until
// the stream's end before the spill database, bench/offline_memory).
// --kind nccl: N NCCL plugin events (each operation: CollApi, Coll, two KernelCh with GPU timers,
// ProxyOp with one state; start and stop records), the app thread's and the proxy thread's records
// in alternate chunks of 800 operations (the events the NCCL export held until the stream's end).
// --kind ranges: N range-profiler result rows in kernel mode (2 metrics, 8 kernels per pass, one
// device and context) with their kernels, the rows the GPU-metrics export held until the end.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "collector/schema_fields.h"
#include "tests/common/synthetic_stream.h"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: make_stream OUT.gtrace [--events N] [--threads T] [--pid P] [--host H] [--kind nvtx|graph|nccl|ranges]\n");
    return 2;
  }
  long events = 10000000, threads = 8;
  uint32_t pid = 4242;
  std::string kind = "nvtx", host = "testhost";
  for (int i = 2; i + 1 < argc; i += 2) {
    std::string f = argv[i];
    if (f == "--events") events = std::atol(argv[i + 1]);
    if (f == "--threads") threads = std::atol(argv[i + 1]);
    if (f == "--pid") pid = static_cast<uint32_t>(std::atol(argv[i + 1]));
    if (f == "--kind") kind = argv[i + 1];
    if (f == "--host") host = argv[i + 1];
  }
  gt::test::SyntheticStream s(pid, 1000000000, 1700000000000000000ull, host,
                             host == "testhost" ? "boot-0" : "boot-" + host);
  if (kind == "graph") {
    s.BeginChunk(1, pid, 1000000000);
    s.Device(gt::test::DeviceSpec{});
    s.Context(gt::test::ContextSpec{});
    s.EndChunk();
    uint64_t ts = 1000000000;
    long written = 0, chunk_index = 0;
    while (written < events) {
      s.BeginChunk(2, pid, ts);
      for (long i = 0; i + 2 <= 8192 && written < events; i += 2, ++written) {
        const uint32_t correlation = static_cast<uint32_t>(written + 1);
        s.GraphLaunch(ts, correlation, 1 + static_cast<uint32_t>(written % 17));
        gt::test::GraphTraceSpec g;
        g.start_ns = ts + 100;
        g.duration_ns = 800 + static_cast<uint64_t>(written % 101);
        g.stream_id = 7 + static_cast<uint32_t>(written % 4);
        g.correlation_id = correlation;
        g.graph_id = 1 + static_cast<uint32_t>(written % 64);
        s.GraphTrace(g);
        ts += 1000;
      }
      s.EndChunk();
      ++chunk_index;
    }
    s.Close();
    s.WriteTo(argv[1]);
    std::printf("graph rows=%ld chunks=%ld\n", written, chunk_index);
    return 0;
  }
  if (kind == "nccl") {
    const uint64_t mono0 = 1000000000, real0 = 1700000000000000000ull;
    s.BeginChunk(1, pid, mono0);
    gt::test::NcclCommSpec c;
    c.comm_hash = 0xabcdef;
    c.n_ranks = 8;
    c.init_ts_ns = mono0;
    c.init_tid = pid + 1;
    s.NcclComm(c);
    s.EndChunk();
    const long ops = events / 5;
    auto ev = [](uint32_t kind, uint64_t ts, uint64_t id, uint32_t type, uint64_t parent) {
      gt::test::NcclSpec e;
      e.kind = kind;
      e.ts_ns = ts;
      e.event_id = id;
      e.type = type;
      e.parent_id = parent;
      e.comm_index = kind == 1 ? 1 : 0;
      return e;
    };
    auto t0 = [mono0](long op) { return mono0 + 1000 + static_cast<uint64_t>(op) * 20000; };
    long chunks = 0;
    for (long first = 0; first < ops; first += 800) {
      const long last = std::min(ops, first + 800);
      if ((first / 800) % 50 == 0) {  // a clock pair about once a second of the stream
        s.BeginChunk(4, pid, t0(first));
        s.ClockSnapshot(t0(first), real0 + (t0(first) - mono0));
        s.EndChunk();
      }
      s.BeginChunk(2, pid + 1, t0(first));
      for (long op = first; op < last; ++op) {
        const uint64_t t = t0(op), id = static_cast<uint64_t>(op) * 5;
        auto api = ev(1, t, id + 1, 1u << 9, 0);  // COLL_API
        api.func = "AllReduce";
        api.datatype = "ncclFloat32";
        api.count = 1u << 20;
        s.Nccl(api);
        auto coll = ev(1, t + 100, id + 2, 1u << 1, id + 1);  // COLL
        coll.func = "AllReduce";
        coll.datatype = "ncclFloat32";
        coll.algo = "RING";
        coll.proto = "SIMPLE";
        coll.count = 1u << 20;
        coll.seq_number = static_cast<uint64_t>(op);
        coll.n_channels = 2;
        s.Nccl(coll);
        s.Nccl(ev(2, t + 200, id + 2, 0, 0));
        s.Nccl(ev(2, t + 300, id + 1, 0, 0));
      }
      s.EndChunk();
      s.BeginChunk(3, pid + 2, t0(first));
      for (long op = first; op < last; ++op) {
        const uint64_t t = t0(op), id = static_cast<uint64_t>(op) * 5;
        for (uint64_t ch = 0; ch < 2; ++ch) {
          auto start = ev(1, t + 2000 + ch, id + 3 + ch, 1u << 6, id + 2);  // KERNEL_CH
          start.channel_id = static_cast<uint32_t>(ch);
          start.gpu_timer_ns = real0 + (t + 1000 - mono0);
          s.Nccl(start);
          auto stop = ev(2, t + 5000, id + 3 + ch, 0, 0);
          stop.gpu_timer_ns = real0 + (t + 4000 - mono0);
          s.Nccl(stop);
        }
        s.Nccl(ev(1, t + 1500, id + 5, 1u << 3, id + 2));  // PROXY_OP
        auto state = ev(3, t + 1600, id + 5, 0, 0);
        state.state = 19;
        s.Nccl(state);
        s.Nccl(ev(2, t + 6000, id + 5, 0, 0));
      }
      s.EndChunk();
      chunks += 2;
    }
    s.Close();
    s.WriteTo(argv[1]);
    std::printf("nccl events=%ld chunks=%ld\n", ops * 5, chunks);
    return 0;
  }
  if (kind == "ranges") {
    const uint64_t mono0 = 1000000000;
    s.BeginChunk(1, pid, mono0);
    s.Device(gt::test::DeviceSpec{});
    s.Context(gt::test::ContextSpec{});
    gt::test::RangeConfigSpec cfg;
    cfg.metrics = {"sm_active", "dram_read"};
    s.RangeConfig(cfg);
    s.EndChunk();
    const long per_pass = 8, passes = (events + per_pass - 1) / per_pass;
    long written = 0, chunks = 0;
    for (long first = 0; first < passes; first += 512) {
      const long last = std::min(passes, first + 512);
      s.BeginChunk(2, pid, mono0 + 1000 + static_cast<uint64_t>(first) * 100000);
      for (long p = first; p < last; ++p) {
        const uint64_t start = mono0 + 1000 + static_cast<uint64_t>(p) * 100000;
        for (long k = 0; k < per_pass; ++k) {
          gt::test::KernelSpec ks;
          ks.start_ns = start + 1000 + static_cast<uint64_t>(k) * 5000;
          ks.duration_ns = 3000;
          ks.correlation_id = static_cast<uint32_t>(p * per_pass + k + 1);
          ks.name = "kernel_" + std::to_string(k);
          s.Kernel(ks);
        }
      }
      s.EndChunk();
      s.BeginChunk(3, pid + 1, mono0 + 1000 + static_cast<uint64_t>(first) * 100000);
      for (long p = first; p < last; ++p) {
        const uint64_t start = mono0 + 1000 + static_cast<uint64_t>(p) * 100000;
        for (long k = 0; k < per_pass && written < events; ++k, ++written) {
          gt::test::RangeResultSpec r;
          r.range_name = std::to_string(k);
          r.range_index = static_cast<uint32_t>(k);
          r.pass_id = static_cast<uint64_t>(p);
          r.pass_start_ns = start;
          r.pass_end_ns = start + 99999;
          r.values = {static_cast<double>(p % 97) + 0.5, static_cast<double>(k) * 1.25};
          s.RangeResult(r);
        }
      }
      s.EndChunk();
      chunks += 2;
    }
    s.Close();
    s.WriteTo(argv[1]);
    std::printf("range rows=%ld chunks=%ld\n", written, chunks);
    return 0;
  }
  if (kind != "nvtx") {
    std::fprintf(stderr, "make_stream: --kind is nvtx or graph\n");
    return 2;
  }
  const long per_chunk = 8192;  // events per chunk, as a busy thread's drain would produce
  long written = 0;
  uint64_t ts = 1000000000;
  long chunk_index = 0;
  while (written < events) {
    uint32_t tid = pid + static_cast<uint32_t>(chunk_index % threads);
    s.BeginChunk(1 + chunk_index % threads, tid, ts);
    for (long i = 0; i + 4 <= per_chunk && written < events; i += 4, written += 4) {
      std::string name = "range-" + std::to_string((written / 4) % 100);
      gt::test::NvtxSpec e;
      e.kind = gt::field::enums::kNvtxPush;
      e.ts_ns = ts;
      e.text = name;
      s.Nvtx(e);
      e.ts_ns = ts + 100;
      e.text = "inner";
      e.depth = 1;
      s.Nvtx(e);
      gt::test::NvtxSpec pop;
      pop.kind = gt::field::enums::kNvtxPop;
      pop.ts_ns = ts + 900;
      pop.depth = 1;
      s.Nvtx(pop);
      pop.ts_ns = ts + 1000;
      pop.depth = 0;
      s.Nvtx(pop);
      ts += 1100;
    }
    s.EndChunk();
    ++chunk_index;
  }
  s.Close();
  s.WriteTo(argv[1]);
  std::printf("events=%ld chunks=%ld\n", written, chunk_index);
  return 0;
}
