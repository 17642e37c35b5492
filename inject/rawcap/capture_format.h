// The raw-capture file format (docs/capture.md): what libgtrace.so received from NVIDIA's code,
// saved exactly as delivered so CPU tests can replay it through gtrace's real decoding path.
//
// A file is a 16-byte header followed by frames. Every integer is little-endian (the byte order of
// the x86-64 and aarch64 machines that write it); no padding between frames. Readers skip frames of
// an unknown type (their length is known) and refuse an unknown major version.
//
//   header: char magic[8] = "GTCAPv\0\0"; u32 version (kCaptureVersion); u32 header_bytes (16)
//   frame:  u32 type (FrameType); u32 payload_bytes; u64 seq; payload[payload_bytes]
//
// `seq` orders callbacks and completed buffers as they happened (one process-wide counter, taken on
// the thread CUPTI called); a replay delivers them in `seq` order. Frames describing a buffer
// (record index, strings, device attributes) carry the seq of that buffer.
//
// Header-only and free of CUPTI types so that tests and the fake CUPTI (tests/fakes/) read it too.
#pragma once

#include <cstddef>
#include <cstdint>

namespace gt::rawcap {

inline constexpr char kCaptureMagic[8] = {'G', 'T', 'C', 'A', 'P', 'v', '\0', '\0'};
inline constexpr uint32_t kCaptureVersion = 1;  // bump on any incompatible change
inline constexpr uint32_t kCaptureHeaderBytes = 16;
inline constexpr uint32_t kFrameHeaderBytes = 16;

enum FrameType : uint32_t {
  // Text "key=value\n" lines: library, CUPTI and driver facts (cupti_api_version, cupti_path,
  // driver_version, runtime_version, pid, clock_callback, options). Written first.
  kFrameInfo = 1,
  // One CUPTI activity buffer as handed to the buffer-completed callback: ActivityBufferHeader,
  // then exactly valid_bytes bytes of records (pointers inside them are the writer's addresses).
  kFrameActivityBuffer = 2,
  // How the real cuptiActivityGetNextRecord walked that buffer: u32 count, then count x
  // RecordIndexEntry. Lets a replay check its own record walk against CUPTI's.
  kFrameRecordIndex = 3,
  // A string a record of that buffer points at: u64 address (as in the record), then the bytes (no NUL).
  kFrameString = 4,
  // One subscriber callback: CallbackRecord.
  kFrameCallback = 5,
  // cuptiDeviceGetAttribute answers for one device: u32 device, u32 count, count x DeviceAttribute.
  kFrameDeviceAttributes = 6,
  // Last frame of a complete capture: CaptureEnd.
  kFrameEnd = 7,
  // u64: what cuptiActivityGetNumDroppedRecords(NULL, 0) answered (records CUPTI dropped since
  // the previous query), written only when non-zero.
  kFrameDroppedRecords = 8,
  // NCCL profiler-plugin input (a separate file, nccl-<pid>.gtcap; inject/rawcap/nccl_capture.h).
  // Added without a version bump: v1 readers skip them (unknown types), and a CUPTI capture has none.
  kFrameNcclInit = 9,       // NcclInitRecord: one plugin init (a communicator)
  kFrameNcclStart = 10,     // NcclCallRecord: startEvent, raw descriptor bytes and the handle returned
  kFrameNcclState = 11,     // NcclCallRecord: recordEventState, state and raw state-args bytes
  kFrameNcclStop = 12,      // NcclCallRecord: stopEvent
  kFrameNcclFinalize = 13,  // NcclCallRecord: finalize (context)
  kFrameNcclDropped = 14,   // u64: calls not kept so far (log full), written when it grows
  // GPU-metrics input (a separate file, metrics-<pid>.gtcap; inject/rawcap/metrics_capture.h), written
  // by gtrace's metrics thread. Added without a version bump, like 9-14: v1 readers skip them.
  kFrameMetricsPmConfig = 15,     // MetricsPmConfig + metric names + config image + availability image
  kFrameMetricsPmData = 16,       // MetricsPmData + counter-data image + per-sample MetricsSample+values
  kFrameMetricsRangeConfig = 17,  // MetricsRangeConfig + metric names + config image
  kFrameMetricsRangeData = 18,    // MetricsRangeData + counter-data image + per-range MetricsRange+values
};

struct ActivityBufferHeader {
  uint64_t context;    // the CUcontext argument, as an address (CUDA 13: usually 0, per-thread buffers)
  uint32_t stream_id;  // the streamId argument
  uint32_t reserved;
  uint64_t size_bytes;   // size of the buffer gtrace gave CUPTI
  uint64_t valid_bytes;  // validSize: bytes of records (the frame carries exactly these)
};
static_assert(sizeof(ActivityBufferHeader) == 32, "frame layout");

struct RecordIndexEntry {
  uint32_t offset;  // record start, bytes from the buffer start
  uint32_t kind;    // CUpti_ActivityKind
};
static_assert(sizeof(RecordIndexEntry) == 8, "frame layout");

// Fixed size: written on the application thread inside the callback (capture mode only) into a
// bounded preallocated log; names are copied (truncated, always NUL-terminated).
struct CallbackRecord {
  uint64_t ts_ns;           // gtrace's clock when the callback ran
  uint32_t tid;             // OS thread id
  uint32_t domain;          // CUpti_CallbackDomain
  uint32_t cbid;            // CUpti_CallbackId
  uint32_t site;            // CUpti_ApiCallbackSite (API domains); 0 otherwise
  uint32_t correlation_id;  // CUpti_CallbackData::correlationId (API domains)
  uint32_t context_uid;     // CUpti_CallbackData::contextUid (API domains)
  uint32_t graph_id;        // graph launches/creation: cuptiGetGraphId of the graph, when known
  uint32_t graph_exec_id;   // graph launches/instantiation: cuptiGetGraphExecId, when known
  uint32_t other_graph_id;  // GRAPH_CLONED: the original graph's id
  uint32_t flags;           // kCallbackHas* bits
  uint64_t return_value;    // API exit: the CUresult/cudaError_t when CUPTI gives it
  uint64_t reserved;
  char function_name[96];  // CUpti_CallbackData::functionName
  char symbol_name[96];    // CUpti_CallbackData::symbolName (kernel launches)
};
static_assert(sizeof(CallbackRecord) == 256, "frame layout");

inline constexpr uint32_t kCallbackHasGraphId = 1u << 0;
inline constexpr uint32_t kCallbackHasGraphExecId = 1u << 1;
inline constexpr uint32_t kCallbackHasOtherGraphId = 1u << 2;
inline constexpr uint32_t kCallbackHasReturnValue = 1u << 3;

struct DeviceAttribute {
  uint32_t attribute;  // CUpti_DeviceAttribute
  uint32_t result;     // CUptiResult of the query
  uint64_t value;      // the value (integer attributes), 0 when the query failed
};
static_assert(sizeof(DeviceAttribute) == 16, "frame layout");

struct CaptureEnd {
  uint64_t buffers;            // activity buffers written
  uint64_t buffer_bytes;       // their valid bytes
  uint64_t callbacks;          // callbacks written
  uint64_t callbacks_dropped;  // callbacks not kept (log full)
  uint64_t buffers_dropped;    // buffers not written (capture size limit or write error)
};
static_assert(sizeof(CaptureEnd) == 40, "frame layout");

// --- NCCL profiler plugin (frames 9-14) ---------------------------------------------------------
// Every record is fixed-size, written on NCCL's thread inside the plugin call (capture mode only).
// Pointers inside a descriptor are the recording process's addresses: handles (parentObj, a
// Coll/P2p's parentGroup) are replayed through a map of recorded -> live handles; the strings a
// descriptor points at (func, datatype, algo, proto, syncStrategy) are copied beside it.

// A string member of a descriptor: its byte offset in `raw` and its text (truncated to 27 bytes,
// always NUL-terminated; NCCL's names are short literals).
struct NcclStringRef {
  uint32_t offset;
  char text[28];
};
static_assert(sizeof(NcclStringRef) == 32, "frame layout");

inline constexpr uint32_t kNcclMaxStrings = 5;
inline constexpr uint32_t kNcclRawBytes = 112;  // sizeof the v5/v6 descriptor (v4: 104)

struct NcclCallRecord {
  uint64_t ts_ns;         // gtrace's clock: the time the plugin used for this call
  uint32_t tid;           // OS thread id of NCCL's calling thread
  uint32_t abi_version;   // 4, 5 or 6: the ncclProfiler_vN NCCL called
  uint64_t context;       // start/finalize: the context argument (the plugin's, as an address)
  uint64_t handle;        // start: the handle the plugin returned (0: not tracked); stop/state: the argument
  int32_t state;          // recordEventState: ncclProfilerEventState_t
  uint32_t raw_bytes;     // bytes of `raw` used: the descriptor's sizeof (start), 8 (state args), 0
  uint32_t flags;         // kNccl* bits
  uint32_t n_strings;     // used entries of `strings`
  uint8_t raw[kNcclRawBytes];  // start: the descriptor as NCCL passed it; state: the state args
  NcclStringRef strings[kNcclMaxStrings];
};
static_assert(sizeof(NcclCallRecord) == 320, "frame layout");

inline constexpr uint32_t kNcclHasArgs = 1u << 0;  // recordEventState had a non-NULL args pointer
inline constexpr uint32_t kNcclStringCut = 1u << 1;  // a string was longer than 27 bytes

struct NcclInitRecord {
  uint64_t ts_ns;
  uint32_t tid;
  uint32_t abi_version;      // the version NCCL loaded the plugin as
  uint64_t comm_hash;        // commId (v5/v6) / commHash (v4)
  uint64_t context;          // the context the plugin returned
  int32_t n_nodes;
  int32_t n_ranks;
  int32_t rank;
  int32_t activation_mask;   // what the plugin set *eActivationMask to
  uint32_t name_bytes;       // strlen(commName), before truncation
  uint32_t flags;            // kNcclNameNull
  char comm_name[128];       // truncated, NUL-terminated
};
static_assert(sizeof(NcclInitRecord) == 184, "frame layout");

inline constexpr uint32_t kNcclNameNull = 1u << 0;

// --- GPU metrics: PM sampling and the range profiler (frames 15-18) -----------------------------
// The counter-data images are NVIDIA's opaque format (or the fake profiler's own, in a capture made by
// the test double), saved byte for byte as CUPTI filled them. Beside each image: what CUPTI answered
// about it on the recording machine (counts, per-sample timestamps, range names) and the values
// gtrace's evaluation (cuptiProfilerHostEvaluateToGpuValues) got there, so a replay can both feed the
// image through gtrace's decoder and check a CPU-side evaluation against the GPU machine's.
// Metric names travel as one text section, each name followed by '\n'. Results are CUptiResult.

// One PM-sampling set-up (PmSampler::Setup succeeded): names (names_bytes), then the config image
// given to cuptiPmSamplingSetConfig (config_bytes), then the counter-availability image the host
// object was built with (availability_bytes).
struct MetricsPmConfig {
  uint32_t device;              // CUDA ordinal
  uint32_t trigger_mode;        // CUpti_PmSampling_TriggerMode used
  uint64_t interval_raw;        // samplingInterval given to SetConfig (ns or SYS clock cycles)
  uint64_t interval_ns;         // the requested interval
  uint64_t hw_buffer_bytes;     // hardwareBufferSize
  uint64_t counter_data_bytes;  // cuptiPmSamplingGetCounterDataSize's answer
  uint32_t max_samples;         // maxSamples asked for
  uint32_t metric_count;
  uint32_t names_bytes;
  uint32_t config_bytes;
  uint32_t availability_bytes;
  uint32_t passes;  // cuptiProfilerHostGetNumOfPasses of the config (1)
  char chip[32];    // cuptiDeviceGetChipName, NUL-terminated
};
static_assert(sizeof(MetricsPmConfig) == 96, "frame layout");

// One cuptiPmSamplingDecodeData that left completed samples in the image: the image (image_bytes),
// then sample_count x (MetricsSample + metric_count doubles), one per completed sample, in order.
struct MetricsPmData {
  uint32_t device;
  uint32_t decode_result;  // cuptiPmSamplingDecodeData's result (0, or OUT_OF_MEMORY on overflow)
  uint32_t stop_reason;    // decodeStopReason
  uint32_t overflow;       // the overflow flag
  uint64_t total_samples;  // cuptiPmSamplingGetCounterDataInfo: numTotalSamples
  uint64_t populated_samples;
  uint64_t completed_samples;
  int64_t clock_offset_ns;  // gtrace's CUPTI clock - stream clock at this decode
  uint32_t metric_count;
  uint32_t sample_count;  // MetricsSample entries that follow the image (= completed_samples)
  uint64_t image_bytes;
};
static_assert(sizeof(MetricsPmData) == 64, "frame layout");

struct MetricsSample {
  uint64_t start_ns;     // cuptiPmSamplingCounterDataGetSampleInfo: startTimestamp (CUPTI clock)
  uint64_t end_ns;       // endTimestamp
  uint32_t info_result;  // GetSampleInfo's result
  uint32_t eval_result;  // EvaluateToGpuValues' result (values are 0 unless 0); 999 (not called) when
                         // GetSampleInfo failed
};
static_assert(sizeof(MetricsSample) == 24, "frame layout");

// One range-profiler context's set-up, written before its first range data: names, config image.
struct MetricsRangeConfig {
  uint32_t device;
  uint32_t context_id;          // cuptiGetContextId
  uint32_t mode;                // field::enums::kRangeMode* (1 nvtx, 2 kernel)
  uint32_t max_ranges;          // maxNumOfRanges of the image
  uint64_t counter_data_bytes;  // cuptiRangeProfilerGetCounterDataSize's answer
  uint32_t metric_count;
  uint32_t names_bytes;
  uint32_t config_bytes;
  uint32_t passes;
  char chip[32];
};
static_assert(sizeof(MetricsRangeConfig) == 72, "frame layout");

// One decoded range-profiler pass (cuptiRangeProfilerDecodeData, then evaluated on the metrics
// thread): the image (image_bytes), then range_count x (MetricsRange + metric_count doubles).
struct MetricsRangeData {
  uint32_t device;
  uint32_t context_id;
  uint32_t mode;
  uint32_t info_result;  // cuptiRangeProfilerGetCounterDataInfo's result
  uint64_t pass_id;
  uint64_t pass_start_ns;  // stream clock
  uint64_t pass_end_ns;
  uint64_t total_ranges;    // numTotalRanges
  uint64_t ranges_dropped;  // DecodeData's numOfRangeDropped
  uint64_t image_bytes;
  uint32_t metric_count;
  uint32_t range_count;
  char nvtx_name[64];  // the NVTX range that delimited the pass (NVTX mode), NUL-terminated
};
static_assert(sizeof(MetricsRangeData) == 136, "frame layout");

struct MetricsRange {
  uint32_t info_result;  // cuptiRangeProfilerCounterDataGetRangeInfo's result
  uint32_t eval_result;
  char name[64];  // rangeName ("/"-delimited), NUL-terminated, cut at 63 bytes
};
static_assert(sizeof(MetricsRange) == 72, "frame layout");

}  // namespace gt::rawcap
