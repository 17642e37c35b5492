// GPU metrics end to end without a GPU: tests/metrics/programs/fake_metrics_app runs under
// LD_PRELOAD=libgtrace.so against the fake CUPTI (a TEST DOUBLE: it proves gtrace's logic —
// sampling thread, decoding, clock conversion, ownership, fail-soft paths, export rows, the report —
// not CUPTI's or a GPU's behaviour, which scripts/gpu-check.d/30-metrics.sh checks on a device).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/common/test_util.h"
#include "tools/stats/stats.h"

namespace gt::test {
namespace {

using Rows = std::vector<std::string>;

std::string FakeCupti() {
  return BinaryDir() + "/lib/libgt_fake_cupti.so";
}

struct TracedApp {
  RunResult run;
  std::vector<std::string> streams;
  std::string db;
  std::string export_err;
  std::string log;
};

// Runs the fake app's `scenario` traced (fake CUPTI, GTRACE_FLUSH_MS=50, a UUID tag of its own so
// per-GPU lock files never collide between tests) with `env` on top, and exports its streams.
TracedApp Traced(const TempDir& dir,
                 const std::string& scenario,
                 std::map<std::string, std::string> env,
                 const std::string& name = "run") {
  TracedApp r;
  RunOptions o = TracedRun(dir, name + "-%p");
  o.env["GTRACE_CUPTI_PATH"] = FakeCupti();
  o.env["GTRACE_FLUSH_MS"] = "50";
  o.env["FAKE_CUPTI_LOG"] = dir.File(name + ".log");
  for (const char* v : {"FAKE_CUPTI_PM_ENABLE_RESULT", "FAKE_CUPTI_PM_AVAILABILITY_RESULT",
                        "FAKE_CUPTI_PM_START_RESULT", "FAKE_CUPTI_REJECT_METRICS", "FAKE_CUPTI_MULTIPASS_METRICS",
                        "FAKE_CUDA_DEVICE_COUNT", "FAKE_CUPTI_NO_TIMESTAMP_CALLBACK", "FAKE_CUPTI_HOST_DELAY_MS", "LOCAL_RANK", "LOCAL_WORLD_SIZE",
                        "RANK", "SLURM_PROCID", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK"}) {
    o.unset_env.push_back(v);
  }
  for (const auto& [k, v] : env)
    o.env[k] = v;
  r.run = RunProgram({SamplePath("fake_metrics_app"), scenario}, o);
  for (const std::string& s : dir.Find(".gtrace")) {
    if (s.find("/" + name + "-") != std::string::npos)
      r.streams.push_back(s);
  }
  r.log = ReadFile(dir.File(name + ".log"));
  if (r.streams.empty())
    return r;
  std::vector<std::string> cmd = {CliPath(), "export", "-o", dir.File(name + ".sqlite")};
  cmd.insert(cmd.end(), r.streams.begin(), r.streams.end());
  RunResult e = RunProgram(cmd);
  r.export_err = e.err;
  if (e.exit_code == 0)
    r.db = dir.File(name + ".sqlite");
  return r;
}

std::vector<std::string> GtraceLines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("gtrace:", 0) == 0)
      out.push_back(line);
  }
  return out;
}

int Count(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t p = text.find(what); p != std::string::npos; p = text.find(what, p + 1))
    ++n;
  return n;
}

std::string Report(const std::string& db, const std::string& name) {
  std::ostringstream out;
  stats::ReportOptions options;
  options.format = stats::Format::kCsv;
  gt::Status st = stats::RunReport(db, name, options, out);
  EXPECT_TRUE(st.ok()) << st.message();
  return out.str();
}

// A fake-GPU UUID tag (bytes 12-14) unique to this test process and `n`: ctest runs the tests of one
// fixture as separate processes at the same time, and the per-GPU lock files are named by UUID.
std::string Tag(int n) {
  char hex[8];
  snprintf(hex, sizeof(hex), "%06x", static_cast<unsigned>((getpid() * 16 + n) & 0xffffff));
  return hex;
}

void RemoveLocks(const std::string& tag, int devices = 1) {
  // Lock files are named after the (fake) UUID: b15c2a57-42ed-1d24-2c84-0670<tag><40+d>.
  for (int d = 0; d < devices; ++d) {
    char hex[8];
    snprintf(hex, sizeof(hex), "%02x", 0x40 + d);
    std::string name = "gtrace-gpu-metrics-b15c2a5742ed1d242c840670" + tag + hex + ".lock";
    unlink(("/dev/shm/" + name).c_str());
    unlink(("/tmp/" + name).c_str());
  }
}

class Timeline : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir();
    run_ = new TracedApp(
        Traced(*dir_, "timeline",
               {{"GTRACE_GPU_METRICS_DEVICES", "all"}, {"FAKE_CUDA_UUID_TAG", Tag(1)}, {"FAKE_CUPTI_CHIP", "GH100"}}));
    RemoveLocks(Tag(1));
  }
  static void TearDownTestSuite() {
    delete run_;
    delete dir_;
  }
  static TempDir* dir_;
  static TracedApp* run_;
};
TempDir* Timeline::dir_ = nullptr;
TracedApp* Timeline::run_ = nullptr;

