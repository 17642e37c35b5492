// CuptiTracer: CUDA tracing of one process through CUPTI. Created by InitializeInjection (the CUDA
// driver calls it inside the first cuInit when CUDA_INJECTION64_PATH names libgtrace.so; the preload
// constructor sets that variable), it loads libcupti (never linked), subscribes, hands CUPTI
// buffers from a bounded pool, switches activity kinds with the capture window, and decodes
// completed buffers on the drain thread.
//
// Threads:
//   - Start: the application thread inside cuInit (once per process image).
//   - CUPTI callbacks (cupti_callbacks.cc): application threads and CUPTI's worker. The hot ones
//     (graph launches, graph creation) read one relaxed atomic and write a fixed-size ring record;
//     the buffer callbacks only touch the lock-free pool.
//   - Reconcile (window changes): whichever thread changed the window; serialised by a try-flag,
//     never by a lock held across CUPTI calls.
//   - Emit: the drain thread (flushes, decodes, drop counts, diagnostics).
//   - OnProcessExit: the exiting thread (atexit; asks the drain thread for the final forced flush
//     and waits a bounded time). OnForkChild: the forking thread in the child (CUPTI becomes inert:
//     no flush or other CUPTI call ever happens there — CUPTI's worker thread does not exist).
// Owned by nobody: allocated once and never freed (CUPTI may call back until the process ends).
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include "collector/chunk_builder.h"
#include "inject/cupti/activity_decoder.h"
#include "inject/cupti/buffer_pool.h"
#include "inject/cupti/cupti_api.h"
#include "inject/cupti/graph_window_filter.h"

namespace gt::cupti {

enum class TracerState : uint32_t {
  kUninitialized = 0,
  kStarting = 1,
  kActive = 2,    // subscribed; CUPTI calls allowed
  kOff = 3,       // failed or switched off: no CUPTI calls
  kStopped = 4,   // final flush done at exit: no CUPTI calls
  kInert = 5,     // forked child of an active parent: never touch CUPTI
};

// State read by the CUPTI callbacks' hot path (relaxed).
extern std::atomic<uint32_t> g_tracer_state;
inline bool TracerActive() {
  return g_tracer_state.load(std::memory_order_relaxed) == static_cast<uint32_t>(TracerState::kActive);
}

struct TracerOptions {
  bool graph_nodes = false;   // GTRACE_CUDA_GRAPH_TRACE=node
  bool memory_usage = false;  // GTRACE_CUDA_MEMORY_USAGE
  uint64_t pool_bytes = 64ull << 20;  // GTRACE_CUDA_BUFFER_MB
};

class CuptiTracer {
 public:
  CuptiTracer() = default;
  CuptiTracer(const CuptiTracer&) = delete;
  CuptiTracer& operator=(const CuptiTracer&) = delete;

  // The tracer of this process (nullptr before InitializeInjection ran).
  static CuptiTracer* Instance();
  // InitializeInjection's work; always returns 1 (a failure switches CUDA tracing off, reported
  // with one `gtrace:` line, and never fails cuInit).
  static int InitializeInjection();

  // CUPTI buffer callbacks (any thread).
  void OnBufferRequested(uint8_t** buffer, size_t* size, size_t* max_records);
  void OnBufferCompleted(uint8_t* buffer, size_t size, size_t valid_bytes, CUcontext context, uint32_t stream_id);
  // A second CUPTI client in the process (kineto for torch.profiler) calling the process-wide activity
  // API (foreign_client.cc interposes these names). Each returns true when it handled the call (its
  // result in *result); false: forward it to CUPTI unchanged. Application threads, no gtrace lock.
  bool OnForeignRegisterCallbacks(CUpti_BuffersCallbackRequestFunc request, CUpti_BuffersCallbackCompleteFunc complete,
                                  CUptiResult* result);
  bool OnForeignTimestampCallback(CUpti_TimestampCallbackFunc func, CUptiResult* result);
  bool OnForeignDisable(CUpti_ActivityKind kind, CUptiResult* result);
  void AfterForeignFlush();
  // API/resource callbacks that need the tracer (slow paths).
  void OnGraphLaunch(uint32_t correlation_id, const void* graph_exec);
  void OnGraphResource(uint32_t cbid, const void* resource_data);
  void FlushBeforeTeardown();  // cudaDeviceReset / cuCtxDestroy entry
  void OnFatalError();         // CUPTI state callback: CUPTI finalized itself

  // Capture window changed (capture::SetCudaWindowHook).
  void Reconcile();
  // Drain thread.
  void Emit(ChunkBuilder* chunk, uint64_t session_id);
  // atexit (exiting thread) / pthread_atfork child.
  void OnProcessExit();
  void OnForkChild();

