// NCCL plugin events of a long stream, exported through the spill database
// (tools/export/nccl_spill_model.h), against the in-memory model they replaced (NcclStreamModel,
// now test code: tests/common/nccl_stream_model.h): every event row, state row, operation row and
// GPU-clock window the same, in the same order. The stream has what makes the spill model apply records at the
// end: states read after their event's stop (another thread's chunk), a second stop, stops of ids
// never started (orphans), a stop read before its start, events never stopped; and a GPU timer that
// lags the base mapping in the second half (per-window corrections).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "inject/nccl/nccl_fields.h"
#include "tests/common/export_stream.h"
#include "tests/common/held_anchor_scan.h"
#include "tests/common/nccl_stream_model.h"
#include "tests/common/synthetic_stream.h"
#include "tests/common/test_util.h"
#include "tools/export/anchor_scan.h"
#include "tools/export/exporter.h"
#include "tools/export/nccl_model.h"

namespace gt {
namespace {

constexpr uint32_t kPid = 6161;
constexpr uint64_t kMono0 = test::kStreamMono0Ns;
constexpr uint64_t kReal0 = test::kStreamReal0Ns;
constexpr int kOps = 20000;
constexpr int kBlock = 100;  // operations per chunk
namespace k = nccl::field::kind;

uint64_t T0(int op) {
  return kMono0 + 1000 + static_cast<uint64_t>(op) * 100000;
}
uint64_t Gpu(int op, uint64_t host_ns) {  // the GPU timer of a host time: lags 200 us in the second half
  return kReal0 + (host_ns - kMono0) - (op >= kOps / 2 ? 200000 : 0) + static_cast<uint64_t>(op % 7) * 10;
}
uint64_t Id(int op, int which) {
  return static_cast<uint64_t>(op) * 10 + static_cast<uint64_t>(which);
}
enum { kApi = 1, kColl = 2, kCh1 = 3, kCh2 = 4, kProxy = 5 };

test::NcclSpec Ev(uint32_t kind, uint64_t ts, uint64_t id, uint32_t type = 0, uint64_t parent = 0) {
  test::NcclSpec e;
  e.kind = kind;
  e.ts_ns = ts;
  e.event_id = id;
  e.type = type;
  e.parent_id = parent;
  e.comm_index = kind == k::kStart ? 1 : 0;
  return e;
}

void AppThread(test::SyntheticStream& s, int block) {
  s.BeginChunk(1, kPid + 1, T0(block * kBlock));
  for (int op = block * kBlock; op < (block + 1) * kBlock; ++op) {
    const uint64_t t = T0(op);
    test::NcclSpec api = Ev(k::kStart, t, Id(op, kApi), schema::NCCL_EVENT_TYPE_COLL_API);
    api.func = "AllReduce";
    api.datatype = "ncclFloat32";
    api.count = 1024 + static_cast<uint64_t>(op % 5);
    s.Nccl(api);
    test::NcclSpec coll = Ev(k::kStart, t + 100, Id(op, kColl), schema::NCCL_EVENT_TYPE_COLL, Id(op, kApi));
    coll.func = "AllReduce";
    coll.datatype = "ncclFloat32";
    coll.algo = "RING";
    coll.proto = "SIMPLE";
    coll.count = api.count;
    coll.seq_number = static_cast<uint64_t>(op);
    coll.n_channels = 2;
    s.Nccl(coll);
    s.Nccl(Ev(k::kStop, t + 200, Id(op, kColl)));
    s.Nccl(Ev(k::kStop, t + 300, Id(op, kApi)));
    if (op % 500 == 0) {  // read before its start: an orphan, and the channel stays open
      test::NcclSpec stop = Ev(k::kStop, t + 5000, Id(op, kCh2));
      stop.gpu_timer_ns = Gpu(op, t + 3500);
      s.Nccl(stop);
    }
    if (op % 333 == 0)
      s.Nccl(Ev(k::kStop, t + 400, 900000000 + static_cast<uint64_t>(op)));  // never started
  }
  s.EndChunk();
}

void ProxyThread(test::SyntheticStream& s, int block) {
  s.BeginChunk(2, kPid + 2, T0(block * kBlock));
  for (int op = block * kBlock; op < (block + 1) * kBlock; ++op) {
    const uint64_t t = T0(op);
    for (int ch = 0; ch < 2; ++ch) {
      const uint64_t id = Id(op, ch == 0 ? kCh1 : kCh2);
      test::NcclSpec start =
          Ev(k::kStart, t + 2000 + static_cast<uint64_t>(ch), id, schema::NCCL_EVENT_TYPE_KERNEL_CH, Id(op, kColl));
      start.channel_id = static_cast<uint32_t>(ch);
      start.gpu_timer_ns = Gpu(op, t + 1000 + static_cast<uint64_t>(ch) * 10);
      s.Nccl(start);
      if (ch == 1 && op % 500 == 0)
        continue;  // its stop came first
      test::NcclSpec stop = Ev(k::kStop, t + 5000, id);
      stop.gpu_timer_ns = Gpu(op, t + 3500 + static_cast<uint64_t>(ch) * 7);
      s.Nccl(stop);
    }
    s.Nccl(Ev(k::kStart, t + 1500, Id(op, kProxy), schema::NCCL_EVENT_TYPE_PROXY_OP, Id(op, kColl)));
    for (int i = 0; i < 2; ++i) {
      test::NcclSpec st = Ev(k::kState, t + 1600 + static_cast<uint64_t>(i) * 100, Id(op, kProxy));
      st.state = 19;
      s.Nccl(st);
    }
    if (op % 250 != 0)
      s.Nccl(Ev(k::kStop, t + 6000 + static_cast<uint64_t>(op % 3), Id(op, kProxy)));
  }
  s.EndChunk();
}

// Records of block `block` read after the next block: states after the stop, a second stop.
void LateThread(test::SyntheticStream& s, int block) {
  s.BeginChunk(3, kPid + 3, T0(block * kBlock));
  for (int op = block * kBlock; op < (block + 1) * kBlock; ++op) {
    if (op % 100 == 0) {
      test::NcclSpec st = Ev(k::kState, T0(op) + 7000, Id(op, kProxy));
      st.state = 20;
      s.Nccl(st);
    }
    if (op % 700 == 0)
      s.Nccl(Ev(k::kStop, T0(op) + 250, Id(op, kColl)));
  }
  s.EndChunk();
}

void WriteStream(const std::string& path) {
  auto comm = [](test::SyntheticStream& s) {
    test::NcclCommSpec c;
    c.comm_hash = 0xfeedULL;
    c.n_ranks = 4;
    c.init_ts_ns = kMono0 + 10;
    c.init_tid = kPid + 1;
    s.NcclComm(c);
  };
  test::WriteStream(path, kPid, comm, [](test::SyntheticStream& s) {
    const int blocks = kOps / kBlock;
    for (int b = 0; b < blocks; ++b) {
      if (b % 10 == 0) {
        s.BeginChunk(4, kPid, T0(b * kBlock));
        s.ClockSnapshot(T0(b * kBlock), kReal0 + (T0(b * kBlock) - kMono0));
        s.EndChunk();
      }
      AppThread(s, b);
      ProxyThread(s, b);
      if (b > 0)
        LateThread(s, b - 1);
    }
    LateThread(s, blocks - 1);
  });
}

std::string Opt(const std::optional<int64_t>& v) {
  return v ? std::to_string(*v) : "NULL";
}

TEST(LargeNccl, SpilledExportEqualsTheInMemoryModel) {
  test::TempDir dir;
  const std::string stream = dir.File("nccl.gtrace");
  WriteStream(stream);

  // The reference: every event in memory (NcclStreamModel), as the export held them before.
  test::NcclStreamModel model;
  ASSERT_TRUE(test::LoadHeldModel(stream, /*nvtx=*/true, &model).ok());
  model.Finish();
  ASSERT_EQ(model.order().size(), static_cast<size_t>(kOps) * 5);
  ASSERT_EQ(model.orphan_records(), static_cast<uint64_t>(kOps / 500 + (kOps - 1) / 333 + 1));
  ASSERT_EQ(model.open_events(), static_cast<uint64_t>(kOps / 500 + kOps / 250));
  ASSERT_GE(model.clock().windows().size(), 2u);

  const std::string output = dir.File("nccl.sqlite");
  exporter::ExportResult result;
  const Status st = test::ExportStreams({stream}, output, &result);
  ASSERT_TRUE(st.ok()) << st.message();
  const std::string orphan_warning = stream + ": " + std::to_string(model.orphan_records()) +
                                     " NCCL stop/state records had no start (dropped); skipped";
  int found = 0;
  for (const std::string& w : result.warnings)
    found += w == orphan_warning ? 1 : 0;
  EXPECT_EQ(found, 1);

  test::Db db(output);
  ASSERT_TRUE(db.ok());
  // Session time = stream time + a constant: read it off the first event.
  const std::optional<int64_t> first_start = db.Int("SELECT start FROM GTRACE_NCCL_EVENTS ORDER BY rowid LIMIT 1");
  ASSERT_TRUE(first_start.has_value());
  const int64_t offset = *first_start - static_cast<int64_t>(*model.Find(model.order()[0])->start_ns);
  auto t = [offset](const std::optional<uint64_t>& ns) {
    return ns ? std::to_string(static_cast<int64_t>(*ns) + offset) : std::string("NULL");
  };
  auto tg = [offset](const std::optional<int64_t>& ns) {
    return ns ? std::to_string((*ns < 0 ? 0 : *ns) + offset) : std::string("NULL");
  };

  std::vector<std::string> events, states;
  for (uint64_t id : model.order()) {
    const exporter::NcclEvent& e = *model.Find(id);
    events.push_back(std::to_string(e.id) + "|" + t(e.start_ns) + "|" + t(e.stop_ns) + "|" + tg(e.gpu_start_ns) + "|" +
                     tg(e.gpu_stop_ns));
    for (const exporter::NcclEvent::State& x : e.states) {
      states.push_back(std::to_string(e.id) + "|" + t(x.ts_ns) + "|" + std::to_string(x.state));
    }
  }
  EXPECT_EQ(db.Rows("SELECT eventId, start, end, gpuStart, gpuEnd FROM GTRACE_NCCL_EVENTS ORDER BY rowid"), events);
  EXPECT_EQ(db.Rows("SELECT eventId, timestamp, state FROM GTRACE_NCCL_EVENT_STATES ORDER BY rowid"), states);
  EXPECT_EQ(states.size(), static_cast<size_t>(kOps) * 2 + kOps / 100);

  std::vector<std::string> ops;
  for (const exporter::NcclOperation& op : model.operations()) {
    ops.push_back(std::to_string(op.op->id) + "|" + std::to_string(op.kernel_channels) + "|" + tg(op.gpu_start_ns) +
                  "|" + tg(op.gpu_stop_ns) + "|" + t(op.proxy_stop_ns) + "|" + t(op.api->start_ns) + "|" +
                  std::to_string(op.count) + "|" +
                  Opt(op.alg_bytes ? std::optional<int64_t>(*op.alg_bytes) : std::nullopt));
  }
  ASSERT_EQ(ops.size(), static_cast<size_t>(kOps));
  EXPECT_EQ(db.Rows("SELECT eventId, kernelChannels, gpuStart, gpuEnd, proxyEnd, apiStart, count, algBytes FROM "
                    "GTRACE_NCCL_OPERATIONS ORDER BY rowid"),
            ops);

  std::vector<std::string> windows;
  for (const auto& w : model.clock().windows()) {
    windows.push_back(tg(w.start_ns) + "|" + tg(w.end_ns) + "|" + std::to_string(w.correction_ns) + "|" +
                      std::to_string(w.samples) + "|" + w.method);
  }
  EXPECT_EQ(db.Rows("SELECT windowStart, windowEnd, correction, samples, method FROM GTRACE_NCCL_GPU_CLOCK ORDER BY "
                    "rowid"),
            windows);
  // The NVTX view of the operations (the stream has no NCCL NVTX ranges of its own).
  EXPECT_EQ(db.Int("SELECT count(*) FROM NVTX_EVENTS WHERE eventType = 59"), kOps);
}

std::vector<std::string> Ends(const exporter::StreamAnchors& a) {
  std::vector<std::string> out;
  for (const exporter::CollectiveEnd& e : a.ends) {
    out.push_back(std::to_string(e.comm_hash) + "|" + e.func + "|" + std::to_string(e.seq) + "|" +
                  std::to_string(e.gpu_end_ns));
  }
  return out;
}

// The clock-alignment scan (anchor_scan.h) reads the stream again instead of holding its events:
// the same collective ends, in the same order, as the held scan it replaced.
TEST(LargeNccl, AnchorScanEqualsTheHeldScan) {
  test::TempDir dir;
  const std::string stream = dir.File("nccl.gtrace");
  WriteStream(stream);
  exporter::StreamAnchors held, scanned;
  ASSERT_TRUE(test::ScanAnchorsHeld(stream, &held).ok());
  const Status st = exporter::ScanAnchors(stream, &scanned);
  ASSERT_TRUE(st.ok()) << st.message();
  // Every operation has a channel with a stop (its second channel's stop is an orphan every 500th).
  ASSERT_EQ(held.ends.size(), static_cast<size_t>(kOps));
  EXPECT_EQ(held.ends[0].comm_hash, 0xfeedULL);
  EXPECT_EQ(held.ends[0].func, "AllReduce");
  EXPECT_EQ(held.ends[kOps - 1].seq, static_cast<uint64_t>(kOps - 1));
  EXPECT_EQ(Ends(scanned), Ends(held));
}

// What the NCCL plugin's streams may also have, on a short stream: P2P operations (their channels'
// lower bounds come from P2pApi), an operation without an API parent, a collective of a communicator
// never described, one whose channels have no GPU timer, one whose parent is an earlier API event
// (parents out of order), a GPU timer ahead of the host (lower bounds decide), and with `repeat` a
// START repeated with a new sequence number (the last wins, at the first one's place; ids out of
// order). The scan searches its operations directly or through sorted copies: both ways here.
void WriteMixedStream(const std::string& stream, bool repeat) {
  constexpr int kMixed = 3000;
  auto comms = [](test::SyntheticStream& s) {
    for (uint32_t c = 1; c <= 2; ++c) {
      test::NcclCommSpec spec;
      spec.comm_index = c;
      spec.comm_hash = 0x100 + c;
      s.NcclComm(spec);
    }
  };
  test::WriteStream(stream, kPid, comms, [&](test::SyntheticStream& s) {
    for (int op = 0; op < kMixed; ++op) {
      const uint64_t t = T0(op);
      if (op % 100 == 0) {
        s.BeginChunk(4, kPid, t);
        s.ClockSnapshot(t, kReal0 + (t - kMono0));
        s.EndChunk();
      }
      const bool p2p = op % 3 == 1, no_api = op % 11 == 5, no_timer = op % 13 == 7;
      const uint32_t comm = op % 17 == 3 ? 9 : 1 + static_cast<uint32_t>(op % 2);
      s.BeginChunk(1, kPid + 1, t);
      if (!no_api) {
        test::NcclSpec api =
            Ev(k::kStart, t, Id(op, kApi), p2p ? schema::NCCL_EVENT_TYPE_P2P_API : schema::NCCL_EVENT_TYPE_COLL_API);
        api.func = p2p ? "Send" : "AllGather";
        s.Nccl(api);
      }
      const uint64_t parent = op % 89 == 10 ? Id(op - 5, kApi) : Id(op, kApi);
      test::NcclSpec coll = Ev(k::kStart, t + 100, Id(op, kColl),
                               p2p ? schema::NCCL_EVENT_TYPE_P2P : schema::NCCL_EVENT_TYPE_COLL, parent);
      coll.comm_index = comm;
      coll.func = p2p ? "Send" : op % 2 ? "AllGather" : "ReduceScatter";
      coll.seq_number = static_cast<uint64_t>(op);
      s.Nccl(coll);
      if (repeat && op % 97 == 0) {  // started again: the last START's fields count
        coll.seq_number = 1000000 + static_cast<uint64_t>(op);
        s.Nccl(coll);
      }
      s.EndChunk();
      s.BeginChunk(2, kPid + 2, t);
      for (int ch = 0; ch < 2; ++ch) {
        const uint64_t id = Id(op, ch == 0 ? kCh1 : kCh2);
        // Ahead of the host by 50 us in the last third: the API start (a lower bound) says so.
        const uint64_t lead = op >= 2 * kMixed / 3 ? 50000 : 0;
        test::NcclSpec start = Ev(k::kStart, t + 2000, id, schema::NCCL_EVENT_TYPE_KERNEL_CH, Id(op, kColl));
        start.gpu_timer_ns = no_timer ? 0 : kReal0 + (t + 1000 - kMono0) - lead + static_cast<uint64_t>(op % 5);
        s.Nccl(start);
        test::NcclSpec stop = Ev(k::kStop, t + 5000 + static_cast<uint64_t>(ch), id);
        stop.gpu_timer_ns = no_timer ? 0 : kReal0 + (t + 3000 - kMono0) - lead + static_cast<uint64_t>(ch * 40);
        s.Nccl(stop);
      }
      s.EndChunk();
    }
  });
}

TEST(LargeNccl, AnchorScanEqualsTheHeldScanOnMixedOperations) {
  for (bool repeat : {false, true}) {
    SCOPED_TRACE(repeat ? "a repeated START" : "no repeated START");
    test::TempDir dir;
    const std::string stream = dir.File("mixed.gtrace");
    WriteMixedStream(stream, repeat);
    exporter::StreamAnchors held, scanned;
    ASSERT_TRUE(test::ScanAnchorsHeld(stream, &held).ok());
    const Status st = exporter::ScanAnchors(stream, &scanned);
    ASSERT_TRUE(st.ok()) << st.message();
    size_t expected = 0;
    for (int op = 0; op < 3000; ++op)
      expected += op % 3 != 1 && op % 13 != 7 && op % 17 != 3 ? 1 : 0;
    ASSERT_EQ(held.ends.size(), expected);
    EXPECT_EQ(Ends(scanned), Ends(held));
    size_t repeated = 0;
    for (const exporter::CollectiveEnd& e : scanned.ends)
      repeated += e.seq == 1000000 ? 1 : 0;
    EXPECT_EQ(repeated, repeat ? 1u : 0u);
  }
}

// The cap of the scan (anchor_scan.h): a stream with no more operations than max_ops gives exactly
// the uncapped scan's ends; above it, exactly the collectives whose sequence number is a multiple
// of the final 2^k. Here 20,000 collectives, seq 0..19,999 in order, cap 1,000: k is raised while
// reading until ceil(20,000 / 2^k) <= 1,000 fits: k = 5 (2^4 leaves 1,250), 625 ends, seq 0, 32, ...
TEST(LargeNccl, AnchorScanCapKeepsTheSeqMultiplesOfTheFinalPowerOfTwo) {
  test::TempDir dir;
  const std::string stream = dir.File("nccl.gtrace");
  WriteStream(stream);
  exporter::StreamAnchors uncapped, at_count, capped;
  exporter::AnchorScanOptions options;
  options.max_ops = 0;
  ASSERT_TRUE(exporter::ScanAnchors(stream, &uncapped, options).ok());
  ASSERT_EQ(uncapped.ends.size(), static_cast<size_t>(kOps));
  EXPECT_EQ(uncapped.operations, static_cast<uint64_t>(kOps));
  EXPECT_EQ(uncapped.held_operations, static_cast<uint64_t>(kOps));
  EXPECT_EQ(uncapped.seq_shift, 0u);

  // Exactly at the cap: nothing thinned, the same ends.
  options.max_ops = kOps;
  ASSERT_TRUE(exporter::ScanAnchors(stream, &at_count, options).ok());
  EXPECT_EQ(at_count.seq_shift, 0u);
  EXPECT_EQ(Ends(at_count), Ends(uncapped));

  options.max_ops = 1000;
  const Status st = exporter::ScanAnchors(stream, &capped, options);
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(capped.operations, static_cast<uint64_t>(kOps));
  EXPECT_EQ(capped.seq_shift, 5u);
  EXPECT_EQ(capped.held_operations, 625u);
  ASSERT_EQ(capped.ends.size(), 625u);
  for (size_t i = 0; i < capped.ends.size(); ++i) {
    ASSERT_EQ(capped.ends[i].seq, 32 * i) << i;
    EXPECT_EQ(capped.ends[i].comm_hash, 0xfeedULL);
    EXPECT_EQ(capped.ends[i].func, "AllReduce");
  }
  // Each kept collective ends within 1 us of where the uncapped scan puts it. The GPU-clock fit
  // keeps every channel's upper bounds but only the held operations' lower bounds (their API
  // starts): the first 1-s window holds the two operations after the timer's 200-us step (10,000
  // and 10,001, not multiples of 32), whose lower bounds make it inconsistent uncapped
  // (correction U, 940 ns) and leave it "base" (0) capped; the windows' corrections are
  // interpolated, so the ends move by up to those 940 ns.
  int64_t worst = 0;
  for (const exporter::CollectiveEnd& e : capped.ends)
    worst = std::max<int64_t>(worst, std::llabs(e.gpu_end_ns - uncapped.ends[e.seq].gpu_end_ns));
  EXPECT_GT(worst, 0);
  EXPECT_LE(worst, 1000);
}

// The cap on the mixed stream (P2P operations, parents out of order, repeated STARTs: the scan's
// sorted-copy lookups): the ends are exactly the uncapped ends whose seq is a multiple of 2^k, at
// the same GPU end within the few ns the thinned lower bounds can move it.
TEST(LargeNccl, AnchorScanCapOnMixedOperations) {
  for (bool repeat : {false, true}) {
    SCOPED_TRACE(repeat ? "a repeated START" : "no repeated START");
    test::TempDir dir;
    const std::string stream = dir.File("mixed.gtrace");
    WriteMixedStream(stream, repeat);
    exporter::StreamAnchors uncapped, capped;
    exporter::AnchorScanOptions options;
    options.max_ops = 0;
    ASSERT_TRUE(exporter::ScanAnchors(stream, &uncapped, options).ok());
    options.max_ops = 500;
    const Status st = exporter::ScanAnchors(stream, &capped, options);
    ASSERT_TRUE(st.ok()) << st.message();
    // 3,000 operations (and 31 repeated STARTs with seq 1,000,000 + op, op a multiple of 97)
    // with seq 0..2,999: k = 3 leaves 375 (+ the repeated STARTs whose seq is a multiple of 8: op
    // 0, 776, 1552, 2328: 4).
    EXPECT_EQ(capped.operations, repeat ? 3031u : 3000u);
    EXPECT_EQ(capped.seq_shift, 3u);
    EXPECT_EQ(capped.held_operations, repeat ? 379u : 375u);
    std::map<std::tuple<uint64_t, std::string, uint64_t>, int64_t> want;
    for (const exporter::CollectiveEnd& e : uncapped.ends) {
      if (e.seq % 8 == 0)
        want[{e.comm_hash, e.func, e.seq}] = e.gpu_end_ns;
    }
    ASSERT_FALSE(want.empty());
    std::map<std::tuple<uint64_t, std::string, uint64_t>, int64_t> got;
    for (const exporter::CollectiveEnd& e : capped.ends) {
      EXPECT_EQ(e.seq % 8, 0u);
      got[{e.comm_hash, e.func, e.seq}] = e.gpu_end_ns;
    }
    ASSERT_EQ(got.size(), capped.ends.size());
    ASSERT_EQ(got.size(), want.size());
    for (const auto& [key, end_ns] : want) {
      auto it = got.find(key);
      ASSERT_NE(it, got.end()) << "seq " << std::get<2>(key);
      EXPECT_LE(std::llabs(it->second - end_ns), 10) << "seq " << std::get<2>(key);
    }
  }
}

// Sequence numbers that cannot thin a stream (all 0: every operation qualifies for every k): k stops
// at kAnchorScanMaxSeqShift and the scan holds the first max_ops operations, never more, and ends.
TEST(LargeNccl, AnchorScanCapHoldsAtMostMaxOpsWhenSeqCannotThin) {
  test::TempDir dir;
  const std::string stream = dir.File("seq0.gtrace");
  auto comms = [](test::SyntheticStream& s) {
    test::NcclCommSpec spec;
    spec.comm_index = 1;
    spec.comm_hash = 0xfeed;
    s.NcclComm(spec);
  };
  test::WriteStream(stream, kPid, comms, [&](test::SyntheticStream& s) {
    s.BeginChunk(1, kPid + 1, T0(0));
    for (int op = 0; op < 50; ++op) {
      test::NcclSpec coll = Ev(k::kStart, T0(op), Id(op, kColl), schema::NCCL_EVENT_TYPE_COLL);
      coll.func = "AllReduce";
      s.Nccl(coll);
      test::NcclSpec start =
          Ev(k::kStart, T0(op) + 2000, Id(op, kCh1), schema::NCCL_EVENT_TYPE_KERNEL_CH, Id(op, kColl));
      start.gpu_timer_ns = Gpu(op, T0(op) + 1000);
      s.Nccl(start);
      test::NcclSpec stop = Ev(k::kStop, T0(op) + 5000, Id(op, kCh1));
      stop.gpu_timer_ns = Gpu(op, T0(op) + 3500);
      s.Nccl(stop);
    }
    s.EndChunk();
  });
  exporter::StreamAnchors a;
  exporter::AnchorScanOptions options;
  options.max_ops = 10;
  const Status st = exporter::ScanAnchors(stream, &a, options);
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(a.operations, 50u);
  EXPECT_EQ(a.seq_shift, exporter::kAnchorScanMaxSeqShift);
  EXPECT_EQ(a.held_operations, 10u);
  ASSERT_EQ(a.ends.size(), 10u);
  for (int op = 0; op < 10; ++op) {  // the first 10, on the base mapping (the timer's own jitter)
    EXPECT_EQ(a.ends[op].seq, 0u);
    EXPECT_EQ(a.ends[op].gpu_end_ns, static_cast<int64_t>(T0(op) + 3500 + static_cast<uint64_t>(op % 7) * 10));
  }
}

}  // namespace
}  // namespace gt
