// anchor_scan_bench: the clock-alignment scan of `gtrace export` (many streams; anchor_scan.h) on one
// stream, alone, so that /usr/bin/time's peak RSS is the scan's: ScanAnchors with its default cap
// (kAnchorScanMaxOps operations held) or with --max-ops N (0: no cap, every operation held, as
// before the cap); with --held, the scan ScanAnchors replaced (every NCCL event held:
// tests/common/held_anchor_scan.h); with --floor, one read of the stream that only counts its NCCL
// records (the reader alone: what any scan pays per read).
//
//   anchor_scan_bench [--held | --floor | --max-ops N] STREAM.gtrace
// Prints "ends=N sum=S first=... last=...": the number of collective ends and an order-sensitive
// checksum of every end (comm hash, function, sequence number, GPU end), so that two scans' outputs
// can be compared (bench/offline_memory/anchor_scan.sh does); --floor prints "records=N". ScanAnchors
// also prints "operations=N held=H seq_shift=K" to stderr. Single-threaded.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "tests/common/held_anchor_scan.h"
#include "tools/export/anchor_scan.h"
#include "tools/stream/stream_reader.h"

int main(int argc, char** argv) {
  bool held = false, floor = false;
  gt::exporter::AnchorScanOptions options;
  std::string path;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--held")
      held = true;
    else if (a == "--floor")
      floor = true;
    else if (a == "--max-ops" && i + 1 < argc)
      options.max_ops = std::strtoull(argv[++i], nullptr, 10);
    else
      path = a;
  }
  if (path.empty()) {
    std::fprintf(stderr, "usage: anchor_scan_bench [--held | --floor | --max-ops N] STREAM.gtrace\n");
    return 2;
  }
  if (floor) {
    gt::stream::StreamReader reader;
    gt::Status st = reader.Open(path);
    gt::schema::Chunk chunk;
    uint64_t records = 0;
    bool has = true;
    while (st.ok() && (st = reader.Next(&chunk, &has)).ok() && has)
      records += static_cast<uint64_t>(chunk.nccl_size());
    if (!st.ok()) {
      std::fprintf(stderr, "anchor_scan_bench: %s\n", st.message().c_str());
      return 1;
    }
    std::printf("records=%llu\n", static_cast<unsigned long long>(records));
    return 0;
  }
  gt::exporter::StreamAnchors out;
  gt::Status st = held ? gt::test::ScanAnchorsHeld(path, &out) : gt::exporter::ScanAnchors(path, &out, options);
  if (!st.ok()) {
    std::fprintf(stderr, "anchor_scan_bench: %s\n", st.message().c_str());
    return 1;
  }
  if (!held) {
    std::fprintf(stderr, "operations=%llu held=%llu seq_shift=%u\n", static_cast<unsigned long long>(out.operations),
                 static_cast<unsigned long long>(out.held_operations), out.seq_shift);
  }
  uint64_t sum = 0;  // FNV-1a over the ends, in order
  auto mix = [&sum](uint64_t v) {
    for (int b = 0; b < 8; ++b) {
      sum ^= (v >> (8 * b)) & 0xff;
      sum *= 1099511628211ull;
    }
  };
  sum = 14695981039346656037ull;
  for (const gt::exporter::CollectiveEnd& e : out.ends) {
    mix(e.comm_hash);
    for (char c : e.func)
      mix(static_cast<unsigned char>(c));
    mix(e.seq);
    mix(static_cast<uint64_t>(e.gpu_end_ns));
  }
  std::printf("ends=%zu sum=%016llx", out.ends.size(), static_cast<unsigned long long>(sum));
  if (!out.ends.empty()) {
    std::printf(" first=%llu:%lld last=%llu:%lld", static_cast<unsigned long long>(out.ends.front().seq),
                static_cast<long long>(out.ends.front().gpu_end_ns),
                static_cast<unsigned long long>(out.ends.back().seq),
                static_cast<long long>(out.ends.back().gpu_end_ns));
  }
  std::printf("\n");
  return 0;
}
