// CaptureWriter: raw-capture mode of libgtrace.so (GTRACE_RAW_CAPTURE_DIR=DIR, off by default).
// Saves what CUPTI hands gtrace, exactly as delivered, into DIR/capture-<pid>.gtcap
// (inject/rawcap/capture_format.h, docs/capture.md), so CPU tests can replay it through the real
// decoding path.
//
// Threads:
//   - Start: the thread inside cuInit (CuptiTracer::Start), once; opens the file, writes the header
//     and the info frame, preallocates the callback log.
//   - RecordCallback: application threads inside a CUPTI callback, and only in capture mode (the
//     one relaxed load of CaptureOn() is all it costs otherwise). A fixed-size record into a bounded
//     preallocated log (a claimed index, a copy, a release store); a full log drops and counts.
//     It does call cuptiGetGraphId/cuptiGetGraphExecId for graph callbacks: capture mode only.
//   - NextSeq: any thread (an atomic increment); the buffer-completed callback takes one.
//   - WriteBuffer, DrainCallbacks, WriteDroppedRecords, Finish: the drain thread only (the thread that already decodes
//     completed buffers); every write(2) happens there.
//   - StopInChild: the forking thread in a child (the parent's file is never written by a child).
// Owned by nobody: allocated once, never freed (callbacks may run until the process ends).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_set>

#include "inject/cupti/cupti_api.h"
#include "inject/rawcap/capture_format.h"

namespace gt::rawcap {

// 1 while raw capture records (read first, relaxed, in the CUPTI callbacks).
extern std::atomic<uint32_t> g_capture_on;
inline bool CaptureOn() {
  return g_capture_on.load(std::memory_order_relaxed) != 0;
}

// Completion facts of one buffer, kept beside it in the buffer pool until the drain thread writes it.
struct BufferCompletion {
  uint64_t context = 0;  // CUcontext argument as an address
  uint32_t stream_id = 0;
  uint64_t size_bytes = 0;
  uint64_t seq = 0;  // 0: not captured
};

class CaptureWriter {
 public:
  static constexpr uint32_t kMaxCallbacks = 16384;        // 4 MiB of CallbackRecord
  static constexpr uint64_t kMaxFileBytes = 64ull << 20;  // buffers beyond are dropped, counted

  // The writer of this process, or nullptr (capture off or failed).
  static CaptureWriter* Instance();
  // Thread inside cuInit: when GTRACE_RAW_CAPTURE_DIR is set, opens the capture and switches capture
  // on. False with *error when it was asked for and could not start (tracing goes on without it).
  // `info` is written as the info frame ("key=value\n" lines).
  static bool StartFromEnv(const cupti::CuptiApi* api, const std::string& info, bool* requested, std::string* error);

  uint64_t NextSeq() { return seq_.fetch_add(1, std::memory_order_relaxed) + 1; }
  // Application thread (capture mode only): one subscriber callback.
  void RecordCallback(uint32_t domain, uint32_t cbid, const void* data);

  // Drain thread.
  void WriteBuffer(const uint8_t* buffer, size_t valid_bytes, const BufferCompletion& done);
  void DrainCallbacks();
  void WriteDroppedRecords(uint64_t dropped);
  void Finish();  // final flush done: end frame, close
  const std::string& path() const { return path_; }

  // Forked child: never write the parent's capture.
  static void StopInChild();

 private:
  CaptureWriter() = default;
  bool Open(const std::string& dir, std::string* error);
  bool Frame(uint32_t type, uint64_t seq, const void* a, size_t a_bytes, const void* b = nullptr, size_t b_bytes = 0);
  void WriteDeviceAttributes(uint32_t device, uint64_t seq);

  const cupti::CuptiApi* api_ = nullptr;
  using DeviceGetAttributeFn = CUptiResult (*)(CUdevice, CUpti_DeviceAttribute, size_t*, void*);
  DeviceGetAttributeFn device_get_attribute_ = nullptr;
  int fd_ = -1;
  std::string path_;
  std::atomic<uint64_t> seq_{0};

  CallbackRecord* log_ = nullptr;           // kMaxCallbacks records (mmap'ed at start)
  std::atomic<uint32_t>* ready_ = nullptr;  // per record: 1 once written
  std::atomic<uint32_t> claimed_{0};
  std::atomic<uint64_t> callbacks_dropped_{0};
  uint32_t drained_ = 0;  // drain thread

  // Drain thread.
  uint64_t file_bytes_ = 0;
  uint64_t buffers_ = 0, buffer_bytes_ = 0, buffers_dropped_ = 0;
  bool failed_ = false, finished_ = false;
  std::unordered_set<uint32_t> devices_queried_;
};

}  // namespace gt::rawcap
