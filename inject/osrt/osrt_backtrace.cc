#include "inject/osrt/osrt_backtrace.h"

#include <cstring>
#include <string>
#include <string_view>

#include "collector/schema_fields.h"
#include "inject/callstack/module_map.h"
#include "inject/callstack/stack_capture.h"
#include "inject/callstack/stack_decoder.h"
#include "inject/callstack/unwinder.h"
#include "inject/osrt/osrt_fields.h"
#include "inject/osrt/osrt_tracer.h"

namespace gt::osrt {

std::atomic<uint64_t> g_backtrace_threshold{UINT64_MAX};

namespace {

using callstack::kCaptureFrames;
using callstack::kMaxFrames;

constexpr int kSkipRanges = 2;  // libgtrace.so (interposer, record path), libunwind

// Written once by SetUpBacktraces before g_backtrace_threshold is stored (release); read after the
// threshold check (the interposer's load of it is relaxed, but the areas pointer is read with
// acquire in CaptureAreaOf and the rest is written before the areas exist).
struct State {
  callstack::BacktraceFn backtrace;
  uintptr_t skip_begin[kSkipRanges];
  uintptr_t skip_end[kSkipRanges];
  uint32_t depth;
};
State g_state;

// Drain thread: what OsrtConfig says about backtraces (set before the first config is emitted).
struct ConfigText {
  bool on = false;
  uint64_t threshold_ns = 0;
  uint32_t depth = 0;
  std::string unwinder_path;
};
ConfigText* g_config_text = nullptr;  // allocated once at set-up, never freed

// The record after the RecordHeader{aux16 = FunctionId, aux32 = kept frames, ts_ns = start}.
struct OsrtStackFixed {
  uint64_t duration_ns;
  int64_t return_value;
  uint8_t flags;  // kStackTruncated
  uint8_t reserved[7];
};
constexpr size_t kFramesOffset = sizeof(RecordHeader) + sizeof(OsrtStackFixed);
static_assert(kFramesOffset == 40);
static_assert(kFramesOffset + kMaxFrames * sizeof(uint64_t) <= kMaxRecordBytes);
constexpr uint8_t kTruncated = 1;

bool Skipped(uintptr_t pc) {
  for (int i = 0; i < kSkipRanges; ++i) {
    if (pc >= g_state.skip_begin[i] && pc < g_state.skip_end[i])
      return true;
  }
  return false;
}

void SkipModuleOf(const void* address, int i) {
  callstack::ModuleInfo m;
  if (address != nullptr && callstack::FindModule(address, &m)) {
    g_state.skip_begin[i] = m.start_address;
    g_state.skip_end[i] = m.end_address;
  }
}

}  // namespace

void SetUpBacktraces(const Config& config, uint64_t threshold_stream_units) {
  g_backtrace_threshold.store(UINT64_MAX, std::memory_order_relaxed);
  if (!config.osrt_backtrace || (config.sources & kSourceOsrt) == 0)
    return;
  if (g_config_text == nullptr)
    g_config_text = new ConfigText();
  g_config_text->on = true;
  g_config_text->threshold_ns = config.osrt_backtrace_threshold_ns;
  g_config_text->depth = config.osrt_backtrace_depth;
  if (g_state.backtrace == nullptr) {  // once per process image (a forked child keeps the parent's)
    callstack::Unwinder unwinder;
    std::string error;
    if (!callstack::LoadUnwinder(&unwinder, &error)) {
      ReportDiagnostic(field::enums::kSeverityWarning, "osrt",
                       "OS runtime backtraces off: " + error + "; OS runtime calls are still recorded");
      return;
    }
    g_config_text->unwinder_path = unwinder.path;
    SkipModuleOf(reinterpret_cast<const void*>(&SetUpBacktraces), 0);
    SkipModuleOf(reinterpret_cast<const void*>(unwinder.backtrace), 1);
    g_state.backtrace = unwinder.backtrace;
  }
  g_state.depth = config.osrt_backtrace_depth < static_cast<uint32_t>(kMaxFrames)
                      ? config.osrt_backtrace_depth
                      : static_cast<uint32_t>(kMaxFrames);
  if (callstack::ReserveCaptureAreas() == nullptr) {
    ReportDiagnostic(field::enums::kSeverityWarning, "osrt",
                     "OS runtime backtraces off: cannot reserve the per-thread capture areas");
    return;
  }
  callstack::EnableModuleAnnouncements();
  g_backtrace_threshold.store(threshold_stream_units, std::memory_order_release);
}

bool WriteCallWithStack(FunctionId id, uint64_t start_ns, uint64_t end_ns, int64_t return_value) {
  callstack::CaptureArea* a = callstack::CaptureAreaOf(CurrentThreadBuffer());
  if (a == nullptr || g_state.backtrace == nullptr)
    return false;
  int n = g_state.backtrace(a->osrt_frames, kCaptureFrames);
  int first = 0;
  while (first < n && Skipped(reinterpret_cast<uintptr_t>(a->osrt_frames[first])))
    ++first;
  int kept = n - first;
  if (kept <= 0)
    return false;
  uint8_t flags = n >= kCaptureFrames ? kTruncated : 0;
  if (kept > static_cast<int>(g_state.depth)) {
    kept = static_cast<int>(g_state.depth);
    flags = kTruncated;
  }
  size_t frames_bytes = static_cast<size_t>(kept) * sizeof(uint64_t);
  RecordSpan span;
  if (!BeginRecord(kFramesOffset + frames_bytes, &span))
    return true;  // counted by the ring; a plain record would not fit either
  struct {
    RecordHeader h;
    OsrtStackFixed f;
  } head;
  static_assert(sizeof(head) == kFramesOffset);
  std::memset(&head, 0, sizeof(head));
  head.h.type = kRecordOsrtStack;
  head.h.ext_slots = static_cast<uint8_t>(span.n_slots - 1);
  head.h.aux16 = static_cast<uint16_t>(id);
  head.h.aux32 = static_cast<uint32_t>(kept);
  head.h.ts_ns = start_ns;
  head.f.duration_ns = end_ns - start_ns;
  head.f.return_value = return_value;
  head.f.flags = flags;
  RecordCopy(span, 0, &head, sizeof(head));
  RecordCopy(span, kFramesOffset, &a->osrt_frames[first], frames_bytes);
  CommitRecord(span);
  return true;
}

void DecodeStackRecord(const RecordView& view, ChunkBuilder* chunk) {
  if (view.size_bytes < kFramesOffset || view.header->aux16 >= kFunctionCount)
    return;
  OsrtStackFixed fixed;
  std::memcpy(&fixed, view.bytes + sizeof(RecordHeader), sizeof(fixed));
  uint32_t count = view.header->aux32;
  if (count == 0 || count > static_cast<uint32_t>(kMaxFrames) || kFramesOffset + count * sizeof(uint64_t) > view.size_bytes)
    return;
  uint64_t frames[kMaxFrames];
  std::memcpy(frames, view.bytes + kFramesOffset, count * sizeof(uint64_t));
  // Definitions and strings first: they cannot be written inside the event.
  uint64_t stack_id =
      callstack::SharedStackDecoder().DefineStack(frames, count, (fixed.flags & kTruncated) != 0, SessionId(), chunk);
  uint64_t name_id = chunk->Intern(std::string_view(FunctionName(view.header->aux16)));
  namespace f = field::osrt_call;
  ProtoWriter& w = chunk->body();
  w.BeginNested(field::chunk::kOsrtCalls);
  w.SInt(f::kStartDeltaNs, chunk->DeltaNs(field::chunk::kOsrtCalls, view.header->ts_ns));
  w.Varint(f::kDurationNs, fixed.duration_ns);
  w.Varint(f::kNameId, name_id);
  if (fixed.return_value != 0)
    w.SInt(f::kReturnValue, fixed.return_value);
  w.Varint(f::kStackId, stack_id);
  w.EndNested();
  chunk->CountRecord();
}

void WriteBacktraceConfig(ProtoWriter* w) {
  const ConfigText* c = g_config_text;
  if (c == nullptr || !c->on)
    return;
  namespace f = field::osrt_config;
  w->Varint(f::kBacktraceThresholdNs, c->threshold_ns);
  w->Varint(f::kBacktraceDepth, c->depth);
  w->StringIfNonEmpty(f::kUnwinderPath, c->unwinder_path);
}

}  // namespace gt::osrt
