// The CUPTI functions gtrace resolves, implemented by the fake (a TEST DOUBLE on the real CUDA 13.0
// headers: each definition below must match its declaration in cupti*.h, or this file does not
// compile). See fake_cuda.h for what the fake models and what it does not.
#include <cupti.h>
#include <fcntl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "tests/fakes/fake_state.h"

namespace fake {
namespace {

struct CallbackName {
  int domain;
  uint32_t cbid;
  const char* name;
};
// Generated from cupti_runtime_cbid.h / cupti_driver_cbid.h at build time: the names real CUPTI
// returns are the enum names without the CUPTI_*_TRACE_CBID_ prefix ("cudaLaunchKernel_v7000").
constexpr CallbackName kCallbackNames[] = {
#include "fake_cbid_names.inc"
};

size_t RecordSize(CUpti_ActivityKind kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_DRIVER:
      return sizeof(CUpti_ActivityAPI);
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
      return sizeof(CUpti_ActivityKernel10);
    case CUPTI_ACTIVITY_KIND_MEMCPY:
      return sizeof(CUpti_ActivityMemcpy6);
    case CUPTI_ACTIVITY_KIND_MEMCPY2:
      return sizeof(CUpti_ActivityMemcpyPtoP4);
    case CUPTI_ACTIVITY_KIND_MEMSET:
      return sizeof(CUpti_ActivityMemset4);
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
      return sizeof(CUpti_ActivitySynchronization2);
    case CUPTI_ACTIVITY_KIND_CUDA_EVENT:
      return sizeof(CUpti_ActivityCudaEvent2);
    case CUPTI_ACTIVITY_KIND_GRAPH_TRACE:
      return sizeof(CUpti_ActivityGraphTrace2);
    case CUPTI_ACTIVITY_KIND_OVERHEAD:
      return sizeof(CUpti_ActivityOverhead3);
    case CUPTI_ACTIVITY_KIND_DEVICE:
      return sizeof(CUpti_ActivityDevice5);
    case CUPTI_ACTIVITY_KIND_CONTEXT:
      return sizeof(CUpti_ActivityContext3);
    case CUPTI_ACTIVITY_KIND_STREAM:
      return sizeof(CUpti_ActivityStream);
    case CUPTI_ACTIVITY_KIND_MEMORY2:
      return sizeof(CUpti_ActivityMemory4);
    case CUPTI_ACTIVITY_KIND_MEMORY_POOL:
      return sizeof(CUpti_ActivityMemoryPool3);
    default:
      return 0;
  }
}

size_t Aligned(size_t n) { return (n + 7) & ~size_t{7}; }

void Count(const char* function) {
  std::lock_guard<std::mutex> lock(S().mu);
  ++S().calls[function];
}

// Completes every thread buffer holding records (caller holds S().mu; gtrace's completion callback
// is lock-free and never calls CUPTI).
void CompleteAllLocked() {
  State& s = S();
  for (auto it = s.buffers.begin(); it != s.buffers.end();) {
    ThreadBuffer b = it->second;
    it = s.buffers.erase(it);
    if (b.data != nullptr && s.complete != nullptr) s.complete(nullptr, 0, b.data, b.size, b.used);
  }
}

}  // namespace

State& S() {
  static State* s = new State();
  return *s;
}

uint32_t Tid() { return static_cast<uint32_t>(::syscall(SYS_gettid)); }

// FAKE_CUPTI_OWN_CLOCK=<offset_ns>:<ppm>: without gtrace's callback, CUPTI's own clock is
// CLOCK_MONOTONIC * (1 + ppm / 1e6) + offset_ns instead of CLOCK_REALTIME: a clock with its own
// offset and rate, like a GPU timer that is neither the TSC nor CLOCK_MONOTONIC. Tests invert it
// exactly.
namespace {
struct OwnClock {
  bool on = false;
  int64_t offset_ns = 0;
  int64_t ppm = 0;
};
const OwnClock& Own() {
  static const OwnClock c = [] {
    OwnClock o;
    const char* v = getenv("FAKE_CUPTI_OWN_CLOCK");
    if (v == nullptr || *v == '\0') return o;
    char* end = nullptr;
    o.offset_ns = strtoll(v, &end, 10);
    if (end != nullptr && *end == ':') o.ppm = strtoll(end + 1, nullptr, 10);
    o.on = true;
    return o;
  }();
  return c;
}
}  // namespace

