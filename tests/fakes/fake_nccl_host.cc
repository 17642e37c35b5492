#include "tests/fakes/fake_nccl_host.h"

#include <dlfcn.h>
#include <nvtx3/nvToolsExt.h>
#include <nvtx3/nvToolsExtPayload.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include <chrono>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace fake_nccl {
namespace {

// NCCL's event gating masks (src/plugin/profiler.cc): an event starts when any of these bits is on.
constexpr int kGroupApiMask = ncclProfileGroupApi | ncclProfileP2pApi | ncclProfileCollApi | ncclProfileKernelLaunch |
                              ncclProfileGroup | ncclProfileColl | ncclProfileP2p | ncclProfileProxyOp |
                              ncclProfileProxyStep | ncclProfileKernelCh | ncclProfileNetPlugin;
constexpr int kCeMask = ncclProfileCeColl | ncclProfileCeSync | ncclProfileCeBatch;
constexpr int kCollApiMask =
    ncclProfileCollApi | ncclProfileColl | ncclProfileProxyOp | ncclProfileProxyStep | ncclProfileKernelCh | ncclProfileNetPlugin;
constexpr int kP2pApiMask =
    ncclProfileP2pApi | ncclProfileP2p | ncclProfileProxyOp | ncclProfileProxyStep | ncclProfileKernelCh | ncclProfileNetPlugin;
constexpr int kGroupMask = ncclProfileGroup | ncclProfileColl | ncclProfileP2p | ncclProfileProxyOp |
                           ncclProfileProxyStep | ncclProfileKernelCh | ncclProfileNetPlugin;
constexpr int kTaskMask = ncclProfileColl | ncclProfileProxyOp | ncclProfileProxyStep | ncclProfileKernelCh | ncclProfileNetPlugin;
constexpr int kP2pTaskMask = ncclProfileP2p | ncclProfileProxyOp | ncclProfileProxyStep | ncclProfileKernelCh | ncclProfileNetPlugin;

uint64_t RealtimeNs() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

void Logger(ncclDebugLogLevel level, unsigned long flags, const char* file, int line, const char* fmt, ...) {
  if (getenv("FAKE_NCCL_DEBUG") == nullptr) return;
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "fake-nccl INFO ");
  vfprintf(stderr, fmt, ap);
  fprintf(stderr, "\n");
  va_end(ap);
}

bool IsP2p(const Op& op) { return strcmp(op.func, "Send") == 0 || strcmp(op.func, "Recv") == 0; }

template <typename D>
void FillV5Like(D* d, const Fields& f) {
  d->type = f.type;
  d->parentObj = f.parent;
  d->rank = f.rank;
  switch (f.type) {
    case ncclProfileGroupApi:
      d->groupApi.graphCaptured = f.graph_captured;
      d->groupApi.groupDepth = f.group_depth;
      break;
    case ncclProfileCollApi:
      d->collApi.func = f.func;
      d->collApi.count = f.count;
      d->collApi.datatype = f.datatype;
      d->collApi.root = f.root;
      d->collApi.stream = f.stream;
      d->collApi.graphCaptured = f.graph_captured;
      break;
    case ncclProfileP2pApi:
      d->p2pApi.func = f.func;
      d->p2pApi.count = f.count;
      d->p2pApi.datatype = f.datatype;
      d->p2pApi.stream = f.stream;
      d->p2pApi.graphCaptured = f.graph_captured;
      break;
    case ncclProfileKernelLaunch:
      d->kernelLaunch.stream = f.stream;
      break;
    case ncclProfileColl:
      d->coll.seqNumber = f.seq;
      d->coll.func = f.func;
      d->coll.sendBuff = f.send_buff;
      d->coll.recvBuff = f.recv_buff;
      d->coll.count = f.count;
      d->coll.root = f.root;
      d->coll.datatype = f.datatype;
      d->coll.nChannels = f.n_channels;
      d->coll.nWarps = f.n_warps;
      d->coll.algo = f.algo;
      d->coll.proto = f.proto;
      d->coll.parentGroup = f.parent_group;
      break;
    case ncclProfileP2p:
      d->p2p.func = f.func;
      d->p2p.buff = f.recv_buff;
      d->p2p.datatype = f.datatype;
      d->p2p.count = f.count;
      d->p2p.peer = f.peer;
      d->p2p.nChannels = f.n_channels;
      d->p2p.parentGroup = f.parent_group;
      break;
    case ncclProfileProxyOp:
      d->proxyOp.pid = f.pid;
      d->proxyOp.channelId = f.channel;
      d->proxyOp.peer = f.peer;
      d->proxyOp.nSteps = f.n_steps;
      d->proxyOp.chunkSize = f.chunk_size;
      d->proxyOp.isSend = f.is_send;
      break;
    case ncclProfileProxyStep:
      d->proxyStep.step = f.step;
      break;
    case ncclProfileKernelCh:
      d->kernelCh.channelId = f.channel;
      d->kernelCh.pTimer = f.ptimer;
      break;
    default:
      break;
  }
}

