// The offline TSC conversion: TickClock (piecewise-linear between calibration pairs),
// ConvertChunkTimes (every time field of a chunk) and StreamReader presenting a CLOCK_ID_TSC stream
// as a CLOCK_MONOTONIC one, while a monotonic (older) stream is read exactly as before.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "gtrace.pb.h"
#include "schema/crc32c.h"
#include "schema/format.h"
#include "tests/common/test_util.h"
#include "tools/stream/chunk_times.h"
#include "tools/stream/stream_reader.h"
#include "tools/stream/tick_clock.h"

namespace gt::stream {
namespace {

TEST(TickClock, InterpolatesEachSegmentWithItsOwnRate) {
  TickClock c;
  // 3 ticks per ns for the first second, then 3.000003 (a 1 ppm drift, as NTP slews CLOCK_MONOTONIC).
  ASSERT_TRUE(c.Build({{3000000000ull, 1000000000ull}, {6000000000ull, 2000000000ull}, {9000003000ull, 3000000000ull}}));
  EXPECT_EQ(c.pair_count(), 3u);
  EXPECT_EQ(c.ToNs(3000000000ull), 1000000000ull);
  EXPECT_EQ(c.ToNs(4500000000ull), 1500000000ull);
  EXPECT_EQ(c.ToNs(6000000000ull), 2000000000ull);
  EXPECT_EQ(c.ToNs(7500001500ull), 2500000000ull);  // middle of the second segment
  EXPECT_EQ(c.ToNs(9000003000ull), 3000000000ull);
  // Outside the pairs: the whole run's slope (6000003000 ticks over 2 s) from the nearest pair.
  EXPECT_EQ(c.ToNs(9000003000ull + 3000001500ull), 4000000000ull);
  EXPECT_EQ(c.SpanNs(3000000000ull, 3000), 1000u);
  // Lookups out of order give the same answers (the segment hint is only a hint).
  EXPECT_EQ(c.ToNs(4500000000ull), 1500000000ull);
}

TEST(TickClock, DropsPairsThatGoBackwardsAndNeedsOne) {
  TickClock c;
  EXPECT_FALSE(c.Build({}));
  EXPECT_FALSE(c.active());
  ASSERT_TRUE(c.Build({{300, 100}, {600, 200}, {600, 210}, {900, 150}, {1200, 400}}));
  EXPECT_EQ(c.pair_count(), 3u);  // (600, 210): same tick; (900, 150): CLOCK_MONOTONIC went back
  EXPECT_EQ(c.ToNs(900), 300u);
  ASSERT_TRUE(c.Build({{3000, 1000}}));  // one pair: 1 tick = 1 ns from it (nothing better known)
  EXPECT_EQ(c.ToNs(3500), 1500u);
}

TEST(ChunkTimes, DeltaChainsDurationsAndAbsoluteFields) {
  TickClock c;
  ASSERT_TRUE(c.Build({{3000, 1000}, {3000000, 1000000}}));  // 3 ticks per ns
  schema::Chunk k;
  k.set_base_ns(30000);  // 10000 ns
  auto* n1 = k.add_nvtx();
  n1->set_ts_delta_ns(300);  // 10100 ns
  auto* n2 = k.add_nvtx();
  n2->set_ts_delta_ns(600);  // 10300 ns
  auto* api = k.add_cuda_api_calls();
  api->set_start_delta_ns(3000);  // 11000 ns
  api->set_duration_ns(1500);     // 500 ns
  auto* sample = k.add_gpu_metrics_samples();
  sample->set_end_delta_ns(6000);  // end 12000 ns
  sample->set_duration_ns(3000);   // 1000 ns before the end
  k.add_drops()->set_ts_ns(60000);
  k.mutable_clock()->set_stream_clock_ns(90000);
  k.mutable_clock()->set_monotonic_ns(30001);  // the pair's own reading wins
  k.add_nccl_comms()->set_init_ts_ns(0);       // absent stays absent
  auto* nccl = k.add_nccl();
  nccl->set_ts_delta_ns(-3000);  // 9000 ns: a chain may step back
  nccl->set_gpu_timer_ns(123456);  // the GPU's clock: untouched
  ConvertChunkTimes(c, &k);
  EXPECT_EQ(k.base_ns(), 10000u);
  EXPECT_EQ(k.nvtx(0).ts_delta_ns(), 100);
  EXPECT_EQ(k.nvtx(1).ts_delta_ns(), 200);
  EXPECT_EQ(k.cuda_api_calls(0).start_delta_ns(), 1000);
  EXPECT_EQ(k.cuda_api_calls(0).duration_ns(), 500u);
  EXPECT_EQ(k.gpu_metrics_samples(0).end_delta_ns(), 2000);
  EXPECT_EQ(k.gpu_metrics_samples(0).duration_ns(), 1000u);
  EXPECT_EQ(k.drops(0).ts_ns(), 20000u);
  EXPECT_EQ(k.clock().stream_clock_ns(), 30001u);
  EXPECT_EQ(k.nccl_comms(0).init_ts_ns(), 0u);
  EXPECT_EQ(k.nccl(0).ts_delta_ns(), -1000);
  EXPECT_EQ(k.nccl(0).gpu_timer_ns(), 123456u);
}

// CUPTI refused the timestamp callback: the times from its activity records are CUPTI's own ns and
// go through the CUPTI clock; what gtrace recorded itself (NVTX, graph launches, losses, the pairs'
// tick readings) through the tick clock, in the same chunk.
TEST(ChunkTimes, CuptiRecordTimesGoThroughTheCuptiClock) {
  TickClock ticks;
  ASSERT_TRUE(ticks.Build({{3000, 1000}, {3000000, 1000000}}));  // 3 ticks per ns
  TickClock cupti;
  ASSERT_TRUE(cupti.Build({{500000, 1000}, {2500000, 1001000}}));  // 2 CUPTI ns per ns, its own origin
  schema::Chunk k;  // a process-level chunk: base 0, the first delta of each chain is absolute
  auto* kernel = k.add_cuda_kernels();
  kernel->set_start_delta_ns(520000);  // CUPTI 520000 = 11000 ns
  kernel->set_duration_ns(4000);       // 2000 ns
  auto* kernel2 = k.add_cuda_kernels();
  kernel2->set_start_delta_ns(2000);  // CUPTI 522000 = 12000 ns
  auto* api = k.add_cuda_api_calls();
  api->set_start_delta_ns(510000);  // 6000 ns
  api->set_duration_ns(30000);      // 15000 ns
  k.add_cuda_memsets()->set_start_delta_ns(540000);              // 21000 ns
  k.add_cuda_events()->set_device_timestamp_ns(520000);          // 11000 ns
  k.add_cuda_memory_events()->set_ts_delta_ns(520000);           // 11000 ns
  k.add_nvtx()->set_ts_delta_ns(33000);                          // ticks: 11000 ns
  k.add_cuda_graph_launches()->set_ts_delta_ns(36000);           // ticks: 12000 ns
  auto* pair = k.add_cupti_clock_pairs();
  pair->set_cupti_ns(520000);
  pair->set_stream_clock_ns(33000);  // ticks: 11000 ns
  ConvertChunkTimes(ticks, &k, &cupti);
  EXPECT_EQ(k.cuda_kernels(0).start_delta_ns(), 11000);
  EXPECT_EQ(k.cuda_kernels(0).duration_ns(), 2000u);
  EXPECT_EQ(k.cuda_kernels(1).start_delta_ns(), 1000);
  EXPECT_EQ(k.cuda_api_calls(0).start_delta_ns(), 6000);
  EXPECT_EQ(k.cuda_api_calls(0).duration_ns(), 15000u);
  EXPECT_EQ(k.cuda_memsets(0).start_delta_ns(), 21000);
  EXPECT_EQ(k.cuda_events(0).device_timestamp_ns(), 11000u);
  EXPECT_EQ(k.cuda_memory_events(0).ts_delta_ns(), 11000);
  EXPECT_EQ(k.nvtx(0).ts_delta_ns(), 11000);
  EXPECT_EQ(k.cuda_graph_launches(0).ts_delta_ns(), 12000);
  EXPECT_EQ(k.cupti_clock_pairs(0).stream_clock_ns(), 11000u);
  EXPECT_EQ(k.cupti_clock_pairs(0).cupti_ns(), 520000u);  // CUPTI's reading stays as recorded
}

// Every `*_ns` field reachable from Chunk is either converted by ConvertChunkTimes or listed here as
// not on the stream clock. A new time field fails this test until chunk_times.cc handles it.
void CollectNsFields(const google::protobuf::Descriptor* d, std::set<std::string>* seen, std::set<std::string>* out) {
  if (!seen->insert(d->full_name()).second) return;
  for (int i = 0; i < d->field_count(); ++i) {
    const google::protobuf::FieldDescriptor* f = d->field(i);
    const std::string& n = f->name();
    if (n.size() > 3 && n.compare(n.size() - 3, 3, "_ns") == 0) out->insert(d->name() + "." + n);
    if (f->message_type() != nullptr) CollectNsFields(f->message_type(), seen, out);
  }
}

TEST(ChunkTimes, EveryNsFieldIsConvertedOrDeliberatelyLeft) {
  std::set<std::string> seen, fields;
  CollectNsFields(schema::Chunk::descriptor(), &seen, &fields);
  const std::set<std::string> converted = {
      "Chunk.base_ns", "ClockSnapshot.stream_clock_ns", "DropReport.ts_ns", "StreamStats.end_ns", "Diagnostic.ts_ns",
      "ProfilerOverhead.start_ns", "ProfilerOverhead.end_ns",
      "NvtxEvent.ts_delta_ns", "NvtxDomain.create_ts_ns",
      "CudaApiCall.start_delta_ns", "CudaApiCall.duration_ns", "CudaKernel.start_delta_ns", "CudaKernel.duration_ns",
      "CudaMemcpy.start_delta_ns", "CudaMemcpy.duration_ns", "CudaMemset.start_delta_ns", "CudaMemset.duration_ns",
      "CudaSynchronization.start_delta_ns", "CudaSynchronization.duration_ns", "CudaEventRecord.device_timestamp_ns",
      "CudaGraphTrace.start_delta_ns", "CudaGraphTrace.duration_ns", "CudaOverhead.start_delta_ns",
      "CudaOverhead.duration_ns", "CudaMemoryEvent.ts_delta_ns", "CudaMemoryPoolEvent.ts_delta_ns",
      "CudaGraphLaunch.ts_delta_ns", "CudaGraphEvent.ts_delta_ns", "CaptureWindowEvent.ts_ns", "CudaRecordLoss.ts_ns",
      "CuptiClockPair.stream_clock_ns",
      "NcclEvent.ts_delta_ns", "NcclComm.init_ts_ns", "NcclPoolStats.ts_ns",
      "GpuMetricsDevice.ts_ns", "GpuMetricsSample.end_delta_ns", "GpuMetricsSample.duration_ns", "GpuMetricsLoss.ts_ns",
      "RangeMetricsResult.pass_start_ns", "RangeMetricsResult.pass_end_ns",
      "LoadedModule.loaded_ts_ns", "ModuleUnload.ts_ns", "CudaApiBacktrace.start_delta_ns",
      "CudaApiBacktrace.duration_ns", "CallStackLoss.ts_ns", "OsrtCall.start_delta_ns", "OsrtCall.duration_ns",
      "CpuSample.ts_delta_ns", "CpuSamplingLoss.ts_ns"};
  const std::set<std::string> not_stream_clock = {
      "ClockSnapshot.realtime_ns", "ClockSnapshot.uncertainty_ns", "ClockSnapshot.monotonic_ns",
      "CudaTraceInfo.cupti_clock_offset_ns", "NcclEvent.gpu_timer_ns",
      // CUPTI's own clock and the pair's bracket: the reader builds the CUPTI conversion from them.
      "CuptiClockPair.cupti_ns", "CuptiClockPair.uncertainty_ns", "GpuMetricsConfig.sampling_interval_ns",
      "GpuMetricsDevice.sampling_interval_ns", "GpuMetricsDevice.clock_offset_ns", "CallStackClassThreshold.threshold_ns",
      "OsrtConfig.threshold_ns", "OsrtConfig.backtrace_threshold_ns",
      // CPU time (the cpu-clock count between two samples of a thread), not a point in time.
      "CpuSamplingConfig.period_ns", "CpuSample.period_ns"};
  // Compact CUDA columns: the reader expands them into CudaKernel / CudaApiCall messages (converted
  // above) before the conversion runs (tools/stream/cuda_compact.h).
  const std::set<std::string> expanded_first = {"CudaKernelBatch.start_delta_ns", "CudaKernelBatch.duration_ns",
                                                "CudaApiBatch.start_delta_ns", "CudaApiBatch.duration_ns"};
  for (const std::string& f : fields) {
    EXPECT_TRUE(converted.count(f) + not_stream_clock.count(f) + expanded_first.count(f) == 1)
        << f << ": convert it in chunk_times.cc or list it";
  }
  for (const std::string& f : converted) EXPECT_TRUE(fields.count(f)) << f << " is gone from the schema";
}

// A stream file written by hand: magic, header, chunks with their CRC (stream_reader.h's framing).
void PutVarint(std::string* out, uint64_t v) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}
std::string StreamBytes(const schema::StreamHeader& h, const std::vector<schema::Chunk>& chunks) {
  std::string out;
  out.push_back(static_cast<char>((kStreamFileMagicField << 3) | 1));
  uint64_t magic = kStreamMagic;
  out.append(reinterpret_cast<const char*>(&magic), 8);
  std::string hb = h.SerializeAsString();
  out.push_back(static_cast<char>((kStreamFileHeaderField << 3) | 2));
  PutVarint(&out, hb.size());
  out += hb;
  for (const schema::Chunk& c : chunks) {
    std::string body = c.SerializeAsString();  // no crc32c field set: add it in front
    uint32_t crc = Crc32c(body.data(), body.size());
    std::string framed;
    framed.push_back(static_cast<char>((1u << 3) | 5));
    framed.append(reinterpret_cast<const char*>(&crc), 4);
    framed += body;
    out.push_back(static_cast<char>((kStreamFileChunkField << 3) | 2));
    PutVarint(&out, framed.size());
    out += framed;
  }
  return out;
}

struct Read {
  schema::StreamHeader header;
  schema::ClockId recorded = schema::CLOCK_ID_UNSPECIFIED;
  std::vector<uint64_t> nvtx_ns;  // absolute
};
Read ReadAll(const std::string& path) {
  Read r;
  StreamReader reader;
  Status st = reader.Open(path);
  EXPECT_TRUE(st.ok()) << st.message();
  r.header = reader.header();
  r.recorded = reader.recorded_clock();
  schema::Chunk c;
  bool has = true;
  while (reader.Next(&c, &has).ok() && has) {
    uint64_t t = c.base_ns();
    for (const auto& e : c.nvtx()) {
      t += static_cast<uint64_t>(e.ts_delta_ns());
      r.nvtx_ns.push_back(t);
    }
  }
  return r;
}

schema::StreamHeader Header(schema::ClockId clock, uint64_t start_stream, uint64_t start_mono) {
  schema::StreamHeader h;
  h.set_format_major(kFormatMajor);
  h.set_pid(42);
  h.set_clock(clock);
  h.mutable_start_clock()->set_stream_clock_ns(start_stream);
  h.mutable_start_clock()->set_realtime_ns(1700000000000000000ull);
  if (clock == schema::CLOCK_ID_TSC) h.mutable_start_clock()->set_monotonic_ns(start_mono);
  return h;
}

schema::Chunk NvtxChunk(uint64_t base, std::vector<int64_t> deltas) {
  schema::Chunk c;
  c.set_sequence_id(1);
  c.set_tid(42);
  c.set_base_ns(base);
  for (int64_t d : deltas) {
    auto* e = c.add_nvtx();
    e->set_kind(schema::NVTX_EVENT_KIND_PUSH);
    e->set_ts_delta_ns(d);
  }
  return c;
}

schema::Chunk Pair(uint64_t ticks, uint64_t mono) {
  schema::Chunk c;
  c.mutable_clock()->set_stream_clock_ns(ticks);
  c.mutable_clock()->set_monotonic_ns(mono);
  return c;
}

TEST(TickStream, ReaderConvertsEveryChunkWithPairsFromLaterInTheFile) {
  test::TempDir dir;
  // 2.5 ticks per ns; the events' chunk comes before the pair that closes their segment.
  std::string bytes = StreamBytes(Header(schema::CLOCK_ID_TSC, 2500000, 1000000),
                                  {NvtxChunk(5000000, {0, 250, 2500000}), Pair(12500000, 5000000)});
  std::ofstream(dir.File("t.gtrace"), std::ios::binary) << bytes;
  Read r = ReadAll(dir.File("t.gtrace"));
  EXPECT_EQ(r.recorded, schema::CLOCK_ID_TSC);
  EXPECT_EQ(r.header.clock(), schema::CLOCK_ID_MONOTONIC);
  EXPECT_EQ(r.header.start_clock().stream_clock_ns(), 1000000u);
  EXPECT_EQ(r.nvtx_ns, (std::vector<uint64_t>{2000000, 2000100, 3000100}));
}

TEST(TickStream, OldMonotonicStreamIsReadUnchanged) {
  test::TempDir dir;
  std::string bytes = StreamBytes(Header(schema::CLOCK_ID_MONOTONIC, 2500000, 0),
                                  {NvtxChunk(5000000, {0, 250, 2500000}), Pair(12500000, 0)});
  std::ofstream(dir.File("m.gtrace"), std::ios::binary) << bytes;
  Read r = ReadAll(dir.File("m.gtrace"));
  EXPECT_EQ(r.recorded, schema::CLOCK_ID_MONOTONIC);
  EXPECT_EQ(r.header.clock(), schema::CLOCK_ID_MONOTONIC);
  EXPECT_EQ(r.header.start_clock().stream_clock_ns(), 2500000u);
  EXPECT_EQ(r.nvtx_ns, (std::vector<uint64_t>{5000000, 5000250, 7500250}));
}

TEST(TickStream, TickStreamWithoutAnyPairIsAClearError) {
  test::TempDir dir;
  schema::StreamHeader h = Header(schema::CLOCK_ID_TSC, 0, 0);
  h.clear_start_clock();
  std::ofstream(dir.File("bad.gtrace"), std::ios::binary) << StreamBytes(h, {NvtxChunk(5000000, {0})});
  StreamReader reader;
  Status st = reader.Open(dir.File("bad.gtrace"));
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("without a usable calibration pair"), std::string::npos) << st.message();
}