uint64_t Now() {
  CUpti_TimestampCallbackFunc ts = S().timestamp;
  if (ts != nullptr) return ts();
  timespec t;
  if (Own().on) {
    clock_gettime(CLOCK_MONOTONIC, &t);
    __int128 m = static_cast<__int128>(t.tv_sec) * 1000000000 + t.tv_nsec;
    return static_cast<uint64_t>(m + m * Own().ppm / 1000000 + Own().offset_ns);
  }
  clock_gettime(CLOCK_REALTIME, &t);
  return static_cast<uint64_t>(t.tv_sec) * 1000000000ull + static_cast<uint64_t>(t.tv_nsec);
}

namespace {
// Callback units per ns, as a ratio (1/1 until a tick callback is registered).
std::atomic<uint64_t> g_span_num{1}, g_span_den{1};

uint64_t MonoNs() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<uint64_t>(t.tv_sec) * 1000000000ull + static_cast<uint64_t>(t.tv_nsec);
}

// One (callback, CLOCK_MONOTONIC) reading whose monotonic bracket is the tightest of a few tries:
// a preemption inside the bracket would skew the rate.
void ReadBoth(CUpti_TimestampCallbackFunc ts, uint64_t* c, uint64_t* m) {
  uint64_t best = UINT64_MAX;
  for (int i = 0; i < 20; ++i) {
    uint64_t a = MonoNs(), v = ts(), b = MonoNs();
    if (b - a < best) {
      best = b - a;
      *c = v;
      *m = a + (b - a) / 2;
    }
    if (best < 1000) break;
  }
}

void CalibrateSpan(CUpti_TimestampCallbackFunc ts) {
  uint64_t c0 = 0, m0 = 0, c1 = 0, m1 = 0;
  ReadBoth(ts, &c0, &m0);
  while (MonoNs() - m0 < 5000000) {
  }
  ReadBoth(ts, &c1, &m1);
  uint64_t dc = c1 - c0, dm = m1 - m0;
  // A ns clock (CLOCK_MONOTONIC callback): exactly 1:1, whatever noise the measurement had. Tick
  // counters run at GHz rates, far outside this band.
  if (dc > dm - dm / 20 && dc < dm + dm / 20) return;
  g_span_num.store(dc, std::memory_order_relaxed);
  g_span_den.store(dm, std::memory_order_relaxed);
}
}  // namespace

uint64_t Span(uint64_t ns) {
  if (S().timestamp == nullptr && Own().on) {  // CUPTI's own clock runs at 1 + ppm / 1e6 per ns
    return static_cast<uint64_t>(static_cast<__int128>(ns) * (1000000 + Own().ppm) / 1000000);
  }
  uint64_t num = g_span_num.load(std::memory_order_relaxed), den = g_span_den.load(std::memory_order_relaxed);
  return static_cast<uint64_t>(static_cast<unsigned __int128>(ns) * num / den);
}

bool KindOn(int kind) {
  std::lock_guard<std::mutex> lock(S().mu);
  return S().kinds.count(kind) != 0;
}

const char* StableName(const std::string& name) {
  std::lock_guard<std::mutex> lock(S().mu);
  return S().names.insert(name).first->c_str();
}

void Log(const std::string& line) {
  const char* path = getenv("FAKE_CUPTI_LOG");
  if (path == nullptr || *path == '\0') return;
  int fd = ::open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return;
  std::string text = std::to_string(::getpid()) + " " + line + "\n";
  ssize_t n = ::write(fd, text.data(), text.size());
  (void)n;
  ::close(fd);
}

