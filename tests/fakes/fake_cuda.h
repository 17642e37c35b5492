/* The "fake driver" API of the fake CUPTI (libgt_fake_cupti.so): what a test program calls to
 * simulate a CUDA application — cuInit (which loads CUDA_INJECTION64_PATH and calls its
 * InitializeInjection, as the real driver does), API calls (enter/exit callbacks + RUNTIME/DRIVER
 * records), kernels, copies, memsets, syncs, events, graphs, overhead and memory records, and drops.
 *
 * THIS IS A TEST DOUBLE. It is built on the real CUDA 13.0 cupti*.h types, so gtrace's code compiles
 * and runs against the true record layouts and prototypes, but its behaviour is our model of CUPTI,
 * not CUPTI. Tests that use it prove gtrace's logic (decoding, windows, drops, fork, export), never
 * CUPTI's or the driver's behaviour; scripts/gpu-check.sh does that on a real GPU.
 *
 * Records are produced only for activity kinds gtrace enabled; callbacks fire only for callback ids
 * gtrace enabled. Timestamps come from the timestamp callback gtrace registered (else
 * CLOCK_REALTIME, like real CUPTI). GPU work starts `gap_ns` after "now" and lasts exactly
 * `duration_ns`, so tests can assert exact durations.
 *
 * Environment knobs (read at cuptiSubscribe): FAKE_CUPTI_SUBSCRIBE_RESULT=<CUptiResult>,
 * FAKE_CUPTI_HOLDER=<name> (reported with result 39), FAKE_CUPTI_VERSION=<n>,
 * FAKE_CUPTI_NO_TIMESTAMP_CALLBACK=1, FAKE_CUPTI_LOG=<file> (one line per CUPTI call gtrace made),
 * FAKE_CUPTI_OWN_CLOCK=<offset_ns>:<ppm> (without the callback, CUPTI's clock is CLOCK_MONOTONIC *
 * (1 + ppm/1e6) + offset_ns instead of CLOCK_REALTIME, and GPU spans are scaled by the same rate).
 * A CUPTI call made in a forked child of the subscribing process is a violation: the fake prints
 * "fake-cupti: VIOLATION ..." on stderr and, for cuptiActivityFlushAll (which hangs with the real
 * CUPTI there), exits the child with status 86.
 */
#ifndef GT_TESTS_FAKES_FAKE_CUDA_H_
#define GT_TESTS_FAKES_FAKE_CUDA_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Loads $CUDA_INJECTION64_PATH once per process and calls its InitializeInjection. Returns its
 * result (1 = success), 0 when the variable is unset, -1 when it could not be loaded. */
int fake_cuInit(void);

/* Device `device_id` and a context on it (DEVICE once per device, CONTEXT, and the NULL stream's
 * STREAM record with stream id 7). Returns the context id (1, 2, ...). */
uint32_t fake_ContextCreate(uint32_t device_id);
/* A stream: STREAM record (flag 1 default, 2 non-blocking). Returns its id (13, 14, ...). */
uint32_t fake_StreamCreate(uint32_t context_id, uint32_t flag, int32_t priority, uint32_t correlation_id);

/* API call: enter callbacks fire, a correlation id is assigned (returned). Exit: the record gets
 * end = start + duration_ns (the call spins until that time has passed), exit callbacks fire. */
uint32_t fake_ApiEnter(int driver, uint32_t cbid, const void* params);
void fake_ApiExit(uint32_t correlation_id, uint64_t duration_ns, uint32_t return_value);
uint32_t fake_Api(int driver, uint32_t cbid, uint64_t duration_ns);
/* fake_Api on a new native thread (no Python state when called from Python), joined before returning. */
uint32_t fake_ApiOnNewThread(int driver, uint32_t cbid, uint64_t duration_ns);

typedef struct {
  uint32_t device_id, context_id, stream_id, correlation_id;
  const char* name;
  int32_t grid[3], block[3];
  uint16_t registers;
  int32_t static_shared, dynamic_shared;
  uint32_t graph_id;
  uint64_t graph_node_id;
  uint8_t launch_type;
  uint64_t gap_ns, duration_ns;
  uint64_t start_ns; /* absolute start on the CUPTI clock (fake_CuptiNow); 0 = now + gap_ns */
} fake_kernel;
void fake_Kernel(const fake_kernel* k);
/* A kernel still running: delivered only by a forced flush, with end = 0 (as real CUPTI does). */
void fake_KernelRunning(const fake_kernel* k);

void fake_Memcpy(uint32_t device_id, uint32_t context_id, uint32_t stream_id, uint32_t correlation_id, uint64_t bytes,
                 uint8_t copy_kind, uint8_t src_kind, uint8_t dst_kind, uint64_t duration_ns);
void fake_MemcpyPeer(uint32_t device_id, uint32_t context_id, uint32_t stream_id, uint32_t correlation_id,
                     uint64_t bytes, uint32_t src_device, uint32_t dst_device, uint64_t duration_ns);
