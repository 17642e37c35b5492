#include "inject/sampling/cpu_sampler.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "collector/chunk_builder.h"
#include "collector/clock.h"
#include "collector/clock_source.h"
#include "collector/config.h"
#include "collector/schema_fields.h"
#include "collector/session.h"
#include "collector/sources.h"
#include "inject/callstack/module_map.h"
#include "inject/callstack/callstack_fields.h"
#include "inject/sampling/perf_thread_event.h"
#include "inject/sampling/python_signal_sampler.h"
#include "inject/sampling/sampling_fields.h"

namespace gt::sampling {
namespace {

constexpr uint32_t kThreadStateRunning = 1;  // ENUM_SAMPLING_THREAD_STATE "Running"
constexpr size_t kMaxChunkBodyBytes = 256u << 10;
constexpr uint64_t kRateRefineAfterNs = 100000000;  // 100 ms between calibration pairs

// The drain thread's state (one per process; a forked child resets it). Allocated once and never
// freed: no global object with a destructor in an injected library.
struct Sampler {
  pid_t pid = 0;
  uint64_t session_id = 0;
  bool off = false;  // perf_event_open refused for this session: nothing more is tried
  bool enabled = false;
  uint64_t period_ns = 1000000;
  std::unordered_map<pid_t, std::unique_ptr<PerfThreadEvent>> events;
  std::unordered_set<pid_t> skipped;  // gtrace's own threads and threads whose open failed
  std::unordered_set<pid_t> named;    // threads announced with EmitThreadInfo
  std::unordered_set<pid_t> listed;   // scratch: the tids of this cycle's listing
  uint64_t lost = 0, malformed = 0, refused = 0;
  uint64_t reported_lost = 0, reported_malformed = 0, reported_refused = 0;
  bool other_error_reported = false;
  // Clock conversion (tick streams): first pair of the session, latest pair, rate in 2^-32 units/ns.
  ClockPair first_pair, pair;
  uint64_t rate_q32 = 1ull << 32;
  std::string packed;
  // --python-sampling (python_signal_sampler.h): wanted by the config; on once the interpreter is
  // found and SIGPROF taken; `python_done` once the outcome was written (on, or off for good).
  bool python_wanted = false, python_on = false, python_done = false;
  // --backtrace=dwarf (native_stack_slot.h): wanted by the config; on once libunwind is loaded and
  // SIGPROF taken; `native_done` once set-up was tried (once per session).
  SampleBacktrace backtrace = SampleBacktrace::kFp;
  bool native_wanted = false, native_on = false, native_done = false;
  std::unordered_map<pid_t, SampleSlots*> slots;  // per sampled thread, while its event lives
  uint64_t python_dropped = 0, reported_python_dropped = 0;
  uint64_t dwarf_fallbacks = 0, reported_dwarf_fallbacks = 0;
  struct PyIds {
    uint64_t file, function;
    uint32_t line;
  };
  std::vector<PyIds> py_ids;  // scratch of WriteSample
};

Sampler* g_sampler = nullptr;
// Tick rate measured at session start (2^-32 ticks per ns), before the drain thread has two pairs.
std::atomic<uint64_t> g_start_rate_q32{1ull << 32};

pid_t Gettid() {
  return static_cast<pid_t>(syscall(SYS_gettid));
}

// gtrace's own threads (drain thread, GPU-metrics sampler) are named "gtrace-*": not sampled.
bool IsGtraceThread(pid_t tid) {
  char path[64];
  snprintf(path, sizeof(path), "/proc/self/task/%d/comm", static_cast<int>(tid));
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return false;
  char name[32] = {};
  ssize_t n = read(fd, name, sizeof(name) - 1);
  close(fd);
  return n >= 7 && strncmp(name, "gtrace-", 7) == 0;
}

const char* ErrnoName(int err) {
  switch (err) {
    case EACCES:
      return "EACCES";
    case EPERM:
      return "EPERM";
    case ENOSYS:
      return "ENOSYS";
    case ENOENT:
      return "ENOENT";
    case EOPNOTSUPP:
      return "EOPNOTSUPP";
    default:
      return "error";
  }
}

void ListThreads(std::unordered_set<pid_t>* out) {
  out->clear();
  DIR* d = opendir("/proc/self/task");
  if (d == nullptr)
    return;
  while (dirent* e = readdir(d)) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9')
      continue;
    out->insert(static_cast<pid_t>(atoi(e->d_name)));
  }
  closedir(d);
}

void WriteConfig(const Config& config, Sampler* s, ChunkBuilder* chunk) {
  namespace f = field::cpu_sampling_config;
  ProtoWriter& w = chunk->body();
  w.BeginNested(field::chunk::kCpuSamplingConfig);
  w.Varint(f::kFrequencyHz, config.sampling_frequency_hz);
  w.Varint(f::kPeriodNs, s->period_ns);
  w.String(f::kEvent, "cpu-clock");
  w.String(f::kSample, config.sample);
  if (config.python_sampling)
    w.Varint(f::kPythonSampling, 1);
  w.String(f::kBacktrace, SampleBacktraceName(config.sample_backtrace));
  w.EndNested();
  // Chunk.cpu_sampling_config is singular: close this chunk.
  chunk->End();
  chunk->Begin(0, 0, 0);
}

// The event of `tid` is closed (or about to be): stop its signals, wait for its handler, free its slots.
void DropSlot(Sampler* s, pid_t tid, PerfThreadEvent* e) {
  auto it = s->slots.find(tid);
  if (it == s->slots.end())
    return;
  if (PySampleSlot* py = it->second->python.load(std::memory_order_relaxed))
    s->python_dropped += py->full();
  DisarmSampleSignal(e->fd(), it->second);
  delete it->second;
  s->slots.erase(it);
}

void Reset(Sampler* s, uint64_t session_id, const Config& config) {
  if (s->pid == getpid()) {
    // A new session in the same process: its threads may still be signalled; disarm properly.
    for (auto& [tid, e] : s->events)
      DropSlot(s, tid, e.get());
  } else {
    // A forked child: the parent's routes and slots are copies nobody signals here.
    ForgetSampleSignalRoutes();
    for (auto& [tid, slot] : s->slots)
      delete slot;
  }
  s->slots.clear();
  s->python_wanted = config.python_sampling;
  s->python_on = s->python_done = false;
  s->python_dropped = s->reported_python_dropped = 0;
  s->backtrace = config.sample_backtrace;
  s->native_wanted = config.sample_backtrace == SampleBacktrace::kDwarf;
  s->native_on = s->native_done = false;
  s->dwarf_fallbacks = s->reported_dwarf_fallbacks = 0;
  s->events.clear();  // a forked child's copies of the parent's events: unmapped and closed unread
  s->skipped.clear();
  s->named.clear();
  s->pid = getpid();
  s->session_id = session_id;
  s->off = false;
  s->enabled = false;
  s->period_ns = 1000000000ull / (config.sampling_frequency_hz != 0 ? config.sampling_frequency_hz : 1000);
  s->lost = s->malformed = s->refused = 0;
  s->reported_lost = s->reported_malformed = s->reported_refused = 0;
  s->other_error_reported = false;
  s->first_pair = ReadClockPair();
  s->pair = s->first_pair;
  s->rate_q32 = StreamClockIsTicks() ? g_start_rate_q32.load(std::memory_order_relaxed) : (1ull << 32);
  s->skipped.insert(Gettid());  // the drain thread itself
}

void UpdateClock(Sampler* s) {
  s->pair = ReadClockPair();
  if (!StreamClockIsTicks())
    return;
  uint64_t dm = s->pair.monotonic_ns - s->first_pair.monotonic_ns;
  if (dm >= kRateRefineAfterNs && s->pair.stream_ns > s->first_pair.stream_ns) {
    s->rate_q32 =
        static_cast<uint64_t>((static_cast<unsigned __int128>(s->pair.stream_ns - s->first_pair.stream_ns) << 32) / dm);
  }
}

// Routes the signals of `tid`'s event to its slots, with the parts that are on (Python frames, native
// stacks); a thread already routed gets the parts it lacks (the interpreter may be found after
// libunwind was loaded). A thread whose event cannot be armed keeps the kernel's frames.
void ArmSlot(Sampler* s, pid_t tid, PerfThreadEvent* e) {
  auto it = s->slots.find(tid);
  SampleSlots* slots = it != s->slots.end() ? it->second : new SampleSlots();
  if (s->python_on && slots->python.load(std::memory_order_relaxed) == nullptr)
    slots->python.store(new PySampleSlot(e->meta_page()), std::memory_order_release);
  if (s->native_on && slots->native.load(std::memory_order_relaxed) == nullptr)
    slots->native.store(new NativeStackSlot(e->meta_page()), std::memory_order_release);
  if (it != s->slots.end())
    return;
  if (ArmSampleSignal(e->fd(), tid, slots)) {
    s->slots.emplace(tid, slots);
  } else {
    delete slots;
  }
}

// --backtrace=dwarf: loads libunwind and takes SIGPROF, once per session (first cycle). When it
// cannot, one line, and the samples keep the kernel's frame-pointer stacks (counted as fallbacks).
void SetUpNative(Sampler* s) {
  if (!s->native_wanted || s->native_done)
    return;
  s->native_done = true;
  std::string why;
  if (!SetUpNativeUnwinding(&why)) {
    ReportDiagnostic(field::enums::kSeverityWarning, "sampling",
                     "CPU samples: --backtrace=dwarf off (" + why + "); stacks come from frame pointers");
    return;
  }
  s->native_on = true;
  for (auto& [tid, e] : s->events)
    ArmSlot(s, tid, e.get());
}

// --python-sampling: tries to find the interpreter and take SIGPROF (each cycle until there is an
// interpreter: one embedded by dlopen may come late); writes the outcome once it is known.
void SetUpPython(Sampler* s, ChunkBuilder* chunk) {
  if (!s->python_wanted || s->python_done)
    return;
  std::string why, version;
  bool on = SetUpPythonSampling(&why, &version);
  if (!on && why.rfind("no Python interpreter", 0) == 0)
    return;  // not (yet) a Python process: try again next cycle
  s->python_done = true;
  s->python_on = on;
  namespace f = field::cpu_python_sampling;
  ProtoWriter& w = chunk->body();
  w.BeginNested(field::chunk::kCpuPythonSampling);
  if (on) {
    w.String(f::kPythonVersion, version);
  } else {
    w.String(f::kOffReason, why);
  }
  w.EndNested();
  // Chunk.cpu_python_sampling is singular: close this chunk.
  chunk->End();
  chunk->Begin(0, 0, 0);
  if (!on) {
    ReportDiagnostic(field::enums::kSeverityWarning, "sampling", "Python frames in CPU samples off: " + why);
    return;
  }
  for (auto& [tid, e] : s->events)
    ArmSlot(s, tid, e.get());
}

// Opens events for threads not seen yet; returns false when sampling was refused (switched off).
bool OpenNewThreads(Sampler* s) {
  for (pid_t tid : s->listed) {
    if (s->events.count(tid) != 0 || s->skipped.count(tid) != 0)
      continue;
    if (IsGtraceThread(tid)) {
      s->skipped.insert(tid);
      continue;
    }
    int err = 0;
    bool mapping_failed = false;
    PerfThreadEvent* e = PerfThreadEvent::Open(tid, s->period_ns, s->enabled, s->python_wanted || s->native_wanted,
                                               &err, &mapping_failed);
    if (e != nullptr) {
      s->events.emplace(tid, std::unique_ptr<PerfThreadEvent>(e));
      if (s->python_on || s->native_on)
        ArmSlot(s, tid, e);
      continue;
    }
    s->skipped.insert(tid);
    if (err == ESRCH)
      continue;  // the thread ended between the listing and the open
    ++s->refused;
    if (mapping_failed) {
      // The event was allowed, its ring was not (locked-memory budget): this thread goes unsampled.
      if (!s->other_error_reported) {
        s->other_error_reported = true;
        ReportDiagnostic(field::enums::kSeverityWarning, "sampling",
                         std::string("CPU sampling: a thread's sample ring cannot be mapped (") + strerror(err) +
                             "; perf_event_mlock_kb / RLIMIT_MEMLOCK): threads beyond this one are not sampled "
                             "(counted in the stream)");
      }
      continue;
    }
    if (err == EACCES || err == EPERM || err == ENOSYS || err == ENOENT || err == EOPNOTSUPP) {
      // perf_event_paranoid > 2, a seccomp profile (Docker's default refuses perf_event_open), or a
      // kernel without perf events: the run goes on without samples.
      std::string text = std::string("CPU sampling off: perf_event_open refused (") + ErrnoName(err) + ": " +
                         strerror(err) +
                         "); check /proc/sys/kernel/perf_event_paranoid (<= 2 needed) or the container's seccomp "
                         "profile";
      ReportDiagnostic(field::enums::kSeverityWarning, "sampling", text);
      s->off = true;
      for (auto& [t, ev] : s->events)
        DropSlot(s, t, ev.get());
      s->events.clear();
      return false;
    }
    if (!s->other_error_reported) {
      s->other_error_reported = true;
      ReportDiagnostic(field::enums::kSeverityWarning, "sampling",
                       std::string("CPU sampling: a thread cannot be sampled: perf_event_open: ") + strerror(err) +
                           " (counted in the stream; other threads go on)");
    }
  }
  return true;
}

void WriteSample(Sampler* s, const PerfSample& p, SampleSlots* slots, ChunkBuilder* chunk) {
  if (s->named.insert(static_cast<pid_t>(p.tid)).second)
    EmitThreadInfo(chunk, p.tid);  // reopens the chunk
  // The stack: libunwind's from the thread's own handler for this very sample (same ring offset, same
  // sampled instruction) with --backtrace=dwarf, else the kernel's frame-pointer walk.
  const uint64_t* ips = p.ips;
  uint32_t ip_count = p.ip_count;
  const NativeStackEntry* native_entry = nullptr;
  NativeStackSlot* native = slots != nullptr ? slots->native.load(std::memory_order_relaxed) : nullptr;
  if (native != nullptr) {
    native_entry = native->Take(p.end_offset);
    if (native_entry != nullptr && p.ip_count > 0 && native_entry->ips[0] == p.ips[0]) {
      ips = native_entry->ips;
      ip_count = native_entry->frames;
    }
  }
  if (s->native_wanted && ips == p.ips)
    ++s->dwarf_fallbacks;
  if (s->backtrace == SampleBacktrace::kNone && ip_count > 1)
    ip_count = 1;  // --backtrace=none: the sampled instruction only
  s->packed.clear();
  char buf[10];
  for (uint32_t i = 0; i < ip_count; ++i)
    s->packed.append(buf, ProtoWriter::EncodeVarint(ips[i], buf));
  if (native_entry != nullptr)
    native->Pop();  // its addresses are copied
  PySampleSlot* slot = slots != nullptr ? slots->python.load(std::memory_order_relaxed) : nullptr;
  // The Python frames its thread's handler read for this very sample (same ring offset), if any.
  // Their strings are interned first: an InternedString cannot go inside the CpuSample.
  s->py_ids.clear();
  bool py_truncated = false;
  if (slot != nullptr) {
    if (const PySampleEntry* e = slot->Take(p.end_offset)) {
      size_t pos = 0;
      for (uint32_t i = 0; i < e->frames && pos + sizeof(callstack::PackedPythonFrame) <= e->bytes; ++i) {
        callstack::PackedPythonFrame head;
        memcpy(&head, e->data + pos, sizeof(head));
        pos += sizeof(head);
        if (pos + head.file_bytes + head.function_bytes > e->bytes)
          break;
        const char* text = reinterpret_cast<const char*>(e->data + pos);
        uint64_t file = chunk->Intern(std::string_view(text, head.file_bytes));
        uint64_t function = chunk->Intern(std::string_view(text + head.file_bytes, head.function_bytes));
        s->py_ids.push_back({file, function, head.line});
        pos += head.file_bytes + head.function_bytes;
      }
      py_truncated = e->truncated != 0;
      slot->Pop();
    }
  }
  uint64_t ts = MonotonicToStream(p.time_ns, s->pair.stream_ns, s->pair.monotonic_ns, s->rate_q32);
  namespace f = field::cpu_sample;
  ProtoWriter& w = chunk->body();
  w.BeginNested(field::chunk::kCpuSamples);
  w.SInt(f::kTsDeltaNs, chunk->DeltaNs(field::chunk::kCpuSamples, ts));
  w.Varint(f::kTid, p.tid);
  w.VarintIfNonZero(f::kCpu, p.cpu);
  w.VarintIfNonZero(f::kPeriodNs, p.period_ns);
  if (!s->packed.empty())
    w.Bytes(f::kIps, s->packed.data(), s->packed.size());  // packed repeated uint64
  w.Varint(f::kThreadState, kThreadStateRunning);
  for (const Sampler::PyIds& py : s->py_ids) {
    w.BeginNested(f::kPythonFrames);
    w.VarintIfNonZero(field::python_frame::kFileId, py.file);
    w.VarintIfNonZero(field::python_frame::kFunctionId, py.function);
    w.VarintIfNonZero(field::python_frame::kLine, py.line);
    w.EndNested();
  }
  if (py_truncated)
    w.Varint(f::kPythonTruncated, 1);
  w.EndNested();
  chunk->CountRecord();
}

void WriteLosses(Sampler* s, ChunkBuilder* chunk) {
  uint64_t python_dropped = s->python_dropped;
  for (auto& [tid, slots] : s->slots)
    if (PySampleSlot* py = slots->python.load(std::memory_order_relaxed))
      python_dropped += py->full();
  if (s->lost == s->reported_lost && s->malformed == s->reported_malformed && s->refused == s->reported_refused &&
      python_dropped == s->reported_python_dropped && s->dwarf_fallbacks == s->reported_dwarf_fallbacks)
    return;
  namespace f = field::cpu_sampling_loss;
  ProtoWriter& w = chunk->body();
  w.BeginNested(field::chunk::kCpuSamplingLosses);
  w.Varint(f::kTsNs, StreamNow());
  w.VarintIfNonZero(f::kLostSamples, s->lost - s->reported_lost);
  w.VarintIfNonZero(f::kThreadsRefused, s->refused - s->reported_refused);
  w.VarintIfNonZero(f::kTruncatedSamples, s->malformed - s->reported_malformed);
  w.VarintIfNonZero(f::kPythonFramesDropped, python_dropped - s->reported_python_dropped);
  w.VarintIfNonZero(f::kDwarfFallbacks, s->dwarf_fallbacks - s->reported_dwarf_fallbacks);
  w.EndNested();
  s->reported_dwarf_fallbacks = s->dwarf_fallbacks;
  s->reported_python_dropped = python_dropped;
  s->reported_lost = s->lost;
  s->reported_malformed = s->malformed;
  s->reported_refused = s->refused;
}

// Drain thread, every cycle (also the final one at exit).
void Emit(ChunkBuilder* chunk, uint64_t session_id) {
  const Config* config = SessionConfig();
  if (config == nullptr || !config->sample_cpu)
    return;
  Sampler* s = g_sampler;
  if (s == nullptr)
    s = g_sampler = new Sampler();
  if (s->session_id != session_id || s->pid != getpid()) {
    Reset(s, session_id, *config);
    WriteConfig(*config, s, chunk);
  }
  if (s->off)
    return;
  // Modules first: every sample read below was taken before this scan, so the modules its
  // addresses point into are announced (shared with the CUDA call stacks, module_map.h).
  callstack::EmitProcessModules(chunk, session_id);
  UpdateClock(s);
  bool enabled = IsEnabled(kSourceSampling);
  if (enabled != s->enabled) {  // a capture window opened or closed
    s->enabled = enabled;
    for (auto& [tid, e] : s->events)
      e->SetEnabled(enabled);
  }
  SetUpPython(s, chunk);
  SetUpNative(s);
  if ((s->python_on || s->native_on) && !SampleSignalStillOurs()) {
    // The application took SIGPROF after us: stop signalling its threads at once.
    for (auto& [tid, e] : s->events)
      DropSlot(s, tid, e.get());
    ReportDiagnostic(field::enums::kSeverityWarning, "sampling",
                     std::string(s->python_on ? "Python frames" : "") + (s->python_on && s->native_on ? " and " : "") +
                         (s->native_on ? "--backtrace=dwarf stacks" : "") +
                         " in CPU samples off from now on: the application installed its own SIGPROF handler");
    s->python_on = s->native_on = false;
  }
  ListThreads(&s->listed);
  if (!OpenNewThreads(s))
    return;
  PerfReadCounts counts;
  for (auto it = s->events.begin(); it != s->events.end();) {
    auto slot_it = s->slots.find(it->first);
    SampleSlots* slot = slot_it != s->slots.end() ? slot_it->second : nullptr;
    it->second->Read(&counts, [&](const PerfSample& p) { WriteSample(s, p, slot, chunk); });
    chunk->SplitIfLarger(kMaxChunkBodyBytes);
    if (s->listed.count(it->first) == 0) {
      DropSlot(s, it->first, it->second.get());
      it = s->events.erase(it);  // the thread ended: its last samples were just read
    } else {
      ++it;
    }
  }
  s->lost += counts.lost;
  s->malformed += counts.malformed;
  WriteLosses(s, chunk);
}

// The thread that starts the session: on a tick stream, the tick rate for the first 100 ms (2 ms
// of spinning, as OS runtime tracing does for its threshold); later the drain thread refines it.
void OnSessionStart(const Config& config, uint64_t /*session_id*/) {
  if (config.sample_cpu && StreamClockIsTicks())
    if (uint64_t rate_q32 = MeasureTickRateQ32(); rate_q32 != 0)  // 0: not measurable (clock_source.h)
      g_start_rate_q32.store(rate_q32, std::memory_order_relaxed);
}

}  // namespace

uint64_t MonotonicToStream(uint64_t monotonic_ns, uint64_t pair_stream, uint64_t pair_monotonic_ns, uint64_t rate_q32) {
  if (monotonic_ns >= pair_monotonic_ns) {
    return pair_stream +
           static_cast<uint64_t>((static_cast<unsigned __int128>(monotonic_ns - pair_monotonic_ns) * rate_q32) >> 32);
  }
  uint64_t back =
      static_cast<uint64_t>((static_cast<unsigned __int128>(pair_monotonic_ns - monotonic_ns) * rate_q32) >> 32);
  return back < pair_stream ? pair_stream - back : 0;
}

void Register() {
  static std::atomic<bool> done{false};
  if (done.exchange(true))
    return;
  RegisterEmitter(&Emit);
  RegisterSessionStartHook(&OnSessionStart);
}

void StartIfWanted() {
  const char* v = getenv("GTRACE_SAMPLE");
  bool on = false;
  std::string error;
  if (v == nullptr || !ParseSampleMode(v, &on, &error) || !on)
    return;
  Register();
  EnsureSession(kSourceSampling);
}

}  // namespace gt::sampling
