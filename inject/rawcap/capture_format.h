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

}  // namespace gt::rawcap