void FillCe(ncclProfilerEventDescr_v6_t* d, const Fields& f) {
  switch (f.type) {
    case ncclProfileCeColl:
      d->ceColl.seqNumber = f.seq;
      d->ceColl.func = f.func;
      d->ceColl.sendBuff = f.send_buff;
      d->ceColl.recvBuff = f.recv_buff;
      d->ceColl.count = f.count;
      d->ceColl.root = f.root;
      d->ceColl.datatype = f.datatype;
      d->ceColl.syncStrategy = f.sync_strategy;
      d->ceColl.intraBatchSync = false;
      d->ceColl.batchSize = 0;
      d->ceColl.numBatches = 0;
      d->ceColl.ceSeqNum = f.ce_seq;
      d->ceColl.stream = f.stream;
      break;
    case ncclProfileCeSync:
      d->ceCollSync.isComplete = f.is_complete;
      d->ceCollSync.nRanks = f.n_ranks;
      break;
    case ncclProfileCeBatch:
      d->ceCollBatch.numOps = f.num_ops;
      d->ceCollBatch.totalBytes = f.total_bytes;
      d->ceCollBatch.useIntraSync = false;
      break;
    default:
      break;
  }
}

void FillV4(ncclProfilerEventDescr_v4_t* d, const Fields& f) {
  d->type = static_cast<uint8_t>(f.type);
  d->parentObj = f.parent;
  d->rank = f.rank;
  switch (f.type) {
    case ncclProfileColl:
      d->coll.seqNumber = f.seq;
      d->coll.func = f.func;
      d->coll.sendBuff = f.send_buff;
      d->coll.recvBuff = f.recv_buff;
      d->coll.count = f.count;
      d->coll.root = f.root;
      d->coll.datatype = f.datatype;
      d->coll.nChannels = f.n_channels;
      d->coll.nWarps = f.n_warps;
      d->coll.algo = f.algo;
      d->coll.proto = f.proto;
      break;
    case ncclProfileP2p:
      d->p2p.func = f.func;
      d->p2p.buff = f.recv_buff;
      d->p2p.datatype = f.datatype;
      d->p2p.count = f.count;
      d->p2p.peer = f.peer;
      d->p2p.nChannels = f.n_channels;
      break;
    case ncclProfileProxyOp:
      d->proxyOp.pid = f.pid;
      d->proxyOp.channelId = f.channel;
      d->proxyOp.peer = f.peer;
      d->proxyOp.nSteps = f.n_steps;
      d->proxyOp.chunkSize = f.chunk_size;
      d->proxyOp.isSend = f.is_send;
      break;
    case ncclProfileProxyStep:
      d->proxyStep.step = f.step;
      break;
    case ncclProfileKernelCh:
      d->kernelCh.channelId = f.channel;
      d->kernelCh.pTimer = f.ptimer;
      break;
    default:
      break;
  }
}

