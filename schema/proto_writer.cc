#include "schema/proto_writer.h"

#include <bit>

namespace gt {

static_assert(std::endian::native == std::endian::little, "the encoder writes fixed fields in host order");

void ProtoWriter::EndNested() {
  if (open_.empty()) return;  // unpaired End: ignore rather than corrupt the buffer
  size_t length_at = open_.back();
  open_.pop_back();
  size_t body_at = length_at + kLengthReserve;
  size_t body_size = buf_.size() - body_at;
  char tmp[10];
  size_t n = EncodeVarint(body_size, tmp);
  // Write the minimal varint and move the body down over the unused reserve bytes.
  std::memcpy(&buf_[length_at], tmp, n);
  if (n < kLengthReserve) {
    std::memmove(&buf_[length_at + n], &buf_[body_at], body_size);
    buf_.resize(buf_.size() - (kLengthReserve - n));
  }
}

}  // namespace gt