void fake_Memset(uint32_t device_id, uint32_t context_id, uint32_t stream_id, uint32_t correlation_id, uint64_t bytes,
                 uint32_t value, uint16_t memory_kind, uint64_t duration_ns);
void fake_Sync(uint32_t type, uint32_t context_id, uint32_t stream_id, uint32_t correlation_id, uint32_t event_id,
               uint64_t event_sync_id, uint64_t duration_ns);
void fake_CudaEvent(uint32_t device_id, uint32_t context_id, uint32_t stream_id, uint32_t correlation_id,
                    uint32_t event_id, uint64_t event_sync_id);
void fake_GraphTrace(uint32_t device_id, uint32_t context_id, uint32_t stream_id, uint32_t correlation_id,
                     uint32_t graph_id, uint64_t duration_ns);
/* Overhead of `kind` (CUpti_ActivityOverheadKind) on thread `tid`. */
void fake_Overhead(uint32_t kind, uint32_t tid, uint32_t correlation_id, uint64_t duration_ns);
/* MEMORY2 record (operation 1 alloc / 2 release). */
void fake_Memory(uint32_t operation, uint32_t memory_kind, uint64_t address, uint64_t bytes, uint32_t device_id,
                 uint32_t context_id, uint32_t stream_id, uint32_t correlation_id);

/* Graphs: resource callbacks GRAPH_CREATED / GRAPHEXEC_CREATED with fake handles that
 * cuptiGetGraphId / cuptiGetGraphExecId understand. */
void* fake_GraphCreate(uint32_t graph_id);
void* fake_GraphInstantiate(void* graph, uint32_t graph_exec_id);

/* CUPTI "lost" n records (cuptiActivityGetNumDroppedRecords reports them). */
void fake_DropRecords(size_t n);

/* Introspection: is activity kind / callback currently enabled; how often was a CUPTI function
 * called ("cuptiActivityFlushAll", "cuptiActivityFlushAll:forced", "cuptiSubscribe", ...). */
int fake_KindEnabled(int kind);
int fake_CallbackEnabled(int domain, uint32_t cbid);
uint64_t fake_CallCount(const char* function);
/* Records the fake could not store because gtrace declined a buffer. */
uint64_t fake_RecordsDeclined(void);

/* --- GPU metrics (fake_profiler.cc) ------------------------------------------------------------
 * The fake driver answers cuDeviceGetCount & co. only once fake_cuInit has returned; the context of
 * fake_ContextCreate becomes current on the calling thread (cuCtxGetCurrent) and makes its device's
 * primary context "active". */
/* The CUPTI clock (gtrace's timestamp callback when registered, else CLOCK_REALTIME or
 * FAKE_CUPTI_OWN_CLOCK's). */
uint64_t fake_CuptiNow(void);
/* 1 while gtrace has PM sampling started on `device`. */
int fake_PmRunning(uint32_t device);
/* Number of metrics gtrace configured for PM sampling on `device` (0 when not enabled). */
uint32_t fake_PmMetricCount(uint32_t device);
/* One PM sample [start, end] (CUPTI clock) with the values "cupti_name=value;..." (others 0), kept
 * only while sampling is started, as the hardware would. */
void fake_PmSample(uint32_t device, uint64_t start, uint64_t end, const char* spec);
/* The next cuptiPmSamplingDecodeData on `device` reports a hardware-buffer overflow. */
void fake_PmOverflowNext(uint32_t device);
/* Values "cupti_name=value;..." of the ranges profiled from now on (auto ranges add their index). */
void fake_RangeSetValues(const char* spec);
// GPU-metrics capture replay (FAKE_CUPTI_METRICS_REPLAY, fake_metrics_replay.h): recorded PM images
// not yet delivered; recorded range passes (and the NVTX range name that delimited the first).
uint32_t fake_MetricsReplayPmLeft(void);
uint32_t fake_MetricsReplayRangePasses(char* nvtx_name, size_t name_bytes);
uint32_t fake_MetricsReplayRangeLeft(void); /* recorded range images not yet decoded */

/* --- Replay of a raw capture (fake_replay.cc, docs/capture.md) --------------------------------
 * Delivers the callbacks and activity buffers of a capture written by GTRACE_RAW_CAPTURE_DIR, in
 * their recorded order, through gtrace's registered callbacks (only callbacks gtrace enabled fire).
 * Returns 0, or -1 when the file is not a readable capture. */
typedef struct {
  uint64_t callbacks_fired, callbacks_skipped;
  uint64_t buffers_delivered, buffers_declined;
  uint64_t records;          /* records the fake's cuptiActivityGetNextRecord walked */
  uint64_t walk_mismatches;  /* buffers where that walk differs from real CUPTI's recorded walk */
  uint64_t strings_missing;  /* record pointers with no saved string (set to NULL) */
  uint64_t drops_replayed;   /* records CUPTI reported dropped (fake_DropRecords at their place) */
} fake_replay_stats;
int fake_ReplayCapture(const char* path, fake_replay_stats* stats);

#ifdef __cplusplus
}
#endif

#endif  /* GT_TESTS_FAKES_FAKE_CUDA_H_ */
