#include "inject/osrt/osrt_tracer.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include <cstring>
#include <string_view>

#include "collector/chunk_builder.h"
#include "collector/clock_source.h"
#include "inject/osrt/osrt_backtrace.h"
#include "inject/osrt/osrt_fields.h"

namespace gt::osrt {

std::atomic<uint64_t> g_threshold_ns{1000};
__thread bool t_in_osrt __attribute__((tls_model("initial-exec"))) = false;
std::atomic<void*> g_real[kFunctionCount];

namespace {

constexpr const char* kNames[] = {
#define GT_OSRT_NAME(name) #name,
    GT_OSRT_FUNCTIONS(GT_OSRT_NAME)
#undef GT_OSRT_NAME
};
static_assert(sizeof(kNames) / sizeof(kNames[0]) == kFunctionCount);

// The payload after the RecordHeader (header.aux16 = FunctionId, header.ts_ns = start).
struct OsrtPayload {
  uint64_t duration_ns;
  int64_t return_value;
};
constexpr size_t kRecordBytes = sizeof(RecordHeader) + sizeof(OsrtPayload);
static_assert(kRecordBytes <= kSlotBytes, "one OSRT call is one ring slot");

std::atomic<uint64_t> g_config_session{0};
// The session whose start hook has finished (OsrtConfig waits for it: the backtrace set-up there
// decides what the config says).
std::atomic<uint64_t> g_started_session{0};

}  // namespace

void DecodeRecord(const RecordView& view, ChunkBuilder* chunk) {
  if (view.size_bytes < kRecordBytes || view.header->aux16 >= kFunctionCount)
    return;
  OsrtPayload p;
  std::memcpy(&p, view.bytes + sizeof(RecordHeader), sizeof(p));
  const char* name = kNames[view.header->aux16];
  uint64_t name_id = chunk->Intern(std::string_view(name));  // before the event: definitions cannot nest
  namespace f = field::osrt_call;
  ProtoWriter& w = chunk->body();
  w.BeginNested(field::chunk::kOsrtCalls);
  w.SInt(f::kStartDeltaNs, chunk->DeltaNs(field::chunk::kOsrtCalls, view.header->ts_ns));
  w.Varint(f::kDurationNs, p.duration_ns);
  w.Varint(f::kNameId, name_id);
  if (p.return_value != 0)
    w.SInt(f::kReturnValue, p.return_value);
  w.EndNested();
  chunk->CountRecord();
}

namespace {

// Drain thread: the configuration, once per session (a forked child's session writes it again).
void Emit(ChunkBuilder* chunk, uint64_t session_id) {
  if (g_config_session.load(std::memory_order_relaxed) == session_id)
    return;
  const Config* config = SessionConfig();
  if (config == nullptr || (config->sources & kSourceOsrt) == 0)
    return;
  if (g_started_session.load(std::memory_order_acquire) != session_id)
    return;  // the start hook is still running: next cycle
  g_config_session.store(session_id, std::memory_order_relaxed);
  namespace f = field::osrt_config;
  ProtoWriter& w = chunk->body();
  w.BeginNested(field::chunk::kOsrtConfig);
  w.Varint(f::kThresholdNs, config->osrt_threshold_ns);
  w.Varint(f::kFunctionsTraced, kFunctionCount);
  WriteBacktraceConfig(&w);
  w.EndNested();
  // Chunk.osrt_config is singular: close this chunk.
  chunk->End();
  chunk->Begin(0, 0, 0);
}

// The interposers compare stream-clock readings, so on a tick stream (GTRACE_CLOCK=auto|tsc) the
// threshold is converted to ticks with a rate measured once here (MeasureTickRateQ32: ~2 ms of
// spinning on the thread that starts the session, bounded when its clock stands still; the
// threshold needs no better than ~0.1 %). No rate: the threshold stays in ns.
uint64_t ThresholdInStreamUnits(uint64_t threshold_ns) {
  if (!StreamClockIsTicks() || threshold_ns == 0)
    return threshold_ns;
  uint64_t rate_q32 = MeasureTickRateQ32();
  if (rate_q32 == 0)
    return threshold_ns;
  return static_cast<uint64_t>((static_cast<unsigned __int128>(threshold_ns) * rate_q32) >> 32);
}

void OnSessionStart(const Config& config, uint64_t session_id) {
  InsideGtrace inside;  // loading libunwind opens and maps files: not the application's calls
  g_threshold_ns.store(ThresholdInStreamUnits(config.osrt_threshold_ns), std::memory_order_relaxed);
  SetUpBacktraces(config, config.osrt_backtrace ? ThresholdInStreamUnits(config.osrt_backtrace_threshold_ns) : 0);
  g_started_session.store(session_id, std::memory_order_release);
}

}  // namespace

const char* FunctionName(uint32_t id) {
  return id < kFunctionCount ? kNames[id] : nullptr;
}

void* ResolveSlow(FunctionId id) {
  void* f = g_real[id].load(std::memory_order_acquire);
  if (f != nullptr)
    return f;
  if (t_in_osrt)
    return nullptr;  // dlsym -> allocator -> an interposed call -> here: the caller's fallback runs
  t_in_osrt = true;
  int saved_errno = errno;
  f = dlsym(RTLD_NEXT, kNames[id]);
  errno = saved_errno;
  t_in_osrt = false;
  if (f != nullptr)
    g_real[id].store(f, std::memory_order_release);
  return f;
}

void ResolveAll() {
  for (uint32_t i = 0; i < kFunctionCount; ++i)
    RealFunction(static_cast<FunctionId>(i));
}

void WriteCall(FunctionId id, uint64_t start_ns, uint64_t end_ns, int64_t return_value) {
  ThreadLocalState& t = t_gt_thread;
  if ((t.buffer == nullptr || t.generation != g_generation.load(std::memory_order_relaxed)) && !SessionRunsHere())
    return;  // the thread's first record: take a ring only from a running session, never start one here
  t_in_osrt = true;  // AcquireBufferSlow may lock a mutex, libunwind may map memory: untraced
  if (end_ns - start_ns >= g_backtrace_threshold.load(std::memory_order_acquire) &&
      WriteCallWithStack(id, start_ns, end_ns, return_value)) {
    t_in_osrt = false;
    return;
  }
  RecordSpan span;
  if (BeginRecord(kRecordBytes, &span)) {
    struct {
      RecordHeader h;
      OsrtPayload p;
    } rec;
    rec.h.type = kRecordOsrt;
    rec.h.ext_slots = 0;
    rec.h.aux16 = static_cast<uint16_t>(id);
    rec.h.aux32 = 0;
    rec.h.ts_ns = start_ns;
    rec.p.duration_ns = end_ns - start_ns;
    rec.p.return_value = return_value;
    RecordCopy(span, 0, &rec, sizeof(rec));
    CommitRecord(span);
  }
  t_in_osrt = false;
}

void Register() {
  static std::atomic<bool> done{false};
  if (done.exchange(true))
    return;
  RegisterRecordDecoder(kRecordOsrt, &DecodeRecord);
  RegisterRecordDecoder(kRecordOsrtStack, &DecodeStackRecord);
  RegisterEmitter(&Emit);
  RegisterSessionStartHook(&OnSessionStart);
}

void StartIfWanted() {
  const char* trace = getenv("GTRACE_TRACE");
  if (trace == nullptr || strstr(trace, "osrt") == nullptr)
    return;
  InsideGtrace inside;
  EnsureSession(kSourceOsrt);
}

namespace {
// Priority 102: after exit_hooks' resolution (101), before entry.cc's constructor (default), which
// may start the session.
__attribute__((constructor(102))) void OsrtOnLoad() {
  ResolveAll();
  Register();
}
}  // namespace

}  // namespace gt::osrt
