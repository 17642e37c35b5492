// Set-up and drain-side work of CUDA API backtraces. Lock order: none of its own; CUPTI is called
// (cuptiEnableCallback, cuptiGetCallbackName) only on set-up and window changes, with no gtrace lock
// held (the CUDA tracer's try-flag serialises window changes).
#include "inject/callstack/callstack_tracer.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "collector/clock.h"
#include "collector/schema_fields.h"
#include "collector/session.h"
#include "inject/callstack/backtrace_spec.h"
#include "inject/callstack/callstack_fields.h"
#include "inject/callstack/module_map.h"
#include "inject/callstack/python_frames.h"
#include "inject/callstack/stack_capture.h"
#include "inject/callstack/stack_decoder.h"
#include "inject/callstack/unwinder.h"
#include "inject/cupti/cupti_callbacks.h"

namespace gt::callstack {
namespace {

constexpr uint64_t kLossReportIntervalNs = 500000000ull;

const char* NameOf(bool driver, uint32_t cbid);

// Allocated once when backtraces are set up, never freed (callbacks and the drain thread use it
// until the process ends).
struct Tracer {
  const cupti::CuptiApi* api = nullptr;
  CUpti_SubscriberHandle subscriber = nullptr;
  uint32_t pid = 0;  // the process that set up; a forked child (CUPTI inert there) records no stacks
  std::string spec_text;
  std::string python_text;
  PythonRuntime python;        // its layout is nullptr when Python frames are off
  std::string python_version;  // "3.11" when they are on
  BacktraceSpec spec;
  Unwinder unwinder;
  // Callback names by id (CUPTI's static strings, looked up at set-up so the drain thread never calls
  // CUPTI, not even in a forked child).
  const char* runtime_names[kMaxCbid] = {};
  const char* driver_names[kMaxCbid] = {};
  std::vector<std::pair<CUpti_CallbackDomain, uint32_t>> selected;
  uint32_t runtime_selected = 0, driver_selected = 0;
  bool enable_failure_reported = false;
  // Drain thread.
  StackDecoder decoder{&NameOf};
  uint64_t config_session = 0;
  uint64_t loss_base_nesting = 0, loss_base_unwind = 0;
  uint64_t last_loss_check_ns = 0;
};

Tracer* g_tracer = nullptr;

const char* NameOf(bool driver, uint32_t cbid) {
  if (g_tracer == nullptr || cbid >= kMaxCbid)
    return nullptr;
  return driver ? g_tracer->driver_names[cbid] : g_tracer->runtime_names[cbid];
}

bool NeededByCudaTracer(CUpti_CallbackDomain domain, uint32_t cbid) {
  for (const cupti::CallbackId& c : cupti::kLifetimeCallbacks) {
    if (c.domain == domain && c.cbid == cbid)
      return true;
  }
  for (const cupti::CallbackId& c : cupti::kProfilerApiCallbacks) {
    if (c.domain == domain && c.cbid == cbid)
      return true;
  }
  return false;
}

void WriteConfig(Tracer* t, ChunkBuilder* chunk) {
  namespace f = field::callstack_config;
  ProtoWriter& w = chunk->body();
  w.BeginNested(field::chunk::kCallStackConfig);
  w.String(f::kSpec, t->spec_text);
  for (int c = kClassKernel; c < kClassCount; ++c) {
    if (!t->spec.selected[c])
      continue;
    w.BeginNested(f::kClasses);
    w.Varint(field::callstack_class_threshold::kApiClass, static_cast<uint32_t>(c));
    w.Varint(field::callstack_class_threshold::kThresholdNs, t->spec.threshold_ns[c]);
    w.EndNested();
  }
  w.Varint(f::kMaxFrames, kMaxFrames);
  w.String(f::kUnwinderPath, t->unwinder.path);
  w.Varint(f::kRuntimeApisSelected, t->runtime_selected);
  w.Varint(f::kDriverApisSelected, t->driver_selected);
  w.Varint(f::kMaxNesting, kMaxNesting);
  w.StringIfNonEmpty(f::kPythonBacktrace, t->python_text);
  w.StringIfNonEmpty(f::kPythonVersion, t->python_version);
  w.EndNested();
  // Chunk.callstack_config is singular: close this chunk.
  chunk->End();
  chunk->Begin(0, 0, 0);
}

void EmitHook(ChunkBuilder* chunk, uint64_t session_id) {
  Tracer* t = g_tracer;
  if (t == nullptr || static_cast<uint32_t>(getpid()) != t->pid)
    return;  // no module map or configuration in a forked child's stream: it cannot capture
  uint64_t now = NowNs();
  if (t->config_session != session_id) {
    t->config_session = session_id;
    WriteConfig(t, chunk);
    CaptureLossTotals(&t->loss_base_nesting, &t->loss_base_unwind);  // a forked child starts from here
    t->last_loss_check_ns = now;
  }
  EmitProcessModules(chunk, session_id);  // shared with CPU sampling (module_map.h)
  if (now - t->last_loss_check_ns < kLossReportIntervalNs)
    return;
  t->last_loss_check_ns = now;
  uint64_t nesting = 0, unwind = 0;
  CaptureLossTotals(&nesting, &unwind);
  if (nesting == t->loss_base_nesting && unwind == t->loss_base_unwind)
    return;
  namespace f = field::callstack_loss;
  ProtoWriter& w = chunk->body();
  w.BeginNested(field::chunk::kCallStackLosses);
  w.Varint(f::kTsNs, StreamNow());
  w.VarintIfNonZero(f::kNestingOverflow, nesting - t->loss_base_nesting);
  w.VarintIfNonZero(f::kUnwindFailures, unwind - t->loss_base_unwind);
  w.EndNested();
  t->loss_base_nesting = nesting;
  t->loss_base_unwind = unwind;
}

void DecodeHook(const RecordView& view, ChunkBuilder* chunk) {
  if (g_tracer != nullptr)
    g_tracer->decoder.Decode(view, SessionId(), chunk);
}

void Off(const std::string& why) {
  ReportDiagnostic(field::enums::kSeverityWarning, "callstack",
                   "CUDA backtraces off: " + why + "; CUDA tracing goes on");
}

void AddSkipRange(const void* address, uintptr_t* begin, uintptr_t* end, int* count) {
  ModuleInfo m;
  if (*count >= kMaxSkipRanges || address == nullptr || !FindModule(address, &m))
    return;
  for (int i = 0; i < *count; ++i) {
    if (begin[i] == m.start_address)
      return;  // same module (the fake CUPTI is one file with its driver)
  }
  begin[*count] = m.start_address;
  end[*count] = m.end_address;
  ++*count;
}

}  // namespace

void SetUpBacktraces(const cupti::CuptiApi* api, CUpti_SubscriberHandle subscriber) {
  if (g_tracer != nullptr || api == nullptr)
    return;  // once per process image
  const char* spec_env = getenv("GTRACE_CUDABACKTRACE");
  const char* python_env = getenv("GTRACE_PYTHON_BACKTRACE");
  std::string python = python_env != nullptr ? python_env : "";
  bool python_on = python == "cuda";
  if (!python.empty() && !python_on && python != "none" && python != "false" && python != "0") {
    ReportDiagnostic(field::enums::kSeverityWarning, "callstack",
                     "GTRACE_PYTHON_BACKTRACE=" + python + ": expected cuda or none; Python frames are off");
  }
  if (spec_env == nullptr || *spec_env == '\0') {
    if (python_on) {
      ReportDiagnostic(field::enums::kSeverityWarning, "callstack",
                       "GTRACE_PYTHON_BACKTRACE=cuda has no effect without GTRACE_CUDABACKTRACE (Python frames "
                       "are added to the stacks it selects)");
    }
    return;
  }
  BacktraceSpec spec;
  std::string error;
  if (!ParseBacktraceSpec(spec_env, &spec, &error)) {
    Off(std::string("GTRACE_CUDABACKTRACE='") + spec_env + "': " + error);
    return;
  }
  if (!spec.any())
    return;
  if (api->EnableCallback == nullptr || api->GetCallbackName == nullptr) {
    Off("CUPTI lacks cuptiEnableCallback/cuptiGetCallbackName");
    return;
  }
  auto* t = new Tracer();
  t->api = api;
  t->subscriber = subscriber;
  t->pid = static_cast<uint32_t>(getpid());
  t->spec_text = spec_env;
  t->python_text = python;
  t->spec = spec;
  if (!LoadUnwinder(&t->unwinder, &error)) {
    Off(error);
    delete t;
    return;
  }
  if (python_on) {
    std::string why;
    if (FindPython(&t->python, &why)) {
      t->python_version = std::to_string(t->python.major) + "." + std::to_string(t->python.minor);
    } else {
      ReportDiagnostic(field::enums::kSeverityWarning, "callstack",
                       "GTRACE_PYTHON_BACKTRACE=cuda: " + why + "; CUDA backtraces keep native frames only");
    }
  }
  static uint8_t runtime_class[kMaxCbid], driver_class[kMaxCbid];
  for (int d = 0; d < 2; ++d) {
    CUpti_CallbackDomain domain = d == 0 ? CUPTI_CB_DOMAIN_RUNTIME_API : CUPTI_CB_DOMAIN_DRIVER_API;
    const char** names = d == 0 ? t->runtime_names : t->driver_names;
    uint8_t* classes = d == 0 ? runtime_class : driver_class;
    for (uint32_t cbid = 1; cbid < kMaxCbid; ++cbid) {
      const char* name = nullptr;
      if (api->GetCallbackName(domain, cbid, &name) != CUPTI_SUCCESS || name == nullptr)
        continue;
      names[cbid] = name;
      ApiClass c = ClassifyApi(std::string_view(name, strnlen(name, 256)));
      if (!spec.selected[c])
        continue;
      classes[cbid] = c;
      t->selected.emplace_back(domain, cbid);
      ++(d == 0 ? t->runtime_selected : t->driver_selected);
    }
  }
  uintptr_t begin[kMaxSkipRanges] = {}, end[kMaxSkipRanges] = {};
  int skips = 0;
  AddSkipRange(reinterpret_cast<const void*>(&SetUpBacktraces), begin, end, &skips);  // gtrace itself
  AddSkipRange(reinterpret_cast<const void*>(api->GetVersion), begin, end, &skips);   // CUPTI
  AddSkipRange(reinterpret_cast<const void*>(t->unwinder.backtrace), begin, end, &skips);
  if (!InstallCapture(spec, t->unwinder.backtrace, runtime_class, driver_class, begin, end, skips,
                      t->python.layout != nullptr ? &t->python : nullptr)) {
    Off("cannot reserve the per-thread capture areas");
    delete t;
    return;
  }
  g_tracer = t;
  RegisterRecordDecoder(kRecordCallStack, &DecodeHook);
  RegisterEmitter(&EmitHook);
}

void EnableBacktraceCallbacks(bool on) {
  Tracer* t = g_tracer;
  if (t == nullptr)
    return;
  NewCaptureEpoch();
  uint32_t failures = 0;
  for (const auto& [domain, cbid] : t->selected) {
    if (!on && NeededByCudaTracer(domain, cbid))
      continue;
    if (t->api->EnableCallback(on ? 1 : 0, t->subscriber, domain, cbid) != CUPTI_SUCCESS)
      ++failures;
  }
  if (failures > 0 && on && !t->enable_failure_reported) {
    t->enable_failure_reported = true;
    ReportDiagnostic(field::enums::kSeverityWarning, "callstack",
                     std::to_string(failures) + " of " + std::to_string(t->selected.size()) +
                         " CUDA API callbacks could not be enabled; those calls keep no stack");
  }
}

}  // namespace gt::callstack