// --- NCCL's own NVTX instrumentation (NVTX3_FUNC_WITH_PARAMS in NCCL 2.28) ---------------------

nvtxDomainHandle_t NcclDomain() {
  static nvtxDomainHandle_t d = nvtxDomainCreateA("NCCL");
  return d;
}

constexpr uint64_t kSchemaBase = uint64_t{1} << 24;

struct NvtxApi {
  const char* name;   // __func__ of the NCCL API
  uint64_t sid;       // NVTX_SID_*
  int extra;          // 0: comm,bytes; 1: +root; 2: +redop; 3: +root,+redop; 4: +peer
};

const NvtxApi* FindNvtxApi(const char* func) {
  static const NvtxApi kApis[] = {
      {"ncclAllGather", 4, 0}, {"ncclAllReduce", 5, 2},     {"ncclBroadcast", 6, 1}, {"ncclReduceScatter", 7, 2},
      {"ncclReduce", 8, 3},    {"ncclSend", 9, 4},          {"ncclRecv", 10, 4},     {"ncclAlltoAll", 16, 0},
      {"ncclGather", 17, 1},   {"ncclScatter", 18, 1},
  };
  std::string name = std::string("nccl") + func;
  for (const NvtxApi& a : kApis) {
    if (name == a.name) return &a;
  }
  return nullptr;
}

// Pushes NCCL's range for one API call; the caller pops it.
void NvtxPush(const Op& op, uint64_t comm_hash) {
  const NvtxApi* api = FindNvtxApi(op.func);
  if (api == nullptr) return;
  static std::mutex mu;
  static std::map<uint64_t, nvtxStringHandle_t> names;
  uint64_t schema_id = kSchemaBase + api->sid;
  struct Payload {
    uint64_t comm;
    size_t bytes;
    int32_t a;
    int32_t b;
  } payload{comm_hash, op.count * op.type_size, 0, 0};
  size_t size = 16;
  nvtxStringHandle_t name;
  {
    std::lock_guard<std::mutex> lock(mu);
    auto it = names.find(schema_id);
    if (it == names.end()) {
      // The schema, registered once, as NCCL's payload_schema class does.
      std::vector<nvtxPayloadSchemaEntry_t> entries;
      entries.push_back({0, NVTX_PAYLOAD_ENTRY_TYPE_UINT64, "NCCL communicator ID", nullptr, 0, 0, nullptr, nullptr});
      entries.push_back({0, NVTX_PAYLOAD_ENTRY_TYPE_SIZE, "Message size [bytes]", nullptr, 0, 8, nullptr, nullptr});
      uint64_t redop_type = kSchemaBase + 20;
      if (api->extra == 1 || api->extra == 3) entries.push_back({0, NVTX_PAYLOAD_ENTRY_TYPE_INT, "Root", nullptr, 0, 16, nullptr, nullptr});
      if (api->extra == 2) entries.push_back({0, redop_type, "Reduction operation", nullptr, 0, 16, nullptr, nullptr});
      if (api->extra == 3) entries.push_back({0, redop_type, "Reduction operation", nullptr, 0, 20, nullptr, nullptr});
      if (api->extra == 4) entries.push_back({0, NVTX_PAYLOAD_ENTRY_TYPE_INT, "Peer rank", nullptr, 0, 16, nullptr, nullptr});
      nvtxPayloadSchemaAttr_t attr{};
      attr.fieldMask = NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_TYPE | NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_ENTRIES |
                       NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_NUM_ENTRIES | NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_STATIC_SIZE |
                       NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_SCHEMA_ID;
      attr.type = NVTX_PAYLOAD_SCHEMA_TYPE_STATIC;
      attr.entries = entries.data();
      attr.numEntries = entries.size();
      attr.payloadStaticSize = api->extra == 0 ? 16 : 24;
      attr.schemaId = schema_id;
      nvtxPayloadSchemaRegister(NcclDomain(), &attr);
      it = names.emplace(schema_id, nvtxDomainRegisterStringA(NcclDomain(), api->name)).first;
    }
    name = it->second;
  }
  if (api->extra != 0) size = 24;
  if (api->extra == 1 || api->extra == 3) payload.a = op.root;
  if (api->extra == 2) payload.a = op.red_op;
  if (api->extra == 3) payload.b = op.red_op;
  if (api->extra == 4) payload.a = op.peer;
  nvtxPayloadData_t data[] = {{schema_id, size, &payload}};
  nvtxEventAttributes_t attr{};
  attr.version = NVTX_VERSION;
  attr.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  attr.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
  attr.message.registered = name;
  NVTX_PAYLOAD_EVTATTR_SET_MULTIPLE(attr, data);
  nvtxDomainRangePushEx(NcclDomain(), &attr);
}