TEST_F(Timeline, SamplesAreExportedAsGpuMetricsRows) {
  ASSERT_EQ(run_->run.exit_code, 0) << run_->run.err;
  ASSERT_FALSE(run_->db.empty()) << run_->export_err;
  EXPECT_TRUE(GtraceLines(run_->run.err).empty()) << run_->run.err;
  Db db(run_->db);
  // 20 samples (the warm-up sample after Start is discarded) x 14 metrics of the default set.
  EXPECT_EQ(db.Int("SELECT count(*) FROM GPU_METRICS"), 280);
  EXPECT_EQ(db.Int("SELECT count(DISTINCT timestamp) FROM GPU_METRICS"), 20);
  EXPECT_EQ(
      db.Rows("SELECT metricId, metricName FROM TARGET_INFO_GPU_METRICS ORDER BY metricId"),
      // nsys's names and GH100 ids where the metric is nsys's (tools/export/nsys_gpu_metrics.cc), gtrace's
      // own names from 1000 for the rest.
      (Rows{"0|GPC Clock Frequency [MHz]", "2|GR Active [Throughput %]", "3|SMs Active [Throughput %]",
            "4|SM Issue [Throughput %]", "5|Tensor Active [Throughput %]", "12|Compute Warps in Flight [Throughput %]",
            "1000|gtrace Warp Occupancy of Active SMs [Throughput %]", "1001|gtrace DRAM Read Bytes [bytes/s]",
            "1002|gtrace DRAM Write Bytes [bytes/s]", "1003|gtrace DRAM Throughput [Throughput %]",
            "1004|gtrace PCIe RX Bytes [bytes/s]", "1005|gtrace PCIe TX Bytes [bytes/s]",
            "1006|gtrace NVLink RX Bytes [bytes/s]", "1007|gtrace NVLink TX Bytes [bytes/s]"}));
  // typeId: <hw 0><vm 1><source 1><gpu id>, its low byte the TARGET_INFO_GPU id of the sampled UUID.
  EXPECT_EQ(
      db.Rows("SELECT DISTINCT typeId, sourceId, typeName FROM TARGET_INFO_GPU_METRICS"),
      (Rows{std::to_string((int64_t{1} << 48) | (int64_t{1} << 32)) + "|1|GPU 0 PM sampling: Fake GPU 0 (GH100)"}));
  EXPECT_EQ(db.Rows("SELECT DISTINCT g.id, g.uuid, g.chipName, g.busLocation FROM GPU_METRICS m JOIN TARGET_INFO_GPU g "
                    "ON g.id = (m.typeId & 255)"),
            (Rows{"0|b15c2a57-42ed-1d24-2c84-0670" + Tag(1) + "40|GH100|0000:19:00.0"}));
}

TEST_F(Timeline, ValuesAreScaledIntegers) {
  ASSERT_FALSE(run_->db.empty());
  Db db(run_->db);
  auto values = [&](int metric) {
    return db.Rows("SELECT group_concat(value) FROM (SELECT value FROM GPU_METRICS WHERE metricId = " +
                   std::to_string(metric) + " ORDER BY timestamp)")[0];
  };
  // Clock: Hz -> MHz; percentages: whole percent (40.4 -> 40); bandwidths: bytes/s as CUPTI gave
  // them (the stream carries 32-bit floats: 1.5e12 travels as 1500000026624).
  EXPECT_EQ(values(0),
            "1980,1980,1980,1980,1980,1980,1980,1980,1980,1980,1755,1755,1755,1755,1755,1755,1755,1755,1755,1755");
  EXPECT_EQ(values(4), "0,0,0,0,0,0,0,0,0,0,40,40,40,40,40,40,40,40,40,40");
  EXPECT_EQ(values(5), "0,0,0,0,0,0,0,0,0,0,80,80,80,80,80,80,80,80,80,80");
  EXPECT_EQ(db.Int("SELECT DISTINCT value FROM GPU_METRICS WHERE metricId = 1001 AND value > 1000000000000"),
            static_cast<int64_t>(static_cast<float>(1.5e12)));
  EXPECT_EQ(db.Int("SELECT DISTINCT value FROM GPU_METRICS WHERE metricId = 1002 AND value > 0"),
            static_cast<int64_t>(static_cast<float>(1.4e12)));
}

