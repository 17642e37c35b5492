// Our declarations of the NCCL profiler plugin ABI, versions 4 (NCCL 2.27), 5 (2.28) and 6 (2.29+).
// Written from the facts of NVIDIA/nccl's headers (v2.28.9-1 src/include/plugin/nccl_profiler.h and
// profiler/profiler_v4.h, profiler_v5.h; v2.29.7-1 profiler/profiler_v6.h): member order, types,
// enum values. The layouts are checked below with static_asserts on every offset we read, and
// tests/nccl/nccl_abi_test.cc compares them with the fake NCCL host's independent declarations.
//
// NCCL owns these structs: the descriptor passed to startEvent lives on NCCL's stack for the
// duration of the call only; strings in it are NCCL's static strings (the comm name passed to init
// is not guaranteed to outlive the call and is copied).
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>

namespace gt::nccl::abi {

// ncclResult_t values we return (an int-sized C enum in NCCL).
enum Result : int {
  kSuccess = 0,
  kSystemError = 2,
  kInternalError = 3,
  kInvalidArgument = 4,
};

// ncclDebugLogLevel and the logger NCCL passes to init (printf-like, NCCL's own lock).
enum LogLevel : int { kLogNone = 0, kLogVersion = 1, kLogWarn = 2, kLogInfo = 3, kLogAbort = 4, kLogTrace = 5 };
inline constexpr unsigned long kLogSubsysInit = 0x1;  // NCCL_INIT
using Logger = void (*)(LogLevel level, unsigned long flags, const char* file, int line, const char* fmt, ...);

// Event type bits (ncclProfile*). The descriptor's `type` holds exactly one.
enum EventTypeBit : uint32_t {
  kGroup = 1u << 0,
  kColl = 1u << 1,
  kP2p = 1u << 2,
  kProxyOp = 1u << 3,
  kProxyStep = 1u << 4,
  kProxyCtrl = 1u << 5,
  kKernelCh = 1u << 6,
  kNetPlugin = 1u << 7,
  kGroupApi = 1u << 8,   // v5+
  kCollApi = 1u << 9,    // v5+
  kP2pApi = 1u << 10,    // v5+
  kKernelLaunch = 1u << 11,  // v5+
  kCeColl = 1u << 12,    // v6
  kCeSync = 1u << 13,    // v6
  kCeBatch = 1u << 14,   // v6
};
inline constexpr uint32_t kEventTypeCount = 15;  // bits 0..14

// ncclProfilerEventState_t (one enum shared by every version).
enum EventState : int {
  kProxyOpSendPosted = 0,  // 0-7: proxy-op states deprecated since v4
  kProxyOpRecvDone = 7,
  kProxyStepSendGpuWait = 8,
  kProxyStepSendWait = 9,
  kProxyStepRecvWait = 10,
  kProxyStepRecvFlushWait = 11,
  kProxyStepRecvGpuWait = 12,
  kProxyCtrlIdle = 13,
  kProxyCtrlActive = 14,
  kProxyCtrlSleep = 15,
  kProxyCtrlWakeup = 16,
  kProxyCtrlAppend = 17,
  kProxyCtrlAppendEnd = 18,
  kProxyOpInProgressV4 = 19,
  kProxyStepSendPeerWaitV4 = 20,
  kNetPluginUpdate = 21,
  kKernelChStop = 22,
  kGroupStartApiStop = 23,  // end of ncclGroupStart()
  kGroupEndApiStart = 24,   // start of ncclGroupEnd()
  kCeCollStart = 25,        // 25-30: v6 copy-engine states (NCCL 2.29 does not record them)
  kCeBatchComplete = 30,
};

// --- v5 (NCCL 2.28) and v6 (NCCL 2.29+) ---------------------------------------------------------
// v6 is v5 with three more union members; every v5 member has the same offset in both.

struct GroupApiV5 {
  bool graph_captured;
  int group_depth;
};
struct CollApiV5 {
  const char* func;
  size_t count;
  const char* datatype;
  int root;
  void* stream;
  bool graph_captured;
};
struct P2pApiV5 {
  const char* func;
  size_t count;
  const char* datatype;
  void* stream;
  bool graph_captured;
};
struct KernelLaunchV5 {
  void* stream;
};
struct CollV5 {
  uint64_t seq_number;
  const char* func;
  const void* send_buff;
  void* recv_buff;
  size_t count;
  int root;
  const char* datatype;
  uint8_t n_channels;
  uint8_t n_warps;
  const char* algo;
  const char* proto;
  void* parent_group;
};
struct P2pV5 {
  const char* func;
  void* buff;
  const char* datatype;
  size_t count;
  int peer;
  uint8_t n_channels;
  void* parent_group;
};
struct ProxyOpV4 {  // unchanged in v5 and v6
  pid_t pid;
  uint8_t channel_id;
  int peer;
  int n_steps;
  int chunk_size;
  int is_send;
};
struct ProxyStepV4 {
  int step;
};
struct KernelChV4 {
  uint8_t channel_id;
  uint64_t ptimer;  // GPU %globaltimer (ns) when the channel started
};
struct NetPluginV4 {
  int64_t id;
  void* data;
};
struct CeCollV6 {
  uint64_t seq_number;
  const char* func;
  const void* send_buff;
  void* recv_buff;
  size_t count;
  int root;
  const char* datatype;
  const char* sync_strategy;
  bool intra_batch_sync;
  uint32_t batch_size;
  uint32_t num_batches;
  uint32_t ce_seq_number;
  void* stream;
};
struct CeSyncV6 {
  bool is_complete;
  int n_ranks;
};
struct CeBatchV6 {
  int num_ops;
  size_t total_bytes;
  bool use_intra_sync;
};

struct EventDescrV6 {
  uint64_t type;
  void* parent_obj;
  int rank;
  union {
    GroupApiV5 group_api;
    CollApiV5 coll_api;
    P2pApiV5 p2p_api;
    KernelLaunchV5 kernel_launch;
    CollV5 coll;
    P2pV5 p2p;
    ProxyOpV4 proxy_op;
    ProxyStepV4 proxy_step;
    KernelChV4 kernel_ch;
    NetPluginV4 net_plugin;
    CeCollV6 ce_coll;
    CeSyncV6 ce_sync;
    CeBatchV6 ce_batch;
  };
};

// The v5 descriptor: the same layout without the v6 members. NCCL 2.28 passes this type; we read it
// through EventDescrV6 only for members that exist in v5 (checked by the static_asserts below).
struct EventDescrV5 {
  uint64_t type;
  void* parent_obj;
  int rank;
  union {
    GroupApiV5 group_api;
    CollApiV5 coll_api;
    P2pApiV5 p2p_api;
    KernelLaunchV5 kernel_launch;
    CollV5 coll;
    P2pV5 p2p;
    ProxyOpV4 proxy_op;
    ProxyStepV4 proxy_step;
    KernelChV4 kernel_ch;
    NetPluginV4 net_plugin;
  };
};

union EventStateArgsV4 {  // v4, v5 and v6
  struct {
    size_t trans_size;
  } proxy_step;
  struct {
    int appended_proxy_ops;
  } proxy_ctrl;
  struct {
    void* data;
  } net_plugin;
  struct {
    uint64_t ptimer;  // GPU %globaltimer (ns) when the channel finished (KernelChStop)
  } kernel_ch;
};

struct ProfilerV6 {
  const char* name;
  Result (*init)(void** context, uint64_t comm_id, int* activation_mask, const char* comm_name, int n_nodes,
                 int n_ranks, int rank, Logger logfn);
  Result (*start_event)(void* context, void** handle, EventDescrV6* descr);
  Result (*stop_event)(void* handle);
  Result (*record_event_state)(void* handle, EventState state, EventStateArgsV4* args);
  Result (*finalize)(void* context);
};

struct ProfilerV5 {
  const char* name;
  Result (*init)(void** context, uint64_t comm_id, int* activation_mask, const char* comm_name, int n_nodes,
                 int n_ranks, int rank, Logger logfn);
  Result (*start_event)(void* context, void** handle, EventDescrV5* descr);
  Result (*stop_event)(void* handle);
  Result (*record_event_state)(void* handle, EventState state, EventStateArgsV4* args);
  Result (*finalize)(void* context);
};

// --- v4 (NCCL 2.27) -------------------------------------------------------------------------------

struct CollV4 {
  uint64_t seq_number;
  const char* func;
  const void* send_buff;
  void* recv_buff;
  size_t count;
  int root;
  const char* datatype;
  uint8_t n_channels;
  uint8_t n_warps;
  const char* algo;
  const char* proto;
};
struct P2pV4 {
  const char* func;
  void* buff;
  const char* datatype;
  size_t count;
  int peer;
  uint8_t n_channels;
};
struct EventDescrV4 {
  uint8_t type;
  void* parent_obj;
  int rank;
  union {
    CollV4 coll;
    P2pV4 p2p;
    ProxyOpV4 proxy_op;
    ProxyStepV4 proxy_step;
    KernelChV4 kernel_ch;
    NetPluginV4 net_plugin;
  };
};

struct ProfilerV4 {
  const char* name;
  Result (*init)(void** context, int* activation_mask, const char* comm_name, uint64_t comm_hash, int n_nodes,
                 int n_ranks, int rank, Logger logfn);
  Result (*start_event)(void* context, void** handle, EventDescrV4* descr);
  Result (*stop_event)(void* handle);
  Result (*record_event_state)(void* handle, EventState state, EventStateArgsV4* args);
  Result (*finalize)(void* context);
};

// --- layout checks (x86-64 / aarch64 Linux, LP64) ------------------------------------------------
#define GT_NCCL_OFFSET(T, m, off) static_assert(offsetof(T, m) == (off), #T "." #m " moved")
GT_NCCL_OFFSET(EventDescrV6, type, 0);
GT_NCCL_OFFSET(EventDescrV6, parent_obj, 8);
GT_NCCL_OFFSET(EventDescrV6, rank, 16);
GT_NCCL_OFFSET(EventDescrV6, group_api, 24);
static_assert(sizeof(EventDescrV5) == 112 && sizeof(EventDescrV6) == 112 && sizeof(EventDescrV4) == 104);
GT_NCCL_OFFSET(GroupApiV5, group_depth, 4);
GT_NCCL_OFFSET(CollApiV5, count, 8);
GT_NCCL_OFFSET(CollApiV5, datatype, 16);
GT_NCCL_OFFSET(CollApiV5, root, 24);
GT_NCCL_OFFSET(CollApiV5, stream, 32);
GT_NCCL_OFFSET(CollApiV5, graph_captured, 40);
GT_NCCL_OFFSET(P2pApiV5, stream, 24);
GT_NCCL_OFFSET(P2pApiV5, graph_captured, 32);
GT_NCCL_OFFSET(CollV5, count, 32);
GT_NCCL_OFFSET(CollV5, root, 40);
GT_NCCL_OFFSET(CollV5, datatype, 48);
GT_NCCL_OFFSET(CollV5, n_channels, 56);
GT_NCCL_OFFSET(CollV5, n_warps, 57);
GT_NCCL_OFFSET(CollV5, algo, 64);
GT_NCCL_OFFSET(CollV5, proto, 72);
GT_NCCL_OFFSET(CollV5, parent_group, 80);
GT_NCCL_OFFSET(P2pV5, count, 24);
GT_NCCL_OFFSET(P2pV5, peer, 32);
GT_NCCL_OFFSET(P2pV5, n_channels, 36);
GT_NCCL_OFFSET(P2pV5, parent_group, 40);
GT_NCCL_OFFSET(ProxyOpV4, channel_id, 4);
GT_NCCL_OFFSET(ProxyOpV4, peer, 8);
GT_NCCL_OFFSET(ProxyOpV4, n_steps, 12);
GT_NCCL_OFFSET(ProxyOpV4, chunk_size, 16);
GT_NCCL_OFFSET(ProxyOpV4, is_send, 20);
GT_NCCL_OFFSET(KernelChV4, ptimer, 8);
GT_NCCL_OFFSET(NetPluginV4, data, 8);
GT_NCCL_OFFSET(CeCollV6, datatype, 48);
GT_NCCL_OFFSET(CeCollV6, sync_strategy, 56);
GT_NCCL_OFFSET(CeCollV6, intra_batch_sync, 64);
GT_NCCL_OFFSET(CeCollV6, batch_size, 68);
GT_NCCL_OFFSET(CeCollV6, num_batches, 72);
GT_NCCL_OFFSET(CeCollV6, ce_seq_number, 76);
GT_NCCL_OFFSET(CeCollV6, stream, 80);
GT_NCCL_OFFSET(CeSyncV6, n_ranks, 4);
GT_NCCL_OFFSET(CeBatchV6, total_bytes, 8);
GT_NCCL_OFFSET(CeBatchV6, use_intra_sync, 16);
GT_NCCL_OFFSET(EventDescrV4, parent_obj, 8);
GT_NCCL_OFFSET(EventDescrV4, rank, 16);
GT_NCCL_OFFSET(EventDescrV4, coll, 24);
GT_NCCL_OFFSET(CollV4, proto, 72);
GT_NCCL_OFFSET(P2pV4, n_channels, 36);
static_assert(sizeof(EventStateArgsV4) == 8);
static_assert(sizeof(ProfilerV4) == 48 && sizeof(ProfilerV5) == 48 && sizeof(ProfilerV6) == 48);
#undef GT_NCCL_OFFSET

}  // namespace gt::nccl::abi
