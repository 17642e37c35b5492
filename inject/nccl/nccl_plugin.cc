// The NCCL profiler plugin: the exported objects ncclProfiler_v6 (NCCL 2.29+), ncclProfiler_v5
// (2.28) and ncclProfiler_v4 (2.27), and the functions behind them. NCCL finds them through
// NCCL_PROFILER_PLUGIN (set to this library by the preload constructor, inject/entry.cc) and probes
// the newest version first. docs/nccl.md describes the events and how they are exported.
//
// Threads (NCCL's):
//   init / finalize       the thread creating / destroying a communicator (slow path; may allocate);
//   startEvent, stopEvent, recordEventState
//                         application threads (API, group and plan events), the CUDA host-callback
//                         thread (plan events when NCCL enqueues through the host stream) and the
//                         proxy progress thread (kernel channels, proxy ops/steps/ctrl), concurrently.
// Hot path (house style): first a relaxed IsEnabled(kSourceNccl) load, then only allocation-free
// work: a slot from the bounded pool (nullptr = not tracked; NCCL then ignores the event and the
// drop is counted), one clock read and one fixed-size record into the calling thread's ring. No
// locks, malloc, syscalls, logging or std::string. Every entry point is noexcept and returns
// ncclSuccess except `init`, which also succeeds: it switches the plugin off (event mask 0) when
// the session cannot start.
//
// Raw-capture mode (GTRACE_RAW_CAPTURE_DIR, docs/capture.md): the exported wrappers at the end of
// this file first read rawcap::NcclCaptureOn() (one relaxed load; off, they then call the functions
// above exactly as before). On, they read the clock once, pass that time in (`now_ns`) and record
// the call into the capture's lock-free log (inject/rawcap/nccl_capture.h).
//
// Handles and pointers NCCL gives back are checked before use: a handle or parentObj is read only
// when it is one of our pool slots (EventPools::Owns); the context is an index, never dereferenced;
// and for a proxy op the descriptor's pid is compared with ours before its context or parentObj is
// touched (PXN: a proxy op of another process carries that process's pointers).
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <atomic>
#include <string>

#include "collector/process_info.h"
#include "collector/schema_fields.h"
#include "collector/session.h"
#include "inject/nccl/nccl_abi.h"
#include "inject/nccl/nccl_config.h"
#include "inject/nccl/nccl_plugin.h"
#include "inject/nccl/nccl_record.h"
#include "inject/nccl/nccl_registry.h"
#include "inject/rawcap/nccl_capture.h"