TEST_F(Timeline, SamplesShareTheKernelsClock) {
  ASSERT_FALSE(run_->db.empty());
  Db db(run_->db);
  // Samples end every 100 us from T+100us; copy_kernel starts at T+100us, gemm_kernel at T+1.1ms:
  // with gtrace's timestamp callback both come from the same clock, exactly.
  EXPECT_EQ(db.Int("SELECT min(timestamp) FROM GPU_METRICS"),
            db.Int("SELECT k.start FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON s.id = k.shortName "
                   "WHERE s.value = 'copy_kernel'"));
  EXPECT_EQ(db.Int("SELECT max(timestamp) - min(timestamp) FROM GPU_METRICS"), 1900000);
  EXPECT_EQ(db.Int("SELECT count(*) FROM GPU_METRICS m, CUPTI_ACTIVITY_KIND_KERNEL k WHERE m.metricId = 5 AND "
                   "m.value = 80 AND k.shortName = (SELECT id FROM StringIds WHERE value = 'gemm_kernel') AND "
                   "m.timestamp > k.start AND m.timestamp <= k.\"end\" + 100000"),
            9);
  // rawTimestamp is the same instant on CUPTI's clock (here CLOCK_MONOTONIC, the stream clock).
  EXPECT_EQ(db.Int("SELECT count(DISTINCT rawTimestamp - timestamp) FROM GPU_METRICS"), 1);
}

TEST_F(Timeline, OwnTablesRecordTheSetAndLosses) {
  ASSERT_FALSE(run_->db.empty());
  Db db(run_->db);
  EXPECT_EQ(db.Rows("SELECT cudaId, gpuId, chipName, state, setName, samplingIntervalNs, triggerMode, samples, "
                    "droppedSamples, hwBufferOverflows, decodeErrors, ownerRule FROM GTRACE_GPU_METRICS_DEVICES"),
            (Rows{"0|0|GH100|stopped|default|100000|time|20|0|1|0|no local rank: this process samples every "
                  "requested device it sees"}));
  EXPECT_EQ(db.Int("SELECT count(*) FROM GTRACE_GPU_METRICS_CONFIG WHERE accepted = 1 AND profiler = 'pm-sampling'"),
            14);
  EXPECT_EQ(db.Rows("SELECT metricKey, cuptiName, metricName, unit, scale FROM GTRACE_GPU_METRICS_CONFIG WHERE "
                    "metricKey IN ('gpc_clock', 'tensor_active') AND accepted = 1 ORDER BY metricId"),
            (Rows{"gpc_clock|gpc__cycles_elapsed.avg.per_second|GPC Clock Frequency [MHz]|MHz|1.0e-06",
                  "tensor_active|sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed|Tensor Active "
                  "[Throughput %]|Throughput %|1.0"}));
  // The fake's log: one enable, the 10 kHz default as a 100000 ns TIME_INTERVAL, start, stop, disable.
  EXPECT_EQ(Count(run_->log, "pm enable 0"), 1);
  EXPECT_EQ(Count(run_->log, "pm config 0 interval 100000 trigger 1 metrics 14"), 1);
  EXPECT_EQ(Count(run_->log, "pm disable 0"), 1);
}

TEST_F(Timeline, GpuMetricsSumAveragesOverKernels) {
  ASSERT_FALSE(run_->db.empty());
  std::string csv = Report(run_->db, "gpu_metrics_sum");
  EXPECT_NE(csv.find("Kernel,copy_kernel,gtrace DRAM Read Bytes [bytes/s],1,800000,8,1500000026624.00,"),
            std::string::npos)
      << csv;
  EXPECT_NE(csv.find("Kernel,copy_kernel,SMs Active [Throughput %],1,800000,8,20.00,20,20"), std::string::npos) << csv;
  EXPECT_NE(csv.find("Kernel,gemm_kernel,Tensor Active [Throughput %],1,800000,8,80.00,80,80"), std::string::npos)
      << csv;
  EXPECT_NE(csv.find("Kernel,gemm_kernel,GPC Clock Frequency [MHz],1,800000,8,1755.00,1755,1755"), std::string::npos)
      << csv;
}

TEST(GpuMetrics, FrequencyAndSetAreHonoured) {
  TempDir dir;
  TracedApp r =
      Traced(dir, "timeline",
             {{"GTRACE_GPU_METRICS_DEVICES", "0"},
              {"GTRACE_GPU_METRICS_FREQUENCY", "20000"},
              {"GTRACE_GPU_METRICS_SET", "compute"},
              {"FAKE_CUDA_UUID_TAG", Tag(2)},
              // The non-realtime tensor counter refused: the chip's alternative is taken.
              {"FAKE_CUPTI_REJECT_METRICS", "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed"}});
  RemoveLocks(Tag(2));
  ASSERT_EQ(r.run.exit_code, 0) << r.run.err;
  ASSERT_FALSE(r.db.empty()) << r.export_err;
  EXPECT_EQ(Count(r.log, "pm config 0 interval 50000 trigger 1 metrics 7"), 1) << r.log;
  Db db(r.db);
  EXPECT_EQ(db.Int("SELECT count(*) FROM TARGET_INFO_GPU_METRICS"), 7);
  EXPECT_EQ(
      db.Rows("SELECT cuptiName, accepted, reason FROM GTRACE_GPU_METRICS_CONFIG WHERE metricKey = "
              "'tensor_active' ORDER BY accepted"),
      (Rows{"sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed|0|CUPTI_ERROR_INVALID_PARAMETER from "
            "cuptiProfilerHostConfigAddMetrics",
            "sm__pipe_tensor_cycles_active_realtime.avg.pct_of_peak_sustained_elapsed|1|NULL"}));
}