bool CheckProcess(const char* function) {
  pid_t owner = S().pid;
  if (owner == 0 || owner == ::getpid()) return true;
  std::fprintf(stderr, "fake-cupti: VIOLATION %s called in forked child %d of %d\n", function,
               static_cast<int>(::getpid()), static_cast<int>(owner));
  Log(std::string("VIOLATION ") + function);
  return false;
}

// What CUPTI does with a buffer the client just handed it (caller holds S().mu). cupti_activity.h
// (CUDA 13.0) lines 7134-7137, CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER: "If the value of this
// attribute is zero, CUPTI will initialize the user buffer received in the
// CUpti_BuffersCallbackRequestFunc to zero before filling it ... CUPTI will zero out the buffer in the
// main thread"; lines 7128-7132: when non-zero "user should provide a zero value buffer". The fake
// zeroes on the requesting (application) thread and counts it ("zeroed-on-app-thread"), or, with the
// attribute set, checks the client kept its promise ("VIOLATION non-zero buffer" otherwise).
void PrepareRequestedBuffer(uint8_t* data, size_t bytes) {
  State& s = S();
  if (s.zeroed_out_buffers == 0) {
    std::memset(data, 0, bytes);
    ++s.calls["zeroed-on-app-thread"];
    return;
  }
  for (size_t i = 0; i < bytes; ++i) {
    if (data[i] != 0) {
      std::fprintf(stderr, "fake-cupti: VIOLATION non-zero buffer handed over with ZEROED_OUT_ACTIVITY_BUFFER=1\n");
      Log("VIOLATION non-zero buffer with ZEROED_OUT_ACTIVITY_BUFFER=1");
      break;
    }
  }
}

void Append(const void* record, size_t size) {
  State& s = S();
  std::lock_guard<std::mutex> lock(s.mu);
  size_t need = Aligned(size);
  ThreadBuffer& b = s.buffers[Tid()];
  if (b.data != nullptr && b.used + need > b.size) {
    if (s.complete != nullptr) s.complete(nullptr, 0, b.data, b.size, b.used);
    b = ThreadBuffer();
  }
  if (b.data == nullptr) {
    uint8_t* data = nullptr;
    size_t bytes = 0, max_records = 0;
    if (s.request != nullptr) s.request(&data, &bytes, &max_records);
    if (data == nullptr || bytes < need) {
      // Declined: CUPTI drops the record and counts it.
      ++s.dropped;
      ++s.declined_records;
      s.buffers.erase(Tid());
      return;
    }
    PrepareRequestedBuffer(data, bytes);
    b.data = data;
    b.size = bytes;
    b.used = 0;
  }
  std::memcpy(b.data + b.used, record, size);
  std::memset(b.data + b.used + size, 0, need - size);
  b.used += need;
}

void Fire(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* data) {
  CUpti_CallbackFunc fn = nullptr;
  void* user = nullptr;
  {
    std::lock_guard<std::mutex> lock(S().mu);
    if (!S().subscribed || (S().callbacks.count({domain, cbid}) == 0 && S().domains.count(domain) == 0)) return;
    fn = S().callback;
    user = S().userdata;
  }
  if (fn != nullptr) fn(user, domain, cbid, data);
}

}  // namespace fake

using fake::S;

