// StackDecoder: turns kRecordCallStack ring records into CallStackDef (once per distinct stack and
// stream) and CudaApiBacktrace messages in the calling thread's chunk.
//
// Threads: the drain thread only (the record decoder registered with the session). Owned by the
// call-stack tracer (callstack_tracer.cc), which gives it the CUPTI callback-name function.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "collector/chunk_builder.h"
#include "collector/session.h"

namespace gt::callstack {

class StackDecoder {
 public:
  // Name of a runtime (driver = false) or driver callback id; nullptr when unknown.
  using NameFn = const char* (*)(bool driver, uint32_t cbid);

  explicit StackDecoder(NameFn names) : names_(names) {}
  StackDecoder(const StackDecoder&) = delete;
  StackDecoder& operator=(const StackDecoder&) = delete;

  // `session_id` changes in a forked child: stacks are defined again in the new stream.
  void Decode(const RecordView& view, uint64_t session_id, ChunkBuilder* chunk);

  // A native stack (innermost first) from another source (OS runtime backtraces): its
  // CallStackDef is written into `chunk` when it is new to this stream; returns its id. Stack ids are
  // shared with the CUDA backtraces, so one stream has one id space (CallStackDef.stack_id).
  uint64_t DefineStack(const uint64_t* frames, uint32_t count, bool truncated, uint64_t session_id, ChunkBuilder* chunk);

  void set_names(NameFn names) { names_ = names; }

  uint64_t stacks_defined() const { return next_stack_id_ - 1; }

  // Most distinct stacks remembered per stream; beyond it the table starts over (new ids, stacks
  // defined again), so memory stays bounded.
  static constexpr size_t kMaxStacks = 1u << 18;

 private:
  void StartSession(uint64_t session_id);
  // `python` / `python_bytes`: packed Python frames (python_frames.h), `python_count` of them.
  uint64_t StackId(const uint64_t* frames,
                   uint32_t count,
                   uint8_t flags,
                   const uint8_t* python,
                   uint32_t python_bytes,
                   uint32_t python_count,
                   ChunkBuilder* chunk);

  NameFn names_;
  uint64_t session_id_ = 0;
  std::unordered_map<std::string, uint64_t> stacks_;  // frame bytes (+ truncated flag) -> id
  uint64_t next_stack_id_ = 1;
  std::string packed_;  // scratch: packed varint addresses
  struct PythonIds {
    uint64_t file_id, function_id;
    uint32_t line;
  };
  std::vector<PythonIds> python_ids_;  // scratch
};

// The process's one decoder (drain thread only; created on first use, never freed): CUDA backtraces
// (callstack_tracer.cc) and OS runtime backtraces (inject/osrt/osrt_backtrace.cc) define their
// stacks through it, so their ids never collide in a stream.
StackDecoder& SharedStackDecoder();

}  // namespace gt::callstack