TEST(GpuMetrics, ProfileFlagsBecomeTheVariables) {
  TempDir dir;
  RunOptions o;
  o.env["GTRACE_CUPTI_PATH"] = FakeCupti();
  o.env["FAKE_CUPTI_LOG"] = dir.File("cli.log");
  o.env["FAKE_CUDA_UUID_TAG"] = Tag(0);
  o.unset_env = {"GTRACE_GPU_METRICS_DEVICES", "GTRACE_GPU_METRICS_FREQUENCY", "GTRACE_GPU_METRICS_SET",
                 "GTRACE_GPU_METRICS_RANGES", "GTRACE_TRACE"};
  RunResult r =
      RunProgram({CliPath(), "profile", "-o", dir.File("cli-%p"), "--gpu-metrics-devices=0", "--gpu-metrics-frequency",
                  "25000", "--gpu-metrics-set=memory", "--export=sqlite", SamplePath("fake_metrics_app"), "timeline"},
                 o);
  RemoveLocks(Tag(0));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::string log = ReadFile(dir.File("cli.log"));
  EXPECT_EQ(Count(log, "pm config 0 interval 40000 trigger 1 metrics 9"), 1) << log;
  std::vector<std::string> dbs = dir.Find(".sqlite");
  ASSERT_EQ(dbs.size(), 1u) << r.err;
  Db db(dbs[0]);
  EXPECT_EQ(db.Int("SELECT count(DISTINCT metricId) FROM GPU_METRICS"), 9);
  EXPECT_EQ(db.Rows("SELECT DISTINCT setName, samplingIntervalNs FROM GTRACE_GPU_METRICS_DEVICES"),
            (Rows{"memory|40000"}));
}

TEST(GpuMetrics, NoPermissionIsOneLineWithTheFixAndTheTraceGoesOn) {
  TempDir dir;
  TracedApp r = Traced(dir, "devices",
                       {{"GTRACE_GPU_METRICS_DEVICES", "all"},
                        {"FAKE_CUDA_DEVICE_COUNT", "2"},
                        {"FAKE_CUDA_UUID_TAG", Tag(3)},
                        {"FAKE_CUPTI_PM_ENABLE_RESULT", "35"}});
  RemoveLocks(Tag(3), 2);
  ASSERT_EQ(r.run.exit_code, 0) << r.run.err;
  EXPECT_EQ(r.run.out, "running=\n");
  std::vector<std::string> lines = GtraceLines(r.run.err);
  ASSERT_EQ(lines.size(), 1u) << r.run.err;  // two devices, one cause, one line
  EXPECT_NE(lines[0].find("CUPTI_ERROR_INSUFFICIENT_PRIVILEGES from cuptiPmSamplingEnable"), std::string::npos);
  EXPECT_NE(lines[0].find("CAP_SYS_ADMIN"), std::string::npos);
  EXPECT_NE(lines[0].find("NVreg_RestrictProfilingToAdminUsers=0"), std::string::npos);
  ASSERT_FALSE(r.db.empty()) << r.export_err;
  Db db(r.db);
  EXPECT_EQ(db.Rows("SELECT cudaId, state FROM GTRACE_GPU_METRICS_DEVICES ORDER BY cudaId"),
            (Rows{"0|unavailable", "1|unavailable"}));
  EXPECT_EQ(db.Int("SELECT count(*) FROM sqlite_master WHERE name = 'GPU_METRICS'"), 0);
  EXPECT_EQ(db.Int("SELECT count(*) FROM TARGET_INFO_CUDA_CONTEXT_INFO"), 2);  // CUDA tracing unaffected
}

TEST(GpuMetrics, CountersHeldByAnotherProfilerNamesDcgm) {
  TempDir dir;
  TracedApp r = Traced(dir, "plain",
                       {{"GTRACE_GPU_METRICS_DEVICES", "cuda-visible"},
                        {"FAKE_CUDA_UUID_TAG", Tag(4)},
                        {"FAKE_CUPTI_PM_AVAILABILITY_RESULT", "26"}});
  RemoveLocks(Tag(4));
  ASSERT_EQ(r.run.exit_code, 0) << r.run.err;
  std::vector<std::string> lines = GtraceLines(r.run.err);
  ASSERT_EQ(lines.size(), 1u) << r.run.err;
  EXPECT_NE(lines[0].find("held by another profiler"), std::string::npos);
  EXPECT_NE(lines[0].find("CUPTI_ERROR_HARDWARE_BUSY from cuptiPmSamplingGetCounterAvailability"), std::string::npos);
  EXPECT_NE(lines[0].find("dcgmi profile --pause"), std::string::npos);
  ASSERT_FALSE(r.db.empty()) << r.export_err;
  Db db(r.db);
  EXPECT_EQ(db.Int("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL"), 1);
  EXPECT_EQ(db.Int("SELECT count(*) FROM NVTX_EVENTS WHERE text = 'work'"), 1);
  EXPECT_EQ(db.Int("SELECT count(*) FROM DIAGNOSTIC_EVENT WHERE text LIKE '%dcgmi profile --pause%'"), 1);
}

