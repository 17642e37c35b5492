// Capture-window state machine. Lock order: g_mutex is a leaf: nothing else is taken under it and
// no CUPTI call is made while holding it (the CUDA hook runs after it is released).
#include "inject/cupti/capture_window.h"

#include <pthread.h>

#include <cstring>
#include <cwchar>
#include <string>

#include "collector/clock.h"
#include "collector/schema_fields.h"
#include "collector/session.h"
#include "inject/cupti/cuda_fields.h"

namespace gt::capture {

std::atomic<uint32_t> g_nvtx_trigger{0};

namespace {

constexpr size_t kMaxText = 256;
constexpr uint32_t kLogSize = 256;

struct WindowEvent {
  uint64_t ts_ns;
  uint32_t reason;
  uint32_t index;
  bool open;
  bool final;
};

// All of it static storage, zero-initialized: no global constructor.
pthread_mutex_t g_mutex = PTHREAD_MUTEX_INITIALIZER;
std::atomic<uint64_t> g_load_ns{0};
std::atomic<CudaWindowFn> g_cuda_hook{nullptr};
std::atomic<bool> g_open{false};
std::atomic<bool> g_finished{false};
std::atomic<uint32_t> g_range{0};  // CaptureRange of the current session

struct Scalars {  // guarded by g_mutex
  uint64_t session_id;
  uint64_t t0_ns;
  uint64_t delay_ns;
  uint64_t duration_ns;
  uint64_t first_open_ns;
  uint32_t windows_opened;
  uint32_t repeat_count;
  CaptureRangeEnd end;
  // --capture-range=steps:A-B and the current step number (gtrace.step()).
  uint64_t step_first;
  uint64_t step_last;
  uint64_t step;
  // The range that opened the current window (nvtx).
  bool nvtx_push_pop;
  uint32_t nvtx_tid;
  uint32_t nvtx_domain_id;
  uint64_t nvtx_key;
  bool nvtx_key_known;
  // Log for the emitter.
  WindowEvent log[kLogSize];
  bool log_enabled;  // only when a capture option is set: a plain whole-run trace has no window events
  uint32_t log_written;
  uint32_t log_sent;
  uint64_t log_lost;
} g_s;

// Trigger text, fixed while a session runs (written by the start hook before arming).
char g_nvtx_message[kMaxText];
char g_nvtx_domain[kMaxText];
bool g_nvtx_any_domain;

void LogLocked(bool open, uint32_t reason, bool final, uint64_t now) {
  if (!g_s.log_enabled) return;
  if (g_s.log_written - g_s.log_sent >= kLogSize) {
    ++g_s.log_lost;
    return;
  }
  g_s.log[g_s.log_written % kLogSize] = WindowEvent{StreamClockIsTicks() ? ReadTicks() : now, reason, g_s.windows_opened, open, final};
  ++g_s.log_written;
}

void NotifyCuda() {
  if (CudaWindowFn fn = g_cuda_hook.load(std::memory_order_acquire)) fn();
}

bool MayOpenLocked(uint64_t now) {
  if (g_finished.load(std::memory_order_relaxed) || g_open.load(std::memory_order_relaxed)) return false;
  if (now < g_s.t0_ns + g_s.delay_ns) return false;
  uint32_t limit = g_s.end == CaptureRangeEnd::kRepeat ? g_s.repeat_count : 1;
  return limit == 0 || g_s.windows_opened < limit;
}

void ArmNvtxLocked() {
  uint32_t bits = 0;
  if (static_cast<CaptureRange>(g_range.load(std::memory_order_relaxed)) == CaptureRange::kNvtx &&
      !g_finished.load(std::memory_order_relaxed)) {
    bits = g_open.load(std::memory_order_relaxed) ? kNvtxCloseArmed : kNvtxOpenArmed;
  }
  g_nvtx_trigger.store(bits, std::memory_order_release);
}

// Opens a window if allowed; true when it did. Caller holds g_mutex.
bool OpenLocked(uint32_t reason, uint64_t now) {
  if (!MayOpenLocked(now)) return false;
  ++g_s.windows_opened;
  if (g_s.windows_opened == 1) g_s.first_open_ns = now;
  g_open.store(true, std::memory_order_release);
  g_s.nvtx_key_known = false;
  SetRecording(~0u, true);
  LogLocked(true, reason, false, now);
  ArmNvtxLocked();
  return true;
}

// Closes the open window; `force_final` ends capture for good. True when it closed one.
bool CloseLocked(uint32_t reason, bool force_final, uint64_t now) {
  if (!g_open.load(std::memory_order_relaxed)) return false;
  uint32_t limit = g_s.end == CaptureRangeEnd::kRepeat ? g_s.repeat_count : 1;
  bool final = force_final || (limit != 0 && g_s.windows_opened >= limit);
  SetRecording(~0u, false);
  g_open.store(false, std::memory_order_release);
  if (final) g_finished.store(true, std::memory_order_release);
  LogLocked(false, reason, final, now);
  ArmNvtxLocked();
  return true;
}

void CopyBounded(char* dst, const std::string& src) {
  size_t n = src.size() < kMaxText - 1 ? src.size() : kMaxText - 1;
  std::memcpy(dst, src.data(), n);
  dst[n] = '\0';
}

// Session start (the thread that started it): reset and arm for this session's configuration.
void OnSessionStart(const Config& config, uint64_t session_id) {
  const CaptureConfig& c = config.capture;
  uint64_t now = NowNs();
  pthread_mutex_lock(&g_mutex);
  g_s.session_id = session_id;
  uint64_t load = g_load_ns.load(std::memory_order_relaxed);
  // A forked child has its own session: its time zero is its own start.
  g_s.t0_ns = (load != 0 && session_id == 1) ? load : now;
  g_s.delay_ns = c.delay_ns;
  g_s.duration_ns = c.duration_ns;
  g_s.first_open_ns = 0;
  g_s.windows_opened = 0;
  g_s.repeat_count = c.repeat_count;
  g_s.end = c.end;
  g_s.step_first = c.step_first;
  g_s.step_last = c.step_last;
  g_s.step = 0;
  g_s.nvtx_key_known = false;
  g_s.log_written = g_s.log_sent = 0;
  g_s.log_enabled = c.StartsPaused() || c.duration_ns != 0;
  g_s.log_lost = 0;
  CopyBounded(g_nvtx_message, c.nvtx_message);
  CopyBounded(g_nvtx_domain, c.nvtx_domain);
  g_nvtx_any_domain = c.nvtx_any_domain;
  g_range.store(static_cast<uint32_t>(c.range), std::memory_order_relaxed);
  g_finished.store(false, std::memory_order_relaxed);
  g_open.store(false, std::memory_order_relaxed);
  if (!c.StartsPaused()) {
    // The collector enabled every source at start: that is the first window.
    ++g_s.windows_opened;
    g_s.first_open_ns = now;
    g_open.store(true, std::memory_order_release);
    LogLocked(true, field::enums::kWindowStart, false, now);
  } else if (c.range == CaptureRange::kSteps && c.step_first == 0) {
    OpenLocked(field::enums::kWindowSteps, now);  // step 0 begins with the session
  }
  ArmNvtxLocked();
  pthread_mutex_unlock(&g_mutex);
  NotifyCuda();
}

void Emit(ChunkBuilder* chunk, uint64_t session_id) {
  uint64_t now = NowNs();
  bool changed = false;
  WindowEvent events[kLogSize];
  uint32_t n = 0;
  uint64_t lost = 0;
  pthread_mutex_lock(&g_mutex);
  if (g_s.session_id == session_id) {
    CaptureRange range = static_cast<CaptureRange>(g_range.load(std::memory_order_relaxed));
    if (range == CaptureRange::kNone && g_s.windows_opened == 0 && now >= g_s.t0_ns + g_s.delay_ns) {
      changed |= OpenLocked(field::enums::kWindowDelay, now);
    }
    if (g_open.load(std::memory_order_relaxed) && g_s.duration_ns != 0 && now >= g_s.first_open_ns + g_s.duration_ns) {
      changed |= CloseLocked(field::enums::kWindowDuration, true, now);
    }
    while (g_s.log_sent != g_s.log_written) events[n++] = g_s.log[g_s.log_sent++ % kLogSize];
    lost = g_s.log_lost;
    g_s.log_lost = 0;
  }
  pthread_mutex_unlock(&g_mutex);
  if (changed) NotifyCuda();
  namespace f = field::capture_window_event;
  for (uint32_t i = 0; i < n; ++i) {
    ProtoWriter& w = chunk->body();
    w.BeginNested(field::chunk::kCaptureWindows);
    w.Bool(f::kOpen, events[i].open);
    w.Varint(f::kTsNs, events[i].ts_ns);
    w.Varint(f::kReason, events[i].reason);
    w.Varint(f::kWindowIndex, events[i].index);
    if (events[i].final) w.Bool(f::kFinal, true);
    w.EndNested();
  }
  if (lost != 0) {
    ReportDiagnostic(field::enums::kSeverityWarning, "capture",
                     std::to_string(lost) + " capture window events were not logged", false);
  }
}

// Compares UTF-8 `want` with a NUL-terminated wide string.
bool WideEquals(const wchar_t* wide, const char* want) {
  size_t i = 0;
  for (; want[i] != '\0'; ++i) {
    if (wide[i] == 0 || static_cast<uint32_t>(wide[i]) != static_cast<unsigned char>(want[i])) return false;
    if (static_cast<unsigned char>(want[i]) >= 0x80) return false;  // non-ASCII: compare UTF-8 text only
  }
  return wide[i] == 0;
}

}  // namespace

void NoteLoadTime(uint64_t ns) { g_load_ns.store(ns, std::memory_order_relaxed); }

void RegisterWithCollector() {
  RegisterSessionStartHook(&OnSessionStart);
  RegisterEmitter(&Emit);
  // A session another module started before this hook existed: adopt it now.
  uint64_t id = SessionId();
  if (id == 0) return;
  pthread_mutex_lock(&g_mutex);
  bool known = g_s.session_id == id;
  pthread_mutex_unlock(&g_mutex);
  const Config* config = SessionConfig();
  if (!known && config != nullptr) OnSessionStart(*config, id);
}

void SetCudaWindowHook(CudaWindowFn fn) { g_cuda_hook.store(fn, std::memory_order_release); }
bool WindowOpen() { return g_open.load(std::memory_order_acquire); }
bool CaptureFinished() { return g_finished.load(std::memory_order_acquire); }

bool UsesCudaProfilerApi() {
  return static_cast<CaptureRange>(g_range.load(std::memory_order_relaxed)) == CaptureRange::kCudaProfilerApi;
}

void OnCudaProfilerStart() {
  if (!UsesCudaProfilerApi()) return;
  pthread_mutex_lock(&g_mutex);
  bool changed = OpenLocked(field::enums::kWindowCudaProfilerApi, NowNs());
  pthread_mutex_unlock(&g_mutex);
  if (changed) NotifyCuda();
}

void OnCudaProfilerStop() {
  if (!UsesCudaProfilerApi()) return;
  pthread_mutex_lock(&g_mutex);
  bool changed = g_s.end != CaptureRangeEnd::kNone && CloseLocked(field::enums::kWindowCudaProfilerApi, false, NowNs());
  pthread_mutex_unlock(&g_mutex);
  if (changed) NotifyCuda();
}

bool OnApiStart() {
  if (!UsesCudaProfilerApi()) return false;
  pthread_mutex_lock(&g_mutex);
  bool changed = OpenLocked(field::enums::kWindowApi, NowNs());
  pthread_mutex_unlock(&g_mutex);
  if (changed) NotifyCuda();
  return changed;
}

bool OnApiStop() {
  if (!UsesCudaProfilerApi()) return false;
  pthread_mutex_lock(&g_mutex);
  bool changed = g_s.end != CaptureRangeEnd::kNone && CloseLocked(field::enums::kWindowApi, false, NowNs());
  pthread_mutex_unlock(&g_mutex);
  if (changed) NotifyCuda();
  return changed;
}

uint64_t OnStep() {
  bool steps = static_cast<CaptureRange>(g_range.load(std::memory_order_relaxed)) == CaptureRange::kSteps;
  uint64_t now = NowNs();
  bool changed = false;
  pthread_mutex_lock(&g_mutex);
  if (steps && g_s.step == g_s.step_last) changed |= CloseLocked(field::enums::kWindowSteps, true, now);
  uint64_t step = ++g_s.step;
  if (steps && step == g_s.step_first) changed |= OpenLocked(field::enums::kWindowSteps, now);
  pthread_mutex_unlock(&g_mutex);
  if (changed) NotifyCuda();
  return step;
}

bool NvtxRangeOpens(const char* domain_name, const char* text, const wchar_t* wide) {
  if (!(NvtxTrigger() & kNvtxOpenArmed)) return false;
  // Domain: none given = default domain only; "*" = any.
  if (!g_nvtx_any_domain) {
    bool is_default = domain_name == nullptr;
    if (g_nvtx_domain[0] == '\0' ? !is_default : (is_default || std::strcmp(domain_name, g_nvtx_domain) != 0)) {
      return false;
    }
  }
  bool match = text != nullptr   ? std::strncmp(text, g_nvtx_message, kMaxText) == 0
               : wide != nullptr ? WideEquals(wide, g_nvtx_message)
                                 : false;
  if (!match) return false;
  pthread_mutex_lock(&g_mutex);
  bool changed = OpenLocked(field::enums::kWindowNvtx, NowNs());
  pthread_mutex_unlock(&g_mutex);
  if (changed) NotifyCuda();
  return changed;
}

void NvtxRangeOpened(uint32_t tid, uint32_t domain_id, bool push_pop, uint64_t key) {
  pthread_mutex_lock(&g_mutex);
  if (g_open.load(std::memory_order_relaxed) && !g_s.nvtx_key_known) {
    g_s.nvtx_push_pop = push_pop;
    g_s.nvtx_tid = tid;
    g_s.nvtx_domain_id = domain_id;
    g_s.nvtx_key = key;
    g_s.nvtx_key_known = true;
  }
  pthread_mutex_unlock(&g_mutex);
}

void NvtxRangeEnded(uint32_t tid, uint32_t domain_id, bool push_pop, uint64_t key) {
  if (!(NvtxTrigger() & kNvtxCloseArmed)) return;
  pthread_mutex_lock(&g_mutex);
  bool changed = false;
  if (g_s.nvtx_key_known && g_s.nvtx_push_pop == push_pop && g_s.nvtx_domain_id == domain_id && g_s.nvtx_key == key &&
      (!push_pop || g_s.nvtx_tid == tid) && g_s.end != CaptureRangeEnd::kNone) {
    changed = CloseLocked(field::enums::kWindowNvtx, false, NowNs());
  }
  pthread_mutex_unlock(&g_mutex);
  if (changed) NotifyCuda();
}

}  // namespace gt::capture
