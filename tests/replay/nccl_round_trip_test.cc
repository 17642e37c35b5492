// replay.FakeNcclCaptureRoundTrip: the NCCL half of "record once, replay forever" proved end to end
// with a TEST DOUBLE. The fake NCCL host (tests/fakes/fake_nccl_host.*) runs a fixed scenario under
// LD_PRELOAD=libgtrace.so with GTRACE_RAW_CAPTURE_DIR set; the capture (nccl-<pid>.gtcap) is
// checked, then replayed by the same fake host into the real plugin (programs/nccl_capture_replay);
// both streams are exported and the GTRACE_NCCL_* tables must be equal row for row.
//
// replay.RealNcclCapture: the same replay of a capture made by real NCCL on a GPU machine
// (scripts/gpu-check.d/20-nccl.sh), skipped until one is committed under tests/data/gpu/.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <set>

#include "tests/fakes/capture_reader.h"
#include "tests/replay/replay_util.h"

namespace gt::test {
namespace {

using gt::rawcap::NcclCallRecord;
using gt::rawcap::NcclInitRecord;

std::vector<std::string> NcclCaptures(const TempDir& dir, const std::string& sub) {
  std::vector<std::string> out;
  for (const std::string& f : TempDir::ListDir(dir.File(sub))) {
    if (f.rfind("nccl-", 0) == 0 && f.size() > 6 && f.substr(f.size() - 6) == ".gtcap")
      out.push_back(dir.File(sub + "/" + f));
  }
  return out;
}

// The frame's payload as T (zero-filled past a short payload; the tests check frame types first).
template <typename T>
T As(const fake::CaptureFrame& f) {
  T v{};
  std::memcpy(&v, f.payload.data(), std::min(sizeof(T), f.payload.size()));
  return v;
}

// The GTRACE_NCCL_* rows a replay must reproduce, rendered comparably: host times relative to the
// first communicator's init (each export has its own time zero), event ids renumbered in start
// order and thread ids in order of first use (another process), GPU times checked apart
// (GpuTimesWithin). Columns are read from the tables themselves, so a new column is compared too.
std::map<std::string, std::vector<std::string>> NcclRowsForComparison(Db& db, const std::string& own_pid) {
  const std::string t0 = "(SELECT min(initTime) FROM GTRACE_NCCL_COMMUNICATORS)";
  const std::string ids =
      "(SELECT eventId AS id, ROW_NUMBER() OVER (ORDER BY start, eventType, eventId) AS n FROM GTRACE_NCCL_EVENTS)";
  const std::string tids =
      "(SELECT t AS tid, ROW_NUMBER() OVER (ORDER BY first, t) AS n FROM (SELECT globalTid AS t, min(start) AS first "
      "FROM GTRACE_NCCL_EVENTS GROUP BY globalTid UNION ALL SELECT globalTid, initTime FROM GTRACE_NCCL_COMMUNICATORS "
      "WHERE globalTid NOT IN (SELECT globalTid FROM GTRACE_NCCL_EVENTS)))";
  // (own_pid: the process's pid, for proxyPid)
  const std::set<std::string> times = {"start",    "end",    "initTime",     "finalizeTime", "timestamp",
                                       "apiStart", "apiEnd", "enqueueStart", "enqueueEnd",   "proxyEnd"};
  const std::set<std::string> id_cols = {"eventId", "parentId", "groupId"};
  const std::set<std::string> tid_cols = {"globalTid", "endGlobalTid", "apiGlobalTid"};
  // Absolute GPU times and the GPU-clock windows depend on the stream's realtime snapshots.
  const std::set<std::string> skip = {"globalPid",  "gpuStart",   "gpuEnd",     "windowStart", "windowEnd",
                                      "baseOffset", "correction", "lowerBound", "upperBound"};
  std::map<std::string, std::vector<std::string>> out;
  for (const char* table : {"GTRACE_NCCL_COMMUNICATORS", "GTRACE_NCCL_EVENTS", "GTRACE_NCCL_EVENT_STATES",
                            "GTRACE_NCCL_OPERATIONS", "GTRACE_NCCL_GPU_CLOCK", "GTRACE_NCCL_POOLS"}) {
    std::string select;
    for (const std::string& col : db.Rows(std::string("SELECT name FROM pragma_table_info('") + table + "')")) {
      if (skip.count(col))
        continue;
      std::string expr = "x.\"" + col + "\"";
      if (times.count(col))
        expr = expr + " - " + t0;
      if (id_cols.count(col))
        expr = "(SELECT n FROM " + ids + " WHERE id = " + expr + ")";
      if (tid_cols.count(col))
        expr = "(SELECT n FROM " + tids + " WHERE tid = " + expr + ")";
      // A proxy op of our own process carries our pid (the replay's is another); PXN ones keep theirs.
      if (col == "proxyPid")
        expr = "CASE WHEN " + expr + " = " + own_pid + " THEN 'own' ELSE " + expr + " END";
      select += (select.empty() ? "" : ", ") + expr;
    }
    std::vector<std::string> rows = db.Rows("SELECT " + select + " FROM " + table + " x");
    std::sort(rows.begin(), rows.end());
    out[table] = rows;
  }
  out["GPU_DURATIONS"] = db.Rows(
      "SELECT eventType, gpuEnd - gpuStart, gpuStartRaw, gpuEndRaw FROM GTRACE_NCCL_EVENTS WHERE gpuStart IS NOT NULL "
      "ORDER BY start, gpuStartRaw");
  return out;
}

// Largest difference between the two exports' GPU times (session clock) of the same events.
int64_t MaxGpuTimeDifference(const std::string& a, const std::string& b) {
  auto rows = [](const std::string& path) {
    Db db(path);
    return db.Rows(
        "SELECT gpuStart - (SELECT min(initTime) FROM GTRACE_NCCL_COMMUNICATORS), gpuEnd - (SELECT min(initTime) "
        "FROM GTRACE_NCCL_COMMUNICATORS) FROM GTRACE_NCCL_EVENTS WHERE gpuStart IS NOT NULL ORDER BY start, "
        "gpuStartRaw");
  };
  std::vector<std::string> ra = rows(a), rb = rows(b);
  if (ra.size() != rb.size() || ra.empty())
    return -1;
  int64_t worst = 0;
  for (size_t i = 0; i < ra.size(); ++i) {
    size_t pa = ra[i].find('|'), pb = rb[i].find('|');
    int64_t d1 = std::llabs(std::stoll(ra[i].substr(0, pa)) - std::stoll(rb[i].substr(0, pb)));
    int64_t d2 = std::llabs(std::stoll(ra[i].substr(pa + 1)) - std::stoll(rb[i].substr(pb + 1)));
    worst = std::max({worst, d1, d2});
  }
  return worst;
}

// The pid in a stream's name (<name>-<pid>.gtrace, TracedRun's %p).
std::string StreamPid(const std::string& stream) {
  size_t dash = stream.rfind('-'), dot = stream.rfind(".gtrace");
  return stream.substr(dash + 1, dot - dash - 1);
}

struct Scenario {
  const char* name;
  const char* nccl;      // --nccl code: the ABI the plugin is loaded as
  const char* scenario;  // fake_nccl_host --scenario
  std::map<std::string, std::string> env;
  int abi;
  uint64_t parents_not_ours = 0;  // parentObj values that were never a handle of this process (PXN)
};

void PrintTo(const Scenario& s, std::ostream* os) {
  *os << s.name;
}

class FakeNcclCaptureRoundTrip : public ::testing::TestWithParam<Scenario> {};

TEST_P(FakeNcclCaptureRoundTrip, ReplayExportEqualsDirectExportRowForRow) {
  const Scenario& s = GetParam();
  TempDir dir;
  std::map<std::string, std::string> env = s.env;
  env["GTRACE_RAW_CAPTURE_DIR"] = dir.File("cap");
  env["GTRACE_RAW_CAPTURE_SCENARIO"] = std::string("fake_nccl_host ") + s.scenario;
  TracedExport direct =
      RunAndExport(dir, {SamplePath("fake_nccl_host"), "--nccl", s.nccl, "--scenario", s.scenario}, env, "direct");
  ASSERT_EQ(direct.run.exit_code, 0) << direct.run.err;
  ASSERT_FALSE(direct.db.empty()) << direct.export_err;
  std::vector<std::string> caps = NcclCaptures(dir, "cap");
  ASSERT_EQ(caps.size(), 1u) << direct.run.err;
  EXPECT_NE(direct.run.err.find("gtrace: raw capture of NCCL plugin input to " + caps[0]), std::string::npos)
      << direct.run.err;

  // The capture: every init and plugin call, nothing dropped, one ABI version.
  fake::CaptureFile c;
  std::string error;
  ASSERT_TRUE(fake::ReadCaptureFile(caps[0], &c, &error)) << error;
  EXPECT_EQ(c.info["kind"], "nccl");
  EXPECT_EQ(c.info["scenario"], std::string("fake_nccl_host ") + s.scenario);
  EXPECT_EQ(fake::CountFrames(c, gt::rawcap::kFrameNcclDropped), 0u);
  size_t starts_tracked = 0, stops = 0;
  std::set<uint32_t> versions, tids;
  for (const auto& f : c.frames) {
    if (f.type == gt::rawcap::kFrameNcclInit) {
      versions.insert(As<NcclInitRecord>(f).abi_version);
      tids.insert(As<NcclInitRecord>(f).tid);
    } else if (f.type >= gt::rawcap::kFrameNcclStart && f.type <= gt::rawcap::kFrameNcclFinalize) {
      NcclCallRecord r = As<NcclCallRecord>(f);
      versions.insert(r.abi_version);
      tids.insert(r.tid);
      if (f.type == gt::rawcap::kFrameNcclStart) {
        EXPECT_EQ(r.raw_bytes, s.abi == 4 ? 104u : 112u);
        starts_tracked += r.handle != 0;
      }
      stops += f.type == gt::rawcap::kFrameNcclStop;
    }
  }
  EXPECT_EQ(versions, std::set<uint32_t>({static_cast<uint32_t>(s.abi)}));
  Db ddb(direct.db);
  EXPECT_EQ(fake::CountFrames(c, gt::rawcap::kFrameNcclInit),
            static_cast<size_t>(ddb.Int("SELECT count(*) FROM GTRACE_NCCL_COMMUNICATORS").value_or(-1)));
  EXPECT_EQ(starts_tracked, static_cast<size_t>(ddb.Int("SELECT count(*) FROM GTRACE_NCCL_EVENTS").value_or(-1)));
  EXPECT_EQ(stops, starts_tracked);  // NCCL stops every event the plugin tracked

  // The replay: same calls, same handles tracked, one thread per recorded thread.
  TracedExport replay = RunAndExport(dir, {SamplePath("nccl_capture_replay"), caps[0]}, s.env, "replay");
  ASSERT_EQ(replay.run.exit_code, 0) << replay.run.err;
  auto counts = ReplayCounts(replay.run.out);
  EXPECT_EQ(counts["inits"], fake::CountFrames(c, gt::rawcap::kFrameNcclInit));
  EXPECT_EQ(counts["starts"], fake::CountFrames(c, gt::rawcap::kFrameNcclStart));
  EXPECT_EQ(counts["stops"], stops);
  EXPECT_EQ(counts["states"], fake::CountFrames(c, gt::rawcap::kFrameNcclState));
  EXPECT_EQ(counts["finalizes"], fake::CountFrames(c, gt::rawcap::kFrameNcclFinalize));
  EXPECT_EQ(counts["threads"], tids.size());
  EXPECT_EQ(counts["handle_mismatches"], 0u);
  EXPECT_EQ(counts["handles_unknown"], 0u);
  EXPECT_EQ(counts["parents_not_ours"], s.parents_not_ours);
  EXPECT_EQ(counts["strings_cut"], 0u);
  ASSERT_FALSE(replay.db.empty()) << replay.export_err;

  Db rdb(replay.db);
  auto want = NcclRowsForComparison(ddb, c.info["pid"]);
  auto got = NcclRowsForComparison(rdb, StreamPid(replay.streams[0]));
  EXPECT_GT(want["GTRACE_NCCL_EVENTS"].size(), 10u);
  for (const auto& [table, rows] : want)
    EXPECT_EQ(got[table], rows) << table;
  // GPU times: the recorded %globaltimer values put on the session clock through the stream's
  // realtime snapshots, which jitter by tens of ns in the recording and are exact in the replay.
  int64_t gpu_diff = MaxGpuTimeDifference(direct.db, replay.db);
  if (!want["GPU_DURATIONS"].empty()) {
    EXPECT_GE(gpu_diff, 0);
    EXPECT_LE(gpu_diff, 2000) << "ns";
  }
}

INSTANTIATE_TEST_SUITE_P(
    Scenarios,
    FakeNcclCaptureRoundTrip,
    ::testing::Values(Scenario{"V5Basic", "22809", "basic", {}, 5},
                      Scenario{"V4Basic", "22709", "basic", {}, 4},
                      Scenario{"V6CopyEngine", "22907", "ce", {}, 6},
                      Scenario{"V5ProxyStepsAndPxn",
                               "22809",
                               "proxy",
                               {{"GTRACE_NCCL_TRACE", "default,proxy-step,proxy-ctrl"}},
                               5,
                               1},
                      Scenario{"V5ThreeThreads", "22809", "threads", {}, 5},
                      Scenario{"V5PoolExhausted", "22809", "exhaust", {{"GTRACE_NCCL_POOL_EVENTS", "4"}}, 5}),
    [](const ::testing::TestParamInfo<Scenario>& i) { return std::string(i.param.name); });

// What the capture holds for the first operation of `basic`, byte for byte as the fake host passed it.
TEST(FakeNcclCaptureRoundTrip, CaptureHoldsInitArgumentsDescriptorsAndStrings) {
  TempDir dir;
  TracedExport direct = RunAndExport(dir, {SamplePath("fake_nccl_host"), "--nccl", "22809", "--scenario", "basic"},
                                     {{"GTRACE_RAW_CAPTURE_DIR", dir.File("cap")}}, "direct");
  ASSERT_EQ(direct.run.exit_code, 0) << direct.run.err;
  std::vector<std::string> caps = NcclCaptures(dir, "cap");
  ASSERT_EQ(caps.size(), 1u);
  fake::CaptureFile c;
  std::string error;
  ASSERT_TRUE(fake::ReadCaptureFile(caps[0], &c, &error)) << error;
  std::vector<const fake::CaptureFrame*> calls;
  for (const auto& f : c.frames) {
    if (f.type >= gt::rawcap::kFrameNcclInit && f.type <= gt::rawcap::kFrameNcclFinalize)
      calls.push_back(&f);
  }
  ASSERT_GE(calls.size(), 4u);
  for (size_t i = 1; i < calls.size(); ++i)
    EXPECT_LT(calls[i - 1]->seq, calls[i]->seq);  // written in order
  ASSERT_EQ(calls[0]->type, gt::rawcap::kFrameNcclInit);
  NcclInitRecord init = As<NcclInitRecord>(*calls[0]);
  EXPECT_EQ(init.abi_version, 5u);
  EXPECT_EQ(init.comm_hash, 0x1111u);
  EXPECT_EQ(std::string(init.comm_name), "world");
  EXPECT_EQ(init.name_bytes, 5u);
  EXPECT_EQ(init.n_nodes, 1);
  EXPECT_EQ(init.n_ranks, 4);
  EXPECT_EQ(init.rank, 1);
  EXPECT_EQ(init.activation_mask, 0x7f47);
  EXPECT_EQ(init.context, 1u);  // the plugin's context: communicator index 1
  // A blocking AllReduce: GroupApi (groupDepth 1), then state 23, then CollApi with its strings.
  NcclCallRecord group_api = As<NcclCallRecord>(*calls[1]);
  ASSERT_EQ(calls[1]->type, gt::rawcap::kFrameNcclStart);
  uint64_t type = 0;
  int32_t depth = 0;
  std::memcpy(&type, group_api.raw, 8);
  std::memcpy(&depth, group_api.raw + 28, 4);
  EXPECT_EQ(type, 1u << 8);
  EXPECT_EQ(depth, 1);
  EXPECT_EQ(group_api.n_strings, 0u);
  EXPECT_NE(group_api.handle, 0u);
  ASSERT_EQ(calls[2]->type, gt::rawcap::kFrameNcclState);
  EXPECT_EQ(As<NcclCallRecord>(*calls[2]).state, 23);
  EXPECT_EQ(As<NcclCallRecord>(*calls[2]).handle, group_api.handle);
  NcclCallRecord coll_api = As<NcclCallRecord>(*calls[3]);
  std::memcpy(&type, coll_api.raw, 8);
  EXPECT_EQ(type, 1u << 9);
  uint64_t parent = 0;
  std::memcpy(&parent, coll_api.raw + 8, 8);
  EXPECT_EQ(parent, group_api.handle);  // parentObj: the handle the plugin returned, as NCCL passed it back
  ASSERT_EQ(coll_api.n_strings, 2u);
  EXPECT_EQ(coll_api.strings[0].offset, 24u);
  EXPECT_EQ(std::string(coll_api.strings[0].text), "AllReduce");
  EXPECT_EQ(coll_api.strings[1].offset, 40u);
  EXPECT_EQ(std::string(coll_api.strings[1].text), "ncclFloat32");
  // The Coll event: four strings (func, datatype, algo, proto) and a kernel channel's end state args.
  bool saw_coll = false, saw_kernel_stop = false;
  for (const auto* f : calls) {
    if (f->type == gt::rawcap::kFrameNcclInit) continue;
    NcclCallRecord r = As<NcclCallRecord>(*f);
    std::memcpy(&type, r.raw, 8);
    if (f->type == gt::rawcap::kFrameNcclStart && type == 2 && !saw_coll) {
      saw_coll = true;
      ASSERT_EQ(r.n_strings, 4u);
      EXPECT_EQ(std::string(r.strings[2].text), "RING");
      EXPECT_EQ(std::string(r.strings[3].text), "SIMPLE");
    }
    if (f->type == gt::rawcap::kFrameNcclState && r.state == 22) {  // KernelChStop
      saw_kernel_stop = true;
      EXPECT_EQ(r.raw_bytes, 8u);
      EXPECT_EQ(r.flags & gt::rawcap::kNcclHasArgs, gt::rawcap::kNcclHasArgs);
    }
  }
  EXPECT_TRUE(saw_coll);
  EXPECT_TRUE(saw_kernel_stop);
  ASSERT_EQ(calls.back()->type, gt::rawcap::kFrameNcclFinalize);
  EXPECT_EQ(As<NcclCallRecord>(*calls.back()).context, 1u);
}

TEST(FakeNcclCaptureRoundTrip, OffByDefaultAndNotACuptiCapture) {
  TempDir dir;
  TracedExport direct =
      RunAndExport(dir, {SamplePath("fake_nccl_host"), "--nccl", "22809", "--scenario", "basic"}, {}, "direct");
  ASSERT_EQ(direct.run.exit_code, 0) << direct.run.err;
  EXPECT_EQ(direct.run.err.find("raw capture"), std::string::npos) << direct.run.err;
  EXPECT_TRUE(dir.Find(".gtcap").empty());
  // The replay program refuses a file that is not an NCCL capture, with a clear message.
  WriteFile(dir.File("x.gtcap"), "not a capture");
  RunResult r = RunProgram({SamplePath("nccl_capture_replay"), dir.File("x.gtcap")});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("not a gtrace raw capture"), std::string::npos) << r.err;
}

// A capture directory that cannot be made: one line, and the plugin traces on without the capture.
TEST(FakeNcclCaptureRoundTrip, UnusableDirectoryIsReportedOnceAndTracingGoesOn) {
  TempDir dir;
  WriteFile(dir.File("file"), "x");
  TracedExport direct = RunAndExport(dir, {SamplePath("fake_nccl_host"), "--nccl", "22809", "--scenario", "basic"},
                                     {{"GTRACE_RAW_CAPTURE_DIR", dir.File("file/sub")}}, "direct");
  ASSERT_EQ(direct.run.exit_code, 0) << direct.run.err;
  EXPECT_EQ(direct.run.out, "abi=5 mask=0x7f47 null_handles=0\n");
  const std::string line = "gtrace: raw capture of NCCL off: cannot create GTRACE_RAW_CAPTURE_DIR";
  size_t at = direct.run.err.find(line);
  ASSERT_NE(at, std::string::npos) << direct.run.err;
  EXPECT_EQ(direct.run.err.find(line, at + 1), std::string::npos) << direct.run.err;
  EXPECT_TRUE(dir.Find(".gtcap").empty());
  ASSERT_FALSE(direct.db.empty()) << direct.export_err;
  Db db(direct.db);
  EXPECT_EQ(db.Int("SELECT count(*) FROM GTRACE_NCCL_OPERATIONS"), 7);
  EXPECT_EQ(db.Int("SELECT count(*) FROM GTRACE_NCCL_EVENTS WHERE eventType = 'KernelCh'"), 11);
}

// NCCL's threads racing into the capture's log (4 application + 4 proxy threads, ~25000 calls): it
// keeps exactly its 16384 slots, in order, and counts every other call.
TEST(FakeNcclCaptureRoundTrip, FullLogKeepsItsCapacityAndCountsTheRest) {
  TempDir dir;
  TracedExport direct =
      RunAndExport(dir, {SamplePath("fake_nccl_host"), "--scenario", "flood", "--print-calls"},
                   {{"GTRACE_RAW_CAPTURE_DIR", dir.File("cap")}}, "direct");
  ASSERT_EQ(direct.run.exit_code, 0) << direct.run.err;
  size_t at = direct.run.out.find("plugin_calls=");
  ASSERT_NE(at, std::string::npos) << direct.run.out;
  uint64_t calls = std::stoull(direct.run.out.substr(at + 13));
  ASSERT_GT(calls, 16384u + 1000u);
  std::vector<std::string> caps = NcclCaptures(dir, "cap");
  ASSERT_EQ(caps.size(), 1u);
  fake::CaptureFile c;
  std::string error;
  ASSERT_TRUE(fake::ReadCaptureFile(caps[0], &c, &error)) << error;
  EXPECT_FALSE(c.cut);
  uint64_t kept = 0, last_seq = 0, dropped = 0;
  for (const auto& f : c.frames) {
    if (f.type >= gt::rawcap::kFrameNcclInit && f.type <= gt::rawcap::kFrameNcclFinalize) {
      ++kept;
      EXPECT_EQ(f.seq, last_seq + 1);  // every slot, in order, none twice
      last_seq = f.seq;
    } else if (f.type == gt::rawcap::kFrameNcclDropped) {
      uint64_t n = As<uint64_t>(f);
      EXPECT_GT(n, dropped);  // written when it grew
      dropped = n;
    }
  }
  EXPECT_EQ(kept, 16384u);
  EXPECT_EQ(kept + dropped, calls);
}

// --- real NCCL captures -----------------------------------------------------------------------

bool IsDir(const std::string& p) {
  struct stat st;
  return stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

std::vector<std::string> FindRealNcclCaptures() {
  std::vector<std::string> out;
  std::string root = SourceDir() + "/tests/data/gpu";
  if (!IsDir(root))
    return out;
  for (const std::string& kind : TempDir::ListDir(root)) {
    if (!IsDir(root + "/" + kind))
      continue;
    for (const std::string& run : TempDir::ListDir(root + "/" + kind)) {
      std::string d = root + "/" + kind + "/" + run;
      if (!IsDir(d))
        continue;
      for (const std::string& f : TempDir::ListDir(d)) {
        if (f.rfind("nccl-", 0) == 0 && f.size() > 6 && f.substr(f.size() - 6) == ".gtcap")
          out.push_back(d + "/" + f);
      }
    }
  }
  return out;
}

TEST(RealNcclCapture, ReplaysIntoThePluginWithEveryHandleAccountedFor) {
  std::vector<std::string> captures = FindRealNcclCaptures();
  if (captures.empty()) {
    GTEST_SKIP() << "no real NCCL capture under tests/data/gpu/<gpu>-cuda<version>/<run>/nccl-<pid>.gtcap yet: make "
                    "one on a GPU machine with scripts/gpu-check.d/20-nccl.sh (GT_NCCL_CAPTURE=1) and commit it "
                    "(docs/capture.md)";
  }
  for (const std::string& cap : captures) {
    SCOPED_TRACE(cap);
    fake::CaptureFile c;
    std::string error;
    ASSERT_TRUE(fake::ReadCaptureFile(cap, &c, &error)) << error;
    EXPECT_EQ(c.info["kind"], "nccl");
    EXPECT_EQ(fake::CountFrames(c, gt::rawcap::kFrameNcclDropped), 0u) << "the capture's log overflowed";
    ASSERT_GE(fake::CountFrames(c, gt::rawcap::kFrameNcclInit), 1u);
    size_t tracked = 0;
    for (const auto& f : c.frames) {
      if (f.type == gt::rawcap::kFrameNcclStart)
        tracked += As<NcclCallRecord>(f).handle != 0;
    }
    TempDir dir;
    TracedExport r = RunAndExport(dir, {SamplePath("nccl_capture_replay"), cap}, {}, "real");
    ASSERT_EQ(r.run.exit_code, 0) << r.run.err;
    auto counts = ReplayCounts(r.run.out);
    // The plugin, fed real NCCL's calls again, tracks exactly what it tracked on the GPU machine,
    // and every handle NCCL passed back (parents, stops, states) was one it had been given.
    EXPECT_EQ(counts["handle_mismatches"], 0u);
    EXPECT_EQ(counts["handles_unknown"], 0u);
    EXPECT_EQ(counts["strings_cut"], 0u);
    ASSERT_FALSE(r.db.empty()) << r.export_err;
    Db db(r.db);
    EXPECT_EQ(static_cast<size_t>(db.Int("SELECT count(*) FROM GTRACE_NCCL_EVENTS").value_or(-1)), tracked);
    EXPECT_EQ(db.Int("SELECT count(*) FROM GTRACE_NCCL_EVENTS WHERE end < start").value_or(-1), 0);
    EXPECT_GE(db.Int("SELECT count(*) FROM GTRACE_NCCL_OPERATIONS").value_or(0), 1);
  }
}

// Issue 31: a replay under the default stream clock (the tick counter where the machine has one)
// ended only when killed: the session start measured the tick rate by spinning until CLOCK_MONOTONIC
// advanced 2 ms, on a replay thread whose CLOCK_MONOTONIC is pinned inside the NCCL call. The spin
// is bounded now; the run is killed at 60 s (RunOptions) so a regression fails instead of hanging.
TEST(RealNcclCapture, ReplayEndsUnderTheTickClock) {
  std::vector<std::string> captures = FindRealNcclCaptures();
  if (captures.empty()) GTEST_SKIP() << "no real NCCL capture under tests/data/gpu/";
  TempDir dir;
  TracedExport r = RunAndExport(dir, {SamplePath("nccl_capture_replay"), captures[0]}, {{"GTRACE_CLOCK", "tsc"}},
                                "tick");
  ASSERT_EQ(r.run.term_signal, 0) << "killed at the deadline: the replay did not end";
  ASSERT_EQ(r.run.exit_code, 0) << r.run.err;
  EXPECT_EQ(ReplayCounts(r.run.out)["handle_mismatches"], 0u);
  ASSERT_EQ(r.streams.size(), 1u);
  ASSERT_FALSE(r.db.empty()) << r.export_err;
  Db db(r.db);
  EXPECT_GE(db.Int("SELECT count(*) FROM GTRACE_NCCL_EVENTS").value_or(0), 1);
}

}  // namespace
}  // namespace gt::test