TEST(GpuMetrics, OneLocalRankPerGpu) {
  TempDir dir;
  TracedApp r = Traced(dir, "devices",
                       {{"GTRACE_GPU_METRICS_DEVICES", "all"},
                        {"FAKE_CUDA_DEVICE_COUNT", "4"},
                        {"FAKE_CUDA_UUID_TAG", Tag(5)},
                        {"RANK", "5"},
                        {"LOCAL_RANK", "1"},
                        {"LOCAL_WORLD_SIZE", "4"}});
  RemoveLocks(Tag(5), 4);
  ASSERT_EQ(r.run.exit_code, 0) << r.run.err;
  EXPECT_EQ(r.run.out, "running=1\n");
  EXPECT_EQ(Count(r.log, "pm enable"), 1);
  ASSERT_FALSE(r.db.empty()) << r.export_err;
  Db db(r.db);
  EXPECT_EQ(db.Rows("SELECT cudaId, state, reason FROM GTRACE_GPU_METRICS_DEVICES ORDER BY cudaId"),
            (Rows{"0|not-owned|owned by another local rank: local rank 1 of 4 owns the devices d with d % 4 == 1",
                  "1|stopped|sampling ended at process exit",
                  "2|not-owned|owned by another local rank: local rank 1 of 4 owns the devices d with d % 4 == 1",
                  "3|not-owned|owned by another local rank: local rank 1 of 4 owns the devices d with d % 4 == 1"}));
}

TEST(GpuMetrics, ASecondProcessOnTheSameGpuDoesNotSample) {
  TempDir dir;
  RunOptions first = TracedRun(dir, "first-%p");
  first.env["GTRACE_CUPTI_PATH"] = FakeCupti();
  first.env["GTRACE_GPU_METRICS_DEVICES"] = "0";
  first.env["FAKE_CUDA_UUID_TAG"] = Tag(6);
  // `hold` keeps sampling for ~1.8 s; the second process starts meanwhile (a thread runs it).
  RunResult a;
  std::thread holder([&] { a = RunProgram({SamplePath("fake_metrics_app"), "hold"}, first); });
  usleep(500000);
  TracedApp b = Traced(dir, "devices", {{"GTRACE_GPU_METRICS_DEVICES", "0"}, {"FAKE_CUDA_UUID_TAG", Tag(6)}}, "second");
  holder.join();
  RemoveLocks(Tag(6));
  EXPECT_EQ(a.out, "running=0\n") << a.err;
  EXPECT_EQ(b.run.out, "running=\n") << b.run.err;
  ASSERT_FALSE(b.db.empty()) << b.export_err;
  Db db(b.db);
  EXPECT_EQ(db.Int("SELECT count(*) FROM GTRACE_GPU_METRICS_DEVICES WHERE state = 'not-owned' AND reason LIKE "
                   "'sampled by another process: pid %'"),
            1);
}

TEST(GpuMetrics, ClosedCaptureWindowKeepsSamplingOff) {
  TempDir dir;
  TracedApp r = Traced(dir, "devices",
                       {{"GTRACE_GPU_METRICS_DEVICES", "all"},
                        {"FAKE_CUDA_UUID_TAG", Tag(7)},
                        {"GTRACE_CAPTURE_RANGE", "nvtx"},
                        {"GTRACE_NVTX_CAPTURE", "never"}});
  RemoveLocks(Tag(7));
  ASSERT_EQ(r.run.exit_code, 0) << r.run.err;
  EXPECT_EQ(r.run.out, "running=\n");
  EXPECT_EQ(Count(r.log, "pm enable 0"), 1);  // set up, ready for a window
  EXPECT_EQ(Count(r.log, "pm start"), 0);
}

TEST(GpuMetrics, NothingAskedNothingLoaded) {
  TempDir dir;
  TracedApp r = Traced(dir, "plain", {{"FAKE_CUDA_UUID_TAG", Tag(8)}});
  ASSERT_EQ(r.run.exit_code, 0) << r.run.err;
  EXPECT_EQ(Count(r.log, "profiler initialize"), 0);
  EXPECT_EQ(Count(r.log, "pm "), 0);
  ASSERT_FALSE(r.db.empty()) << r.export_err;
  Db db(r.db);
  EXPECT_EQ(db.Int("SELECT count(*) FROM sqlite_master WHERE name LIKE '%GPU_METRICS%'"), 0);
}