void NvtxPop() { nvtxDomainRangePop(NcclDomain()); }

}  // namespace

Host::~Host() {
  for (auto& c : comms_) {
    if (c->proxy.joinable()) {
      {
        std::lock_guard<std::mutex> lock(c->mu);
        c->stop = true;
      }
      c->cv.notify_all();
      c->proxy.join();
    }
  }
}

bool Host::Load(int nccl_code, std::string* error) {
  nccl_code_ = nccl_code;
  pid_ = getpid();
  const char* name = getenv("NCCL_PROFILER_PLUGIN");
  if (name != nullptr && strcasecmp(name, "none") == 0) {
    *error = "NCCL_PROFILER_PLUGIN=none";
    return false;
  }
  if (name != nullptr && *name != '\0' && strncasecmp(name, "STATIC_PLUGIN", strlen(name)) == 0) {
    lib_ = dlopen(nullptr, RTLD_NOW | RTLD_LOCAL);
  } else {
    lib_ = dlopen(name != nullptr ? name : "libnccl-profiler.so", RTLD_NOW | RTLD_LOCAL);
  }
  if (lib_ == nullptr) {
    *error = std::string("no profiler plugin: ") + dlerror();
    return false;
  }
  if (nccl_code >= 22900) v6_ = static_cast<ncclProfiler_v6_t*>(dlsym(lib_, "ncclProfiler_v6"));
  if (v6_ != nullptr) {
    abi_ = 6;
    return true;
  }
  if (nccl_code >= 22800) v5_ = static_cast<ncclProfiler_v5_t*>(dlsym(lib_, "ncclProfiler_v5"));
  if (v5_ != nullptr) {
    abi_ = 5;
    return true;
  }
  v4_ = static_cast<ncclProfiler_v4_t*>(dlsym(lib_, "ncclProfiler_v4"));
  if (v4_ != nullptr) {
    abi_ = 4;
    return true;
  }
  *error = "the plugin has no ncclProfiler_v4/_v5/_v6";
  return false;
}

Comm* Host::InitComm(const char* name, uint64_t hash, int n_nodes, int n_ranks, int rank) {
  auto c = std::make_unique<Comm>();
  c->hash = hash;
  c->rank = rank;
  c->n_ranks = n_ranks;
  c->stream = reinterpret_cast<void*>(0x7f0000001000ull + comms_.size() * 0x100);
  int err = 0;
  // NCCL passes a name it may free after init: give the plugin a copy that we overwrite afterwards.
  std::string transient = name != nullptr ? name : "";
  const char* arg = name != nullptr ? transient.c_str() : nullptr;
  if (abi_ == 6) err = v6_->init(&c->context, hash, &event_mask_, arg, n_nodes, n_ranks, rank, Logger);
  if (abi_ == 5) err = v5_->init(&c->context, hash, &event_mask_, arg, n_nodes, n_ranks, rank, Logger);
  if (abi_ == 4) err = v4_->init(&c->context, &event_mask_, arg, hash, n_nodes, n_ranks, rank, Logger);
  plugin_calls_.fetch_add(1, std::memory_order_relaxed);
  std::fill(transient.begin(), transient.end(), 'X');
  if (err != 0) fprintf(stderr, "fake-nccl: profiler init failed with %d; continuing without profiler\n", err);
  Comm* raw = c.get();
  raw->proxy = std::thread([this, raw] { ProxyMain(raw); });
  comms_.push_back(std::move(c));
  return raw;
}