namespace gt::nccl {
namespace {

using abi::Result;

constexpr uint32_t kWideTypes = abi::kColl | abi::kP2p | abi::kCollApi | abi::kP2pApi | abi::kCeColl;
constexpr uint32_t kV6OnlyTypes = abi::kCeColl | abi::kCeSync | abi::kCeBatch;
constexpr uint32_t kV4Types = abi::kGroup | abi::kColl | abi::kP2p | abi::kProxyOp | abi::kProxyStep |
                              abi::kProxyCtrl | abi::kKernelCh | abi::kNetPlugin;

// Set once by the first init that configures the plugin (under g_init_mutex), then read-only.
std::atomic<uint32_t> g_tracked{0};     // event type bits we record
std::atomic<EventPools*> g_pools{nullptr};
std::atomic<int32_t> g_pid{0};          // ours, compared with proxyOp.pid (refreshed in a forked child)
pthread_mutex_t g_init_mutex = PTHREAD_MUTEX_INITIALIZER;
bool g_configured = false;  // guarded by g_init_mutex
bool g_off = false;         // guarded by g_init_mutex: pools could not be created

void RefreshPidInChild() { g_pid.store(static_cast<int32_t>(getpid()), std::memory_order_relaxed); }

// What a descriptor of any version says, in the shape of our records.
struct Pending {
  uint32_t bit = 0;
  const void* parent_obj = nullptr;
  const void* group_obj = nullptr;  // COLL/P2P: the GROUP event
  int32_t proxy_pid = 0;            // PROXY_OP
  SmallStart small{};
  WideStart wide{};
};

uint16_t ContextIndex(const void* context) {
  auto v = reinterpret_cast<uintptr_t>(context);
  return CommIndexValid(static_cast<uint32_t>(v <= kMaxComms ? v : 0)) ? static_cast<uint16_t>(v) : 0;
}

// Common part of startEvent for every version: resolve parent and communicator, take a slot,
// write the start record. `p` is filled from the descriptor by the version's wrapper.
Result Start(void* context, void** handle, Pending& p, uint64_t now_ns) {
  EventPools* pools = g_pools.load(std::memory_order_acquire);
  if (pools == nullptr || !(p.bit & g_tracked.load(std::memory_order_relaxed))) return abi::kSuccess;
  uint32_t type_index = static_cast<uint32_t>(__builtin_ctz(p.bit));
  uint32_t flags = 0;
  uint16_t comm = 0;
  uint64_t parent_id = 0;
  uint64_t group_id = 0;
  if (p.bit == abi::kProxyOp && p.proxy_pid != g_pid.load(std::memory_order_relaxed)) {
    flags |= kSlotForeign;  // PXN: context and parentObj belong to another process; touch neither
  } else {
    comm = ContextIndex(context);
    if (p.parent_obj != nullptr && pools->Owns(p.parent_obj)) {
      const auto* parent = static_cast<const EventSlot*>(p.parent_obj);
      parent_id = parent->id.load(std::memory_order_relaxed);
      if (parent->flags() & kSlotForeign) {
        flags |= kSlotForeign;  // a step of another process's proxy op: its context is not ours either
        comm = 0;
      } else if (parent->comm_index() != 0) {
        comm = parent->comm_index();
      }
    }
    if (p.group_obj != nullptr && pools->Owns(p.group_obj)) {
      group_id = static_cast<const EventSlot*>(p.group_obj)->id.load(std::memory_order_relaxed);
    }
    if (comm == 0 && !(flags & kSlotForeign)) return abi::kSuccess;  // a communicator we do not trace
  }
  EventSlot* slot = pools->Acquire(type_index, comm, flags);
  if (slot == nullptr) return abi::kSuccess;
  uint64_t id = slot->id.load(std::memory_order_relaxed);
  bool wide = (p.bit & kWideTypes) != 0;
  StartPrefix& prefix = wide ? p.wide.p : p.small.p;
  prefix.h.type = kRecordNccl;
  prefix.h.aux16 = static_cast<uint16_t>(kKindStart | (type_index << 8));
  prefix.h.aux32 = comm;
  prefix.id = id;
  prefix.parent_id = parent_id;
  size_t bytes = wide ? sizeof(WideStart) : sizeof(SmallStart);
  RecordSpan span;
  if (!BeginRecord(bytes, &span)) {
    EventPools::Release(slot);  // the ring drop is counted; NCCL will not track this event
    return abi::kSuccess;
  }
  prefix.h.ext_slots = static_cast<uint8_t>(span.n_slots - 1);
  prefix.h.ts_ns = now_ns != 0 ? now_ns : StreamNow();
  if (wide) {
    p.wide.group_id = group_id;
    RecordCopy(span, 0, &p.wide, sizeof(WideStart));
  } else {
    RecordCopy(span, 0, &p.small, sizeof(SmallStart));
  }
  CommitRecord(span);
  *handle = slot;
  return abi::kSuccess;
}

// Fills `p` from a v5/v6 descriptor. False for a type this version cannot send.
bool FromV6Layout(const abi::EventDescrV6* d, uint32_t version, Pending* p) {
  uint64_t type = d->type;
  if (type == 0 || (type & (type - 1)) != 0 || type >= (uint64_t{1} << abi::kEventTypeCount)) return false;
  p->bit = static_cast<uint32_t>(type);
  if (version < 6 && (p->bit & kV6OnlyTypes)) return false;
  p->parent_obj = d->parent_obj;
  p->small.p.rank = p->wide.p.rank = d->rank;
  SmallStart& s = p->small;
  WideStart& w = p->wide;
  switch (p->bit) {
    case abi::kColl:
      w.seq_number = d->coll.seq_number;
      w.func = d->coll.func;
      w.count = d->coll.count;
      w.root = d->coll.root;
      w.datatype = d->coll.datatype;
      w.n_channels = d->coll.n_channels;
      w.n_warps = d->coll.n_warps;
      w.algo = d->coll.algo;
      w.proto = d->coll.proto;
      p->group_obj = d->coll.parent_group;
      break;
    case abi::kP2p:
      w.func = d->p2p.func;
      w.datatype = d->p2p.datatype;
      w.count = d->p2p.count;
      w.root = d->p2p.peer;
      w.n_channels = d->p2p.n_channels;
      p->group_obj = d->p2p.parent_group;
      break;
    case abi::kCollApi:
      w.func = d->coll_api.func;
      w.count = d->coll_api.count;
      w.datatype = d->coll_api.datatype;
      w.root = d->coll_api.root;
      w.stream = reinterpret_cast<uintptr_t>(d->coll_api.stream);
      if (d->coll_api.graph_captured) w.p.flags |= kRecGraphCaptured;
      break;
    case abi::kP2pApi:
      w.func = d->p2p_api.func;
      w.count = d->p2p_api.count;
      w.datatype = d->p2p_api.datatype;
      w.stream = reinterpret_cast<uintptr_t>(d->p2p_api.stream);
      if (d->p2p_api.graph_captured) w.p.flags |= kRecGraphCaptured;
      break;
    case abi::kCeColl:
      w.seq_number = d->ce_coll.seq_number;
      w.func = d->ce_coll.func;
      w.count = d->ce_coll.count;
      w.root = d->ce_coll.root;
      w.datatype = d->ce_coll.datatype;
      w.proto = d->ce_coll.sync_strategy;
      if (d->ce_coll.intra_batch_sync) w.p.flags |= kRecIntraBatchSync;
      w.batch_size = d->ce_coll.batch_size;
      w.num_batches = d->ce_coll.num_batches;
      w.ce_seq_number = d->ce_coll.ce_seq_number;
      w.stream = reinterpret_cast<uintptr_t>(d->ce_coll.stream);
      break;
    case abi::kProxyOp:
      p->proxy_pid = d->proxy_op.pid;  // compared before anything else of the event is used
      s.i0 = d->proxy_op.peer;
      s.i1 = d->proxy_op.n_steps;
      s.i2 = d->proxy_op.chunk_size;
      s.u32 = static_cast<uint32_t>(d->proxy_op.pid);
      s.u64 = d->proxy_op.channel_id;
      if (d->proxy_op.is_send) s.p.flags |= kRecIsSend;
      break;
    case abi::kProxyStep:
      s.i0 = d->proxy_step.step;
      break;
    case abi::kKernelCh:
      s.u64 = d->kernel_ch.ptimer;
      s.u32 = d->kernel_ch.channel_id;
      break;
    case abi::kNetPlugin:
      s.u64 = static_cast<uint64_t>(d->net_plugin.id);
      break;
    case abi::kGroupApi:
      s.i0 = d->group_api.group_depth;
      if (d->group_api.graph_captured) s.p.flags |= kRecGraphCaptured;
      break;
    case abi::kKernelLaunch:
      s.u64 = reinterpret_cast<uintptr_t>(d->kernel_launch.stream);
      break;
    case abi::kCeSync:
      s.i0 = d->ce_sync.n_ranks;
      if (d->ce_sync.is_complete) s.p.flags |= kRecSyncComplete;
      break;
    case abi::kCeBatch:
      s.u64 = d->ce_batch.total_bytes;
      s.i0 = d->ce_batch.num_ops;
      if (d->ce_batch.use_intra_sync) s.p.flags |= kRecIntraBatchSync;
      break;
    default:  // GROUP, PROXY_CTRL: the type says it all
      break;
  }
  return true;
}

// Fills `p` from a v4 descriptor (NCCL 2.27): no API events; a Coll/P2p's parent is its Group.
bool FromV4(const abi::EventDescrV4* d, Pending* p) {
  uint32_t type = d->type;
  if (type == 0 || (type & (type - 1)) != 0 || !(type & kV4Types)) return false;
  p->bit = type;
  p->parent_obj = d->parent_obj;
  p->small.p.rank = p->wide.p.rank = d->rank;
  SmallStart& s = p->small;
  WideStart& w = p->wide;
  switch (type) {
    case abi::kColl:
      w.seq_number = d->coll.seq_number;
      w.func = d->coll.func;
      w.count = d->coll.count;
      w.root = d->coll.root;
      w.datatype = d->coll.datatype;
      w.n_channels = d->coll.n_channels;
      w.n_warps = d->coll.n_warps;
      w.algo = d->coll.algo;
      w.proto = d->coll.proto;
      p->group_obj = d->parent_obj;
      break;
    case abi::kP2p:
      w.func = d->p2p.func;
      w.datatype = d->p2p.datatype;
      w.count = d->p2p.count;
      w.root = d->p2p.peer;
      w.n_channels = d->p2p.n_channels;
      p->group_obj = d->parent_obj;
      break;
    case abi::kProxyOp:
      p->proxy_pid = d->proxy_op.pid;
      s.i0 = d->proxy_op.peer;
      s.i1 = d->proxy_op.n_steps;
      s.i2 = d->proxy_op.chunk_size;
      s.u32 = static_cast<uint32_t>(d->proxy_op.pid);
      s.u64 = d->proxy_op.channel_id;
      if (d->proxy_op.is_send) s.p.flags |= kRecIsSend;
      break;
    case abi::kProxyStep:
      s.i0 = d->proxy_step.step;
      break;
    case abi::kKernelCh:
      s.u64 = d->kernel_ch.ptimer;
      s.u32 = d->kernel_ch.channel_id;
      break;
    case abi::kNetPlugin:
      s.u64 = static_cast<uint64_t>(d->net_plugin.id);
      break;
    default:
      break;
  }
  return true;
}

EventSlot* OwnedSlot(void* handle) {
  EventPools* pools = g_pools.load(std::memory_order_acquire);
  if (handle == nullptr || pools == nullptr || !pools->Owns(handle)) return nullptr;
  return static_cast<EventSlot*>(handle);
}

// Slow path of the first init: the event mask and the pools. Called with g_init_mutex held.
void ConfigureOnce() {
  if (g_configured) return;
  g_configured = true;
  uint32_t mask = DefaultTraceMask();
  std::string error;
  if (const char* v = getenv(kTraceVariable); v != nullptr && !ParseNcclTrace(v, &mask, &error)) {
    ReportDiagnostic(field::enums::kSeverityWarning, "nccl",
                     std::string(kTraceVariable) + ": " + error + "; using the default events");
    mask = DefaultTraceMask();
  }
  uint32_t pool_events = kDefaultPoolEvents;
  if (const char* v = getenv(kPoolVariable); v != nullptr && !ParsePoolEvents(v, &pool_events, &error)) {
    ReportDiagnostic(field::enums::kSeverityWarning, "nccl", error + "; using " + std::to_string(kDefaultPoolEvents));
    pool_events = kDefaultPoolEvents;
  }
  EventPools& pools = Pools();
  if (!pools.Create(mask, pool_events)) {
    ReportDiagnostic(field::enums::kSeverityError, "nccl",
                     "cannot allocate the NCCL event pools; NCCL collectives are not traced");
    g_off = true;
    return;
  }
  g_pid.store(static_cast<int32_t>(getpid()), std::memory_order_relaxed);
  pthread_atfork(nullptr, nullptr, RefreshPidInChild);
  g_tracked.store(mask, std::memory_order_relaxed);
  g_pools.store(&pools, std::memory_order_release);
  PublishPools(&pools);
}

}  // namespace

void RegisterWithCollector() {
  RegisterRecordDecoder(kRecordNccl, &DecodeRecord);
  RegisterEmitter(&EmitNcclRegistry);
}

Result Init(uint32_t version, void** context, uint64_t comm_hash, int* activation_mask, const char* comm_name,
            int n_nodes, int n_ranks, int rank, abi::Logger logfn, uint64_t* init_ts_ns) noexcept {
  if (context != nullptr) *context = nullptr;
  try {
    RegisterWithCollector();
    bool on = EnsureSession(kSourceNccl);  // false: disabled, not configured (-t without nccl) or failed
    uint32_t mask = 0;
    uint32_t index = 0;
    if (on) {
      pthread_mutex_lock(&g_init_mutex);
      ConfigureOnce();
      rawcap::NcclCapture::StartFromEnv();  // GTRACE_RAW_CAPTURE_DIR: once, before the first call is recorded
      bool off = g_off;
      pthread_mutex_unlock(&g_init_mutex);
      mask = off ? 0 : g_tracked.load(std::memory_order_relaxed);
    }
    if (mask != 0) {
      CommInfo info;
      info.hash = comm_hash;
      if (comm_name != nullptr) {
        size_t n = strnlen(comm_name, kMaxCommNameBytes + 1);
        info.name_truncated = n > kMaxCommNameBytes;
        if (n > kMaxCommNameBytes) n = kMaxCommNameBytes;
        memcpy(info.name, comm_name, n);
        info.name[n] = '\0';
      }
      info.n_nodes = n_nodes;
      info.n_ranks = n_ranks;
      info.rank = rank;
      info.plugin_version = version;
      info.init_ts_ns = StreamNow();
      if (init_ts_ns != nullptr) *init_ts_ns = info.init_ts_ns;
      info.init_tid = CurrentTid();
      info.activation_mask = mask;
      index = RegisterComm(info);
      if (index == 0) {
        ReportDiagnostic(field::enums::kSeverityWarning, "nccl",
                         "more than " + std::to_string(kMaxComms) + " NCCL communicators; communicator " +
                             std::to_string(comm_hash) + " is not traced");
      }
    }
    // NCCL keeps one event mask for the process; every init sets it to the same value.
    if (activation_mask != nullptr) __atomic_store_n(activation_mask, static_cast<int>(mask), __ATOMIC_RELAXED);
    if (index != 0 && context != nullptr) *context = reinterpret_cast<void*>(static_cast<uintptr_t>(index));
    if (index != 0 && logfn != nullptr) {
      logfn(abi::kLogInfo, abi::kLogSubsysInit, __FILE__, __LINE__,
            "gtrace: NCCL profiler plugin v%u: communicator %lx rank %d/%d, event mask 0x%x", version,
            static_cast<unsigned long>(comm_hash), rank, n_ranks, mask);
    }
  } catch (...) {
    if (activation_mask != nullptr) __atomic_store_n(activation_mask, 0, __ATOMIC_RELAXED);
    PrintLine("NCCL plugin init failed (out of memory?); NCCL collectives are not traced");
  }
  return abi::kSuccess;
}

Result StartEventV6(uint32_t version, void* context, void** handle, const abi::EventDescrV6* descr,
                    uint64_t now_ns) noexcept {
  if (!IsEnabled(kSourceNccl)) {
    if (handle != nullptr) *handle = nullptr;
    return abi::kSuccess;
  }
  if (handle == nullptr) return abi::kSuccess;
  *handle = nullptr;
  // Types we do not record (NCCL starts the ancestors of what the mask asks for) leave here.
  if (descr == nullptr || (descr->type & g_tracked.load(std::memory_order_relaxed)) == 0) return abi::kSuccess;
  Pending p;
  if (!FromV6Layout(descr, version, &p)) return abi::kSuccess;
  return Start(context, handle, p, now_ns);
}

Result StartEventV4(void* context, void** handle, const abi::EventDescrV4* descr, uint64_t now_ns) noexcept {
  if (!IsEnabled(kSourceNccl)) {
    if (handle != nullptr) *handle = nullptr;
    return abi::kSuccess;
  }
  if (handle == nullptr) return abi::kSuccess;
  *handle = nullptr;
  if (descr == nullptr || (descr->type & g_tracked.load(std::memory_order_relaxed)) == 0) return abi::kSuccess;
  Pending p;
  if (!FromV4(descr, &p)) return abi::kSuccess;
  return Start(context, handle, p, now_ns);
}

Result StopEvent(void* handle, uint64_t now_ns) noexcept {
  bool on = IsEnabled(kSourceNccl);
  EventSlot* slot = OwnedSlot(handle);
  if (slot == nullptr) return abi::kSuccess;
  if (on) {
    RecordSpan span;
    if (BeginRecord(sizeof(StopRecord), &span)) {
      StopRecord r{};
      r.h.type = kRecordNccl;
      r.h.ext_slots = static_cast<uint8_t>(span.n_slots - 1);
      r.h.aux16 = static_cast<uint16_t>(kKindStop | (slot->type_index() << 8));
      r.h.aux32 = slot->comm_index();
      r.h.ts_ns = now_ns != 0 ? now_ns : StreamNow();
      r.id = slot->id.load(std::memory_order_relaxed);
      uint64_t gpu_stop = slot->stash.load(std::memory_order_relaxed);
      if (gpu_stop != 0) {
        r.gpu_timer_ns = gpu_stop;
        r.flags = kRecHasGpuTimer;
      }
      RecordCopy(span, 0, &r, sizeof(r));
      CommitRecord(span);
    }
  }
  EventPools::Release(slot);
  return abi::kSuccess;
}

Result RecordEventState(void* handle, abi::EventState state, const abi::EventStateArgsV4* args,
                        uint64_t now_ns) noexcept {
  bool on = IsEnabled(kSourceNccl);
  EventSlot* slot = OwnedSlot(handle);
  if (slot == nullptr) return abi::kSuccess;
  uint32_t bit = 1u << slot->type_index();
  if (state == abi::kKernelChStop) {
    // Kept until stopEvent, which NCCL calls right after: one record per channel end.
    if (bit == abi::kKernelCh && args != nullptr) slot->stash.store(args->kernel_ch.ptimer, std::memory_order_relaxed);
    return abi::kSuccess;
  }
  if (!on) return abi::kSuccess;
  RecordSpan span;
  if (!BeginRecord(sizeof(StateRecord), &span)) return abi::kSuccess;
  StateRecord r{};
  r.h.type = kRecordNccl;
  r.h.ext_slots = static_cast<uint8_t>(span.n_slots - 1);
  r.h.aux16 = static_cast<uint16_t>(kKindState | (slot->type_index() << 8));
  r.h.aux32 = slot->comm_index();
  r.h.ts_ns = now_ns != 0 ? now_ns : StreamNow();
  r.id = slot->id.load(std::memory_order_relaxed);
  r.state = static_cast<uint32_t>(state);
  if (args != nullptr) {
    if (bit == abi::kProxyStep) r.value = args->proxy_step.trans_size;
    if (bit == abi::kProxyCtrl) r.value = static_cast<uint64_t>(static_cast<int64_t>(args->proxy_ctrl.appended_proxy_ops));
  }
  RecordCopy(span, 0, &r, sizeof(r));
  CommitRecord(span);
  return abi::kSuccess;
}

Result Finalize(void* context, uint64_t now_ns) noexcept {
  uint16_t comm = ContextIndex(context);
  if (comm == 0 || !IsEnabled(kSourceNccl)) return abi::kSuccess;
  RecordSpan span;
  if (BeginRecord(sizeof(RecordHeader), &span)) {
    RecordHeader h{};
    h.type = kRecordNccl;
    h.ext_slots = static_cast<uint8_t>(span.n_slots - 1);
    h.aux16 = kKindFinalize;
    h.aux32 = comm;
    h.ts_ns = now_ns != 0 ? now_ns : StreamNow();
    RecordCopy(span, 0, &h, sizeof(h));
    CommitRecord(span);
  }
  RequestFlush(/*wait=*/false);
  return abi::kSuccess;
}

uint32_t TrackedMask() { return g_tracked.load(std::memory_order_relaxed); }

}  // namespace gt::nccl

