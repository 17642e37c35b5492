// Test double: the NCCL side of the profiler plugin ABI, declared independently of gtrace's
// inject/nccl/nccl_abi.h (so a layout mistake in either shows up in tests/nccl/nccl_abi_test.cc),
// following NCCL's own member names (v2.28.9-1 profiler_v4.h / profiler_v5.h, v2.29.7-1
// profiler_v6.h). Only what NCCL passes to a plugin.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>

namespace fake_nccl {

typedef int ncclResult_t;  // an int-sized enum in NCCL; 0 = ncclSuccess
typedef int ncclDebugLogLevel;
typedef void (*ncclDebugLogger_t)(ncclDebugLogLevel level, unsigned long flags, const char* file, int line,
                                  const char* fmt, ...);

enum {
  ncclProfileGroup = (1 << 0),
  ncclProfileColl = (1 << 1),
  ncclProfileP2p = (1 << 2),
  ncclProfileProxyOp = (1 << 3),
  ncclProfileProxyStep = (1 << 4),
  ncclProfileProxyCtrl = (1 << 5),
  ncclProfileKernelCh = (1 << 6),
  ncclProfileNetPlugin = (1 << 7),
  ncclProfileGroupApi = (1 << 8),
  ncclProfileCollApi = (1 << 9),
  ncclProfileP2pApi = (1 << 10),
  ncclProfileKernelLaunch = (1 << 11),
  ncclProfileCeColl = (1 << 12),
  ncclProfileCeSync = (1 << 13),
  ncclProfileCeBatch = (1 << 14),
};

typedef enum {
  ncclProfilerProxyOpInProgress_v4 = 19,
  ncclProfilerProxyStepSendGPUWait = 8,
  ncclProfilerProxyStepSendPeerWait_v4 = 20,
  ncclProfilerProxyStepSendWait = 9,
  ncclProfilerProxyStepRecvWait = 10,
  ncclProfilerProxyStepRecvFlushWait = 11,
  ncclProfilerProxyStepRecvGPUWait = 12,
  ncclProfilerProxyCtrlIdle = 13,
  ncclProfilerProxyCtrlActive = 14,
  ncclProfilerProxyCtrlSleep = 15,
  ncclProfilerProxyCtrlWakeup = 16,
  ncclProfilerProxyCtrlAppend = 17,
  ncclProfilerProxyCtrlAppendEnd = 18,
  ncclProfilerNetPluginUpdate = 21,
  ncclProfilerKernelChStop = 22,
  ncclProfilerGroupStartApiStop = 23,
  ncclProfilerGroupEndApiStart = 24,
} ncclProfilerEventState_t;

// v5 and v6 share every member up to netPlugin; v6 adds ceColl / ceCollSync / ceCollBatch.
#define FAKE_NCCL_V5_UNION_MEMBERS                                                                             \
  struct {                                                                                                     \
    bool graphCaptured;                                                                                        \
    int groupDepth;                                                                                            \
  } groupApi;                                                                                                  \
  struct {                                                                                                     \
    const char* func;                                                                                          \
    size_t count;                                                                                              \
    const char* datatype;                                                                                      \
    int root;                                                                                                  \
    void* stream;                                                                                              \
    bool graphCaptured;                                                                                        \
  } collApi;                                                                                                   \
  struct {                                                                                                     \
    const char* func;                                                                                          \
    size_t count;                                                                                              \
    const char* datatype;                                                                                      \
    void* stream;                                                                                              \
    bool graphCaptured;                                                                                        \
  } p2pApi;                                                                                                    \
  struct {                                                                                                     \
    void* stream;                                                                                              \
  } kernelLaunch;                                                                                              \
  struct {                                                                                                     \
    uint64_t seqNumber;                                                                                        \
    const char* func;                                                                                          \
    void const* sendBuff;                                                                                      \
    void* recvBuff;                                                                                            \
    size_t count;                                                                                              \
    int root;                                                                                                  \
    const char* datatype;                                                                                      \
    uint8_t nChannels;                                                                                         \
    uint8_t nWarps;                                                                                            \
    const char* algo;                                                                                          \
    const char* proto;                                                                                         \
    void* parentGroup;                                                                                         \
  } coll;                                                                                                      \
  struct {                                                                                                     \
    const char* func;                                                                                          \
    void* buff;                                                                                                \
    const char* datatype;                                                                                      \
    size_t count;                                                                                              \
    int peer;                                                                                                  \
    uint8_t nChannels;                                                                                         \
    void* parentGroup;                                                                                         \
  } p2p;                                                                                                       \
  struct {                                                                                                     \
    pid_t pid;                                                                                                 \
    uint8_t channelId;                                                                                         \
    int peer;                                                                                                  \
    int nSteps;                                                                                                \
    int chunkSize;                                                                                             \
    int isSend;                                                                                                \
  } proxyOp;                                                                                                   \
  struct {                                                                                                     \
    int step;                                                                                                  \
  } proxyStep;                                                                                                 \
  struct {                                                                                                     \
    uint8_t channelId;                                                                                         \
    uint64_t pTimer;                                                                                           \
  } kernelCh;                                                                                                  \
  struct {                                                                                                     \
    int64_t id;                                                                                                \
    void* data;                                                                                                \
  } netPlugin;

typedef struct {
  uint64_t type;
  void* parentObj;
  int rank;
  union {
    FAKE_NCCL_V5_UNION_MEMBERS
  };
} ncclProfilerEventDescr_v5_t;

typedef struct {
  uint64_t type;
  void* parentObj;
  int rank;
  union {
    FAKE_NCCL_V5_UNION_MEMBERS
    struct {
      uint64_t seqNumber;
      const char* func;
      void const* sendBuff;
      void* recvBuff;
      size_t count;
      int root;
      const char* datatype;
      const char* syncStrategy;
      bool intraBatchSync;
      uint32_t batchSize;
      uint32_t numBatches;
      uint32_t ceSeqNum;
      void* stream;
    } ceColl;
    struct {
      bool isComplete;
      int nRanks;
    } ceCollSync;
    struct {
      int numOps;
      size_t totalBytes;
      bool useIntraSync;
    } ceCollBatch;
  };
} ncclProfilerEventDescr_v6_t;

typedef struct {
  uint8_t type;
  void* parentObj;
  int rank;
  union {
    struct {
      uint64_t seqNumber;
      const char* func;
      void const* sendBuff;
      void* recvBuff;
      size_t count;
      int root;
      const char* datatype;
      uint8_t nChannels;
      uint8_t nWarps;
      const char* algo;
      const char* proto;
    } coll;
    struct {
      const char* func;
      void* buff;
      const char* datatype;
      size_t count;
      int peer;
      uint8_t nChannels;
    } p2p;
    struct {
      pid_t pid;
      uint8_t channelId;
      int peer;
      int nSteps;
      int chunkSize;
      int isSend;
    } proxyOp;
    struct {
      int step;
    } proxyStep;
    struct {
      uint8_t channelId;
      uint64_t pTimer;
    } kernelCh;
    struct {
      int64_t id;
      void* data;
    } netPlugin;
  };
} ncclProfilerEventDescr_v4_t;

typedef union {
  struct {
    size_t transSize;
  } proxyStep;
  struct {
    int appendedProxyOps;
  } proxyCtrl;
  struct {
    void* data;
  } netPlugin;
  struct {
    uint64_t pTimer;
  } kernelCh;
} ncclProfilerEventStateArgs_v5_t;

template <typename Descr>
struct ProfilerV5Like {  // v5 and v6: the same members, different descriptor type
  const char* name;
  ncclResult_t (*init)(void** context, uint64_t commId, int* eActivationMask, const char* commName, int nNodes,
                       int nranks, int rank, ncclDebugLogger_t logfn);
  ncclResult_t (*startEvent)(void* context, void** eHandle, Descr* eDescr);
  ncclResult_t (*stopEvent)(void* eHandle);
  ncclResult_t (*recordEventState)(void* eHandle, ncclProfilerEventState_t eState,
                                   ncclProfilerEventStateArgs_v5_t* eStateArgs);
  ncclResult_t (*finalize)(void* context);
};
typedef ProfilerV5Like<ncclProfilerEventDescr_v5_t> ncclProfiler_v5_t;
typedef ProfilerV5Like<ncclProfilerEventDescr_v6_t> ncclProfiler_v6_t;

typedef struct {
  const char* name;
  ncclResult_t (*init)(void** context, int* eActivationMask, const char* commName, uint64_t commHash, int nNodes,
                       int nranks, int rank, ncclDebugLogger_t logfn);
  ncclResult_t (*startEvent)(void* context, void** eHandle, ncclProfilerEventDescr_v4_t* eDescr);
  ncclResult_t (*stopEvent)(void* eHandle);
  ncclResult_t (*recordEventState)(void* eHandle, ncclProfilerEventState_t eState,
                                   ncclProfilerEventStateArgs_v5_t* eStateArgs);
  ncclResult_t (*finalize)(void* context);
} ncclProfiler_v4_t;

}  // namespace fake_nccl