void Host::FinalizeComm(Comm* comm) {
  Drain(comm);
  {
    std::lock_guard<std::mutex> lock(comm->mu);
    comm->stop = true;
  }
  comm->cv.notify_all();
  if (comm->proxy.joinable()) comm->proxy.join();
  if (comm->context == nullptr) return;  // NCCL finalizes only a comm with a context
  if (abi_ == 6) v6_->finalize(comm->context);
  if (abi_ == 5) v5_->finalize(comm->context);
  if (abi_ == 4) v4_->finalize(comm->context);
  plugin_calls_.fetch_add(1, std::memory_order_relaxed);
}

void* Host::Start(void* context, const Fields& f) {
  void* handle = reinterpret_cast<void*>(0xbadbad);  // NCCL's field may hold a stale value
  if (abi_ == 6) {
    ncclProfilerEventDescr_v6_t d{};
    FillV5Like(&d, f);
    FillCe(&d, f);
    v6_->startEvent(context, &handle, &d);
  } else if (abi_ == 5) {
    ncclProfilerEventDescr_v5_t d{};
    FillV5Like(&d, f);
    v5_->startEvent(context, &handle, &d);
  } else if (abi_ == 4) {
    ncclProfilerEventDescr_v4_t d{};
    FillV4(&d, f);
    v4_->startEvent(context, &handle, &d);
  } else {
    return nullptr;
  }
  plugin_calls_.fetch_add(1, std::memory_order_relaxed);
  if (handle == reinterpret_cast<void*>(0xbadbad)) {
    fprintf(stderr, "fake-nccl: the plugin left *eHandle unset\n");
    abort();
  }
  if (handle == nullptr) null_handles_.fetch_add(1);
  return handle;
}

void Host::Stop(void* handle) {
  if (handle == nullptr) return;
  if (abi_ == 6) v6_->stopEvent(handle);
  if (abi_ == 5) v5_->stopEvent(handle);
  if (abi_ == 4) v4_->stopEvent(handle);
  plugin_calls_.fetch_add(1, std::memory_order_relaxed);
}

void Host::State(void* handle, ncclProfilerEventState_t state, ncclProfilerEventStateArgs_v5_t* args) {
  if (handle == nullptr) return;
  if (abi_ == 6) v6_->recordEventState(handle, state, args);
  if (abi_ == 5) v5_->recordEventState(handle, state, args);
  if (abi_ == 4) v4_->recordEventState(handle, state, args);
  plugin_calls_.fetch_add(1, std::memory_order_relaxed);
}

uint64_t Host::GpuNow() const { return RealtimeNs() + static_cast<uint64_t>(gpu_skew_ns_); }

void Host::Call(Comm* comm, const Op& op) { Group(comm, {op}); }