  const CuptiApi& api() const { return api_; }
  // CUPTI takes its timestamps from gtrace's clock (the timestamp callback was accepted).
  bool clock_callback() const { return clock_callback_; }

 private:
  bool Start();
  bool Fail(const std::string& why);
  bool Subscribe();
  void SetUpClock();
  // One (CUPTI clock, stream clock) pair: the tightest (StreamNow, cuptiGetTimestamp, StreamNow)
  // bracket of a few tries. False when CUPTI gives no timestamp. SetUpClock and the drain thread.
  struct CuptiClockReading {
    uint64_t cupti_ns = 0;
    uint64_t stream_ns = 0;       // stream clock (ticks) at the middle of the bracket
    uint64_t uncertainty_ns = 0;  // bracket width, stream clock units
  };
  bool ReadCuptiClock(CuptiClockReading* out);
  void WriteClockPair(ChunkBuilder* chunk, const CuptiClockReading& pair);
  void SetBufferAttributes();
  void TakeOverFromForeign();     // the second client's block begins (any thread)
  void ReleaseForeign();          // it ends: buffers and clock back to gtrace
  void ReportForeign(uint64_t now_ns);  // drain thread
  uint64_t CountRecords(uint8_t* buffer, size_t valid_bytes, uint64_t* kernels);
  void EnableKind(CUpti_ActivityKind kind, bool on);
  void EnableWindowCallbacks(bool on);
  void ApplyWindow(bool open);
  void WriteTraceInfo(ChunkBuilder* chunk);
  void ReportDrops(ChunkBuilder* chunk, uint64_t now_ns);
  void StartRawCapture();  // GTRACE_RAW_CAPTURE_DIR (inject/rawcap/)

  CuptiApi api_;
  TracerOptions options_;
  CUpti_SubscriberHandle subscriber_ = nullptr;
  CuptiBufferPool pool_;
  ActivityDecoder decoder_{&api_};
  uint32_t pid_ = 0;
  bool clock_callback_ = false;
  int64_t clock_offset_ns_ = 0;
  // CUPTI refused the timestamp callback on a tick stream: its records keep CUPTI's own times and the
  // stream carries CuptiClockPairs (schema/cuda.proto) for the reader's conversion. The first pair
  // is read in SetUpClock (before any activity kind is on) and written by the drain thread at the
  // first Emit of each session; later ones every kClockPairIntervalNs and with the final flush.
  bool clock_pairs_ = false;
  CuptiClockReading first_pair_;
  uint64_t pair_session_ = 0;   // drain thread: session that got first_pair_
  uint64_t last_pair_ns_ = 0;   // drain thread: NowNs() of the last pair written
  CUpti_ActivityKind window_kinds_[16] = {};
  int window_kind_count_ = 0;
  uint32_t kind_failures_ = 0;  // bit per window kind index whose enable failed (reported once)
  // GRAPH_TRACE enabled for the whole run while the session has capture windows (see
  // graph_window_filter.h): launches note their ids, the decoder keeps the windows' records.
  bool graph_trace_whole_run_ = false;
  GraphWindowFilter graph_filter_;

  std::atomic<bool> applying_{false};
  bool applied_open_ = false;  // written only by the thread holding applying_
  std::atomic<bool> flush_requested_{false};
  std::atomic<bool> final_requested_{false};
  std::atomic<bool> fatal_error_{false};
  uint64_t last_flush_ns_ = 0;      // drain thread
  uint64_t flush_interval_ns_ = 500000000ull;
  uint64_t info_session_ = 0;       // drain thread: session that got CudaTraceInfo
  uint64_t declined_reported_ = 0;  // drain thread
  // The second CUPTI client (issue 29). gtrace keeps CUPTI's one registration of buffer callbacks and
  // hands the client's buffers through: while it is active its request function lends buffers, every
  // buffer that is not gtrace's goes to its completion function (counted: those records are gtrace's
  // gap), and gtrace's own buffers completed on its clock are not decoded (counted).
  std::atomic<CUpti_BuffersCallbackRequestFunc> foreign_request_{nullptr};
  std::atomic<CUpti_BuffersCallbackCompleteFunc> foreign_complete_{nullptr};
  std::atomic<bool> foreign_active_{false};
  std::atomic<bool> foreign_clock_{false};
  std::atomic<bool> foreign_release_pending_{false};
  std::atomic<uint32_t> foreign_blocks_{0};
  std::atomic<uint64_t> foreign_since_ns_{0}, foreign_until_ns_{0};
  std::atomic<uint64_t> foreign_records_{0}, foreign_kernels_{0}, foreign_clock_records_{0};
  std::atomic<bool> foreign_taking_{false};
  uint32_t foreign_reported_blocks_ = 0;  // drain thread
  uint64_t foreign_release_seen_ns_ = 0;  // drain thread: when it first saw a pending release
};

}  // namespace gt::cupti