extern "C" {

CUptiResult CUPTIAPI cuptiGetVersion(uint32_t* version) {
  if (version == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
  const char* v = getenv("FAKE_CUPTI_VERSION");
  *version = v != nullptr ? static_cast<uint32_t>(strtoul(v, nullptr, 10)) : CUPTI_API_VERSION;
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiGetResultString(CUptiResult result, const char** str) {
  if (str == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
  switch (result) {
    case CUPTI_SUCCESS: *str = "CUPTI_SUCCESS"; break;
    case CUPTI_ERROR_INVALID_PARAMETER: *str = "CUPTI_ERROR_INVALID_PARAMETER"; break;
    case CUPTI_ERROR_NOT_INITIALIZED: *str = "CUPTI_ERROR_NOT_INITIALIZED"; break;
    case CUPTI_ERROR_NOT_SUPPORTED: *str = "CUPTI_ERROR_NOT_SUPPORTED"; break;
    case CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED: *str = "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED"; break;
    case CUPTI_ERROR_INSUFFICIENT_PRIVILEGES: *str = "CUPTI_ERROR_INSUFFICIENT_PRIVILEGES"; break;
    case CUPTI_ERROR_UNKNOWN: *str = "CUPTI_ERROR_UNKNOWN"; break;
    case CUPTI_ERROR_HARDWARE_BUSY: *str = "CUPTI_ERROR_HARDWARE_BUSY"; break;
    case CUPTI_ERROR_INVALID_OPERATION: *str = "CUPTI_ERROR_INVALID_OPERATION"; break;
    case CUPTI_ERROR_INVALID_DEVICE: *str = "CUPTI_ERROR_INVALID_DEVICE"; break;
    case CUPTI_ERROR_INVALID_CHIP_NAME: *str = "CUPTI_ERROR_INVALID_CHIP_NAME"; break;
    default: return CUPTI_ERROR_INVALID_PARAMETER;
  }
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiSubscribe_v2(CUpti_SubscriberHandle* subscriber, CUpti_CallbackFunc callback, void* userdata,
                                       CUpti_SubscriberParams* params) {
  fake::Count("cuptiSubscribe");
  if (!fake::CheckProcess("cuptiSubscribe")) return CUPTI_ERROR_UNKNOWN;
  if (subscriber == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
  fake::Log(std::string("subscribe ") + (params != nullptr && params->subscriberName ? params->subscriberName : ""));
  if (const char* r = getenv("FAKE_CUPTI_SUBSCRIBE_RESULT"); r != nullptr && atoi(r) != 0) {
    CUptiResult result = static_cast<CUptiResult>(atoi(r));
    const char* holder = getenv("FAKE_CUPTI_HOLDER");
    if (result == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED && holder != nullptr && params != nullptr &&
        params->oldSubscriberName != nullptr && params->oldSubscriberSize > 0) {
      snprintf(params->oldSubscriberName, params->oldSubscriberSize, "%s", holder);
    }
    return result;
  }
  std::lock_guard<std::mutex> lock(S().mu);
  if (S().subscribed) return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
  S().subscribed = true;
  S().pid = ::getpid();
  S().callback = callback;
  S().userdata = userdata;
  *subscriber = reinterpret_cast<CUpti_SubscriberHandle>(&S());
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiSubscribe(CUpti_SubscriberHandle* subscriber, CUpti_CallbackFunc callback, void* userdata) {
  return cuptiSubscribe_v2(subscriber, callback, userdata, nullptr);
}

CUptiResult CUPTIAPI cuptiUnsubscribe(CUpti_SubscriberHandle) {
  fake::Count("cuptiUnsubscribe");
  if (!fake::CheckProcess("cuptiUnsubscribe")) return CUPTI_ERROR_UNKNOWN;
  std::lock_guard<std::mutex> lock(S().mu);
  S().subscribed = false;
  S().callbacks.clear();
  S().domains.clear();
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiEnableCallback(uint32_t enable, CUpti_SubscriberHandle, CUpti_CallbackDomain domain,
                                         CUpti_CallbackId cbid) {
  fake::Count("cuptiEnableCallback");
  if (!fake::CheckProcess("cuptiEnableCallback")) return CUPTI_ERROR_UNKNOWN;
  std::lock_guard<std::mutex> lock(S().mu);
  if (!S().subscribed) return CUPTI_ERROR_INVALID_PARAMETER;
  if (enable) {
    S().callbacks.insert({domain, cbid});
  } else {
    S().callbacks.erase({domain, cbid});
  }
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiEnableDomain(uint32_t enable, CUpti_SubscriberHandle, CUpti_CallbackDomain domain) {
  fake::Count("cuptiEnableDomain");
  if (!fake::CheckProcess("cuptiEnableDomain")) return CUPTI_ERROR_UNKNOWN;
  std::lock_guard<std::mutex> lock(S().mu);
  if (!S().subscribed) return CUPTI_ERROR_INVALID_PARAMETER;
  if (enable) {
    S().domains.insert(domain);
  } else {
    S().domains.erase(domain);
  }
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiGetCallbackName(CUpti_CallbackDomain domain, uint32_t cbid, const char** name) {
  if (name == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
  for (const auto& n : fake::kCallbackNames) {
    if (n.domain == domain && n.cbid == cbid) {
      *name = n.name;
      return CUPTI_SUCCESS;
    }
  }
  return CUPTI_ERROR_INVALID_PARAMETER;
}

// The activity API is process-wide, outside the one-subscriber rule (issue 29): CUPTI keeps ONE pair
// of buffer callbacks (cupti_activity.h 7649-7668: the function "registers two callback functions",
// no subscriber handle), so a second client in the process (kineto) registering replaces gtrace's:
// last caller wins, and every buffer CUPTI completes afterwards, the ones gtrace lent included, goes
// to the new pair. Likewise one timestamp callback (8136-8150: changing it mid-session re-times
// later records) and one set of enabled kinds: cuptiActivityDisable (7464-7477, no subscriber
// argument) switches a kind off for every client. The fake models exactly that with S().request/
// complete/timestamp/kinds.
CUptiResult CUPTIAPI cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc request,
                                                    CUpti_BuffersCallbackCompleteFunc complete) {
  fake::Count("cuptiActivityRegisterCallbacks");
  if (!fake::CheckProcess("cuptiActivityRegisterCallbacks")) return CUPTI_ERROR_UNKNOWN;
  if (request == nullptr || complete == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
  std::lock_guard<std::mutex> lock(S().mu);
  S().request = request;
  S().complete = complete;
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityEnable(CUpti_ActivityKind kind) {
  fake::Count("cuptiActivityEnable");
  if (!fake::CheckProcess("cuptiActivityEnable")) return CUPTI_ERROR_UNKNOWN;
  if (kind == CUPTI_ACTIVITY_KIND_KERNEL) fake::Log("VIOLATION serialising KERNEL kind enabled");
  fake::Log("enable " + std::to_string(static_cast<int>(kind)));
  std::lock_guard<std::mutex> lock(S().mu);
  // The real CUPTI 13.0 (H200, driver 580, 2026-11-26) crashed the application at the next graph
  // launch when GRAPH_TRACE was enabled after a graph had been instantiated: flagged here.
  if (kind == CUPTI_ACTIVITY_KIND_GRAPH_TRACE && S().graph_execs > 0) {
    std::fprintf(stderr, "fake-cupti: VIOLATION GRAPH_TRACE enabled after %u graph(s) were instantiated\n",
                 S().graph_execs);
    fake::Log("VIOLATION GRAPH_TRACE enabled after a graph was instantiated");
  }
  S().kinds.insert(kind);
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityDisable(CUpti_ActivityKind kind) {
  fake::Count("cuptiActivityDisable");
  if (!fake::CheckProcess("cuptiActivityDisable")) return CUPTI_ERROR_UNKNOWN;
  fake::Log("disable " + std::to_string(static_cast<int>(kind)));
  std::lock_guard<std::mutex> lock(S().mu);
  S().kinds.erase(kind);
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityFlushAll(uint32_t flag) {
  if (!fake::CheckProcess("cuptiActivityFlushAll")) {
    // The real CUPTI hangs here (its worker thread does not exist in the child).
    ::_exit(86);
  }
  fake::Count((flag & CUPTI_ACTIVITY_FLAG_FLUSH_FORCED) ? "cuptiActivityFlushAll:forced" : "cuptiActivityFlushAll");
  std::vector<std::vector<uint8_t>> running;
  if (flag & CUPTI_ACTIVITY_FLAG_FLUSH_FORCED) {
    std::lock_guard<std::mutex> lock(S().mu);
    running.swap(S().running);
  }
  for (const auto& r : running) fake::Append(r.data(), r.size());
  std::lock_guard<std::mutex> lock(S().mu);
  fake::CompleteAllLocked();
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityGetNextRecord(uint8_t* buffer, size_t valid, CUpti_Activity** record) {
  if (buffer == nullptr || record == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
  size_t offset = 0;
  if (*record != nullptr) {
    uint8_t* prev = reinterpret_cast<uint8_t*>(*record);
    size_t size = fake::RecordSize((*record)->kind);
    if (size == 0) return CUPTI_ERROR_INVALID_KIND;
    offset = static_cast<size_t>(prev - buffer) + fake::Aligned(size);
  }
  if (offset + sizeof(CUpti_Activity) > valid) return CUPTI_ERROR_MAX_LIMIT_REACHED;
  auto* next = reinterpret_cast<CUpti_Activity*>(buffer + offset);
  size_t size = fake::RecordSize(next->kind);
  if (size == 0 || offset + size > valid) return CUPTI_ERROR_MAX_LIMIT_REACHED;
  *record = next;
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityGetNumDroppedRecords(CUcontext, uint32_t, size_t* dropped) {
  if (!fake::CheckProcess("cuptiActivityGetNumDroppedRecords")) return CUPTI_ERROR_UNKNOWN;
  if (dropped == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
  std::lock_guard<std::mutex> lock(S().mu);
  *dropped = S().dropped;
  S().dropped = 0;  // reset on read, as CUPTI does
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiSetThreadIdType(CUpti_ActivityThreadIdType type) {
  fake::Count("cuptiSetThreadIdType");
  if (!fake::CheckProcess("cuptiSetThreadIdType")) return CUPTI_ERROR_UNKNOWN;
  std::lock_guard<std::mutex> lock(S().mu);
  S().thread_id_type = type;
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiGetTimestamp(uint64_t* timestamp) {
  if (timestamp == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
  *timestamp = fake::Now();
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityRegisterTimestampCallback(CUpti_TimestampCallbackFunc func) {
  fake::Count("cuptiActivityRegisterTimestampCallback");
  if (func == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
  if (const char* v = getenv("FAKE_CUPTI_NO_TIMESTAMP_CALLBACK"); v != nullptr && *v == '1') {
    return CUPTI_ERROR_NOT_SUPPORTED;
  }
  S().timestamp = func;
  fake::CalibrateSpan(func);
  return CUPTI_SUCCESS;
}

// The two buffer attributes the fake models (see PrepareRequestedBuffer); others are accepted and ignored.
// cupti_activity.h 7125-7126: ZEROED_OUT_ACTIVITY_BUFFER's "value is a uint8_t"; 7201-7211:
// PER_THREAD_ACTIVITY_BUFFER is a uint8_t, "default value is 1", set before cuptiActivityRegisterCallbacks.
CUptiResult CUPTIAPI cuptiActivitySetAttribute(CUpti_ActivityAttribute attr, size_t* size, void* value) {
  fake::Count("cuptiActivitySetAttribute");
  if (size == nullptr || value == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
  std::lock_guard<std::mutex> lock(S().mu);
  if (attr == CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER || attr == CUPTI_ACTIVITY_ATTR_PER_THREAD_ACTIVITY_BUFFER) {
    if (*size != sizeof(uint8_t)) return CUPTI_ERROR_INVALID_PARAMETER;
    uint8_t v = *static_cast<uint8_t*>(value);
    (attr == CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER ? S().zeroed_out_buffers : S().per_thread_buffers) = v;
  }
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiGetGraphExecId(CUgraphExec exec, uint32_t* id) {
  if (exec == nullptr || id == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
  *id = *reinterpret_cast<const uint32_t*>(exec);
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiGetGraphId(CUgraph graph, uint32_t* id) {
  if (graph == nullptr || id == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
  *id = *reinterpret_cast<const uint32_t*>(graph);
  return CUPTI_SUCCESS;
}

}  // extern "C"