void Host::Group(Comm* comm, const std::vector<Op>& ops) {
  const bool explicit_group = ops.size() > 1;  // ncclGroupStart(): ncclGroupDepth 1 before the calls
  const bool api = abi_ >= 5;
  void* group_api = nullptr;
  std::vector<void*> api_handles;
  bool group_api_started = false;
  for (const Op& op : ops) {
    if (nvtx_) NvtxPush(op, comm->hash);
    // taskAppend (collTaskAppend / p2pTaskAppend): the group API event once, its state 23, the API event.
    if (api && !group_api_started && On(kGroupApiMask | (abi_ == 6 ? kCeMask : 0))) {
      Fields g;
      g.type = ncclProfileGroupApi;
      g.group_depth = explicit_group ? 2 : 1;
      group_api = Start(comm->context, g);
      group_api_started = true;
      State(group_api, ncclProfilerGroupStartApiStop, nullptr);
    }
    void* h = nullptr;
    if (api) {
      bool p2p = IsP2p(op);
      if (On(p2p ? kP2pApiMask : kCollApiMask | (abi_ == 6 ? kCeMask : 0))) {
        Fields a;
        a.type = p2p ? ncclProfileP2pApi : ncclProfileCollApi;
        a.parent = group_api;
        a.func = op.func;
        a.count = op.count;
        a.datatype = op.datatype;
        a.root = op.root;
        a.stream = comm->stream;
        h = Start(comm->context, a);
        Stop(h);  // ncclProfilerStopCollApiEvent / StopP2pApiEvent at the end of the task append
      }
    }
    api_handles.push_back(h);
    if (nvtx_) NvtxPop();
  }
  // ncclGroupEnd: state 24, then launch and the plan's events.
  State(group_api, ncclProfilerGroupEndApiStart, nullptr);
  Enqueue(comm, group_api, ops, api_handles);
  Stop(group_api);
}

// ncclLaunchKernel (KernelLaunch) then hostStreamPlanTask (Group, Coll/P2p start; proxy ops
// uploaded; Coll/P2p stop = "enqueued"; Group stop), then the GPU runs and the proxy observes it.
void Host::Enqueue(Comm* comm, void* group_api, const std::vector<Op>& ops, const std::vector<void*>& api_handles) {
  if (abi_ >= 5 && On(ncclProfileKernelLaunch)) {
    Fields k;
    k.type = ncclProfileKernelLaunch;
    k.parent = group_api;
    k.stream = comm->stream;
    void* kl = Start(comm->context, k);
    Stop(kl);  // cuLaunchKernel returned
  }
  uint64_t launch_gpu = GpuNow() + 20000;  // the kernel starts 20 us after the launch
  {
    std::lock_guard<std::mutex> lock(comm->mu);
    if (launch_gpu < comm->gpu_busy_until_ns) launch_gpu = comm->gpu_busy_until_ns;
  }
  void* group = nullptr;
  if (On(kGroupMask)) {
    Fields g;
    g.type = ncclProfileGroup;
    group = Start(comm->context, g);
  }
  std::vector<Comm::Item> items;
  uint64_t base = launch_gpu;
  for (size_t i = 0; i < ops.size(); ++i) {
    const Op& op = ops[i];
    Comm::Item item;
    item.op = op;
    item.gpu_base_ns = base;
    base += op.gpu_ns;  // operations of one kernel run one after another
    bool p2p = IsP2p(op);
    Fields t;
    t.type = p2p ? ncclProfileP2p : ncclProfileColl;
    t.parent = abi_ >= 5 ? api_handles[i] : group;
    t.parent_group = group;
    t.rank = comm->rank;
    t.func = op.func;
    t.count = op.count;
    t.datatype = op.datatype;
    if (!p2p && (strcmp(op.func, "AllGather") == 0 || strcmp(op.func, "Broadcast") == 0)) {
      t.count = op.count * op.type_size;  // collTaskAppend: count in bytes, ncclInt8
      t.datatype = "ncclInt8";
    }
    t.root = op.root;
    t.peer = op.peer;
    t.seq = comm->seq[op.func];
    t.send_buff = reinterpret_cast<const void*>(0x7f1000000000ull);
    t.recv_buff = reinterpret_cast<void*>(0x7f2000000000ull);
    t.n_channels = op.n_channels;
    t.n_warps = op.n_warps;
    t.algo = op.algo;
    t.proto = op.proto;
    if (On(p2p ? kP2pTaskMask : kTaskMask)) item.handle = Start(comm->context, t);
    if (!p2p) comm->seq[op.func] += 1;
    items.push_back(item);
  }
  {
    std::lock_guard<std::mutex> lock(comm->mu);
    if (base > comm->gpu_busy_until_ns) comm->gpu_busy_until_ns = base;
    for (const Comm::Item& item : items) {
      comm->queue.push_back(item);
      ++comm->in_flight;
    }
  }
  comm->cv.notify_all();
  for (const Comm::Item& item : items) Stop(item.handle);
  Stop(group);
}

