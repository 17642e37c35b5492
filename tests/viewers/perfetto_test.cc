// Perfetto export: decoded with protoc classes (perfetto_subset.proto) and checked packet by packet
// against the fixture's known rows: tracks and their wiring, slices, nesting, time order, flows,
// interning, counters.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "tests/common/test_util.h"
#include "tests/viewers/perfetto_decoder.h"
#include "tests/viewers/viewer_fixture.h"
#include "tools/viewers/event.h"
#include "tools/viewers/perfetto_trace_writer.h"
#include "tools/viewers/viewer_export.h"

namespace gt::viewers {
namespace {

using testing::DecodedSlice;
using testing::DecodedTrace;
using testing::FixtureOffsetNs;
using testing::FixturePid;
using testing::FixtureRank;
using testing::Us;

DecodedTrace ExportAndDecode(const std::string& db, const std::string& out, ViewerResult* result = nullptr) {
  ViewerOptions o;
  o.format = ViewerFormat::kPerfetto;
  o.database = db;
  o.output = out;
  ViewerResult r;
  Status st = ExportViewer(o, &r);
  EXPECT_TRUE(st.ok()) << st.message();
  if (result != nullptr)
    *result = r;
  return testing::DecodePerfetto(test::ReadFile(out));
}

std::vector<std::string> Names(const std::vector<const DecodedSlice*>& slices) {
  std::vector<std::string> out;
  for (const DecodedSlice* s : slices)
    out.push_back(s->name);
  return out;
}

const DecodedSlice* Find(const std::vector<const DecodedSlice*>& slices, const std::string& name, int64_t start) {
  for (const DecodedSlice* s : slices) {
    if (s->name == name && s->start_ns == start)
      return s;
  }
  return nullptr;
}

TEST(Perfetto, MultiRankTracksSlicesAndFlows) {
  test::TempDir dir;
  testing::WriteFixture(dir.File("run.sqlite"));
  ViewerResult result;
  DecodedTrace t = ExportAndDecode(dir.File("run.sqlite"), dir.File("run.pftrace"), &result);
  for (const std::string& e : t.errors)
    ADD_FAILURE() << e;
  const int ranks = 4;
  EXPECT_EQ(result.processes, 5u);
  ASSERT_EQ(result.outputs, std::vector<std::string>{dir.File("run.pftrace")});
  EXPECT_EQ(result.warnings, std::vector<std::string>{"4 NVTX ranges without an end were left out"});

  EXPECT_EQ(t.clock_snapshots, 1u);
  EXPECT_EQ(t.utc_at_zero_ns, 1700000000000000000);
  // Descriptors: 5 processes, 9 threads, 16 streams, 4 GPU metric groups + 8 counters; per rank an
  // NCCL track, a start/end track and one overlap lane for stream 20.
  EXPECT_EQ(t.descriptors, 5u + 9 + 16 + 4 + 8 + 3 * ranks);
  const size_t per_rank_slices = FixtureRank::kNvtxRanges + FixtureRank::kNvtxStartEnd + FixtureRank::kApiCalls +
                                 FixtureRank::kKernels + FixtureRank::kMemcpys + FixtureRank::kMemsets +
                                 FixtureRank::kSyncs;
  EXPECT_EQ(t.begins, per_rank_slices * ranks + 1);  // + "load" of the extra process
  EXPECT_EQ(t.ends, t.begins);
  EXPECT_EQ(t.instants_count, static_cast<size_t>(FixtureRank::kNvtxMarks * ranks + 1));
  EXPECT_EQ(t.counters_count, static_cast<size_t>(FixtureRank::kMetricSamples * ranks));
  EXPECT_EQ(t.packets, 1 + t.descriptors + t.begins + t.ends + t.instants_count + t.counters_count);

  std::set<uint64_t> all_flow_starts;
  for (int r = 0; r < ranks; ++r) {
    SCOPED_TRACE("rank " + std::to_string(r));
    const int64_t pid = FixturePid(r), o = FixtureOffsetNs(r);
    uint64_t process = t.ProcessTrack(pid);
    ASSERT_NE(process, 0u);
    EXPECT_EQ(t.tracks[process].name, "python3 [rank " + std::to_string(r) + "]");
    EXPECT_EQ(t.tracks[process].labels,
              (std::vector<std::string>{"rank " + std::to_string(r), std::string("host node-") + (r < 2 ? 'a' : 'b')}));
    uint64_t main = t.ThreadTrack(pid, pid), worker = t.ThreadTrack(pid, testing::FixtureWorkerTid(r));
    ASSERT_NE(main, 0u);
    ASSERT_NE(worker, 0u);
    EXPECT_EQ(t.tracks[main].name, "python");
    EXPECT_EQ(t.tracks[worker].name, "dataloader");

    auto on_main = t.SlicesOn(main);
    EXPECT_EQ(Names(on_main),
              (std::vector<std::string>{"step", "cudaMalloc", "forward", "cudaLaunchKernel", "cuLaunchKernel",
                                        "cudaMemcpyAsync", "cudaMemsetAsync", "cudaGraphLaunch", "cudaLaunchKernel",
                                        "cudaStreamSynchronize", "cudaDeviceSynchronize"}));
    const DecodedSlice* step = Find(on_main, "step", Us(1000) + o);
    ASSERT_NE(step, nullptr);
    EXPECT_EQ(step->end_ns, Us(9000) + o);
    EXPECT_EQ(step->category, "nvtx");
    const DecodedSlice* forward = Find(on_main, "forward", Us(2000) + o);  // registered string
    ASSERT_NE(forward, nullptr);
    EXPECT_EQ(forward->end_ns, Us(5000) + o);
    const DecodedSlice* driver = Find(on_main, "cuLaunchKernel", Us(2150) + o);
    ASSERT_NE(driver, nullptr);
    EXPECT_EQ(driver->category, "cuda_driver");
    EXPECT_TRUE(driver->flow_ids.empty());
    EXPECT_EQ(Names(t.SlicesOn(worker)), (std::vector<std::string>{"cudaLaunchKernel", "cudaLaunchKernel"}));
    std::vector<std::string> marks;
    for (const DecodedSlice& m : t.instants) {
      if (m.track == main)
        marks.push_back(m.name + "@" + std::to_string(m.start_ns));
    }
    EXPECT_EQ(marks, std::vector<std::string>{"checkpoint@" + std::to_string(Us(6000) + o)});

    auto nccl = t.TracksNamed("NCCL", process);
    ASSERT_EQ(nccl.size(), 1u);
    auto nccl_slices = t.SlicesOn(nccl[0]);
    ASSERT_EQ(nccl_slices.size(), 1u);
    EXPECT_EQ(nccl_slices[0]->name, "ncclAllReduce");
    EXPECT_EQ(nccl_slices[0]->args.at("domain"), "NCCL");
    EXPECT_EQ(nccl_slices[0]->start_ns, Us(5500) + o);
    auto start_end = t.TracksNamed("NVTX start/end ranges", process);
    ASSERT_EQ(start_end.size(), 1u);
    ASSERT_EQ(t.SlicesOn(start_end[0]).size(), 1u);
    EXPECT_EQ(t.SlicesOn(start_end[0])[0]->end_ns, Us(7000) + o);

    // GPU streams under the process, one lane more where two kernels overlap without nesting.
    auto s7 = t.TracksNamed("GPU 0 stream 7", process);
    auto s13 = t.TracksNamed("GPU 0 stream 13", process);
    auto s20 = t.TracksNamed("GPU 0 stream 20", process);
    auto s20b = t.TracksNamed("GPU 0 stream 20 (overlapping 1)", process);
    auto sync = t.TracksNamed("GPU 0 synchronization", process);
    ASSERT_EQ(s7.size() + s13.size() + s20.size() + s20b.size() + sync.size(), 5u);
    EXPECT_EQ(
        Names(t.SlicesOn(s7[0])),
        (std::vector<std::string>{"void compute_kernel<float>(float *, int)", "Memcpy HtoD (Pageable -> Device)",
                                  "Memset (Device)", "graph_node_a(float *)", "graph_node_b(float *)", "Stream Sync"}));
    EXPECT_EQ(Names(t.SlicesOn(s20[0])), std::vector<std::string>{"void compute_kernel<float>(float *, int)"});
    EXPECT_EQ(Names(t.SlicesOn(s20b[0])), std::vector<std::string>{"void other_kernel(int)"});
    EXPECT_EQ(Names(t.SlicesOn(sync[0])), std::vector<std::string>{"Context Sync"});
    const DecodedSlice* k1 = t.SlicesOn(s7[0])[0];
    EXPECT_EQ(k1->start_ns, Us(3000) + o);
    EXPECT_EQ(k1->end_ns, Us(4000) + o);
    EXPECT_EQ(k1->category, "kernel");
    EXPECT_EQ(k1->args.at("grid"), "128,1,1");
    EXPECT_EQ(k1->args.at("block"), "256,1,1");
    EXPECT_EQ(k1->args.at("correlation_id"), "10");
    EXPECT_EQ(k1->args.at("short_name"), "compute_kernel");
    EXPECT_EQ(t.SlicesOn(s7[0])[1]->args.at("bytes"), "4096");

    // Flows: each launch with GPU work starts one; its activity ends it (a graph's continue it).
    std::map<uint64_t, std::string> starts;
    for (uint64_t thread : {main, worker}) {
      for (const DecodedSlice* s : t.SlicesOn(thread)) {
        for (uint64_t id : s->flow_ids)
          starts[id] = s->name + "/" + s->args.at("correlation_id");
      }
    }
    EXPECT_EQ(starts.size(), static_cast<size_t>(FixtureRank::kLaunchesWithGpu));
    for (const auto& [id, what] : starts) {
      EXPECT_EQ(id,
                FlowId(testing::GlobalTid(testing::FixtureHw(r), pid, 0), std::stoll(what.substr(what.find('/') + 1))));
      EXPECT_TRUE(all_flow_starts.insert(id).second) << "flow id reused across ranks";
    }
    size_t ended = 0, continued = 0;
    for (uint64_t track : {s7[0], s13[0], s20[0], s20b[0]}) {
      for (const DecodedSlice* s : t.SlicesOn(track)) {
        uint64_t corr = std::stoull(s->args.at("correlation_id"));
        for (uint64_t id : s->terminating_flow_ids) {
          ++ended;
          EXPECT_EQ(starts.count(id), 1u);
          EXPECT_EQ(starts[id].substr(starts[id].find('/') + 1), std::to_string(corr));
          EXPECT_EQ(id & 0xFFFFFFFF, corr);
        }
        for (uint64_t id : s->flow_ids) {
          ++continued;
          EXPECT_EQ(starts[id], "cudaGraphLaunch/15");
        }
        if (s->category == "cuda_sync") {
          EXPECT_TRUE(s->flow_ids.empty() && s->terminating_flow_ids.empty());
        }
      }
    }
    EXPECT_EQ(ended, 6u);      // compute, memcpy, memset, nccl, two on stream 20
    EXPECT_EQ(continued, 2u);  // the graph's two kernels
  }

  // GPU metrics: one counter track per metric under "GPU <n> metrics".
  for (int gpu = 0; gpu < ranks; ++gpu) {
    auto group = t.TracksNamed("GPU " + std::to_string(gpu) + " metrics");
    ASSERT_EQ(group.size(), 1u);
    auto sm = t.TracksNamed("SM Active [Throughput %]", group[0]);
    ASSERT_EQ(sm.size(), 1u);
    EXPECT_EQ(t.tracks[sm[0]].kind, 3);
    std::vector<int64_t> values;
    for (const auto& [track, sample] : t.counters) {
      if (track == sm[0])
        values.push_back(sample.second);
    }
    EXPECT_EQ(values, (std::vector<int64_t>{10 + gpu, 11 + gpu, 12 + gpu}));
  }
  // The process without a launcher rank gets the next rank.
  uint64_t extra = t.ProcessTrack(5000);
  ASSERT_NE(extra, 0u);
  EXPECT_EQ(t.tracks[extra].name, "python3 [rank 4]");
  EXPECT_EQ(Names(t.SlicesOn(t.ThreadTrack(5000, 5000))), std::vector<std::string>{"load"});
}

TEST(Perfetto, NcclOperationsTableGetsItsOwnTrack) {
  test::TempDir dir;
  testing::FixtureOptions options;
  options.ranks = 2;
  options.nccl_operations = true;
  options.extra_process = false;
  testing::WriteFixture(dir.File("run.sqlite"), options);
  DecodedTrace t = ExportAndDecode(dir.File("run.sqlite"), dir.File("run.pftrace"));
  for (const std::string& e : t.errors)
    ADD_FAILURE() << e;
  for (int r = 0; r < 2; ++r) {
    auto ops = t.TracksNamed("NCCL operations", t.ProcessTrack(FixturePid(r)));
    ASSERT_EQ(ops.size(), 1u);
    auto slices = t.SlicesOn(ops[0]);
    ASSERT_EQ(slices.size(), 1u);
    EXPECT_EQ(slices[0]->name, "AllReduce");
    EXPECT_EQ(slices[0]->start_ns, Us(5800) + FixtureOffsetNs(r));  // GPU time
    EXPECT_EQ(slices[0]->args.at("message_bytes"), "4096");
    EXPECT_EQ(slices[0]->args.at("ranks"), "2");
    EXPECT_EQ(slices[0]->args.at("algo"), "RING");
    EXPECT_EQ(slices[0]->args.at("time"), "gpu");
  }
}

TEST(Perfetto, TablesMayBeMissing) {
  test::TempDir dir;
  {
    // Kernels only: no API calls (so no flows), no NVTX, no device tables.
    testing::FixtureDb db(dir.File("kernels.sqlite"));
    db.Kernel(Us(10), Us(20), testing::GlobalTid(0, 42, 0), 7, 1, "k(int)", "k");
    db.Kernel(Us(15), Us(30), testing::GlobalTid(0, 42, 0), 7, 2, "k(int)", "k");
  }
  DecodedTrace t = ExportAndDecode(dir.File("kernels.sqlite"), dir.File("kernels.pftrace"));
  for (const std::string& e : t.errors)
    ADD_FAILURE() << e;
  EXPECT_EQ(t.begins, 2u);
  ASSERT_NE(t.ProcessTrack(42), 0u);
  EXPECT_EQ(t.tracks[t.ProcessTrack(42)].name, "process 42 [rank 0]");
  EXPECT_EQ(t.TracksNamed("GPU 0 stream 7 (overlapping 1)").size(), 1u);
  for (const DecodedSlice& s : t.slices)
    EXPECT_TRUE(s.flow_ids.empty() && s.terminating_flow_ids.empty());
  {
    testing::FixtureDb db(dir.File("nvtx.sqlite"));
    db.Nvtx(59, Us(1), Us(5), testing::GlobalTid(0, 7, 8), "only", false, 0);
  }
  t = ExportAndDecode(dir.File("nvtx.sqlite"), dir.File("nvtx.pftrace"));
  for (const std::string& e : t.errors)
    ADD_FAILURE() << e;
  ASSERT_EQ(t.slices.size(), 1u);
  EXPECT_EQ(t.tracks[t.ThreadTrack(7, 8)].name, "thread 8");
  {
    testing::FixtureDb db(dir.File("empty.sqlite"));
    db.Ensure("CUPTI_ACTIVITY_KIND_KERNEL");
    db.Ensure("NVTX_EVENTS");
  }
  ViewerOptions o;
  o.database = dir.File("empty.sqlite");
  o.output = dir.File("empty.pftrace");
  ViewerResult r;
  Status st = ExportViewer(o, &r);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.message(),
            dir.File("empty.sqlite") + ": no events to export (no NVTX, CUDA or NCCL rows of any process)");
  EXPECT_TRUE(dir.Find(".pftrace").size() == 2u);  // kernels + nvtx; nothing left by the failure
}

TEST(Perfetto, SamePidOnTwoHostsStaysTwoProcesses) {
  test::TempDir dir;
  {
    testing::FixtureDb db(dir.File("two.sqlite"));
    db.Runtime(Us(1), Us(2), testing::GlobalTid(0, 100, 100), 1, "cudaFree_v3020");
    db.Runtime(Us(1), Us(3), testing::GlobalTid(1, 100, 100), 1, "cudaFree_v3020");
  }
  DecodedTrace t = ExportAndDecode(dir.File("two.sqlite"), dir.File("two.pftrace"));
  for (const std::string& e : t.errors)
    ADD_FAILURE() << e;
  std::set<int64_t> pids, tids;
  for (const auto& [uuid, track] : t.tracks) {
    if (track.kind == 1)
      pids.insert(track.pid);
    if (track.kind == 2)
      tids.insert(track.tid);
  }
  EXPECT_EQ(pids.size(), 2u);
  EXPECT_EQ(pids.count(100), 1u);
  EXPECT_EQ(tids.size(), 2u);
  EXPECT_EQ(t.begins, 2u);
}

TEST(Perfetto, NamesPastTheInterningBudgetAreWrittenInline) {
  test::TempDir dir;
  std::unique_ptr<OutputFile> file;
  ASSERT_TRUE(OutputFile::Create(dir.File("b.pftrace"), false, &file).ok());
  {
    PerfettoTraceWriter w(file.get(), /*name_budget=*/2);
    w.ClockSnapshot(0);
    w.Track(1, 0, "t");
    for (int i = 0; i < 4; ++i) {
      w.SliceBegin(10 * i, 1, "c", "name" + std::to_string(i), {PerfettoTraceWriter::Int("i", i)});
      w.SliceEnd(10 * i + 5, 1);
    }
    w.Flush();
  }
  ASSERT_TRUE(file->Commit().ok());
  DecodedTrace t = testing::DecodePerfetto(test::ReadFile(dir.File("b.pftrace")));
  for (const std::string& e : t.errors)
    ADD_FAILURE() << e;
  EXPECT_EQ(t.interned_names, 2u);
  EXPECT_EQ(Names(t.SlicesOn(1)), (std::vector<std::string>{"name0", "name1", "name2", "name3"}));
  EXPECT_EQ(t.SlicesOn(1)[3]->args.at("i"), "3");
}

TEST(Perfetto, ReferenceNsysExports) {
  const std::string ref = test::ReferenceDir();
  if (ref.empty())
    GTEST_SKIP() << "shared/reference is absent";
  test::TempDir dir;
  for (const char* name : {"flameox-nsys-2025.5.2.sqlite", "nsysai-mock-nsys-2026.1.1.sqlite"}) {
    SCOPED_TRACE(name);
    const std::string db = ref + "/" + name;
    test::Db sql(db);
    ASSERT_TRUE(sql.ok());
    int64_t expected = *sql.Int("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE eventClass IN (0, 1)") +
                       *sql.Int("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL") +
                       *sql.Int("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_MEMCPY") +
                       *sql.Int("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_SYNCHRONIZATION");
    int64_t kernels = *sql.Int("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL");
    DecodedTrace t = ExportAndDecode(db, dir.File(std::string(name) + ".pftrace"));
    for (const std::string& e : t.errors)
      ADD_FAILURE() << e;
    EXPECT_EQ(static_cast<int64_t>(t.begins), expected);
    // Every kernel is the end of a flow from its launch.
    size_t kernel_flows = 0;
    for (const DecodedSlice& s : t.slices) {
      if (s.category == "kernel")
        kernel_flows += s.terminating_flow_ids.size() + s.flow_ids.size();
    }
    EXPECT_EQ(static_cast<int64_t>(kernel_flows), kernels);
  }
}

}  // namespace
}  // namespace gt::viewers