TEST(GpuMetrics, ClockConvertedWhenCuptiKeepsItsOwnClock) {
  // Without gtrace's timestamp callback CUPTI stamps with CLOCK_REALTIME: the sampler converts with
  // its measured offset (the tracer with its own): both land on the stream clock within a few us.
  TempDir dir;
  TracedApp r = Traced(dir, "timeline",
                       {{"GTRACE_GPU_METRICS_DEVICES", "all"},
                        {"FAKE_CUDA_UUID_TAG", Tag(9)},
                        {"FAKE_CUPTI_NO_TIMESTAMP_CALLBACK", "1"}});
  RemoveLocks(Tag(9));
  ASSERT_EQ(r.run.exit_code, 0) << r.run.err;
  ASSERT_FALSE(r.db.empty()) << r.export_err;
  Db db(r.db);
  auto diff = db.Int(
      "SELECT abs(min(m.timestamp) - k.start) FROM GPU_METRICS m, CUPTI_ACTIVITY_KIND_KERNEL k "
      "WHERE k.shortName = (SELECT id FROM StringIds WHERE value = 'copy_kernel')");
  ASSERT_TRUE(diff.has_value());
  EXPECT_LT(*diff, 100000) << "sample and kernel clocks differ by " << *diff << " ns";
  // rawTimestamp is CUPTI's CLOCK_REALTIME reading: decades after the monotonic session time.
  EXPECT_GT(*db.Int("SELECT min(rawTimestamp - timestamp) FROM GPU_METRICS"), int64_t{1000000000} * 3600 * 24 * 365);
}

TEST(RangeProfiler, NvtxRangesGetTheirOwnCounters) {
  TempDir dir;
  TracedApp r = Traced(dir, "nvtx", {{"GTRACE_GPU_METRICS_RANGES", "nvtx:step"}, {"FAKE_CUDA_UUID_TAG", Tag(10)}});
  ASSERT_EQ(r.run.exit_code, 0) << r.run.err;
  EXPECT_TRUE(GtraceLines(r.run.err).empty()) << r.run.err;
  EXPECT_EQ(Count(r.log, "profiler initialize"), 1);  // also without PM sampling
  EXPECT_EQ(Count(r.log, "range push step"), 3);      // the nested "step" and "other" are not profiled
  EXPECT_EQ(Count(r.log, "range config user replay 3"), 3);
  ASSERT_FALSE(r.db.empty()) << r.export_err;
  Db db(r.db);
  EXPECT_EQ(db.Rows("SELECT mode, rangeName, rangeIndex, passId, value FROM GTRACE_RANGE_METRICS WHERE cuptiName IN "
                    "('gpu__time_duration.sum', 'dram__bytes_read.sum') ORDER BY passId, cuptiName DESC"),
            (Rows{"nvtx|step|0|1|1000.0", "nvtx|step|0|1|4096.0", "nvtx|step|0|2|2000.0", "nvtx|step|0|2|8192.0",
                  "nvtx|step|0|3|3000.0", "nvtx|step|0|3|12288.0"}));
  EXPECT_EQ(db.Int("SELECT count(DISTINCT metricName) FROM GTRACE_RANGE_METRICS"), 15);
  // The range's thread and time: each pass starts inside its NVTX range (right after the push) and
  // ends right after its pop.
  EXPECT_EQ(db.Int("SELECT count(*) FROM GTRACE_RANGE_METRICS r JOIN NVTX_EVENTS n ON n.globalTid = r.globalTid AND "
                   "n.text = 'step' AND r.passStart BETWEEN n.start AND n.\"end\" AND r.passEnd >= n.\"end\" AND "
                   "r.passEnd - n.\"end\" < 10000000 WHERE r.cuptiName = 'gpu__time_duration.sum'"),
            3);
  EXPECT_EQ(db.Int("SELECT count(*) FROM GTRACE_GPU_METRICS_CONFIG WHERE profiler = 'range-profiler' AND accepted = 1"),
            15);
}