void Host::ProxyMain(Comm* comm) {
  while (true) {
    Comm::Item item;
    {
      std::unique_lock<std::mutex> lock(comm->mu);
      comm->cv.wait(lock, [comm] { return comm->stop || !comm->queue.empty(); });
      if (comm->queue.empty()) return;
      item = comm->queue.front();
      comm->queue.pop_front();
    }
    Observe(comm, item);
    {
      std::lock_guard<std::mutex> lock(comm->mu);
      --comm->in_flight;
    }
    comm->cv.notify_all();
  }
}

// The profiler transport: sees each channel's start and end timestamps after the GPU wrote them.
void Host::Observe(Comm* comm, const Comm::Item& item) {
  const Op& op = item.op;
  auto wait_until_gpu = [this](uint64_t gpu_ns) {
    while (GpuNow() < gpu_ns) {
      uint64_t left = gpu_ns - GpuNow();
      timespec ts{0, static_cast<long>(left < 1000000 ? left : 1000000)};
      nanosleep(&ts, nullptr);
    }
  };
  std::vector<void*> channels(op.n_channels, nullptr);
  std::vector<void*> proxy_ops(op.n_channels, nullptr);
  for (int c = 0; c < op.n_channels; ++c) {
    uint64_t start = item.gpu_base_ns + 100ull * c;
    if (op.proxy_steps > 0 && On(ncclProfileProxyOp | ncclProfileProxyStep | ncclProfileNetPlugin)) {
      Fields p;
      p.type = ncclProfileProxyOp;
      p.parent = item.handle;
      p.rank = comm->rank;
      p.pid = pid_;
      p.channel = static_cast<uint8_t>(c);
      p.peer = (comm->rank + 1) % comm->n_ranks;
      p.n_steps = op.proxy_steps;
      p.chunk_size = 131072;
      p.is_send = 1;
      proxy_ops[c] = Start(comm->context, p);
      State(proxy_ops[c], ncclProfilerProxyOpInProgress_v4, nullptr);
    }
    if (On(ncclProfileKernelCh)) {
      wait_until_gpu(start);
      Fields k;
      k.type = ncclProfileKernelCh;
      k.parent = item.handle;
      k.channel = static_cast<uint8_t>(c);
      k.ptimer = start;
      channels[c] = Start(comm->context, k);
    }
  }
  for (int c = 0; c < op.n_channels; ++c) {
    uint64_t end = item.gpu_base_ns + op.gpu_ns - 100ull * c;
    if (proxy_ops[c] != nullptr && On(ncclProfileProxyStep | ncclProfileNetPlugin)) {
      for (int s = 0; s < op.proxy_steps; ++s) {
        Fields st;
        st.type = ncclProfileProxyStep;
        st.parent = proxy_ops[c];
        st.rank = comm->rank;
        st.step = s;
        void* step = Start(comm->context, st);
        ncclProfilerEventStateArgs_v5_t a{};
        a.proxyStep.transSize = 65536;
        State(step, ncclProfilerProxyStepSendGPUWait, &a);
        State(step, ncclProfilerProxyStepSendWait, &a);
        Stop(step);
      }
    }
    if (channels[c] != nullptr) {
      wait_until_gpu(end);
      ncclProfilerEventStateArgs_v5_t a{};
      a.kernelCh.pTimer = end;
      State(channels[c], ncclProfilerKernelChStop, &a);
      Stop(channels[c]);
    }
    Stop(proxy_ops[c]);
  }
}

