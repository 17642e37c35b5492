#include "inject/callstack/stack_decoder.h"

#include <cstring>
#include <string_view>

#include "inject/callstack/callstack_fields.h"
#include "inject/callstack/stack_capture.h"
#include "inject/cupti/cuda_fields.h"

namespace gt::callstack {
namespace {

void AppendVarint(std::string* out, uint64_t v) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

}  // namespace

uint64_t StackDecoder::StackId(const uint64_t* frames,
                               uint32_t count,
                               uint8_t flags,
                               const uint8_t* python,
                               uint32_t python_bytes,
                               uint32_t python_count,
                               ChunkBuilder* chunk) {
  bool truncated = (flags & kStackTruncated) != 0;
  std::string key(reinterpret_cast<const char*>(frames), count * sizeof(uint64_t));
  key.push_back(static_cast<char>(flags));
  if (python_bytes > 0)
    key.append(reinterpret_cast<const char*>(python), python_bytes);
  auto it = stacks_.find(key);
  if (it != stacks_.end())
    return it->second;
  if (stacks_.size() >= kMaxStacks)
    stacks_.clear();
  uint64_t id = next_stack_id_++;
  stacks_.emplace(std::move(key), id);
  // Strings first: they cannot be written inside the definition.
  python_ids_.clear();
  size_t pos = 0;
  for (uint32_t i = 0; i < python_count && pos + sizeof(PackedPythonFrame) <= python_bytes; ++i) {
    PackedPythonFrame head;
    std::memcpy(&head, python + pos, sizeof(head));
    pos += sizeof(head);
    if (pos + head.file_bytes + head.function_bytes > python_bytes)
      break;
    const char* text = reinterpret_cast<const char*>(python + pos);
    uint64_t file = chunk->Intern(std::string_view(text, head.file_bytes));
    uint64_t function = chunk->Intern(std::string_view(text + head.file_bytes, head.function_bytes));
    python_ids_.push_back({file, function, head.line});
    pos += head.file_bytes + head.function_bytes;
  }
  namespace f = field::callstack_def;
  packed_.clear();
  for (uint32_t i = 0; i < count; ++i)
    AppendVarint(&packed_, frames[i]);
  ProtoWriter& w = chunk->body();
  w.BeginNested(field::chunk::kCallStackDefs);
  w.Varint(f::kStackId, id);
  w.Bytes(f::kAddresses, packed_.data(), packed_.size());  // packed repeated uint64
  if (truncated)
    w.Bool(f::kTruncated, true);
  for (const PythonIds& p : python_ids_) {
    w.BeginNested(f::kPythonFrames);
    w.VarintIfNonZero(field::python_frame::kFileId, p.file_id);
    w.VarintIfNonZero(field::python_frame::kFunctionId, p.function_id);
    w.VarintIfNonZero(field::python_frame::kLine, p.line);
    w.EndNested();
  }
  if ((flags & kPythonTruncated) != 0)
    w.Bool(f::kPythonTruncated, true);
  w.EndNested();
  return id;
}

void StackDecoder::StartSession(uint64_t session_id) {
  if (session_id != session_id_) {
    session_id_ = session_id;
    stacks_.clear();
    next_stack_id_ = 1;
  }
}

uint64_t StackDecoder::DefineStack(const uint64_t* frames,
                                   uint32_t count,
                                   bool truncated,
                                   uint64_t session_id,
                                   ChunkBuilder* chunk) {
  StartSession(session_id);
  return StackId(frames, count, truncated ? kStackTruncated : 0, nullptr, 0, 0, chunk);
}

StackDecoder& SharedStackDecoder() {
  static StackDecoder* decoder = new StackDecoder(nullptr);
  return *decoder;
}

void StackDecoder::Decode(const RecordView& view, uint64_t session_id, ChunkBuilder* chunk) {
  StartSession(session_id);
  if (view.size_bytes < kStackRecordFramesOffset)
    return;
  StackRecordFixed fixed;
  std::memcpy(&fixed, view.bytes + sizeof(RecordHeader), sizeof(fixed));
  uint32_t count = view.header->aux16;
  if (count == 0 || count > static_cast<uint32_t>(kMaxFrames) ||
      kStackRecordFramesOffset + count * sizeof(uint64_t) > view.size_bytes) {
    return;
  }
  uint64_t frames[kMaxFrames];
  std::memcpy(frames, view.bytes + kStackRecordFramesOffset, count * sizeof(uint64_t));
  size_t python_at = kStackRecordFramesOffset + count * sizeof(uint64_t);
  uint32_t python_bytes = fixed.python_bytes;
  if (python_bytes > kPythonScratchBytes || python_at + python_bytes > view.size_bytes)
    python_bytes = 0;
  // Definitions and strings first: they cannot be written inside the event.
  uint64_t stack_id = StackId(frames, count, fixed.flags, view.bytes + python_at, python_bytes,
                              python_bytes > 0 ? fixed.python_frames : 0, chunk);
  const char* name = names_ != nullptr ? names_(fixed.driver != 0, fixed.cbid) : nullptr;
  uint64_t name_id = name != nullptr ? chunk->Intern(std::string_view(name, strnlen(name, 4096))) : 0;
  namespace f = field::cuda_api_backtrace;
  ProtoWriter& w = chunk->body();
  w.BeginNested(field::chunk::kCudaApiBacktraces);
  w.SInt(f::kStartDeltaNs, chunk->DeltaNs(field::chunk::kCudaApiBacktraces, view.header->ts_ns));
  w.Varint(f::kDurationNs, fixed.duration_ns);
  w.Varint(f::kKind, fixed.driver != 0 ? field::enums::kCudaApiDriver : field::enums::kCudaApiRuntime);
  w.Varint(f::kCbid, fixed.cbid);
  w.VarintIfNonZero(f::kCorrelationId, view.header->aux32);
  w.Varint(f::kStackId, stack_id);
  w.VarintIfNonZero(f::kNameId, name_id);
  w.VarintIfNonZero(f::kReturnValue, fixed.return_value);
  w.EndNested();
}

}  // namespace gt::callstack
