// make_stream: writes a synthetic gtrace stream of N NVTX events (push/pop pairs on T threads, 100
// distinct names, nesting depth 2) with the library's own encoder, for the export benchmark.
//
//   make_stream OUT.gtrace [--events N] [--threads T] [--pid P] [--kind nvtx|graph]
// (--pid: distinct pids make distinct processes, for the all-cores export of several streams)
// --kind graph: N CUDA graph-trace rows instead, each launch's callback record first (one device and
// context, 4 streams, 64 graphs, 17 executable graphs; the records the CUDA export must hold until
// the stream's end before the spill database, bench/offline_memory).
#include <cstdio>
#include <cstdlib>
#include <string>

#include "collector/schema_fields.h"
#include "tests/common/synthetic_stream.h"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: make_stream OUT.gtrace [--events N] [--threads T] [--pid P] [--kind nvtx|graph]\n");
    return 2;
  }
  long events = 10000000, threads = 8;
  uint32_t pid = 4242;
  std::string kind = "nvtx";
  for (int i = 2; i + 1 < argc; i += 2) {
    std::string f = argv[i];
    if (f == "--events") events = std::atol(argv[i + 1]);
    if (f == "--threads") threads = std::atol(argv[i + 1]);
    if (f == "--pid") pid = static_cast<uint32_t>(std::atol(argv[i + 1]));
    if (f == "--kind") kind = argv[i + 1];
  }
  gt::test::SyntheticStream s(pid, 1000000000, 1700000000000000000ull);
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
