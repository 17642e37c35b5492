// NVTX hook functions: installed into every NVTX instance's function table by
// InitializeInjectionNvtx2, called on application threads inside nvtx* calls.
//
// Hot path (house style): the first statement is the relaxed enabled-mask load; then a TLS
// lookup, a clock read and one record. Domain creation and string registration write to the
// lock-free registry (no malloc, no locks).
#include "inject/nvtx/nvtx_hooks.h"

#include <cstring>
#include <cwchar>

#include "collector/process_info.h"
#include "collector/schema_fields.h"
#include "inject/cupti/capture_window.h"
#include "inject/metrics/gpu_metrics.h"
#include "inject/metrics/range_profiler.h"
#include "inject/nvtx/nvtx_record.h"
#include "inject/nvtx/nvtx_registry.h"

namespace gt::nvtx {
namespace {

using field::enums::kNvtxDomainDestroy;
using field::enums::kNvtxEnd;
using field::enums::kNvtxMark;
using field::enums::kNvtxNameCategory;
using field::enums::kNvtxNameThread;
using field::enums::kNvtxPop;
using field::enums::kNvtxPush;
using field::enums::kNvtxStart;

std::atomic<uint64_t> g_fallback_range_id{uint64_t{1} << 63};

// One relaxed check while recording; the deferred start only before the first record.
inline bool On() { return IsEnabled(kSourceNvtx) || OnSlow(); }

// Fills message/category/color/payload from an event attribute structure, reading only the
// fields its `size` covers (older applications pass shorter structures).
void FromAttributes(const nvtxEventAttributes_t* attr, EventArgs* a) {
  if (attr == nullptr) return;
  size_t size = attr->size;
  auto covers = [size](size_t end) { return size >= end; };
  if (covers(offsetof(nvtxEventAttributes_t, category) + sizeof(attr->category))) a->category = attr->category;
  if (covers(offsetof(nvtxEventAttributes_t, color) + sizeof(attr->color)) && attr->colorType == NVTX_COLOR_ARGB) {
    a->color = attr->color;
    a->flags |= kFlagHasColor;
  }
  if (covers(offsetof(nvtxEventAttributes_t, payload) + sizeof(attr->payload))) {
    int32_t pt = attr->payloadType;
    if (pt >= NVTX_PAYLOAD_TYPE_UNSIGNED_INT64 && pt <= NVTX_PAYLOAD_TYPE_FLOAT) {
      a->flags |= kFlagHasPayload;
      a->payload_type = static_cast<uint8_t>(pt);
      switch (pt) {
        case NVTX_PAYLOAD_TYPE_UNSIGNED_INT32:
          a->payload = attr->payload.uiValue;
          break;
        case NVTX_PAYLOAD_TYPE_INT32:
          a->payload = static_cast<uint32_t>(attr->payload.iValue);
          break;
        case NVTX_PAYLOAD_TYPE_FLOAT: {
          uint32_t bits;
          std::memcpy(&bits, &attr->payload.fValue, sizeof(bits));
          a->payload = bits;
          break;
        }
        default:
          a->payload = attr->payload.ullValue;  // 64-bit members share the bits
      }
    } else if (pt == NVTX_PAYLOAD_TYPE_EXT && attr->reserved0 > 0) {
      // Payload extension: payload.ullValue points at `reserved0` nvtxPayloadData_t entries.
      a->ext = reinterpret_cast<const void*>(static_cast<uintptr_t>(attr->payload.ullValue));
      a->ext_count = static_cast<size_t>(attr->reserved0);
    }
  }
  if (covers(offsetof(nvtxEventAttributes_t, message) + sizeof(attr->message))) {
    switch (attr->messageType) {
      case NVTX_MESSAGE_TYPE_ASCII:
        a->ascii = attr->message.ascii;
        break;
      case NVTX_MESSAGE_TYPE_UNICODE:
        a->wide = attr->message.unicode;
        break;
      case NVTX_MESSAGE_TYPE_REGISTERED:
        if (attr->message.registered != nullptr) {
          a->registered_id = static_cast<uint32_t>(reinterpret_cast<const RegisteredString*>(attr->message.registered)->id);
          a->flags |= kFlagRegistered;
        }
        break;
      default:
        break;
    }
  }
}

// The thread's push/pop nesting level in a domain (producer-private scratch of its buffer).
inline int32_t& DepthOf(ThreadBuffer* b, uint32_t domain_id) {
  return b->scratch[domain_id & (ThreadBuffer::kScratchWords - 1)];
}

// A range id unique in the process: the buffer owner's serial and a per-owner counter.
inline uint64_t NextRangeId(ThreadBuffer* b) { return (b->serial << 32) | (++b->scratch_counter & 0xffffffffu); }

int Push(EventArgs& a) {
  ThreadBuffer* b = CurrentThreadBuffer();
  if (b == nullptr) return NVTX_NO_PUSH_POP_TRACKING;
  int32_t& depth = DepthOf(b, a.domain_id);
  a.kind = kNvtxPush;
  a.depth = static_cast<uint32_t>(depth);
  WriteRecordIn(b, a);  // a dropped push still counts a level: the exporter pairs by level
  return depth++;
}

inline int Pop(uint32_t domain_id) {
  ThreadBuffer* b = CurrentThreadBuffer();
  if (b == nullptr) return NVTX_NO_PUSH_POP_TRACKING;
  int32_t& depth = DepthOf(b, domain_id);
  if (depth <= 0) return -1;  // pop without push: nothing to record
  --depth;
  WriteBareRecordIn(b, kNvtxPop, domain_id, static_cast<uint32_t>(depth), 0);
  return depth;
}

nvtxRangeId_t Start(EventArgs& a) {
  ThreadBuffer* b = CurrentThreadBuffer();
  if (b == nullptr) {
    // No buffer (the lookup counted the drop): the caller still needs a unique id.
    return g_fallback_range_id.fetch_add(1, std::memory_order_relaxed);
  }
  uint64_t id = NextRangeId(b);
  a.kind = kNvtxStart;
  a.id = id;
  WriteRecordIn(b, a);
  return id;
}

void End(uint32_t domain_id, nvtxRangeId_t id) { WriteBareRecord(kNvtxEnd, domain_id, 0, id); }

void Mark(EventArgs& a) {
  a.kind = kNvtxMark;
  WriteRecord(a);
}

void NameCategory(uint32_t domain_id, uint32_t category, const char* ascii, const wchar_t* wide) {
  EventArgs a;
  a.kind = kNvtxNameCategory;
  a.domain_id = domain_id;
  a.category = category;
  a.ascii = ascii;
  a.wide = wide;
  WriteRecord(a);
}

void NameThread(uint32_t tid, const char* ascii, const wchar_t* wide) {
  EventArgs a;
  a.kind = kNvtxNameThread;
  a.id = tid;
  a.ascii = ascii;
  a.wide = wide;
  WriteRecord(a);
}

// Wide text -> UTF-8 into a caller buffer (registration paths only; bounded, no allocation).
size_t WideToUtf8(const wchar_t* w, char* out, size_t cap) {
  size_t n = 0;
  for (size_t i = 0; w[i] != 0 && i < kMaxNameBytes; ++i) {
    uint32_t cp = static_cast<uint32_t>(w[i]);
    char tmp[4];
    size_t k;
    if (cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) cp = 0xfffd;
    if (cp < 0x80) {
      tmp[0] = static_cast<char>(cp);
      k = 1;
    } else if (cp < 0x800) {
      tmp[0] = static_cast<char>(0xc0 | (cp >> 6));
      tmp[1] = static_cast<char>(0x80 | (cp & 0x3f));
      k = 2;
    } else if (cp < 0x10000) {
      tmp[0] = static_cast<char>(0xe0 | (cp >> 12));
      tmp[1] = static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
      tmp[2] = static_cast<char>(0x80 | (cp & 0x3f));
      k = 3;
    } else {
      tmp[0] = static_cast<char>(0xf0 | (cp >> 18));
      tmp[1] = static_cast<char>(0x80 | ((cp >> 12) & 0x3f));
      tmp[2] = static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
      tmp[3] = static_cast<char>(0x80 | (cp & 0x3f));
      k = 4;
    }
    if (n + k >= cap) break;
    std::memcpy(out + n, tmp, k);
    n += k;
  }
  out[n] = '\0';
  return n;
}

// --- capture windows (--capture-range=nvtx) -------------------------------------------------
// Recording is off while no window is open, so the push/start hooks look at their range only when
// a trigger is armed (a second relaxed load, after IsEnabled): the capture range's push/start opens
// the window (and is recorded), its pop/end closes it.

inline bool CaptureOpenArmed() { return (capture::NvtxTrigger() & capture::kNvtxOpenArmed) != 0; }
inline bool CaptureCloseArmed() { return (capture::NvtxTrigger() & capture::kNvtxCloseArmed) != 0; }

bool CaptureOpens(nvtxDomainHandle_t domain, const EventArgs& a, const nvtxEventAttributes_t* attr) {
  const char* text = a.ascii;
  if (text == nullptr && (a.flags & kFlagRegistered) && attr != nullptr && attr->message.registered != nullptr) {
    text = reinterpret_cast<const RegisteredString*>(attr->message.registered)->text;
  }
  const char* domain_name = domain != nullptr ? static_cast<const Domain*>(static_cast<const void*>(domain))->name : nullptr;
  return capture::NvtxRangeOpens(domain_name, text, a.wide);
}

void RangeProfilerPush(nvtxDomainHandle_t domain, const EventArgs& a, const nvtxEventAttributes_t* attr, int depth) {
  const char* text = a.ascii;
  if (text == nullptr && (a.flags & kFlagRegistered) && attr != nullptr && attr->message.registered != nullptr) {
    text = reinterpret_cast<const RegisteredString*>(attr->message.registered)->text;
  }
  const char* domain_name = domain != nullptr ? static_cast<const Domain*>(static_cast<const void*>(domain))->name : nullptr;
  metrics::OnNvtxPush(domain_name, text, a.wide, a.domain_id, CurrentThreadTid(), depth);
}

// Push when recording, or when this push opens a capture window.
int PushOrCapture(nvtxDomainHandle_t domain, EventArgs& a, const nvtxEventAttributes_t* attr) {
  bool opened = false;
  if (!On()) {
    if (!CaptureOpens(domain, a, attr)) return NVTX_NO_PUSH_POP_TRACKING;
    opened = true;
  }
  int depth = Push(a);
  if (opened && depth >= 0) capture::NvtxRangeOpened(CurrentThreadTid(), a.domain_id, true, static_cast<uint64_t>(depth));
  // --gpu-metrics-ranges=nvtx:RANGE (slow path only when armed: one more relaxed load otherwise).
  if (metrics::RangeProfilerArmed() && depth >= 0) RangeProfilerPush(domain, a, attr, depth);
  return depth;
}

inline int PopAndCapture(uint32_t domain_id) {
  int depth = Pop(domain_id);
  if (depth >= 0 && CaptureCloseArmed()) {
    capture::NvtxRangeEnded(CurrentThreadTid(), domain_id, true, static_cast<uint64_t>(depth));
  }
  if (depth >= 0 && metrics::RangeProfilerArmed()) metrics::OnNvtxPop(CurrentThreadTid(), domain_id, depth);
  return depth;
}

nvtxRangeId_t StartOrCapture(nvtxDomainHandle_t domain, EventArgs& a, const nvtxEventAttributes_t* attr) {
  bool opened = false;
  if (!On()) {
    if (!CaptureOpens(domain, a, attr)) return 0;
    opened = true;
  }
  nvtxRangeId_t id = Start(a);
  if (opened) capture::NvtxRangeOpened(0, a.domain_id, false, id);
  return id;
}

void EndAndCapture(uint32_t domain_id, nvtxRangeId_t id) {
  End(domain_id, id);
  if (CaptureCloseArmed()) capture::NvtxRangeEnded(0, domain_id, false, id);
}

}  // namespace

// --- CORE -------------------------------------------------------------------------------------

void HookMarkEx(const nvtxEventAttributes_t* attr) {
  if (!On()) return;
  EventArgs a;
  FromAttributes(attr, &a);
  Mark(a);
}
void HookMarkA(const char* message) {
  if (!On()) return;
  if (message != nullptr) {  // the one-slot record, no EventArgs (the same record as Mark())
    if (ThreadBuffer* b = CurrentThreadBuffer()) WriteAsciiRecordIn(b, kNvtxMark, 0, 0, 0, message);
    return;
  }
  EventArgs a;
  a.ascii = message;
  Mark(a);
}
void HookMarkW(const wchar_t* message) {
  if (!On()) return;
  EventArgs a;
  a.wide = message;
  Mark(a);
}
nvtxRangeId_t HookRangeStartEx(const nvtxEventAttributes_t* attr) {
  if (!On() && !CaptureOpenArmed()) return 0;
  EventArgs a;
  FromAttributes(attr, &a);
  return StartOrCapture(nullptr, a, attr);
}
nvtxRangeId_t HookRangeStartA(const char* message) {
  if (On() && message != nullptr) {  // the one-slot record, no EventArgs (the same as Start())
    ThreadBuffer* b = CurrentThreadBuffer();
    if (b == nullptr) return g_fallback_range_id.fetch_add(1, std::memory_order_relaxed);
    uint64_t id = NextRangeId(b);
    WriteAsciiRecordIn(b, kNvtxStart, 0, 0, id, message);
    return id;
  }
  if (!On() && !CaptureOpenArmed()) return 0;
  EventArgs a;
  a.ascii = message;
  return StartOrCapture(nullptr, a, nullptr);
}
nvtxRangeId_t HookRangeStartW(const wchar_t* message) {
  if (!On() && !CaptureOpenArmed()) return 0;
  EventArgs a;
  a.wide = message;
  return StartOrCapture(nullptr, a, nullptr);
}
void HookRangeEnd(nvtxRangeId_t id) {
  if (!On() || id == 0) return;
  EndAndCapture(0, id);
}
int HookRangePushEx(const nvtxEventAttributes_t* attr) {
  if (!On() && !CaptureOpenArmed()) return NVTX_NO_PUSH_POP_TRACKING;
  EventArgs a;
  FromAttributes(attr, &a);
  return PushOrCapture(nullptr, a, attr);
}
int HookRangePushA(const char* message) {
  if (On() && message != nullptr) {
    // The common case, straight to the one-slot record: no EventArgs, one TLS lookup (the same
    // record and depth as Push()).
    ThreadBuffer* b = CurrentThreadBuffer();
    if (b == nullptr) return NVTX_NO_PUSH_POP_TRACKING;
    int32_t& depth = DepthOf(b, 0);
    WriteAsciiRecordIn(b, kNvtxPush, 0, static_cast<uint32_t>(depth), 0, message);
    int d = depth++;  // a dropped push still counts a level: the exporter pairs by level
    if (metrics::RangeProfilerArmed()) {
      EventArgs a;
      a.ascii = message;
      RangeProfilerPush(nullptr, a, nullptr, d);
    }
    return d;
  }
  if (!On() && !CaptureOpenArmed()) return NVTX_NO_PUSH_POP_TRACKING;
  EventArgs a;
  a.ascii = message;
  return PushOrCapture(nullptr, a, nullptr);
}
int HookRangePushW(const wchar_t* message) {
  if (!On() && !CaptureOpenArmed()) return NVTX_NO_PUSH_POP_TRACKING;
  EventArgs a;
  a.wide = message;
  return PushOrCapture(nullptr, a, nullptr);
}
int HookRangePop() {
  if (!On()) return NVTX_NO_PUSH_POP_TRACKING;
  return PopAndCapture(0);
}
void HookNameCategoryA(uint32_t category, const char* name) {
  if (!On()) return;
  NameCategory(0, category, name, nullptr);
}
void HookNameCategoryW(uint32_t category, const wchar_t* name) {
  if (!On()) return;
  NameCategory(0, category, nullptr, name);
}
void HookNameOsThreadA(uint32_t tid, const char* name) {
  if (!On()) return;
  NameThread(tid, name, nullptr);
}
void HookNameOsThreadW(uint32_t tid, const wchar_t* name) {
  if (!On()) return;
  NameThread(tid, nullptr, name);
}

// --- CORE2 (domains) ----------------------------------------------------------------------------

void HookDomainMarkEx(nvtxDomainHandle_t domain, const nvtxEventAttributes_t* attr) {
  if (!On()) return;
  EventArgs a;
  a.domain_id = DomainId(domain);
  FromAttributes(attr, &a);
  Mark(a);
}
nvtxRangeId_t HookDomainRangeStartEx(nvtxDomainHandle_t domain, const nvtxEventAttributes_t* attr) {
  if (!On() && !CaptureOpenArmed()) return 0;
  EventArgs a;
  a.domain_id = DomainId(domain);
  FromAttributes(attr, &a);
  return StartOrCapture(domain, a, attr);
}
void HookDomainRangeEnd(nvtxDomainHandle_t domain, nvtxRangeId_t id) {
  if (!On() || id == 0) return;
  EndAndCapture(DomainId(domain), id);
}
int HookDomainRangePushEx(nvtxDomainHandle_t domain, const nvtxEventAttributes_t* attr) {
  if (!On() && !CaptureOpenArmed()) return NVTX_NO_PUSH_POP_TRACKING;
  EventArgs a;
  a.domain_id = DomainId(domain);
  FromAttributes(attr, &a);
  return PushOrCapture(domain, a, attr);
}
int HookDomainRangePop(nvtxDomainHandle_t domain) {
  if (!On()) return NVTX_NO_PUSH_POP_TRACKING;
  return PopAndCapture(DomainId(domain));
}
nvtxResourceHandle_t HookDomainResourceCreate(nvtxDomainHandle_t, nvtxResourceAttributes_t*) { return nullptr; }
void HookDomainResourceDestroy(nvtxResourceHandle_t) {}
void HookDomainNameCategoryA(nvtxDomainHandle_t domain, uint32_t category, const char* name) {
  if (!On()) return;
  NameCategory(DomainId(domain), category, name, nullptr);
}
void HookDomainNameCategoryW(nvtxDomainHandle_t domain, uint32_t category, const wchar_t* name) {
  if (!On()) return;
  NameCategory(DomainId(domain), category, nullptr, name);
}

// Registration and domain creation run whether or not recording is on right now: the handles
// outlive capture windows and must stay valid.
nvtxStringHandle_t HookDomainRegisterStringA(nvtxDomainHandle_t domain, const char* text) {
  StartIfPending();  // the stream clock and the registry need the session
  if (text == nullptr) return nullptr;
  RegisteredString* s = RegisterString(DomainId(domain), text, strnlen(text, kMaxNameBytes));
  return reinterpret_cast<nvtxStringHandle_t>(s);
}
nvtxStringHandle_t HookDomainRegisterStringW(nvtxDomainHandle_t domain, const wchar_t* text) {
  StartIfPending();  // the stream clock and the registry need the session
  if (text == nullptr) return nullptr;
  char utf8[kMaxNameBytes + 1];
  size_t n = WideToUtf8(text, utf8, sizeof(utf8));
  return reinterpret_cast<nvtxStringHandle_t>(RegisterString(DomainId(domain), utf8, n));
}
nvtxDomainHandle_t HookDomainCreateA(const char* name) {
  StartIfPending();  // the stream clock and the registry need the session
  if (name == nullptr) return nullptr;
  return reinterpret_cast<nvtxDomainHandle_t>(CreateDomain(name, StreamNow(), CurrentThreadTid()));
}
nvtxDomainHandle_t HookDomainCreateW(const wchar_t* name) {
  StartIfPending();  // the stream clock and the registry need the session
  if (name == nullptr) return nullptr;
  char utf8[kMaxNameBytes + 1];
  WideToUtf8(name, utf8, sizeof(utf8));
  return reinterpret_cast<nvtxDomainHandle_t>(CreateDomain(utf8, StreamNow(), CurrentThreadTid()));
}
void HookDomainDestroy(nvtxDomainHandle_t domain) {
  StartIfPending();  // the stream clock and the registry need the session
  // The handle stays valid (other NVTX instances may share it); only the event is recorded.
  if (!On() || domain == nullptr) return;
  EventArgs a;
  a.kind = kNvtxDomainDestroy;
  a.domain_id = DomainId(domain);
  WriteRecord(a);
}
void HookInitialize(const void*) {}

uint32_t CurrentThreadTid() {
  // Without taking a buffer (domain creation records nothing, so it must not count a drop).
  const ThreadLocalState& t = t_gt_thread;
  if (t.buffer != nullptr && t.generation == g_generation.load(std::memory_order_relaxed)) return t.buffer->tid;
  return CurrentTid();
}

}  // namespace gt::nvtx
