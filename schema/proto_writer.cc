#include "schema/proto_writer.h"

#include <bit>

namespace gt {

static_assert(std::endian::native == std::endian::little, "the encoder writes fixed fields in host order");

void ProtoWriter::EndNested() {
  if (open_.empty()) return;  // unpaired End: ignore rather than corrupt the buffer
  size_t length_at = open_.back();
  open_.pop_back();
  size_t body_at = length_at + 1;  // BeginNested reserved one byte
  size_t body_size = buf_.size() - body_at;
  char tmp[10];
  size_t n = EncodeVarint(body_size, tmp);
  // A body of 128 bytes or more needs a longer length: move it up (one memmove per such message;
  // small messages, the common case, move nothing).
  if (n > 1) buf_.insert(body_at, n - 1, '\0');
  std::memcpy(&buf_[length_at], tmp, n);
}

}  // namespace gt