// --- the objects NCCL looks up (inject/gtrace.map exports them) ---------------------------------

namespace {

using gt::nccl::abi::EventDescrV4;
using gt::nccl::abi::EventDescrV5;
using gt::nccl::abi::EventDescrV6;
using gt::nccl::abi::EventState;
using gt::nccl::abi::EventStateArgsV4;
using gt::nccl::abi::Logger;
using gt::nccl::abi::Result;

// Raw-capture mode (inject/rawcap/nccl_capture.h): off, each wrapper costs one relaxed load. On,
// the wrapper reads the clock once, passes that time to the plugin and records the call with it.
using gt::rawcap::NcclCapture;
using gt::rawcap::NcclCaptureOn;

// stopEvent and recordEventState are recorded before the plugin runs (below). Every version shares
// them, so the capture notes the version of the first init (all inits of a process use one version).
std::atomic<uint32_t> g_capture_version{0};
uint32_t CaptureVersion() { return g_capture_version.load(std::memory_order_relaxed); }

Result InitAny(uint32_t version, void** context, uint64_t comm_id, int* mask, const char* name, int n_nodes,
               int n_ranks, int rank, Logger logfn) noexcept {
  uint32_t none = 0;
  g_capture_version.compare_exchange_strong(none, version, std::memory_order_relaxed);
  uint64_t ts = 0;  // the time init recorded (read after the session started)
  Result r = gt::nccl::Init(version, context, comm_id, mask, name, n_nodes, n_ranks, rank, logfn, &ts);
  if (ts == 0) ts = gt::StreamNow();
  if (NcclCaptureOn()) {
    if (NcclCapture* c = NcclCapture::Instance()) {
      c->RecordInit(version, ts, comm_id, context != nullptr ? *context : nullptr, n_nodes, n_ranks, rank,
                    mask != nullptr ? __atomic_load_n(mask, __ATOMIC_RELAXED) : 0, name);
    }
  }
  return r;
}
Result InitV6(void** context, uint64_t comm_id, int* mask, const char* name, int n_nodes, int n_ranks, int rank,
              Logger logfn) noexcept {
  return InitAny(6, context, comm_id, mask, name, n_nodes, n_ranks, rank, logfn);
}
Result InitV5(void** context, uint64_t comm_id, int* mask, const char* name, int n_nodes, int n_ranks, int rank,
              Logger logfn) noexcept {
  return InitAny(5, context, comm_id, mask, name, n_nodes, n_ranks, rank, logfn);
}
Result InitV4(void** context, int* mask, const char* name, uint64_t comm_hash, int n_nodes, int n_ranks, int rank,
              Logger logfn) noexcept {
  return InitAny(4, context, comm_hash, mask, name, n_nodes, n_ranks, rank, logfn);
}
// startEvent is recorded after the plugin returned: the handle is known, and a slot it took was
// recorded released (stopEvent below records first) before this start is recorded.
Result StartV6(void* context, void** handle, EventDescrV6* descr) noexcept {
  if (!NcclCaptureOn()) [[likely]] return gt::nccl::StartEventV6(6, context, handle, descr);
  uint64_t ts = gt::StreamNow();
  Result r = gt::nccl::StartEventV6(6, context, handle, descr, ts);
  if (NcclCapture* c = NcclCapture::Instance()) {
    c->RecordStart(6, ts, context, handle != nullptr ? *handle : nullptr, descr, sizeof(EventDescrV6));
  }
  return r;
}
Result StartV5(void* context, void** handle, EventDescrV5* descr) noexcept {
  // The v5 layout is the v6 layout without the copy-engine members; only v5 members are read.
  if (!NcclCaptureOn()) [[likely]] {
    return gt::nccl::StartEventV6(5, context, handle, reinterpret_cast<const EventDescrV6*>(descr));
  }
  uint64_t ts = gt::StreamNow();
  Result r = gt::nccl::StartEventV6(5, context, handle, reinterpret_cast<const EventDescrV6*>(descr), ts);
  if (NcclCapture* c = NcclCapture::Instance()) {
    c->RecordStart(5, ts, context, handle != nullptr ? *handle : nullptr, descr, sizeof(EventDescrV5));
  }
  return r;
}
Result StartV4(void* context, void** handle, EventDescrV4* descr) noexcept {
  if (!NcclCaptureOn()) [[likely]] return gt::nccl::StartEventV4(context, handle, descr);
  uint64_t ts = gt::StreamNow();
  Result r = gt::nccl::StartEventV4(context, handle, descr, ts);
  if (NcclCapture* c = NcclCapture::Instance()) {
    c->RecordStart(4, ts, context, handle != nullptr ? *handle : nullptr, descr, sizeof(EventDescrV4));
  }
  return r;
}
Result Stop(void* handle) noexcept {
  if (!NcclCaptureOn()) [[likely]] return gt::nccl::StopEvent(handle);
  uint64_t ts = gt::StreamNow();
  if (NcclCapture* c = NcclCapture::Instance()) c->RecordStop(CaptureVersion(), ts, handle);
  return gt::nccl::StopEvent(handle, ts);
}
Result State(void* handle, EventState state, EventStateArgsV4* args) noexcept {
  if (!NcclCaptureOn()) [[likely]] return gt::nccl::RecordEventState(handle, state, args);
  uint64_t ts = gt::StreamNow();
  if (NcclCapture* c = NcclCapture::Instance()) c->RecordState(CaptureVersion(), ts, handle, state, args);
  return gt::nccl::RecordEventState(handle, state, args, ts);
}
Result Fin(void* context) noexcept {
  if (!NcclCaptureOn()) [[likely]] return gt::nccl::Finalize(context);
  uint64_t ts = gt::StreamNow();
  if (NcclCapture* c = NcclCapture::Instance()) c->RecordFinalize(CaptureVersion(), ts, context);
  return gt::nccl::Finalize(context, ts);
}

}  // namespace

extern "C" {
__attribute__((visibility("default"))) gt::nccl::abi::ProfilerV6 ncclProfiler_v6 = {"gtrace", InitV6, StartV6, Stop,
                                                                                      State,    Fin};
__attribute__((visibility("default"))) gt::nccl::abi::ProfilerV5 ncclProfiler_v5 = {"gtrace", InitV5, StartV5, Stop,
                                                                                      State,    Fin};
__attribute__((visibility("default"))) gt::nccl::abi::ProfilerV4 ncclProfiler_v4 = {"gtrace", InitV4, StartV4, Stop,
                                                                                      State,    Fin};
}