void Host::Drain(Comm* comm) {
  std::unique_lock<std::mutex> lock(comm->mu);
  comm->cv.wait(lock, [comm] { return comm->in_flight == 0; });
}

void Host::CeCollective(Comm* comm, const Op& op) {
  if (abi_ < 6) return;
  void* api = nullptr;
  void* group_api = nullptr;
  if (On(kGroupApiMask | kCeMask)) {
    Fields g;
    g.type = ncclProfileGroupApi;
    g.group_depth = 1;
    group_api = Start(comm->context, g);
    State(group_api, ncclProfilerGroupStartApiStop, nullptr);
  }
  if (On(kCollApiMask | kCeMask)) {
    Fields a;
    a.type = ncclProfileCollApi;
    a.parent = group_api;
    a.func = op.func;
    a.count = op.count;
    a.datatype = op.datatype;
    a.stream = comm->stream;
    api = Start(comm->context, a);
    Stop(api);
  }
  State(group_api, ncclProfilerGroupEndApiStart, nullptr);
  if (On(kCeMask)) {
    Fields c;
    c.type = ncclProfileCeColl;
    c.parent = api;
    c.rank = comm->rank;
    c.seq = 7;
    c.func = op.func;
    c.count = op.count;
    c.datatype = op.datatype;
    c.sync_strategy = "MC";
    c.ce_seq = 7;
    c.stream = comm->stream;
    void* ce = Start(comm->context, c);
    if (ce != nullptr && On(ncclProfileCeSync)) {
      Fields s;
      s.type = ncclProfileCeSync;
      s.parent = ce;
      s.rank = comm->rank;
      s.is_complete = true;
      s.n_ranks = comm->n_ranks;
      Stop(Start(comm->context, s));
    }
    if (ce != nullptr && On(ncclProfileCeBatch)) {
      Fields b;
      b.type = ncclProfileCeBatch;
      b.parent = ce;
      b.rank = comm->rank;
      b.num_ops = 3;
      b.total_bytes = op.count * op.type_size;
      Stop(Start(comm->context, b));
    }
    Stop(ce);
  }
  Stop(group_api);
}

void Host::ForeignProxyOp(Comm* comm) {
  if (!On(ncclProfileProxyOp | ncclProfileProxyStep | ncclProfileNetPlugin)) return;
  // sub->profilerContext and sub->taskEventHandle come from the other process: pointers into its
  // address space. Any dereference here would crash (or read garbage).
  void* foreign_context = reinterpret_cast<void*>(0x10);
  Fields p;
  p.type = ncclProfileProxyOp;
  p.parent = reinterpret_cast<void*>(0x20);
  p.rank = comm->rank + 1;
  p.pid = pid_ + 100000;
  p.channel = 3;
  p.peer = comm->rank;
  p.n_steps = 1;
  p.chunk_size = 4096;
  p.is_send = 0;
  void* op = Start(foreign_context, p);
  if (op != nullptr && On(ncclProfileProxyStep | ncclProfileNetPlugin)) {
    Fields s;
    s.type = ncclProfileProxyStep;
    s.parent = op;
    s.rank = comm->rank + 1;
    s.step = 0;
    void* step = Start(foreign_context, s);
    ncclProfilerEventStateArgs_v5_t a{};
    a.proxyStep.transSize = 4096;
    State(step, ncclProfilerProxyStepRecvWait, &a);
    Stop(step);
  }
  Stop(op);
}

void Host::ProxyCtrl(Comm* comm) {
  if (!On(ncclProfileProxyCtrl)) return;
  Fields f;
  f.type = ncclProfileProxyCtrl;
  void* h = Start(comm->context, f);
  State(h, ncclProfilerProxyCtrlAppend, nullptr);
  ncclProfilerEventStateArgs_v5_t a{};
  a.proxyCtrl.appendedProxyOps = 2;
  State(h, ncclProfilerProxyCtrlAppendEnd, &a);
  Stop(h);
}

}  // namespace fake_nccl
