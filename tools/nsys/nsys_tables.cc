// DDL of every non-ENUM table in gt::nsys::Tables(). The column facts (names, order, declared types, NOT NULL,
// PRIMARY KEY) are nsys's; the text and layout are ours. tests/nsys/ compares `pragma table_info` of each table with
// the real exports it came from. Where a shape comes from, per group:
//   1. the 23 non-ENUM tables of a real 3.25.0 export (nsys 2026.2.1, the target version);
//   2. tables absent from that export, from a real 3.24.14 export (nsys 2026.1.1) or else a 3.24.0 one (2025.5.2),
//      assumed unchanged in 3.25.0;
//   3. tables known only from NVIDIA's documentation: "SQLite Schema Reference" of the Nsight Systems Post-Collection
//      Analysis Guide (https://docs.nvidia.com/nsight-systems/AnalysisGuide/), the revision stating "schema as of the
//      2026.4 release, schema version 3.28.1" (called "doc 3.28.1" below), cross-checked against an older revision
//      of the same reference (older than 3.24.14: its TARGET_INFO_SESSION_START_TIME lacks systemClockNs). The
//      target is 3.25.0 and no public 3.25.0 text of these tables exists, so each table notes why its 3.28.1
//      shape is taken to hold for 3.25.0.
// Lives in its own file because it is long and pure data; the 3.28.1-only columns of tables in groups 1-2 (e.g.
// TARGET_INFO_GPU.numaNodeId, NVTX_EVENTS.eventId) are deliberately absent.
#include <span>

#include "tools/nsys/nsys_schema.h"

