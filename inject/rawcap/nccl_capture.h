// NcclCapture: raw-capture mode for the NCCL profiler plugin (GTRACE_RAW_CAPTURE_DIR=DIR, off by
// default). Saves every plugin call exactly as NCCL made it — init arguments, startEvent
// descriptors as raw bytes with their ABI version, recordEventState with its raw args, stopEvent,
// finalize — into DIR/nccl-<pid>.gtcap (frames 9-14 of inject/rawcap/capture_format.h,
// docs/capture.md), so CPU tests can replay it into the real plugin (tests/fakes/fake_nccl_replay.cc).
//
// Threads:
//   - StartFromEnv: the thread in the first plugin init that starts the session (under the plugin's
//     init mutex); opens the file, writes header and info frame, preallocates the log, registers
//     the emitter.
//   - Record*: NCCL's threads inside plugin calls (application, host-callback and proxy threads,
//     concurrently), capture mode only: the wrappers read NcclCaptureOn() (one relaxed load) first.
//     A slot of a preallocated log is claimed (one fetch_add: its index is the call's order), the
//     fixed-size record copied into it, a ready flag release-stored. No lock, allocation, syscall
//     (the tid is collector's cached CurrentTid). A full log drops and counts.
//   - Emit: the drain thread (a collector emitter, every drain cycle and the final one): writes the
//     ready slots in index order, and the dropped count when it grew. Every write(2) happens there.
//   - StopInChild: a forked child's atfork handler (a child never writes its parent's file).
// Allocated once, never freed (NCCL may call the plugin until the process ends).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "inject/rawcap/capture_format.h"

namespace gt {
class ChunkBuilder;
}

namespace gt::rawcap {

// 1 while the NCCL capture records (read first, relaxed, by every plugin entry point).
extern std::atomic<uint32_t> g_nccl_capture_on;
inline bool NcclCaptureOn() {
  return g_nccl_capture_on.load(std::memory_order_relaxed) != 0;
}

class NcclCapture {
 public:
  static constexpr uint32_t kMaxCalls = 16384;  // 16384 x 336 B = 5.25 MiB of address space, touched as used

  static NcclCapture* Instance();
  // Init thread, slow path, once per process: starts the capture when GTRACE_RAW_CAPTURE_DIR is set.
  // A directory or file that cannot be created: one `gtrace: raw capture of NCCL off: ...` line.
  static void StartFromEnv();

  // NCCL's threads (capture mode only). `ts_ns` is the time the plugin itself used for the call.
  // Start is recorded after the plugin returned (its slot is taken then); Stop and State before
  // the plugin runs (a released slot is recorded released before another start can take it).
  void RecordInit(uint32_t version,
                  uint64_t ts_ns,
                  uint64_t comm_hash,
                  void* context,
                  int n_nodes,
                  int n_ranks,
                  int rank,
                  int activation_mask,
                  const char* comm_name);
  void RecordStart(uint32_t version, uint64_t ts_ns, void* context, void* handle, const void* descr, size_t bytes);
  void RecordState(uint32_t version, uint64_t ts_ns, void* handle, int state, const void* args);
  void RecordStop(uint32_t version, uint64_t ts_ns, void* handle);
  void RecordFinalize(uint32_t version, uint64_t ts_ns, void* context);

 private:
  struct Slot {
    uint32_t type;  // FrameType
    uint32_t reserved;
    uint64_t seq;
    union {
      NcclCallRecord call;
      NcclInitRecord init;
    };
  };
  static_assert(sizeof(Slot) == 336, "log slot");

  NcclCapture() = default;
  Slot* Claim();  // nullptr: log full (counted)
  void Publish(Slot* s);
  NcclCallRecord* ClaimCall(uint32_t type, uint32_t version, uint64_t ts_ns, Slot** slot);
  static void Emit(ChunkBuilder* chunk, uint64_t session_id);  // drain thread
  static void StopInChild();
  bool Frame(uint32_t type, uint64_t seq, const void* payload, size_t bytes);  // drain/init thread

  int fd_ = -1;
  Slot* log_ = nullptr;                     // kMaxCalls slots (mmap'ed)
  std::atomic<uint32_t>* ready_ = nullptr;  // per slot: 1 once written
  std::atomic<uint32_t> claimed_{0};
  std::atomic<uint64_t> dropped_{0};
  // Drain thread.
  uint32_t drained_ = 0;
  uint64_t dropped_written_ = 0;
  bool failed_ = false;
};

}  // namespace gt::rawcap
