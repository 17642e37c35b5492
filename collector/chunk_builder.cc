#include "collector/chunk_builder.h"

#include <cstring>

#include "schema/crc32c.h"
#include "collector/schema_fields.h"
#include "schema/format.h"

namespace gt {

void ChunkBuilder::Begin(uint64_t sequence_id, uint32_t tid, uint64_t base_ns) {
  if (open_) End();
  body_.Clear();
  // CRC placeholder: tag of field 1 (fixed32) + 4 bytes, filled in by End().
  body_.Fixed32(field::chunk::kCrc32c, 0);
  body_.VarintIfNonZero(field::chunk::kSequenceId, sequence_id);
  body_.VarintIfNonZero(field::chunk::kTid, tid);
  body_.VarintIfNonZero(field::chunk::kBaseNs, base_ns);
  preamble_size_ = body_.size();
  sequence_id_ = sequence_id;
  tid_ = tid;
  base_ns_ = base_ns;
  records_ = 0;
  has_last_.fill(false);
  open_ = true;
}

void ChunkBuilder::End() {
  if (!open_) return;
  open_ = false;
  if (body_.size() == preamble_size_) return;  // nothing to say
  std::string* bytes = body_.mutable_bytes();
  uint32_t crc = Crc32c(bytes->data() + 5, bytes->size() - 5);
  std::memcpy(&(*bytes)[1], &crc, 4);
  ProtoWriter frame;
  frame.Tag(kStreamFileChunkField, 2);
  frame.RawVarint(bytes->size());
  out_.append(frame.bytes());
  out_.append(*bytes);
  records_total_ += records_;
  ++chunks_total_;
}

void ChunkBuilder::SplitIfLarger(size_t max_body_bytes) {
  if (!open_ || body_.size() < max_body_bytes) return;
  uint64_t seq = sequence_id_;
  uint32_t tid = tid_;
  uint64_t base = base_ns_;
  End();
  Begin(seq, tid, base);
}

uint64_t ChunkBuilder::Intern(std::string_view text) {
  if (text.empty()) return 0;
  if (body_.nesting_depth() != 0) {
    ++intern_misuse_;
    return 0;
  }
  if (last_id_ != 0 && last_resets_ == interner_->resets() && text == last_text_) return last_id_;
  bool is_new = false;
  uint64_t id = interner_->Intern(text, &is_new);
  last_text_.assign(text.data(), text.size());
  last_id_ = id;
  last_resets_ = interner_->resets();
  if (is_new) {
    body_.BeginNested(field::chunk::kStrings);
    body_.Varint(field::interned_string::kId, id);
    body_.String(field::interned_string::kText, text);
    body_.EndNested();
  }
  return id;
}

int64_t ChunkBuilder::DeltaNs(uint32_t field, uint64_t ts_ns) {
  if (field >= kMaxDeltaFields) return static_cast<int64_t>(ts_ns - base_ns_);
  uint64_t prev = has_last_[field] ? last_ts_[field] : base_ns_;
  last_ts_[field] = ts_ns;
  has_last_[field] = true;
  return static_cast<int64_t>(ts_ns - prev);
}

}  // namespace gt