namespace gt::nsys {
namespace {

// clang-format off
constexpr TableDef kTables[] = {
    // ---- 1. Real 3.25.0 export, in nsys's table order. ----
    {"StringIds",
     R"sql(CREATE TABLE StringIds (
  id    INTEGER NOT NULL PRIMARY KEY,
  value TEXT    NOT NULL
))sql"},
    {"ANALYSIS_FILE",
     R"sql(CREATE TABLE ANALYSIS_FILE (
  id        INTEGER NOT NULL PRIMARY KEY,
  filename  TEXT,
  contentId INTEGER,
  globalPid INTEGER NOT NULL
))sql"},
    {"ProcessStreams",
     R"sql(CREATE TABLE ProcessStreams (
  globalPid  INTEGER NOT NULL,
  filenameId INTEGER NOT NULL,
  contentId  INTEGER NOT NULL
))sql"},
    {"NVTX_PAYLOAD_SCHEMAS",
     R"sql(CREATE TABLE NVTX_PAYLOAD_SCHEMAS (
  domainId    INTEGER,
  schemaId    INTEGER,
  name        TEXT,
  type        INTEGER,
  flags       INTEGER,
  numEntries  INTEGER,
  payloadSize INTEGER,
  alignTo     INTEGER
))sql"},
    {"NVTX_PAYLOAD_SCHEMA_ENTRIES",
     R"sql(CREATE TABLE NVTX_PAYLOAD_SCHEMA_ENTRIES (
  domainId           INTEGER NOT NULL,
  schemaId           INTEGER NOT NULL,
  idx                INTEGER NOT NULL,
  flags              INTEGER,
  type               INTEGER,
  name               TEXT,
  description        TEXT,
  arrayOrUnionDetail INTEGER,
  offset             INTEGER
))sql"},
    {"TARGET_INFO_SYSTEM_ENV",
     R"sql(CREATE TABLE TARGET_INFO_SYSTEM_ENV (
  globalVid    INTEGER,
  devStateName TEXT    NOT NULL,
  name         TEXT    NOT NULL,
  nameEnum     INTEGER NOT NULL,
  value        TEXT    NOT NULL
))sql"},
    {"TARGET_INFO_SESSION_START_TIME",
     R"sql(CREATE TABLE TARGET_INFO_SESSION_START_TIME (
  utcEpochNs    INTEGER,
  utcTime       TEXT,
  localTime     TEXT,
  systemClockNs INTEGER
))sql"},
    {"ANALYSIS_DETAILS",
     R"sql(CREATE TABLE ANALYSIS_DETAILS (
  globalVid INTEGER NOT NULL,
  duration  INTEGER NOT NULL,
  startTime INTEGER NOT NULL,
  stopTime  INTEGER NOT NULL
))sql"},
    {"CUPTI_ACTIVITY_KIND_CUDA_EVENT",
     R"sql(CREATE TABLE CUPTI_ACTIVITY_KIND_CUDA_EVENT (
  timestamp      INTEGER,
  deviceId       INTEGER NOT NULL,
  contextId      INTEGER NOT NULL,
  greenContextId INTEGER,
  streamId       INTEGER NOT NULL,
  correlationId  INTEGER,
  globalPid      INTEGER,
  eventId        INTEGER NOT NULL,
  eventSyncId    INTEGER
))sql"},
    {"DIAGNOSTIC_EVENT",
     R"sql(CREATE TABLE DIAGNOSTIC_EVENT (
  timestamp     INTEGER NOT NULL,
  timestampType INTEGER NOT NULL,
  source        INTEGER NOT NULL,
  severity      INTEGER NOT NULL,
  text          TEXT    NOT NULL,
  globalPid     INTEGER
))sql"},
    {"CUPTI_ACTIVITY_KIND_SYNCHRONIZATION",
     R"sql(CREATE TABLE CUPTI_ACTIVITY_KIND_SYNCHRONIZATION (
  start              INTEGER NOT NULL,
  end                INTEGER NOT NULL,
  deviceId           INTEGER NOT NULL,
  contextId          INTEGER NOT NULL,
  greenContextId     INTEGER,
  streamId           INTEGER NOT NULL,
  correlationId      INTEGER,
  globalPid          INTEGER,
  deprecatedSyncType INTEGER,
  syncType           INTEGER NOT NULL,
  eventId            INTEGER NOT NULL,
  eventSyncId        INTEGER
))sql"},
    {"PROFILER_OVERHEAD",
     R"sql(CREATE TABLE PROFILER_OVERHEAD (
  start        INTEGER NOT NULL,
  end          INTEGER NOT NULL,
  globalTid    INTEGER,
  nameId       INTEGER NOT NULL,
  overheadType INTEGER NOT NULL
))sql"},
    {"CUPTI_ACTIVITY_KIND_OVERHEAD",
     R"sql(CREATE TABLE CUPTI_ACTIVITY_KIND_OVERHEAD (
  start         INTEGER NOT NULL,
  end           INTEGER NOT NULL,
  eventClass    INTEGER NOT NULL,
  globalTid     INTEGER,
  correlationId INTEGER,
  nameId        INTEGER,
  overheadType  INTEGER NOT NULL
))sql"},
    {"CUPTI_ACTIVITY_KIND_MEMSET",
     R"sql(CREATE TABLE CUPTI_ACTIVITY_KIND_MEMSET (
  start          INTEGER NOT NULL,
  end            INTEGER NOT NULL,
  deviceId       INTEGER NOT NULL,
  contextId      INTEGER NOT NULL,
  greenContextId INTEGER,
  streamId       INTEGER NOT NULL,
  correlationId  INTEGER,
  globalPid      INTEGER,
  value          INTEGER NOT NULL,
  bytes          INTEGER NOT NULL,
  graphNodeId    INTEGER,
  memKind        INTEGER
))sql"},
    {"CUPTI_ACTIVITY_KIND_MEMCPY",
     R"sql(CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (
  start           INTEGER NOT NULL,
  end             INTEGER NOT NULL,
  deviceId        INTEGER NOT NULL,
  contextId       INTEGER NOT NULL,
  greenContextId  INTEGER,
  streamId        INTEGER NOT NULL,
  correlationId   INTEGER,
  globalPid       INTEGER,
  bytes           INTEGER NOT NULL,
  copyKind        INTEGER NOT NULL,
  deprecatedSrcId INTEGER,
  srcKind         INTEGER,
  dstKind         INTEGER,
  srcDeviceId     INTEGER,
  srcContextId    INTEGER,
  dstDeviceId     INTEGER,
  dstContextId    INTEGER,
  migrationCause  INTEGER,
  graphNodeId     INTEGER,
  virtualAddress  INTEGER,
  copyCount       INTEGER
))sql"},
    {"CUPTI_ACTIVITY_KIND_KERNEL",
     R"sql(CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (
  start                           INTEGER NOT NULL,
  end                             INTEGER NOT NULL,
  deviceId                        INTEGER NOT NULL,
  contextId                       INTEGER NOT NULL,
  greenContextId                  INTEGER,
  streamId                        INTEGER NOT NULL,
  correlationId                   INTEGER,
  globalPid                       INTEGER,
  demangledName                   INTEGER NOT NULL,
  shortName                       INTEGER NOT NULL,
  mangledName                     INTEGER,
  launchType                      INTEGER,
  cacheConfig                     INTEGER,
  registersPerThread              INTEGER NOT NULL,
  gridX                           INTEGER NOT NULL,
  gridY                           INTEGER NOT NULL,
  gridZ                           INTEGER NOT NULL,
  blockX                          INTEGER NOT NULL,
  blockY                          INTEGER NOT NULL,
  blockZ                          INTEGER NOT NULL,
  staticSharedMemory              INTEGER NOT NULL,
  dynamicSharedMemory             INTEGER NOT NULL,
  localMemoryPerThread            INTEGER NOT NULL,
  localMemoryTotal                INTEGER NOT NULL,
  gridId                          INTEGER NOT NULL,
  sharedMemoryExecuted            INTEGER,
  graphNodeId                     INTEGER,
  sharedMemoryLimitConfig         INTEGER,
  qmdBulkReleaseDone              INTEGER,
  qmdPreexitDone                  INTEGER,
  qmdLastCtaDone                  INTEGER,
  graphId                         INTEGER,
  clusterX                        INTEGER,
  clusterY                        INTEGER,
  clusterZ                        INTEGER,
  clusterSchedulingPolicy         INTEGER,
  maxPotentialClusterSize         INTEGER,
  maxActiveClusters               INTEGER,
  sharedMemoryRequestedPercentage INTEGER,
  tensorSizeMinusOneElements      TEXT    NOT NULL
))sql"},
    {"PROCESSES",
     R"sql(CREATE TABLE PROCESSES (
  globalPid INTEGER,
  pid       INTEGER,
  name      TEXT
))sql"},
    {"CUPTI_ACTIVITY_KIND_RUNTIME",
     R"sql(CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (
  start         INTEGER NOT NULL,
  end           INTEGER NOT NULL,
  eventClass    INTEGER NOT NULL,
  globalTid     INTEGER,
  correlationId INTEGER,
  nameId        INTEGER NOT NULL,
  returnValue   INTEGER NOT NULL,
  callchainId   INTEGER
))sql"},
    {"NVTX_EVENTS",
     R"sql(CREATE TABLE NVTX_EVENTS (
  start        INTEGER NOT NULL,
  end          INTEGER,
  eventType    INTEGER NOT NULL,
  rangeId      INTEGER,
  category     INTEGER,
  color        INTEGER,
  text         TEXT,
  globalTid    INTEGER,
  endGlobalTid INTEGER,
  textId       INTEGER,
  domainId     INTEGER,
  uint64Value  INTEGER,
  int64Value   INTEGER,
  doubleValue  REAL,
  uint32Value  INTEGER,
  int32Value   INTEGER,
  floatValue   REAL,
  jsonTextId   INTEGER,
  jsonText     TEXT,
  binaryData   TEXT
))sql"},
    {"ThreadNames",
     R"sql(CREATE TABLE ThreadNames (
  nameId    INTEGER NOT NULL,
  priority  INTEGER,
  globalTid INTEGER
))sql"},
    {"TARGET_INFO_CUDA_STREAM",
     R"sql(CREATE TABLE TARGET_INFO_CUDA_STREAM (
  streamId  INTEGER NOT NULL,
  hwId      INTEGER NOT NULL,
  vmId      INTEGER NOT NULL,
  processId INTEGER NOT NULL,
  contextId INTEGER NOT NULL,
  priority  INTEGER NOT NULL,
  flag      INTEGER NOT NULL
))sql"},
    {"META_DATA_CAPTURE",
     R"sql(CREATE TABLE META_DATA_CAPTURE (
  name  TEXT NOT NULL,
  value TEXT
))sql"},
    {"META_DATA_EXPORT",
     R"sql(CREATE TABLE META_DATA_EXPORT (
  name  TEXT NOT NULL,
  value TEXT
))sql"},

    // ---- 2a. Real 3.24.14 export (not in the 3.25.0 sample). ----
    {"TARGET_INFO_GPU",
     R"sql(CREATE TABLE TARGET_INFO_GPU (
  vmId                  INTEGER NOT NULL,
  id                    INTEGER NOT NULL,
  name                  TEXT,
  busLocation           TEXT,
  isDiscrete            INTEGER,
  l2CacheSize           INTEGER,
  totalMemory           INTEGER,
  memoryBandwidth       INTEGER,
  clockRate             INTEGER,
  smCount               INTEGER,
  pwGpuId               INTEGER,
  uuid                  TEXT,
  luid                  INTEGER,
  chipName              TEXT,
  cuDevice              INTEGER,
  ctxswDevPath          TEXT,
  ctrlDevPath           TEXT,
  revision              INTEGER,
  nodeMask              INTEGER,
  constantMemory        INTEGER,
  maxIPC                INTEGER,
  maxRegistersPerBlock  INTEGER,
  maxShmemPerBlock      INTEGER,
  maxShmemPerBlockOptin INTEGER,
  maxShmemPerSm         INTEGER,
  maxRegistersPerSm     INTEGER,
  threadsPerWarp        INTEGER,
  asyncEngines          INTEGER,
  maxWarpsPerSm         INTEGER,
  maxBlocksPerSm        INTEGER,
  maxThreadsPerBlock    INTEGER,
  maxBlockDimX          INTEGER,
  maxBlockDimY          INTEGER,
  maxBlockDimZ          INTEGER,
  maxGridDimX           INTEGER,
  maxGridDimY           INTEGER,
  maxGridDimZ           INTEGER,
  computeMajor          INTEGER,
  computeMinor          INTEGER,
  smMajor               INTEGER,
  smMinor               INTEGER
))sql"},
    {"TARGET_INFO_CUDA_DEVICE",
     R"sql(CREATE TABLE TARGET_INFO_CUDA_DEVICE (
  gpuId              INTEGER,
  cudaId             INTEGER NOT NULL,
  pid                INTEGER NOT NULL,
  uuid               TEXT,
  numMultiprocessors INTEGER
))sql"},
    {"TARGET_INFO_CUDA_CONTEXT_INFO",
     R"sql(CREATE TABLE TARGET_INFO_CUDA_CONTEXT_INFO (
  nullStreamId       INTEGER NOT NULL,
  hwId               INTEGER NOT NULL,
  vmId               INTEGER NOT NULL,
  processId          INTEGER NOT NULL,
  deviceId           INTEGER NOT NULL,
  contextId          INTEGER NOT NULL,
  parentContextId    INTEGER,
  isGreenContext     INTEGER,
  numMultiprocessors INTEGER
))sql"},

    // ---- 2b. Real 3.24.0 export (in neither the 3.25.0 nor the 3.24.14 sample). ----
    {"CUPTI_ACTIVITY_KIND_GRAPH_TRACE",
     R"sql(CREATE TABLE CUPTI_ACTIVITY_KIND_GRAPH_TRACE (
  start          INTEGER NOT NULL,
  end            INTEGER NOT NULL,
  deviceId       INTEGER NOT NULL,
  contextId      INTEGER NOT NULL,
  greenContextId INTEGER,
  streamId       INTEGER NOT NULL,
  correlationId  INTEGER,
  globalPid      INTEGER,
  graphId        INTEGER NOT NULL,
  graphExecId    INTEGER NOT NULL
))sql"},
    {"CUDA_GRAPH_EVENTS",
     R"sql(CREATE TABLE CUDA_GRAPH_EVENTS (
  start           INTEGER NOT NULL,
  end             INTEGER NOT NULL,
  eventClass      INTEGER NOT NULL,
  globalTid       INTEGER,
  nameId          INTEGER NOT NULL,
  graphId         INTEGER,
  originalGraphId INTEGER,
  graphExecId     INTEGER
))sql"},
    // OS runtime calls (-t osrt). nsys writes 0 in callchainId and argumentsId when it kept no stack or
    // arguments, and returnValue 0 in every row of the sample (gtrace writes the call's result).
    {"OSRT_API",
     R"sql(CREATE TABLE OSRT_API (
  start        INTEGER NOT NULL,
  end          INTEGER NOT NULL,
  eventClass   INTEGER NOT NULL,
  globalTid    INTEGER,
  nameId       INTEGER NOT NULL,
  returnValue  INTEGER NOT NULL,
  nestingLevel INTEGER,
  callchainId  INTEGER NOT NULL,
  argumentsId  INTEGER NOT NULL
))sql"},
    // Stacks of OS runtime calls (--osrt-backtrace-threshold); OSRT_API.callchainId -> id (0: no stack),
    // stackDepth 0 = the innermost frame. Source: the real 3.24.0 export (the 3.25.0 sample has no
    // OSRT data, nsys exports lazily); same shape as CUDA_CALLCHAINS plus kernelMode, thumbCode,
    // specialEntry and unwindMethod.
    {"OSRT_CALLCHAINS",
     R"sql(CREATE TABLE OSRT_CALLCHAINS (
  id           INTEGER NOT NULL,
  symbol       INTEGER NOT NULL,
  module       INTEGER NOT NULL,
  kernelMode   INTEGER,
  thumbCode    INTEGER,
  unresolved   INTEGER,
  specialEntry INTEGER,
  originalIP   INTEGER,
  unwindMethod INTEGER,
  stackDepth   INTEGER NOT NULL,
  PRIMARY KEY (id, stackDepth)
))sql"},

    // ---- 3. Documentation only (no public real export contains them). ----
    // CUDA API backtraces; CUPTI_ACTIVITY_KIND_RUNTIME.callchainId -> id, stackDepth 0 = innermost frame.
    // Source: doc 3.28.1; identical in the older doc revision.
    {"CUDA_CALLCHAINS",
     R"sql(CREATE TABLE CUDA_CALLCHAINS (
  id         INTEGER NOT NULL,
  symbol     INTEGER NOT NULL,
  module     INTEGER NOT NULL,
  unresolved INTEGER,
  originalIP INTEGER,
  stackDepth INTEGER NOT NULL,
  PRIMARY KEY (id, stackDepth)
))sql"},
    // One row per sample x metric. Source: doc 3.28.1. The older doc revision lists only (timestamp nullable, typeId,
    // metricId, value), but scripts adapted from nsys 2023.3's own gpu_metric_util_map recipe already read
    // rawTimestamp, so the older text lagged and 3.28.1's shape is taken for 3.25.0. Least certain table here: no
    // public real export with GPU metrics exists to confirm the NOT NULL on timestamp.
    {"GPU_METRICS",
     R"sql(CREATE TABLE GPU_METRICS (
  rawTimestamp INTEGER NOT NULL,
  timestamp    INTEGER NOT NULL,
  typeId       INTEGER NOT NULL,
  metricId     INTEGER NOT NULL,
  value        INTEGER NOT NULL
))sql"},
    // Metric-name dictionary for GPU_METRICS. Source: doc 3.28.1; identical in the older doc revision.
    {"TARGET_INFO_GPU_METRICS",
     R"sql(CREATE TABLE TARGET_INFO_GPU_METRICS (
  typeId     INTEGER NOT NULL,
  sourceId   INTEGER NOT NULL,
  typeName   TEXT    NOT NULL,
  metricId   INTEGER NOT NULL,
  metricName TEXT    NOT NULL
))sql"},
    // Allocations and frees. Source: doc 3.28.1; the same columns appear in a real 3.16.1 export (nsys 2024.6.2),
    // so 3.25.0 has them too. The older doc revision omits streamId (documentation lag).
    {"CUDA_GPU_MEMORY_USAGE_EVENTS",
     R"sql(CREATE TABLE CUDA_GPU_MEMORY_USAGE_EVENTS (
  start                           INTEGER NOT NULL,
  globalPid                       INTEGER NOT NULL,
  deviceId                        INTEGER NOT NULL,
  contextId                       INTEGER NOT NULL,
  address                         INTEGER NOT NULL,
  pc                              INTEGER NOT NULL,
  bytes                           INTEGER NOT NULL,
  memKind                         INTEGER NOT NULL,
  memoryOperationType             INTEGER NOT NULL,
  name                            TEXT,
  correlationId                   INTEGER,
  streamId                        INTEGER,
  localMemoryPoolAddress          INTEGER,
  localMemoryPoolReleaseThreshold INTEGER,
  localMemoryPoolSize             INTEGER,
  localMemoryPoolUtilizedSize     INTEGER,
  importedMemoryPoolAddress       INTEGER,
  importedMemoryPoolProcessId     INTEGER
))sql"},
    // Memory-pool operations. Source: doc 3.28.1; identical in the older doc revision.
    {"CUDA_GPU_MEMORY_POOL_EVENTS",
     R"sql(CREATE TABLE CUDA_GPU_MEMORY_POOL_EVENTS (
  start                           INTEGER NOT NULL,
  globalPid                       INTEGER NOT NULL,
  deviceId                        INTEGER NOT NULL,
  address                         INTEGER NOT NULL,
  operationType                   INTEGER NOT NULL,
  poolType                        INTEGER NOT NULL,
  correlationId                   INTEGER,
  minBytesToKeep                  INTEGER,
  localMemoryPoolReleaseThreshold INTEGER,
  localMemoryPoolSize             INTEGER,
  localMemoryPoolUtilizedSize     INTEGER
))sql"},
    // globalTid -> MPI rank. Source: doc 3.28.1; identical in the older doc revision.
    {"MPI_RANKS",
     R"sql(CREATE TABLE MPI_RANKS (
  globalTid INTEGER NOT NULL,
  rank      INTEGER NOT NULL
))sql"},
    // Device names set with nvtxNameCuDevice. Source: doc 3.28.1; identical in the older doc revision.
    {"TARGET_INFO_NVTX_CUDA_DEVICE",
     R"sql(CREATE TABLE TARGET_INFO_NVTX_CUDA_DEVICE (
  name     TEXT    NOT NULL,
  hwId     INTEGER NOT NULL,
  vmId     INTEGER NOT NULL,
  deviceId INTEGER NOT NULL
))sql"},

    // ---- 4. CPU sampling (--sample). Absent from every reference export we hold (no sampling was on);
    // the columns are those of a real nsys 2024.6.2 export (schema 3.16.1) found by code search, which
    // match the documentation's COMPOSITE_EVENTS (start, cpu, threadState, globalTid, cpuCycles; the
    // 2021.5 doc revision already lists them) and the *_CALLCHAINS shape of OSRT_CALLCHAINS in the real
    // 3.24.0 export. Assumed unchanged in 3.25.0, like the other callchain tables.
    // One row per sample; threadState -> ENUM_SAMPLING_THREAD_STATE.
    {"COMPOSITE_EVENTS",
     R"sql(CREATE TABLE COMPOSITE_EVENTS (
  id          INTEGER NOT NULL PRIMARY KEY,
  start       INTEGER NOT NULL,
  cpu         INTEGER,
  threadState INTEGER,
  globalTid   INTEGER,
  cpuCycles   INTEGER NOT NULL
))sql"},
    // One row per frame of a sample's stack; id -> COMPOSITE_EVENTS.id, stackDepth 0 = the sampled frame.
    {"SAMPLING_CALLCHAINS",
     R"sql(CREATE TABLE SAMPLING_CALLCHAINS (
  id           INTEGER NOT NULL,
  symbol       INTEGER NOT NULL,
  module       INTEGER NOT NULL,
  kernelMode   INTEGER,
  thumbCode    INTEGER,
  unresolved   INTEGER,
  specialEntry INTEGER,
  originalIP   INTEGER,
  unwindMethod INTEGER,
  stackDepth   INTEGER NOT NULL,
  PRIMARY KEY (id, stackDepth)
))sql"},
};
// clang-format on

}  // namespace

std::span<const TableDef> Tables() {
  return kTables;
}

}  // namespace gt::nsys
