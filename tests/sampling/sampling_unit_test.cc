// CPU sampling, unit level (issue 18): field numbers of the hand-written encoder against the protoc
// descriptor and every field's destination in the export; GTRACE_SAMPLE / GTRACE_SAMPLING_FREQUENCY
// parsing; the monotonic -> stream clock conversion of sample times; the perf ring reader on a real
// event of this thread (skipped where perf_event_open is refused); the slots' drain-side matching
// of a sample to its signal-handler entry (TakeSlotEntry).
#include <gtest/gtest.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "collector/config.h"
#include "collector/sources.h"
#include "gtrace.pb.h"
#include "inject/sampling/cpu_sampler.h"
#include "inject/sampling/perf_thread_event.h"
#include "inject/sampling/sampling_fields.h"
#include "inject/sampling/slot_take.h"
#include "tools/export/sampling_field_map.h"

namespace gt {
namespace {

std::map<std::string, std::set<std::string>>& Checked() {
  static std::map<std::string, std::set<std::string>> checked;
  return checked;
}

void ExpectField(const google::protobuf::Descriptor* d, const std::string& name, uint32_t number) {
  const google::protobuf::FieldDescriptor* f = d->FindFieldByName(name);
  ASSERT_NE(f, nullptr) << d->name() << "." << name << " is not in the schema";
  EXPECT_EQ(static_cast<uint32_t>(f->number()), number) << d->name() << "." << name;
  Checked()[d->name()].insert(name);
}

#define EXPECT_FIELD(Message, name, constant) ExpectField(schema::Message::descriptor(), name, constant)

TEST(SamplingFields, MatchDescriptorAndMap) {
  EXPECT_FIELD(Chunk, "cpu_sampling_config", field::chunk::kCpuSamplingConfig);
  EXPECT_FIELD(Chunk, "cpu_samples", field::chunk::kCpuSamples);
  EXPECT_FIELD(Chunk, "cpu_sampling_losses", field::chunk::kCpuSamplingLosses);
  EXPECT_FIELD(Chunk, "cpu_python_sampling", field::chunk::kCpuPythonSampling);
  namespace c = field::cpu_sampling_config;
  EXPECT_FIELD(CpuSamplingConfig, "frequency_hz", c::kFrequencyHz);
  EXPECT_FIELD(CpuSamplingConfig, "period_ns", c::kPeriodNs);
  EXPECT_FIELD(CpuSamplingConfig, "event", c::kEvent);
  EXPECT_FIELD(CpuSamplingConfig, "sample", c::kSample);
  EXPECT_FIELD(CpuSamplingConfig, "python_sampling", c::kPythonSampling);
  EXPECT_FIELD(CpuSamplingConfig, "backtrace", c::kBacktrace);
  EXPECT_FIELD(CpuPythonSampling, "python_version", field::cpu_python_sampling::kPythonVersion);
  EXPECT_FIELD(CpuPythonSampling, "off_reason", field::cpu_python_sampling::kOffReason);
  namespace s = field::cpu_sample;
  EXPECT_FIELD(CpuSample, "ts_delta_ns", s::kTsDeltaNs);
  EXPECT_FIELD(CpuSample, "tid", s::kTid);
  EXPECT_FIELD(CpuSample, "cpu", s::kCpu);
  EXPECT_FIELD(CpuSample, "period_ns", s::kPeriodNs);
  EXPECT_FIELD(CpuSample, "ips", s::kIps);
  EXPECT_FIELD(CpuSample, "thread_state", s::kThreadState);
  EXPECT_FIELD(CpuSample, "python_frames", s::kPythonFrames);
  EXPECT_FIELD(CpuSample, "python_truncated", s::kPythonTruncated);
  namespace l = field::cpu_sampling_loss;
  EXPECT_FIELD(CpuSamplingLoss, "ts_ns", l::kTsNs);
  EXPECT_FIELD(CpuSamplingLoss, "lost_samples", l::kLostSamples);
  EXPECT_FIELD(CpuSamplingLoss, "threads_refused", l::kThreadsRefused);
  EXPECT_FIELD(CpuSamplingLoss, "truncated_samples", l::kTruncatedSamples);
  EXPECT_FIELD(CpuSamplingLoss, "python_frames_dropped", l::kPythonFramesDropped);
  EXPECT_FIELD(CpuSamplingLoss, "dwarf_fallbacks", l::kDwarfFallbacks);
  // The packed encoding the writer produces (Bytes of varints) is what proto3 expects.
  EXPECT_TRUE(schema::CpuSample::descriptor()->FindFieldByName("ips")->is_packed());
  const google::protobuf::Descriptor* chunk = schema::Chunk::descriptor();
  int in_range = 0;
  for (int i = 0; i < chunk->field_count(); ++i) {
    const google::protobuf::FieldDescriptor* f = chunk->field(i);
    if (f->number() < 160 || f->number() > 179)
      continue;
    ++in_range;
    EXPECT_TRUE(Checked()["Chunk"].count(f->name())) << "Chunk." << f->name() << " (sampling range) has no constant";
  }
  EXPECT_EQ(in_range, 4);
  std::set<std::pair<std::string, std::string>> mapped;
  for (const auto& d : exporter::kSamplingFieldMap)
    mapped.insert({d.message, d.field});
  for (const google::protobuf::Descriptor* d :
       {schema::CpuSamplingConfig::descriptor(), schema::CpuSample::descriptor(),
        schema::CpuSamplingLoss::descriptor(), schema::CpuPythonSampling::descriptor()}) {
    for (int i = 0; i < d->field_count(); ++i) {
      EXPECT_TRUE(Checked()[d->name()].count(d->field(i)->name())) << d->name() << "." << d->field(i)->name();
      EXPECT_TRUE(mapped.count({d->name(), d->field(i)->name()}))
          << d->name() << "." << d->field(i)->name() << " is not in sampling_field_map.h";
    }
  }
  EXPECT_EQ(mapped.size(), 22u);
}

std::map<std::string, std::string>* g_env;
const char* FakeGetenv(const char* name) {
  auto it = g_env->find(name);
  return it != g_env->end() ? it->second.c_str() : nullptr;
}

Config Load(std::map<std::string, std::string> env) {
  g_env = &env;
  std::vector<std::string> storage;
  for (auto& [k, v] : env)
    storage.push_back(k + "=" + v);
  std::vector<char*> list;
  for (auto& s : storage)
    list.push_back(s.data());
  list.push_back(nullptr);
  Config c = LoadConfig(FakeGetenv, list.data());
  g_env = nullptr;
  return c;
}

TEST(SamplingConfig, PythonSamplingVariable) {
  Config c = Load({{"GTRACE_SAMPLE", "process-tree"}});
  EXPECT_FALSE(c.python_sampling);  // default false, as nsys's --python-sampling
  c = Load({{"GTRACE_SAMPLE", "process-tree"}, {"GTRACE_PYTHON_SAMPLING", "true"}});
  EXPECT_TRUE(c.python_sampling);
  EXPECT_TRUE(c.warnings.empty());
  c = Load({{"GTRACE_SAMPLE", "process-tree"}, {"GTRACE_PYTHON_SAMPLING", "false"}});
  EXPECT_FALSE(c.python_sampling);
  EXPECT_TRUE(c.warnings.empty());
  // Without CPU sampling there are no samples to carry the frames: off, with one warning.
  c = Load({{"GTRACE_PYTHON_SAMPLING", "true"}});
  EXPECT_FALSE(c.python_sampling);
  ASSERT_EQ(c.warnings.size(), 1u);
  EXPECT_NE(c.warnings[0].find("has no effect without GTRACE_SAMPLE"), std::string::npos) << c.warnings[0];
  c = Load({{"GTRACE_SAMPLE", "process-tree"}, {"GTRACE_PYTHON_SAMPLING", "yes please"}});
  EXPECT_FALSE(c.python_sampling);
  ASSERT_EQ(c.warnings.size(), 1u);
  EXPECT_NE(c.warnings[0].find("GTRACE_PYTHON_SAMPLING='yes please': expected true or false"), std::string::npos)
      << c.warnings[0];
}

// GTRACE_BACKTRACE (--backtrace): fp by default; dwarf and none with sampling; lbr refused with the
// reason; without sampling a warning and fp.
TEST(SamplingConfig, BacktraceVariable) {
  Config c = Load({{"GTRACE_SAMPLE", "process-tree"}});
  EXPECT_EQ(c.sample_backtrace, SampleBacktrace::kFp);
  EXPECT_STREQ(SampleBacktraceName(c.sample_backtrace), "fp");
  c = Load({{"GTRACE_SAMPLE", "process-tree"}, {"GTRACE_BACKTRACE", "dwarf"}});
  EXPECT_EQ(c.sample_backtrace, SampleBacktrace::kDwarf);
  EXPECT_STREQ(SampleBacktraceName(c.sample_backtrace), "dwarf");
  EXPECT_TRUE(c.warnings.empty());
  c = Load({{"GTRACE_SAMPLE", "process-tree"}, {"GTRACE_BACKTRACE", " none "}});
  EXPECT_EQ(c.sample_backtrace, SampleBacktrace::kNone);
  EXPECT_TRUE(c.warnings.empty());
  c = Load({{"GTRACE_SAMPLE", "process-tree"}, {"GTRACE_BACKTRACE", "lbr"}});
  EXPECT_EQ(c.sample_backtrace, SampleBacktrace::kFp);
  ASSERT_EQ(c.warnings.size(), 1u);
  EXPECT_EQ(c.warnings[0],
            "GTRACE_BACKTRACE='lbr': lbr needs a hardware PMU's last branch records, and gtrace samples the software "
            "cpu-clock event; fp");
  c = Load({{"GTRACE_SAMPLE", "process-tree"}, {"GTRACE_BACKTRACE", "dwarfish"}});
  EXPECT_EQ(c.sample_backtrace, SampleBacktrace::kFp);
  ASSERT_EQ(c.warnings.size(), 1u);
  EXPECT_EQ(c.warnings[0], "GTRACE_BACKTRACE='dwarfish': not fp, dwarf or none; fp");
  c = Load({{"GTRACE_BACKTRACE", "dwarf"}});
  EXPECT_EQ(c.sample_backtrace, SampleBacktrace::kFp);
  ASSERT_EQ(c.warnings.size(), 1u);
  EXPECT_EQ(c.warnings[0], "GTRACE_BACKTRACE=dwarf has no effect without GTRACE_SAMPLE=process-tree (CPU sampling is off)");
}

TEST(SamplingConfig, SampleAndFrequencyVariables) {
  Config c = Load({});
  EXPECT_FALSE(c.sample_cpu);  // gtrace's default is none (nsys's is process-tree)
  EXPECT_EQ(c.sampling_frequency_hz, 1000u);
  EXPECT_EQ(c.sources & kSourceSampling, 0u);
  c = Load({{"GTRACE_SAMPLE", "process-tree"}, {"GTRACE_SAMPLING_FREQUENCY", "250"}});
  EXPECT_TRUE(c.sample_cpu);
  EXPECT_EQ(c.sample, "process-tree");
  EXPECT_EQ(c.sampling_frequency_hz, 250u);
  EXPECT_EQ(c.sources & kSourceSampling, static_cast<uint32_t>(kSourceSampling));
  EXPECT_TRUE(c.warnings.empty());
  c = Load({{"GTRACE_SAMPLE", "cpu"}});  // nsys's older spelling
  EXPECT_TRUE(c.sample_cpu);
  c = Load({{"GTRACE_SAMPLE", "none"}, {"GTRACE_SAMPLING_FREQUENCY", "99"}});
  EXPECT_FALSE(c.sample_cpu);
  EXPECT_EQ(c.sampling_frequency_hz, 1000u);
  ASSERT_EQ(c.warnings.size(), 1u);
  EXPECT_NE(c.warnings[0].find("GTRACE_SAMPLING_FREQUENCY='99'"), std::string::npos) << c.warnings[0];
  c = Load({{"GTRACE_SAMPLE", "system-wide"}, {"GTRACE_SAMPLING_FREQUENCY", "8001"}});
  EXPECT_FALSE(c.sample_cpu);
  ASSERT_EQ(c.warnings.size(), 2u);
  EXPECT_NE(c.warnings[0].find("system-wide sampling needs root"), std::string::npos) << c.warnings[0];
  c = Load({{"GTRACE_SAMPLE", "sometimes"}});
  EXPECT_FALSE(c.sample_cpu);
  ASSERT_EQ(c.warnings.size(), 1u);
  EXPECT_NE(c.warnings[0].find("GTRACE_SAMPLE='sometimes'"), std::string::npos);
}

TEST(SamplingClock, MonotonicToStream) {
  constexpr uint64_t kOne = 1ull << 32;
  // A monotonic stream: the identity around any pair.
  EXPECT_EQ(sampling::MonotonicToStream(5000, 4000, 4000, kOne), 5000u);
  EXPECT_EQ(sampling::MonotonicToStream(3000, 4000, 4000, kOne), 3000u);
  // A 3 GHz tick stream: pair (ticks 9e9 at 3e9 ns), 1 ms later is 3e6 ticks later, 1 ms earlier 3e6 before.
  uint64_t rate = 3 * kOne;
  EXPECT_EQ(sampling::MonotonicToStream(3000000000ull + 1000000, 9000000000ull, 3000000000ull, rate),
            9000000000ull + 3000000);
  EXPECT_EQ(sampling::MonotonicToStream(3000000000ull - 1000000, 9000000000ull, 3000000000ull, rate),
            9000000000ull - 3000000);
  EXPECT_EQ(sampling::MonotonicToStream(0, 10, 1000, rate), 0u);  // clamped, never wraps
}

long ThreadCpuNs() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec * 1000000000L + ts.tv_nsec;
}

// CLOCK_THREAD_CPUTIME_ID is a system call, and exclude_kernel events do not count kernel time: read
// it only every ~20 us of user-space work.
__attribute__((noinline)) void BurnCpu(long ns) {
  long until = ThreadCpuNs() + ns;
  volatile unsigned long sink = 0;
  unsigned long x = 1;
  while (ThreadCpuNs() < until) {
    for (int i = 0; i < 20000; ++i)
      x = x * 6364136223846793005ul + 1442695040888963407ul;
    sink = x;
  }
  (void)sink;
}

// The reader on a real event: this thread, 1 kHz, 200 ms of CPU -> ~200 samples of this tid, each
// with its leaf frame, times inside the burn, period 1 ms.
TEST(PerfThreadEvent, ReadsSamplesOfThisThread) {
  pid_t tid = static_cast<pid_t>(syscall(SYS_gettid));
  int err = 0;
  bool mapping_failed = false;
  sampling::PerfThreadEvent* e = sampling::PerfThreadEvent::Open(tid, 1000000, true, false, &err, &mapping_failed);
  if (e == nullptr)
    GTEST_SKIP() << "perf_event_open refused here (errno " << err << "): CPU sampling is off";
  timespec t0;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  BurnCpu(200000000);
  uint64_t start = static_cast<uint64_t>(t0.tv_sec) * 1000000000ull + t0.tv_nsec;
  sampling::PerfReadCounts counts;
  int n = 0, with_stack = 0, one_ms = 0;
  std::vector<uint64_t> times;
  times.reserve(512);
  e->Read(&counts, [&](const sampling::PerfSample& s) {
    ++n;
    EXPECT_EQ(s.tid, static_cast<uint32_t>(tid));
    times.push_back(s.time_ns);
    with_stack += s.ip_count >= 1;  // this test binary may lack frame pointers: the leaf at least
    one_ms += s.period_ns == 1000000;
  });
  delete e;
  // The window ends after the event is closed: the thread's CPU time runs on through Read(), and a
  // period that ends there would be a sample after a window closed before it.
  timespec t1;
  clock_gettime(CLOCK_MONOTONIC, &t1);
  uint64_t end = static_cast<uint64_t>(t1.tv_sec) * 1000000000ull + t1.tv_nsec;
  int in_window = 0;
  for (uint64_t t : times) in_window += t >= start && t <= end;
  EXPECT_EQ(counts.lost, 0u);
  EXPECT_EQ(counts.malformed, 0u);
  EXPECT_GE(n, 180);  // 200 ms of CPU at 1 kHz; the last partial period has no sample
  EXPECT_LE(n, 201);
  EXPECT_EQ(in_window, n);
  EXPECT_EQ(with_stack, n);
  EXPECT_EQ(one_ms, n);
}

// TakeSlotEntry (inject/sampling/slot_take.h), the drain side that NativeStackSlot and PySampleSlot
// share: an entry is found by its sample's end offset; entries of samples whose record was lost are
// skipped and their room freed; a later sample's entry stays for its own record; indices wrap.
struct SlotTestEntry {
  uint64_t data_head;
  int tag;
};

TEST(SlotTake, MatchesSkipsLostAndKeepsLaterEntries) {
  SlotTestEntry entries[4] = {};
  std::atomic<uint64_t> read{0}, write{0};
  auto put = [&](uint64_t head, int tag) {  // what the signal handler does
    entries[write.load() % 4] = {head, tag};
    write.store(write.load() + 1, std::memory_order_release);
  };
  auto pop = [&] { read.store(read.load() + 1); };  // the slots' Pop

  EXPECT_EQ(sampling::TakeSlotEntry(&read, write, entries, 100), nullptr);  // nothing written
  EXPECT_EQ(read.load(), 0u);

  put(100, 1);
  put(200, 2);
  put(300, 3);
  const SlotTestEntry* e = sampling::TakeSlotEntry(&read, write, entries, 200);  // 100's record was lost
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->tag, 2);
  EXPECT_EQ(read.load(), 1u);  // 100 freed; 200 held until Pop
  pop();
  EXPECT_EQ(sampling::TakeSlotEntry(&read, write, entries, 250), nullptr);  // no entry for it: 300 is later
  EXPECT_EQ(read.load(), 2u);                                                // and stays
  e = sampling::TakeSlotEntry(&read, write, entries, 300);
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->tag, 3);
  pop();

  // Around the end of the 4 entries: positions 3..6 are indices 3, 0, 1, 2.
  put(400, 4);
  put(500, 5);
  put(600, 6);
  put(700, 7);
  e = sampling::TakeSlotEntry(&read, write, entries, 700);
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->tag, 7);
  EXPECT_EQ(e, &entries[2]);
  EXPECT_EQ(read.load(), 6u);
  EXPECT_EQ(sampling::TakeSlotEntry(&read, write, entries, 800), nullptr);  // 700 unpopped, earlier: freed
  EXPECT_EQ(read.load(), 7u);
  EXPECT_EQ(read.load(), write.load());
}

}  // namespace
}  // namespace gt