// The fake profiles kernels as the H200 did (fake_profiler.cc): auto-range names count on across
// passes, and a profiled kernel's activity record has no timestamps, so it has no kernel row; each
// range is mapped to its launch call by its index in the pass.
TEST(RangeProfiler, KernelModeMapsRangesToKernelsAndWarns) {
  TempDir dir;
  TracedApp r = Traced(dir, "kernels",
                       {{"GTRACE_GPU_METRICS_RANGES", "kernel"},
                        {"GTRACE_GPU_METRICS_SET", "metrics:gpu__time_duration.sum,sm__inst_executed.sum"},
                        {"FAKE_CUDA_UUID_TAG", Tag(11)}});
  ASSERT_EQ(r.run.exit_code, 0) << r.run.err;
  std::vector<std::string> lines = GtraceLines(r.run.err);
  ASSERT_EQ(lines.size(), 1u) << r.run.err;
  EXPECT_NE(lines[0].find("serialises every kernel launch"), std::string::npos);
  EXPECT_NE(lines[0].find("no timestamps from CUPTI"), std::string::npos);
  EXPECT_EQ(Count(r.log, "range config auto replay 2"), Count(r.log, "range decode"));
  ASSERT_FALSE(r.db.empty()) << r.export_err;
  EXPECT_NE(r.export_err.find("5 kernel-mode ranges are mapped to their launch only"), std::string::npos)
      << r.export_err;
  Db db(r.db);
  // Two passes (the app pauses 250 ms after three kernels): names 0-4, indices 0-2 and 0-1.
  EXPECT_EQ(db.Rows("SELECT (SELECT count(DISTINCT p.passId) FROM GTRACE_RANGE_METRICS p WHERE p.passId < r.passId), "
                    "r.rangeName, r.rangeIndex, "
                    "s.value, r.kernelName IS NULL, r.kernelStart IS NULL, r.value FROM GTRACE_RANGE_METRICS r JOIN "
                    "CUPTI_ACTIVITY_KIND_RUNTIME a ON a.correlationId = r.correlationId JOIN StringIds s ON s.id = "
                    "a.nameId WHERE r.cuptiName = 'sm__inst_executed.sum' ORDER BY r.passId, r.rangeIndex"),
            (Rows{"0|0|0|cudaLaunchKernel_v7000|1|1|5000.0", "0|1|1|cudaLaunchKernel_v7000|1|1|5001.0",
                  "0|2|2|cudaLaunchKernel_v7000|1|1|5002.0", "1|3|0|cudaLaunchKernel_v7000|1|1|5003.0",
                  "1|4|1|cudaLaunchKernel_v7000|1|1|5004.0"}));
  // The launches in launch order: range k of the run is the k-th launch.
  EXPECT_EQ(db.Int("SELECT count(*) FROM (SELECT r.correlationId, row_number() OVER (ORDER BY r.passId, r.rangeIndex) "
                   "AS k FROM GTRACE_RANGE_METRICS r WHERE r.cuptiName = 'gpu__time_duration.sum') m JOIN (SELECT "
                   "correlationId, row_number() OVER (ORDER BY start) AS k FROM CUPTI_ACTIVITY_KIND_RUNTIME) a ON "
                   "a.k = m.k AND a.correlationId = m.correlationId"),
            5);
  // Every kernel was profiled: no kernel row (and so no table), 5 records without timestamps.
  EXPECT_EQ(db.Int("SELECT count(*) FROM sqlite_master WHERE name = 'CUPTI_ACTIVITY_KIND_KERNEL'"), 0);
  EXPECT_EQ(db.Int("SELECT sum(CAST(substr(text, 16) AS INTEGER)) FROM DIAGNOSTIC_EVENT WHERE text LIKE 'gtrace "
                   "dropped % CUPTI records without an end%'"),
            5);
}

// gtrace's streams of two kernel-mode runs on an H200 (tests/data/gpu/nvidia-h200-cuda13.0/
// metrics-kernel-mode/README.md): before the mapping used the launch calls, none of their 22 and
// 110 rows had a kernel ("0 of 110 per-kernel rows mapped"), because CUPTI gave the profiled kernels
// no timestamps. Every range maps to its launch now; the duration of each launch call holds the
// range's GPU time.
TEST(RangeProfiler, RealH200KernelModeStreamsMapEveryRangeToItsLaunch) {
  const std::string data = SourceDir() + "/tests/data/gpu/nvidia-h200-cuda13.0/metrics-kernel-mode";
  struct Expect {
    std::string file;
    int64_t rows;
    Rows ranges;
  };
  const std::vector<Expect> runs = {
      {"rk-run5.gtrace", 22, {"2|0|0|1584|cuLaunchKernelEx|26592.0", "2|1|1|1598|cudaLaunchKernel_v7000|127904.0"}},
      {"rk-run6.gtrace",
       110,
       {"2|0|0|192|cudaLaunchKernel_v7000|13632.0", "2|1|1|217|cudaLaunchKernel_v7000|13664.0",
        "2|2|2|234|cudaLaunchKernel_v7000|128608.0", "3|3|0|1600|cuLaunchKernelEx|27072.0",
        "3|4|1|1614|cudaLaunchKernel_v7000|125824.0", "3|5|2|1636|cuLaunchKernelEx|26272.0",
        "3|6|3|1646|cudaLaunchKernel_v7000|125760.0", "3|7|4|1668|cuLaunchKernelEx|26208.0",
        "3|8|5|1678|cudaLaunchKernel_v7000|125344.0", "3|9|6|1700|cuLaunchKernelEx|26624.0"}},
  };
  for (const Expect& e : runs) {
    SCOPED_TRACE(e.file);
    TempDir dir;
    RunResult x = RunProgram({CliPath(), "export", "-o", dir.File("rk.sqlite"), data + "/" + e.file});
    ASSERT_EQ(x.exit_code, 0) << x.err;
    Db db(dir.File("rk.sqlite"));
    EXPECT_EQ(db.Int("SELECT count(*) FROM GTRACE_RANGE_METRICS WHERE mode = 'kernel' AND correlationId IS NOT NULL"),
              e.rows);
    EXPECT_EQ(db.Rows("SELECT r.passId, r.rangeName, r.rangeIndex, r.correlationId, s.value, r.value FROM "
                      "GTRACE_RANGE_METRICS r JOIN CUPTI_ACTIVITY_KIND_RUNTIME a ON a.correlationId = r.correlationId "
                      "JOIN StringIds s ON s.id = a.nameId WHERE r.cuptiName = 'gpu__time_duration.sum' ORDER BY "
                      "r.passId, r.rangeIndex"),
              e.ranges);
    EXPECT_EQ(db.Int("SELECT count(*) FROM GTRACE_RANGE_METRICS r JOIN CUPTI_ACTIVITY_KIND_RUNTIME a ON "
                     "a.correlationId = r.correlationId WHERE r.cuptiName = 'gpu__time_duration.sum' AND r.value > 0 "
                     "AND r.value <= a.\"end\" - a.start"),
              static_cast<int64_t>(e.ranges.size()));
    EXPECT_EQ(db.Int("SELECT count(*) FROM GTRACE_RANGE_METRICS WHERE kernelName IS NOT NULL"), 0);  // CUPTI's limit
  }
}