// A TSC stream with CuptiClockPairs: the reader maps CUPTI's times through the pairs (whose tick
// readings go through the tick clock), so a kernel lands where the NVTX event recorded at the same
// instant does.
TEST(TickStream, CuptiClockPairsPutCuptiTimesOnTheStreamTimeline) {
  test::TempDir dir;
  schema::Chunk pairs;  // the drain thread's process-level chunk (base 0)
  pairs.set_sequence_id(2);
  auto* p1 = pairs.add_cupti_clock_pairs();
  p1->set_cupti_ns(7000000);
  p1->set_stream_clock_ns(5000000);  // 2000000 ns
  auto* p2 = pairs.add_cupti_clock_pairs();
  p2->set_cupti_ns(10000000);
  p2->set_stream_clock_ns(10000000);  // 4000000 ns: CUPTI's clock runs 1.5 ns per ns here
  auto* kernel = pairs.add_cuda_kernels();
  kernel->set_start_delta_ns(8500000);  // CUPTI 8500000 = 3000000 ns
  kernel->set_duration_ns(1500);        // 1000 ns
  // 2.5 ticks per ns; the NVTX push at tick 7500000 = 3000000 ns.
  std::string bytes = StreamBytes(Header(schema::CLOCK_ID_TSC, 2500000, 1000000),
                                  {NvtxChunk(7500000, {0}), pairs, Pair(12500000, 5000000)});
  std::ofstream(dir.File("c.gtrace"), std::ios::binary) << bytes;
  StreamReader reader;
  Status st = reader.Open(dir.File("c.gtrace"));
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_TRUE(reader.cupti_clock().active());
  EXPECT_EQ(reader.cupti_clock().pair_count(), 2u);
  std::vector<uint64_t> nvtx_ns, kernel_ns, pair_ns;
  uint64_t kernel_duration = 0;
  schema::Chunk c;
  bool has = true;
  while (reader.Next(&c, &has).ok() && has) {
    for (const auto& e : c.nvtx()) nvtx_ns.push_back(c.base_ns() + static_cast<uint64_t>(e.ts_delta_ns()));
    for (const auto& k : c.cuda_kernels()) {
      kernel_ns.push_back(c.base_ns() + static_cast<uint64_t>(k.start_delta_ns()));
      kernel_duration = k.duration_ns();
    }
    for (const auto& p : c.cupti_clock_pairs()) pair_ns.push_back(p.stream_clock_ns());
  }
  EXPECT_EQ(nvtx_ns, (std::vector<uint64_t>{3000000}));
  EXPECT_EQ(kernel_ns, (std::vector<uint64_t>{3000000}));
  EXPECT_EQ(kernel_duration, 1000u);
  EXPECT_EQ(pair_ns, (std::vector<uint64_t>{2000000, 4000000}));
}

// Without CuptiClockPairs (CUPTI took gtrace's callback) CUPTI's times are ticks like the rest.
TEST(TickStream, WithoutCuptiClockPairsKernelsAreTicks) {
  test::TempDir dir;
  schema::Chunk kernels;
  kernels.set_sequence_id(2);
  kernels.add_cuda_kernels()->set_start_delta_ns(7500000);  // ticks: 3000000 ns
  std::string bytes = StreamBytes(Header(schema::CLOCK_ID_TSC, 2500000, 1000000),
                                  {kernels, Pair(12500000, 5000000)});
  std::ofstream(dir.File("k.gtrace"), std::ios::binary) << bytes;
  StreamReader reader;
  Status st = reader.Open(dir.File("k.gtrace"));
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_FALSE(reader.cupti_clock().active());
  schema::Chunk c;
  bool has = true;
  std::vector<uint64_t> kernel_ns;
  while (reader.Next(&c, &has).ok() && has) {
    for (const auto& k : c.cuda_kernels()) kernel_ns.push_back(c.base_ns() + static_cast<uint64_t>(k.start_delta_ns()));
  }
  EXPECT_EQ(kernel_ns, (std::vector<uint64_t>{3000000}));
}

}  // namespace
}  // namespace gt::stream