// Replaying the H200's range-profiler capture crashed the application at exit (SIGSEGV in
// libnvperf_host): it exited while gtrace's metrics thread was still selecting metrics, and
// libcupti's objects, made when it was loaded by that selection, were freed by exit handlers that
// ran before gtrace's. The fake models that lifetime (a host call after its exit handler is a
// VIOLATION) and makes each ConfigAddMetrics take 100 ms, so the selection (about 20 of them) is
// still running when `plain` exits after 200 ms: gtrace's exit hook must run first and cancel it.
TEST(RangeProfiler, ExitDuringMetricSelectionCancelsItBeforeCuptiIsDestroyed) {
  TempDir dir;
  TracedApp r = Traced(dir, "plain",
                       {{"GTRACE_GPU_METRICS_RANGES", "nvtx:step"},
                        {"FAKE_CUPTI_HOST_DELAY_MS", "100"},
                        {"FAKE_CUDA_UUID_TAG", Tag(13)}});
  ASSERT_EQ(r.run.exit_code, 0) << r.run.err;
  EXPECT_EQ(Count(r.run.err, "VIOLATION"), 0) << r.run.err;
  EXPECT_EQ(Count(r.log, "VIOLATION"), 0) << r.log;
  EXPECT_EQ(Count(r.log, "range enable"), 0);  // nothing was armed
  ASSERT_FALSE(r.db.empty()) << r.export_err;
  Db db(r.db);
  EXPECT_EQ(db.Int("SELECT count(*) FROM NVTX_EVENTS WHERE text = 'work'"), 1);
  EXPECT_EQ(db.Int("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL"), 1);
}

TEST(GpuMetrics, RealCuptiWithoutADriverFailsSoft) {
  const std::string real = GT_CUPTI_LIBRARY;
  if (real.empty())
    GTEST_SKIP() << "no toolkit libcupti";
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  // The metrics thread now loads CUPTI's host library first (so its exit hook outlives it), and
  // libcupti dlopens libnvperf_host with RTLD_DEEPBIND, which the sanitizer runtimes refuse.
  GTEST_SKIP() << "libcupti dlopens libnvperf_host with RTLD_DEEPBIND, which the sanitizer runtimes refuse";
#endif
  TempDir dir;
  TracedApp r =
      Traced(dir, "plain",
             {{"GTRACE_GPU_METRICS_DEVICES", "all"}, {"GTRACE_CUPTI_PATH", real}, {"FAKE_CUDA_UUID_TAG", Tag(12)}});
  RemoveLocks(Tag(12));
  ASSERT_EQ(r.run.exit_code, 0) << r.run.err;
  EXPECT_EQ(Count(r.run.err, "GPU metrics off"), 1) << r.run.err;
  ASSERT_FALSE(r.db.empty()) << r.export_err;
  Db db(r.db);
  EXPECT_EQ(db.Int("SELECT count(*) FROM NVTX_EVENTS WHERE text = 'work'"), 1);
}

}  // namespace
}  // namespace gt::test

namespace gt::test {
namespace {

// The 30-metrics capture on an H200 (2026-11-26) recorded no sample inside a 100 ms NVTX capture
// window: sampling must start when the window opens and its samples must reach the export.
TEST(GpuMetrics, NvtxCaptureWindowStartsSamplingAndKeepsItsSamples) {
  TempDir dir;
  TracedApp r = Traced(dir, "window",
                       {{"GTRACE_GPU_METRICS_DEVICES", "all"},
                        {"FAKE_CUDA_UUID_TAG", Tag(21)},
                        {"GTRACE_CAPTURE_RANGE", "nvtx"},
                        {"GTRACE_NVTX_CAPTURE", "work"}});
  RemoveLocks(Tag(21));
  ASSERT_EQ(r.run.exit_code, 0) << r.run.err;
  EXPECT_EQ(Count(r.log, "pm start"), 1) << r.log;
  ASSERT_FALSE(r.db.empty()) << r.export_err;
  Db db(r.db);
  EXPECT_EQ(db.Int("SELECT count(DISTINCT timestamp) FROM GPU_METRICS"), 4);
  EXPECT_EQ(db.Int("SELECT count(*) FROM GPU_METRICS WHERE value = 77"), 0);  // the two stale ones
  EXPECT_EQ(db.Rows("SELECT samples, decodeErrors FROM GTRACE_GPU_METRICS_DEVICES"), (Rows{"4|2"}));
}

}  // namespace
}  // namespace gt::test
